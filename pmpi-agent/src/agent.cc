#include "agent.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

namespace nk::pmpi {

std::atomic<Agent*> Agent::active_{nullptr};

namespace {

constexpr uint32_t kLogCapacity = 4096;
// Past this a waiting call gives its core away between tests: ranks are
// often oversubscribed, and the rank it waits for may need the core.
constexpr auto kSpinBeforeYield = std::chrono::microseconds(50);

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

const char* getenvC(const char* name) { return std::getenv(name); }

// MPI_Init waits this long at most for the daemon's PeerInfo; a daemon
// that is absent answers at once (no socket), one that is stuck costs this.
constexpr std::chrono::milliseconds kPeerInfoTimeout{300};

// How long a rank ended by SIGINT, SIGTERM or SIGHUP waits for its daemon
// to take the news before the signal does what it would have done: a
// daemon that answers does so in milliseconds; one that is stuck costs a
// Ctrl-C this much, never more.
constexpr std::chrono::milliseconds kEndingReportDeadline{1000};

// The agent's threads (and gRPC's, made by them) leave SIGINT, SIGTERM and
// SIGHUP to the program's threads: a handler that ran on the link's thread
// would wait for its own report. Restores the caller's mask when done.
class EndingSignalsBlocked {
 public:
  EndingSignalsBlocked() {
    sigset_t ours;
    sigemptyset(&ours);
    for (int signal : EndingSignals::kSignals) sigaddset(&ours, signal);
    pthread_sigmask(SIG_BLOCK, &ours, &before_);
  }
  ~EndingSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  EndingSignalsBlocked(const EndingSignalsBlocked&) = delete;
  EndingSignalsBlocked& operator=(const EndingSignalsBlocked&) = delete;

 private:
  sigset_t before_;
};

// What every rank tells every other at MPI_Init, in one PMPI_Allgather,
// when PMIx does not carry it.
struct NodeRecord {
  char job[64];
  char node[64];
  char endpoint[256];
  int32_t pid;
};

void copyInto(char* out, size_t size, const std::string& s) {
  std::memset(out, 0, size);
  std::memcpy(out, s.data(), std::min(size - 1, s.size()));
}

// Rank 0's job id, whether this rank leads its node (the lowest rank of
// its daemon) and, for a leader, the job's nodes with their ranks: each
// node's leader gives its daemon the job's nodes, so that every daemon of
// the job can ask the others how far their ranks got.
JobLayout layoutFromAllgather(const std::string& job, const std::string& node, const std::string& endpoint,
                              uint32_t world_rank, uint32_t world_size) {
  NodeRecord mine{};
  copyInto(mine.job, sizeof mine.job, job);
  copyInto(mine.node, sizeof mine.node, node);
  copyInto(mine.endpoint, sizeof mine.endpoint, endpoint);
  mine.pid = static_cast<int32_t>(::getpid());
  std::vector<NodeRecord> records(world_size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, records.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  JobLayout layout;
  layout.nodes_from = "mpi";
  layout.job_id.assign(records[0].job, strnlen(records[0].job, sizeof records[0].job));
  for (uint32_t r = 0; r < world_rank; ++r)
    if (std::strncmp(records[r].node, mine.node, sizeof mine.node) == 0 &&
        std::strncmp(records[r].endpoint, mine.endpoint, sizeof mine.endpoint) == 0)
      layout.node_leader = false;
  if (!layout.node_leader) return layout;
  std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> by_node;
  for (uint32_t r = 0; r < world_size; ++r)
    by_node[{std::string(records[r].node, strnlen(records[r].node, sizeof records[r].node)),
             std::string(records[r].endpoint, strnlen(records[r].endpoint, sizeof records[r].endpoint))}]
        .push_back(r);
  for (auto& [key, ranks] : by_node) layout.nodes.push_back({key.first, key.second, std::move(ranks)});
  return layout;
}

// The same through PMIx: the program's communicators carry nothing of
// nodekeeper's. nullopt when the job's fence failed (every rank then
// falls back alike).
std::optional<JobLayout> layoutFromPmix(PmixJob& pmix, const PmixValues::PeerRecord& mine, uint32_t world_size,
                                        bool verbose, std::string* why) {
  auto exchanged = pmix.exchange(mine, world_size, why);
  if (!exchanged) return std::nullopt;
  if (!exchanged->problem.empty() && verbose)
    say("nodekeeper-pmpi: rank " + std::to_string(mine.world_rank) + ": " + exchanged->problem +
        (exchanged->node_leader && exchanged->nodes.empty() ? "; its node's daemon gets no node list from it" : ""));
  JobLayout layout;
  layout.nodes_from = "pmix";
  layout.job_id = std::move(exchanged->job_id);
  layout.node_leader = exchanged->node_leader;
  layout.nodes = std::move(exchanged->nodes);
  return layout;
}

// The agent stays until the process ends (threads may still be in a
// wrapper when MPI_Finalize's runs); its destructor removes the log file.
std::unique_ptr<Agent>& holder() {
  static std::unique_ptr<Agent> agent;
  return agent;
}

}  // namespace

Agent::Agent(Key, AgentOptions options)
    : options_(std::move(options)),
      deadlines_(DeadlinePolicy::Settings{std::chrono::duration_cast<std::chrono::nanoseconds>(options_.fixed_deadline),
                                          std::chrono::duration_cast<std::chrono::nanoseconds>(options_.deadline_floor),
                                          std::chrono::minutes(10), 10.0}) {}

Agent::~Agent() {
  ending_.reset();
  stopWatchdog();  // a program that exits without MPI_Finalize
  if (log_region_) ::munmap(log_region_, log_size_);
  if (!log_path_.empty()) ::unlink(log_path_.c_str());
}

void Agent::initialized() {
  if (active() || holder()) return;
  AgentOptions options = AgentOptions::fromEnvironment(&getenvC);
  for (const std::string& w : options.warnings) say(w);
  if (!options.enabled) return;
  auto agent = std::make_unique<Agent>(Key{}, std::move(options));
  PMPI_Comm_rank(MPI_COMM_WORLD, &agent->world_rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &agent->world_size_);
  std::vector<uint32_t> all(static_cast<size_t>(agent->world_size_));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
  agent->comms_.add(handleOf(MPI_COMM_WORLD), "world", std::move(all));

  // Until the end of MPI_Init: the threads made here inherit the mask.
  EndingSignalsBlocked blocked;
  std::string socket = agent->options_.socket_path;
  std::error_code ec;
  if (!socket.empty() && socket[0] != '/') socket = std::filesystem::absolute(socket, ec).string();
  // The daemon's names win: with --node-name and --listen it says how the
  // other daemons know it; without, the environment's node and the socket.
  DaemonLink::PeerInfo daemon = DaemonLink::peerInfo(socket, kPeerInfoTimeout);
  if (!daemon.node.empty()) agent->options_.node = daemon.node;
  const std::string endpoint = daemon.endpoint.empty() ? "unix:" + socket : daemon.endpoint;
  std::string job = agent->options_.job_id.empty() ? agent->options_.node + "-" + std::to_string(::getpid())
                                                   : agent->options_.job_id;
  const uint32_t world_rank = static_cast<uint32_t>(agent->world_rank_);
  const uint32_t world_size = static_cast<uint32_t>(agent->world_size_);
  std::optional<JobLayout> layout;
  std::string why_not_pmix = "NODEKEEPER_PMPI_PMIX=off";
  if (agent->options_.use_pmix) {
    agent->pmix_ = PmixJob::join(&why_not_pmix);
    // Every rank of a job gets the same answers to these (the launcher's
    // environment, the job's size): they all take the same path.
    if (agent->pmix_ && agent->pmix_->jobSize() != world_size) {
      why_not_pmix = "PMIx gives no job size, or another than MPI_COMM_WORLD's";
      agent->pmix_.reset();
    }
    if (agent->pmix_) {
      if (agent->options_.job_id.empty()) job = agent->pmix_->nspace();
      layout = layoutFromPmix(*agent->pmix_, {job, world_rank, agent->options_.node, endpoint}, world_size,
                              agent->options_.verbose, &why_not_pmix);
      if (!layout) agent->pmix_.reset();
    }
  }
  if (!layout) {
    if (agent->options_.verbose && world_rank == 0)
      say("nodekeeper-pmpi: learning the job's nodes with MPI_Allgather: " + why_not_pmix);
    layout = layoutFromAllgather(job, agent->options_.node, endpoint, world_rank, world_size);
  }
  agent->openLog();
  Agent* raw = agent.get();
  agent->link_ = std::make_unique<DaemonLink>(socket, agent->options_.heartbeat, [raw] { return raw->progress(); });
  agent->link_->start({layout->job_id, world_rank, world_size, agent->options_.node, endpoint,
                       static_cast<int32_t>(::getpid())},
                      std::move(layout->nodes), layout->nodes_from, layout->node_leader);
  agent->watchdog_ = std::thread([raw] { raw->watchdog(); });
  // The daemon takes a rank that ends by one of these for a cancelled job,
  // not a crash.
  agent->ending_ = EndingSignals::install(
      [raw](int) { raw->link_->reportProgressNow(kEndingReportDeadline); }, kEndingReportDeadline);
  // Marked in the message log too: on a busy node mpirun's SIGKILL may
  // follow before the report is out, and the daemon reads the mark then.
  if (agent->ending_ && agent->log_ && !agent->log_path_.empty())
    EndingSignals::markInto(agent->log_->endingSignalMark());
  holder() = std::move(agent);
  active_.store(raw, std::memory_order_release);
}

void Agent::finalizing() {
  Agent* agent = active_.exchange(nullptr, std::memory_order_acq_rel);
  if (!agent) return;
  // After MPI_Finalize a signal ends nothing the daemon watches.
  agent->ending_.reset();
  agent->stopWatchdog();
  if (agent->link_) agent->link_->stop(std::chrono::milliseconds(1000), true);
  // Its PMIx_Init's match, while the MPI library's still holds PMIx.
  agent->pmix_.reset();
}

std::optional<size_t> Agent::watch(const Call& call) {
  return collectives_in_flight_.enter(call, monotonicNs(), deadlines_.deadline(call.kind).count());
}

void Agent::watched(std::optional<size_t> slot, const Call& call) {
  if (!slot) return;
  deadlines_.completed(call.kind, std::chrono::nanoseconds(collectives_in_flight_.leave(*slot, monotonicNs())));
}

// Reports from here touch only the agent's own registries, never MPI: the
// program may not have asked for MPI_THREAD_MULTIPLE.
void Agent::watchdog() {
  std::unique_lock lock(watchdog_mutex_);
  while (!watchdog_stopping_) {
    watchdog_wake_.wait_for(lock, std::chrono::milliseconds(50), [&] { return watchdog_stopping_; });
    lock.unlock();
    for (const auto& [call, waited] : collectives_in_flight_.due(monotonicNs()))
      timedOut(call, std::chrono::nanoseconds(waited));
    lock.lock();
  }
}

void Agent::stopWatchdog() {
  {
    std::lock_guard lock(watchdog_mutex_);
    watchdog_stopping_ = true;
  }
  watchdog_wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void Agent::openLog() {
  log_size_ = wire::MessageLog::regionSize(kLogCapacity);
  log_path_ = "/dev/shm/nodekeeper-pmpi-" + std::to_string(::getpid()) + ".log";
  int fd = ::open(log_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(log_size_)) == 0) {
    void* p = ::mmap(nullptr, log_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) log_region_ = p;
  }
  if (fd >= 0) ::close(fd);
  if (!log_region_) {
    // No /dev/shm: the log stays private to the process.
    if (fd >= 0) ::unlink(log_path_.c_str());
    log_path_.clear();
    void* p = ::mmap(nullptr, log_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    log_region_ = p;
  }
  log_ = std::make_unique<wire::MessageLog>(std::span(static_cast<std::byte*>(log_region_), log_size_), kLogCapacity);
}

Agent::Call Agent::pointToPoint(const char* name, MPI_Comm comm, int peer, int tag, int count, MPI_Datatype type) {
  Call call;
  call.name = name;
  call.kind = DeadlinePolicy::Kind::kPointToPoint;
  call.comm = comm;
  call.peer = peer;
  call.tag = tag;
  int size = 0;
  if (type != MPI_DATATYPE_NULL && count > 0 && PMPI_Type_size(type, &size) == MPI_SUCCESS && size > 0)
    call.bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
  call.start_ns = realtimeNs();
  current_operation_.store(name, std::memory_order_relaxed);
  return call;
}

Agent::Call Agent::collective(const char* name, MPI_Comm comm, int count, MPI_Datatype type) {
  Call call = pointToPoint(name, comm, MPI_PROC_NULL, 0, count, type);
  call.kind = DeadlinePolicy::Kind::kCollective;
  call.collective_seq = comms_.enterCollective(handleOf(comm));
  return call;
}

Agent::Call Agent::waitOn(const char* name, const MPI_Request* requests, int count) {
  Call call;
  call.name = name;
  call.kind = DeadlinePolicy::Kind::kWait;
  call.requests = requests;
  call.request_count = count;
  call.start_ns = realtimeNs();
  current_operation_.store(name, std::memory_order_relaxed);
  return call;
}

int Agent::waitLoop(Call& call, int (*test)(void*, int*), void* context) {
  const int64_t start = monotonicNs();
  const int64_t deadline = deadlines_.deadline(call.kind).count();
  int64_t next_report = start + deadline;
  int reports = 0;
  int flag = 0, rc = MPI_SUCCESS;
  int64_t now = start;
  for (uint32_t i = 1;; ++i) {
    rc = test(context, &flag);
    if (rc != MPI_SUCCESS || flag) break;
    if ((i & 15) != 0) continue;
    now = monotonicNs();
    if (now >= next_report) {
      timedOut(call, std::chrono::nanoseconds(now - start));
      // Again after twice as long, and so on: a hang stays visible without
      // a symptom every deadline.
      next_report = now + (deadline << std::min(++reports, 10));
    }
    if (now - start > std::chrono::duration_cast<std::chrono::nanoseconds>(kSpinBeforeYield).count()) sched_yield();
  }
  deadlines_.completed(call.kind, std::chrono::nanoseconds(monotonicNs() - start));
  return rc;
}

std::vector<uint32_t> Agent::worldRanksOf(MPI_Group group) const {
  std::vector<uint32_t> out;
  int n = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0) return out;
  MPI_Group world;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<size_t>(n)), translated(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, n, ranks.data(), world, translated.data());
  PMPI_Group_free(&world);
  for (int r : translated) out.push_back(r == MPI_UNDEFINED ? CommRegistry::kUnmapped : static_cast<uint32_t>(r));
  return out;
}

std::vector<uint32_t> Agent::worldRanks(MPI_Comm comm) const {
  MPI_Group group;
  if (comm == MPI_COMM_NULL || PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return {};
  std::vector<uint32_t> out = worldRanksOf(group);
  PMPI_Group_free(&group);
  return out;
}

std::vector<uint32_t> Agent::remoteWorldRanks(MPI_Comm comm) const {
  int inter = 0;
  MPI_Group group;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || !inter ||
      PMPI_Comm_remote_group(comm, &group) != MPI_SUCCESS)
    return {};
  std::vector<uint32_t> out = worldRanksOf(group);
  PMPI_Group_free(&group);
  return out;
}

void Agent::describeCollective(SymptomReport& s, uint64_t comm, uint64_t collective_seq) const {
  if (auto info = comms_.find(comm)) {
    s.communicator = info->id;
    // The daemons refuse ranks outside the job.
    for (uint32_t r : info->allWorldRanks())
      if (r != CommRegistry::kUnmapped) s.communicator_members.push_back(r);
  }
  s.collective_seq = collective_seq;
}

void Agent::timedOut(const Call& call, std::chrono::nanoseconds waited) {
  SymptomReport s;
  s.kind = SymptomReport::Kind::kResponseTimeout;
  s.operation = call.name;
  s.waited_s = std::chrono::duration<double>(waited).count();
  s.timestamp_ns = realtimeNs();
  char what[160];
  if (call.kind == DeadlinePolicy::Kind::kCollective) {
    describeCollective(s, handleOf(call.comm), call.collective_seq);
    std::snprintf(what, sizeof what, "waited %.1f s in %s on %s (its collective #%llu there)", s.waited_s, call.name,
                  s.communicator.empty() ? "an unknown communicator" : s.communicator.c_str(),
                  static_cast<unsigned long long>(call.collective_seq));
  } else if (call.kind == DeadlinePolicy::Kind::kPointToPoint) {
    auto info = comms_.find(handleOf(call.comm));
    const bool inter = info && info->isInter();
    if (call.peer == MPI_ANY_SOURCE) {
      if (info) {
        s.communicator = info->id;
        // Any source on an intercommunicator is any of the remote group.
        for (uint32_t r : inter ? info->remote_world_ranks : info->world_ranks)
          if (r != static_cast<uint32_t>(world_rank_) && r != CommRegistry::kUnmapped) s.communicator_members.push_back(r);
      }
      std::snprintf(what, sizeof what, "waited %.1f s in %s from any source, tag %d", s.waited_s, call.name, call.tag);
    } else if (auto w = comms_.worldRank(handleOf(call.comm), call.peer)) {
      s.suspect_ranks.push_back(*w);
      std::snprintf(what, sizeof what, "waited %.1f s in %s with rank %u, tag %d", s.waited_s, call.name, *w,
                    call.tag);
    } else {
      std::snprintf(what, sizeof what, "waited %.1f s in %s with %s %d, tag %d", s.waited_s, call.name,
                    inter ? "remote rank" : "rank", call.peer, call.tag);
    }
  } else {
    std::vector<uint64_t> handles;
    for (int i = 0; i < call.request_count; ++i) {
      handles.push_back(handleOf(call.requests[i]));
      auto entry = requests_.find(handles.back());
      if (!entry) continue;
      if (entry->peer >= 0 &&
          std::find(s.suspect_ranks.begin(), s.suspect_ranks.end(), static_cast<uint32_t>(entry->peer)) ==
              s.suspect_ranks.end())
        s.suspect_ranks.push_back(static_cast<uint32_t>(entry->peer));
    }
    if (auto collective = requests_.latestCollective(handles)) {
      // Reported as its blocking form would be: the daemons find who has
      // not entered it.
      describeCollective(s, collective->communicator, collective->collective_seq);
      std::snprintf(what, sizeof what, "waited %.1f s in %s on %d request(s), among them %s on %s (its collective #%llu there)",
                    s.waited_s, call.name, call.request_count, collective->operation,
                    s.communicator.empty() ? "an unknown communicator" : s.communicator.c_str(),
                    static_cast<unsigned long long>(collective->collective_seq));
    } else {
      std::snprintf(what, sizeof what, "waited %.1f s in %s on %d request(s)", s.waited_s, call.name,
                    call.request_count);
    }
  }
  s.detail = what;
  if (link_) link_->report(std::move(s));
}

int Agent::end(Call& call, int rc) {
  current_operation_.store(nullptr, std::memory_order_relaxed);
  int64_t peer = -1;
  if (call.peer >= 0 && call.comm != MPI_COMM_NULL)
    if (auto w = comms_.worldRank(handleOf(call.comm), call.peer)) peer = *w;
  if (log_)
    log_->append(call.name, static_cast<int32_t>(peer), call.tag, call.bytes, call.start_ns, realtimeNs(), rc);
  if (rc != MPI_SUCCESS && link_) {
    SymptomReport s;
    s.kind = SymptomReport::Kind::kMpiError;
    s.operation = call.name;
    s.error_code = rc;
    s.timestamp_ns = realtimeNs();
    if (peer >= 0) s.suspect_ranks.push_back(static_cast<uint32_t>(peer));
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    PMPI_Error_string(rc, text, &length);
    s.detail = std::string(call.name) + " returned " + std::string(text, static_cast<size_t>(std::max(0, length)));
    link_->report(std::move(s));
  }
  return rc;
}

int Agent::checked(const char* name, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  Call call;
  call.name = name;
  call.start_ns = realtimeNs();
  return end(call, rc);
}

void Agent::requestStarted(MPI_Request request, const char* operation, MPI_Comm comm, int peer, bool persistent) {
  if (request == MPI_REQUEST_NULL) return;
  RequestRegistry::Entry e;
  e.operation = operation;
  e.communicator = handleOf(comm);
  e.persistent = persistent;
  if (peer == MPI_ANY_SOURCE) {
    e.peer = RequestRegistry::kAnyPeer;
  } else if (peer >= 0) {
    auto w = comms_.worldRank(handleOf(comm), peer);
    e.peer = w ? static_cast<int64_t>(*w) : RequestRegistry::kNoPeer;
  }
  requests_.add(handleOf(request), e);
}

void Agent::collectiveStarted(MPI_Request request, const char* operation, MPI_Comm comm) {
  uint64_t seq = comms_.enterCollective(handleOf(comm));
  if (request == MPI_REQUEST_NULL) return;
  RequestRegistry::Entry e;
  e.operation = operation;
  e.communicator = handleOf(comm);
  e.collective = true;
  e.collective_seq = seq;
  requests_.add(handleOf(request), e);
}

void Agent::requestsSettled(std::span<const MPI_Request> before, std::span<const MPI_Request> after) {
  for (size_t i = 0; i < before.size() && i < after.size(); ++i)
    if (before[i] != MPI_REQUEST_NULL && after[i] == MPI_REQUEST_NULL) requests_.completed(handleOf(before[i]));
}

void Agent::requestFreed(MPI_Request request) { requests_.freed(handleOf(request)); }

void Agent::commCreated(MPI_Comm parent, MPI_Comm child, std::optional<int> colour) {
  // Every member of the parent counts the creation, even one left out of
  // the child, so that the ids stay in step.
  std::string id = comms_.childId(handleOf(parent), colour);
  if (child == MPI_COMM_NULL) return;
  comms_.add(handleOf(child), std::move(id), worldRanks(child), remoteWorldRanks(child));
}

void Agent::commCreatedByMembers(MPI_Comm parent, MPI_Comm child) {
  if (child == MPI_COMM_NULL) return;
  std::vector<uint32_t> members = worldRanks(child);
  std::string id = comms_.memberChildId(handleOf(parent), members);
  comms_.add(handleOf(child), std::move(id), std::move(members), remoteWorldRanks(child));
}

void Agent::intercommCreated(MPI_Comm intercomm) {
  if (intercomm == MPI_COMM_NULL) return;
  std::vector<uint32_t> local = worldRanks(intercomm), remote = remoteWorldRanks(intercomm);
  std::string id = comms_.interId(local, remote);
  comms_.add(handleOf(intercomm), std::move(id), std::move(local), std::move(remote));
}

void Agent::commFreed(MPI_Comm comm) { comms_.remove(handleOf(comm)); }

ProgressSnapshot Agent::progress() const {
  ProgressSnapshot p;
  p.communicators = comms_.progress();
  const char* op = current_operation_.load(std::memory_order_relaxed);
  if (op) p.current_operation = op;
  p.ending_signal = EndingSignals::ending();
  return p;
}

}  // namespace nk::pmpi
