#include "pmix_job.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#ifdef NK_PMPI_WITH_PMIX
#include <pmix.h>
#endif

namespace nk::pmpi {

#ifdef NK_PMPI_WITH_PMIX

namespace {

constexpr const char* kPeerKey = "nodekeeper.peer";
// PMIX_LOCAL_PEERS longer than this is not believed.
constexpr size_t kMaxLocalPeers = 1 << 16;

std::string errorText(pmix_status_t status) { return PMIx_Error_string(status); }

class Proc {
 public:
  Proc(const std::string& nspace, pmix_rank_t rank) {
    PMIX_PROC_CONSTRUCT(&proc_);
    PMIX_LOAD_PROCID(&proc_, nspace.c_str(), rank);
  }
  const pmix_proc_t* get() const { return &proc_; }

 private:
  pmix_proc_t proc_;
};

// A value already in this process's PMIx store (PMIX_OPTIONAL: the server
// is not asked, so that a rank that put nothing cannot make this wait).
std::optional<pmix_value_t*> getLocal(const Proc& proc, const char* key) {
  pmix_info_t optional;
  PMIX_INFO_CONSTRUCT(&optional);
  bool yes = true;
  PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  pmix_status_t rc = PMIx_Get(proc.get(), key, &optional, 1, &value);
  PMIX_INFO_DESTRUCT(&optional);
  if (rc != PMIX_SUCCESS || !value) return std::nullopt;
  return value;
}

std::optional<std::string> getString(const Proc& proc, const char* key) {
  auto value = getLocal(proc, key);
  if (!value) return std::nullopt;
  std::optional<std::string> out;
  if ((*value)->type == PMIX_STRING && (*value)->data.string) out = (*value)->data.string;
  PMIX_VALUE_RELEASE(*value);
  return out;
}

}  // namespace

std::unique_ptr<PmixJob> PmixJob::join(std::string* why) {
  // PMIx_Init without a server makes a singleton: no job to learn from.
  const char* ns = std::getenv("PMIX_NAMESPACE");
  if (!ns || !*ns) {
    *why = "no PMIx server (PMIX_NAMESPACE is not set)";
    return nullptr;
  }
  // Only beside an MPI library that is in this same PMIx (Open MPI with
  // the system's PMIx, MPICH built with it): one with a PMIx of its own
  // would see a second client of its rank at its server, whose finalize
  // the server could take for the rank's.
  if (!PMIx_Initialized()) {
    *why = "the MPI library did not initialise this process's PMIx (it has its own, or none)";
    return nullptr;
  }
  pmix_proc_t me;
  PMIX_PROC_CONSTRUCT(&me);
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    *why = "PMIx_Init failed: " + errorText(rc);
    return nullptr;
  }
  auto job = std::make_unique<PmixJob>(Key{});
  job->nspace_.assign(me.nspace, strnlen(me.nspace, sizeof me.nspace));
  job->rank_ = me.rank;
  return job;
}

PmixJob::~PmixJob() { PMIx_Finalize(nullptr, 0); }

std::optional<uint32_t> PmixJob::jobSize() const {
  auto value = getLocal(Proc(nspace_, PMIX_RANK_WILDCARD), PMIX_JOB_SIZE);
  if (!value) return std::nullopt;
  std::optional<uint32_t> out;
  if ((*value)->type == PMIX_UINT32) out = (*value)->data.uint32;
  PMIX_VALUE_RELEASE(*value);
  return out;
}

std::optional<std::string> PmixJob::peerRecordOf(uint32_t pmix_rank) const {
  return getString(Proc(nspace_, pmix_rank), kPeerKey);
}

std::optional<PmixJob::Exchanged> PmixJob::exchange(const PmixValues::PeerRecord& mine, uint32_t world_size,
                                                    std::string* why) {
  // A failed put still goes to the fence: the other ranks wait there.
  std::string text = PmixValues::encode(mine);
  pmix_value_t value;
  PMIX_VALUE_CONSTRUCT(&value);
  value.type = PMIX_STRING;
  value.data.string = text.data();
  pmix_status_t put = PMIx_Put(PMIX_GLOBAL, kPeerKey, &value);
  pmix_status_t commit = put == PMIX_SUCCESS ? PMIx_Commit() : put;

  pmix_info_t collect;
  PMIX_INFO_CONSTRUCT(&collect);
  bool yes = true;
  PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  Proc everyone(nspace_, PMIX_RANK_WILDCARD);
  pmix_status_t fence = PMIx_Fence(everyone.get(), 1, &collect, 1);
  PMIX_INFO_DESTRUCT(&collect);
  if (fence != PMIX_SUCCESS) {
    *why = "PMIx_Fence failed: " + errorText(fence);
    return std::nullopt;
  }

  Exchanged out;
  out.job_id = mine.job;
  if (commit != PMIX_SUCCESS) out.problem = "its own record did not go into PMIx (" + errorText(commit) + ")";
  auto record = [&](uint32_t pmix_rank) -> std::optional<PmixValues::PeerRecord> {
    auto raw = peerRecordOf(pmix_rank);
    return raw ? PmixValues::decode(*raw) : std::nullopt;
  };
  auto problem = [&](std::string what) {
    if (out.problem.empty()) out.problem = std::move(what);
  };

  if (rank_ != 0) {
    if (auto first = record(0)) out.job_id = first->job;
    else problem("no record of rank 0 in PMIx");
  }

  // The ranks PMIx puts on this host: one of them with the same daemon and
  // a lower rank leads. Unsure is leading: a node list sent twice is the same.
  auto local = getString(everyone, PMIX_LOCAL_PEERS);
  auto peers = local ? PmixValues::parseRankList(*local, kMaxLocalPeers) : std::nullopt;
  if (!peers) problem("PMIx gave no list of the ranks on this node (PMIX_LOCAL_PEERS)");
  else
    for (uint32_t peer : *peers) {
      if (peer >= rank_) continue;
      auto other = record(peer);
      if (other && other->node == mine.node && other->endpoint == mine.endpoint) {
        out.node_leader = false;
        break;
      }
    }
  if (!out.node_leader) return out;

  std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> by_node;
  std::set<uint32_t> seen;
  for (uint32_t r = 0; r < world_size; ++r) {
    auto other = record(r);
    if (!other || other->world_rank >= world_size || !seen.insert(other->world_rank).second) {
      problem("rank " + std::to_string(r) + "'s record in PMIx is missing or wrong");
      return out;  // no node list rather than a wrong one
    }
    by_node[{other->node, other->endpoint}].push_back(other->world_rank);
  }
  for (auto& [key, ranks] : by_node) out.nodes.push_back({key.first, key.second, std::move(ranks)});
  return out;
}

#else  // built without PMIx

std::unique_ptr<PmixJob> PmixJob::join(std::string* why) {
  *why = "this agent was built without PMIx";
  return nullptr;
}
PmixJob::~PmixJob() = default;
std::optional<uint32_t> PmixJob::jobSize() const { return std::nullopt; }
std::optional<std::string> PmixJob::peerRecordOf(uint32_t) const { return std::nullopt; }
std::optional<PmixJob::Exchanged> PmixJob::exchange(const PmixValues::PeerRecord&, uint32_t, std::string* why) {
  *why = "this agent was built without PMIx";
  return std::nullopt;
}

#endif

}  // namespace nk::pmpi
