#include "faults/job_registry.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "base/signal_name.h"
#include "base/single_quoted.h"

namespace nk {

namespace {

constexpr size_t kMaxIdBytes = 256;

Error noSuchJob(std::string_view job_id) {
  return notFound("no job " + singleQuoted(job_id) +
                  " is registered at this daemon (its ranks call RegisterRank first)");
}

Error noSuchRank(std::string_view job_id, uint32_t rank) {
  return notFound("rank " + std::to_string(rank) + " of job " + singleQuoted(job_id) +
                  " is not registered at this daemon (RegisterRank first)");
}

bool isDead(ProcessState state) { return state == ProcessState::kGone || state == ProcessState::kZombie; }

}  // namespace

JobRegistry::JobRegistry(const ProcessStateReader& processes, Options options)
    : processes_(processes), options_(options) {
  options_.max_jobs = std::max<size_t>(options_.max_jobs, 1);
}

ProcessState JobRegistry::stateOf(const RankRecord& rank) const {
  return processes_.stateOf(rank.pid, rank.start_time);
}

ProcessStatus JobRegistry::statusOf(const RankRecord& rank) const {
  return processes_.statusOf(rank.pid, rank.start_time);
}

bool JobRegistry::endedLocked(const Job& job) const {
  const bool ranks_gone = std::all_of(job.ranks.begin(), job.ranks.end(),
                                      [&](const auto& entry) { return isDead(stateOf(entry.second)); });
  if (!ranks_gone) return false;
  if (job.record.source == "mpi") return true;
  // A scheduler's job may have no ranks at all (not MPI, or not yet): it
  // is over when the scheduler said so, or when all it started here is gone.
  if (job.record.end != JobEnd::kRunning) return true;
  return !job.attached.empty() && std::all_of(job.attached.begin(), job.attached.end(), [&](const AttachedProcess& p) {
    return isDead(processes_.stateOf(p.pid, p.start_time));
  });
}

bool JobRegistry::ended(const JobRecord& job) const {
  return std::all_of(job.ranks.begin(), job.ranks.end(), [&](const RankRecord& r) { return isDead(stateOf(r)); });
}

// Only when full, so /proc is read for every job only then.
void JobRegistry::makeRoomLocked() {
  while (jobs_.size() >= options_.max_jobs) {
    auto victim = jobs_.end();
    bool victim_ended = false;
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      bool it_ended = endedLocked(it->second);
      if (victim == jobs_.end() || (it_ended && !victim_ended) ||
          (it_ended == victim_ended && it->second.record.last_activity_ns < victim->second.record.last_activity_ns)) {
        victim = it;
        victim_ended = it_ended;
      }
    }
    jobs_.erase(victim);
    membership_generation_.fetch_add(1, std::memory_order_release);
  }
}

Status JobRegistry::registerRank(RankRegistration r, bool any_owner) {
  if (r.job_id.empty()) return invalidArgument("job_id is empty");
  if (r.job_id.size() > kMaxIdBytes)
    return invalidArgument("job_id is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  if (r.size == 0) return invalidArgument("size is 0: a job has at least one rank");
  if (r.rank >= r.size)
    return invalidArgument("rank " + std::to_string(r.rank) + " is not below size " + std::to_string(r.size));
  if (r.node.empty()) return invalidArgument("node is empty: give the node's name (NODEKEEPER_NODE or the host name)");
  if (r.node.size() > kMaxIdBytes)
    return invalidArgument("node is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  if (r.endpoint.size() > kMaxIdBytes)
    return invalidArgument("endpoint is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  if (r.pid <= 0) return invalidArgument("pid " + std::to_string(r.pid) + " is not a process id");
  auto status = processes_.read(r.pid);
  if (!status) return invalidArgument("pid " + std::to_string(r.pid) + " is not a running process");

  RankRecord rank;
  rank.rank = r.rank;
  rank.node = std::move(r.node);
  rank.pid = r.pid;
  rank.start_time = status->start_time;
  rank.endpoint = std::move(r.endpoint);
  rank.registered_ns = r.now_ns;

  std::lock_guard lock(mutex_);
  auto it = jobs_.find(r.job_id);
  // A job id whose ranks have all ended may come back (a rerun, a reused
  // scheduler id): that is a new job, not a rank joining the old one.
  if (it != jobs_.end() && endedLocked(it->second)) {
    jobs_.erase(it);
    it = jobs_.end();
  }
  if (it == jobs_.end()) {
    makeRoomLocked();
    Job job;
    job.record.job_id = r.job_id;
    job.record.uid = r.uid;
    job.record.size = r.size;
    job.record.created_ns = r.now_ns;
    it = jobs_.emplace(r.job_id, std::move(job)).first;
  } else {
    JobRecord& existing = it->second.record;
    if (existing.uid != r.uid && !any_owner)
      return permissionDenied("job " + singleQuoted(r.job_id) + " belongs to uid " + std::to_string(existing.uid) +
                              "; a rank of uid " + std::to_string(r.uid) + " may not join it");
    // A job a scheduler began has no size until its first rank comes.
    if (existing.size == 0 && it->second.ranks.empty()) existing.size = r.size;
    if (existing.size != r.size)
      return invalidArgument("size " + std::to_string(r.size) + " differs from the size " +
                             std::to_string(existing.size) + " that job " + singleQuoted(r.job_id) +
                             " was registered with");
  }
  it->second.record.last_activity_ns = r.now_ns;
  it->second.ranks[rank.rank] = std::move(rank);
  membership_generation_.fetch_add(1, std::memory_order_release);
  return {};
}

Status JobRegistry::setNodes(std::string_view job_id, std::vector<JobNodeRecord> nodes, int64_t now_ns,
                             std::string_view source) {
  if (job_id.empty()) return invalidArgument("job_id is empty");
  if (!source.empty() && source != "pmix" && source != "mpi" && source != "slurm")
    return invalidArgument("source " + singleQuoted(source.substr(0, kMaxIdBytes)) +
                           " is not \"pmix\", \"mpi\" or \"slurm\" (where the node list came from)");
  if (nodes.empty()) return invalidArgument("nodes is empty: list the job's nodes with their ranks");
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return noSuchJob(job_id);
  const uint32_t size = it->second.record.size;
  // A node the ranks name without an endpoint (its daemon has no --listen)
  // is reached where the scheduler's node list says (peer_port).
  for (JobNodeRecord& n : nodes)
    if (n.endpoint.empty())
      for (const JobNodeRecord& known : it->second.record.nodes)
        if (known.ranks.empty() && known.node == n.node) n.endpoint = known.endpoint;

  std::unordered_map<std::string, size_t> node_index;
  std::unordered_map<uint32_t, size_t> rank_node;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const JobNodeRecord& n = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (n.node.empty()) return invalidArgument(where + ".node is empty");
    if (n.node.size() > kMaxIdBytes)
      return invalidArgument(where + ".node is longer than " + std::to_string(kMaxIdBytes) + " bytes");
    const std::string named = where + " (node " + singleQuoted(n.node) + ")";
    if (n.endpoint.empty()) return invalidArgument(named + " has no endpoint");
    if (n.endpoint.size() > kMaxIdBytes)
      return invalidArgument(named + ": endpoint is longer than " + std::to_string(kMaxIdBytes) + " bytes");
    if (n.ranks.empty()) return invalidArgument(named + " lists no ranks");
    // One name with two endpoints is two daemons (emulated nodes on one
    // host); the same pair twice is a mistake.
    auto [seen, fresh] = node_index.emplace(n.node + '\n' + n.endpoint, i);
    if (!fresh)
      return invalidArgument("node " + singleQuoted(n.node) + " at " + n.endpoint + " is listed twice (nodes[" +
                             std::to_string(seen->second) + "] and nodes[" + std::to_string(i) + "])");
    for (uint32_t rank : n.ranks) {
      if (rank >= size)
        return invalidArgument(named + " lists rank " + std::to_string(rank) + ", but job " + singleQuoted(job_id) +
                               " has size " + std::to_string(size));
      auto [other, first] = rank_node.emplace(rank, i);
      if (!first)
        return invalidArgument("rank " + std::to_string(rank) + " is listed twice (on node " +
                               singleQuoted(nodes[other->second].node) + " and on node " + singleQuoted(n.node) + ")");
    }
  }
  if (rank_node.size() < size) {
    // Every listed rank is below size and listed once, so the scan finds
    // the first missing ones after at most as many steps as ranks listed.
    std::vector<uint32_t> missing;
    for (uint32_t rank = 0; rank < size && missing.size() < 3; ++rank)
      if (!rank_node.count(rank)) missing.push_back(rank);
    const size_t count = size - rank_node.size();
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 3; ++i) list += (i ? ", " : "") + std::to_string(missing[i]);
    if (count > 3) list += ", ...";
    if (count == 1) return invalidArgument("rank " + list + " of job " + singleQuoted(job_id) + " is on no node");
    return invalidArgument(std::to_string(count) + " ranks of job " + singleQuoted(job_id) + " are on no node (" +
                           list + ")");
  }
  it->second.record.nodes = std::move(nodes);
  it->second.record.nodes_from = source;
  it->second.record.last_activity_ns = now_ns;
  return {};
}

Status JobRegistry::recordProgress(ProgressUpdate update, std::optional<pid_t> caller_pid) {
  if (update.communicators.size() > options_.max_communicators)
    return invalidArgument("progress report of rank " + std::to_string(update.rank) + " lists " +
                           std::to_string(update.communicators.size()) + " communicators; at most " +
                           std::to_string(options_.max_communicators) + " are kept");
  for (size_t i = 0; i < update.communicators.size(); ++i) {
    const std::string& name = update.communicators[i].communicator;
    if (name.empty()) return invalidArgument("communicators[" + std::to_string(i) + "].communicator is empty");
    if (name.size() > kMaxIdBytes)
      return invalidArgument("communicators[" + std::to_string(i) + "].communicator is longer than " +
                             std::to_string(kMaxIdBytes) + " bytes");
  }
  if (update.current_operation.size() > kMaxIdBytes)
    return invalidArgument("current_operation is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(update.job_id);
  if (it == jobs_.end()) return noSuchJob(update.job_id);
  auto rank = it->second.ranks.find(update.rank);
  if (rank == it->second.ranks.end()) return noSuchRank(update.job_id, update.rank);
  if (caller_pid && rank->second.pid != *caller_pid)
    return permissionDenied("rank " + std::to_string(update.rank) + " of job " + singleQuoted(update.job_id) +
                            " was registered by pid " + std::to_string(rank->second.pid) + "; you are pid " +
                            std::to_string(*caller_pid));
  rank->second.communicators = std::move(update.communicators);
  rank->second.current_operation = std::move(update.current_operation);
  rank->second.last_report_ns = update.now_ns;
  rank->second.finalized = rank->second.finalized || update.finalized;
  rank->second.ending_signal = update.ending_signal;
  it->second.record.last_activity_ns = update.now_ns;
  return {};
}

Status JobRegistry::checkCaller(std::string_view job_id, std::optional<uint32_t> rank, pid_t caller_pid) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return noSuchJob(job_id);
  const auto& ranks = it->second.ranks;
  if (rank) {
    auto found = ranks.find(*rank);
    if (found == ranks.end()) return noSuchRank(job_id, *rank);
    if (found->second.pid == caller_pid) return {};
    return permissionDenied("rank " + std::to_string(*rank) + " of job " + singleQuoted(job_id) +
                            " was registered by pid " + std::to_string(found->second.pid) + "; you are pid " +
                            std::to_string(caller_pid));
  }
  for (const auto& [number, record] : ranks)
    if (record.pid == caller_pid) return {};
  return permissionDenied("pid " + std::to_string(caller_pid) + " registered no rank of job " + singleQuoted(job_id) +
                          " at this daemon; only the job's ranks (or an admin) may do this");
}

std::string_view jobEndName(JobEnd end) {
  switch (end) {
    case JobEnd::kRunning: return "running";
    case JobEnd::kCompleted: return "completed";
    case JobEnd::kFailed: return "failed";
    case JobEnd::kCancelled: return "cancelled";
    case JobEnd::kAborted: return "aborted";
    case JobEnd::kUnknown: return "unknown";
  }
  return "unknown";
}

bool JobRegistry::markCancelled(std::string_view job_id, int signal, int64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.record.cancelled_by_signal != 0) return false;
  JobRecord& record = it->second.record;
  record.cancelled_by_signal = signal;
  if (record.end == JobEnd::kRunning) {
    record.end = JobEnd::kCancelled;
    record.end_detail = "cancelled: its ranks ended by " + signalName(signal);
    record.end_ns = now_ns;
  }
  return true;
}

bool JobRegistry::markEnded(std::string_view job_id, JobEnd end, std::string detail, int64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.record.end != JobEnd::kRunning || end == JobEnd::kRunning) return false;
  JobRecord& record = it->second.record;
  record.end = end;
  record.end_detail = std::move(detail);
  record.end_ns = now_ns;
  return true;
}

void JobRegistry::addEnergy(std::string_view job_id, double joules, std::string_view program) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  JobRecord& record = it->second.record;
  if (joules > 0) record.energy_j += joules;
  if (record.program.empty()) record.program = program;
}

std::optional<std::string> JobRegistry::jobOfProcess(pid_t pid) const {
  // The process and its ancestors, nearest first, read before taking the
  // lock: /proc is slow next to the lookups.
  std::unordered_map<pid_t, std::pair<size_t, uint64_t>> lineage;  // pid -> (generation, start time)
  pid_t current = pid;
  for (int generation = 0; generation <= kMaxAncestors && current > 1; ++generation) {
    auto status = processes_.read(current);
    if (!status) break;
    if (!lineage.emplace(current, std::make_pair(static_cast<size_t>(generation), status->start_time)).second) break;
    current = status->ppid;
  }
  std::lock_guard lock(mutex_);
  std::optional<std::string> best;
  size_t best_generation = SIZE_MAX;
  auto consider = [&](const std::string& id, pid_t candidate, uint64_t start_time, bool exact_pid_is_enough) {
    if (candidate == pid && exact_pid_is_enough) {
      if (best_generation > 0) best = id, best_generation = 0;
      return;
    }
    auto found = lineage.find(candidate);
    if (found == lineage.end()) return;
    const auto [generation, seen_start] = found->second;
    // A pid the kernel gave to another process is not the one attached.
    if (start_time != 0 && seen_start != 0 && start_time != seen_start) return;
    if (generation < best_generation) best = id, best_generation = generation;
  };
  for (const auto& [id, job] : jobs_) {
    for (const auto& [number, rank] : job.ranks) consider(id, rank.pid, rank.start_time, true);
    for (const AttachedProcess& attached : job.attached) consider(id, attached.pid, attached.start_time, false);
  }
  return best;
}

namespace {

bool isPlainWord(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
}

}  // namespace

Status JobRegistry::beginJob(JobBeginning b) {
  if (b.job_id.empty()) return invalidArgument("job_id is empty");
  if (b.job_id.size() > kMaxIdBytes)
    return invalidArgument("job_id is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  if (!isPlainWord(b.job_id)) return invalidArgument("job_id " + singleQuoted(b.job_id) + " holds spaces or control characters");
  if (b.source.empty() || b.source.size() > 32 || !isPlainWord(b.source))
    return invalidArgument("source must be a word of at most 32 bytes");
  if (b.program.size() > kMaxIdBytes)
    return invalidArgument("program is longer than " + std::to_string(kMaxIdBytes) + " bytes");
  if (b.settings.policy.size() > 64 || !isPlainWord(b.settings.policy))
    return invalidArgument("policy must be a name of at most 64 bytes without spaces");
  if (!b.settings.tasks.empty() && b.settings.tasks != "lossless" && b.settings.tasks != "lossy")
    return invalidArgument("tasks " + singleQuoted(b.settings.tasks) + " is neither 'lossless' nor 'lossy'");
  if (b.nodes.size() > kMaxJobNodes)
    return invalidArgument("nodes lists " + std::to_string(b.nodes.size()) + " nodes; at most " +
                           std::to_string(kMaxJobNodes) + " are taken");
  std::unordered_map<std::string_view, size_t> names;
  for (size_t i = 0; i < b.nodes.size(); ++i) {
    const JobNodeRecord& n = b.nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (n.node.empty() || n.node.size() > kMaxIdBytes || !isPlainWord(n.node))
      return invalidArgument(where + ".node must be a host name of 1 to " + std::to_string(kMaxIdBytes) + " bytes");
    if (n.endpoint.size() > kMaxIdBytes || !isPlainWord(n.endpoint))
      return invalidArgument(where + ".endpoint must be HOST:PORT of at most " + std::to_string(kMaxIdBytes) + " bytes");
    if (!n.ranks.empty()) return invalidArgument(where + " lists ranks; a scheduler's node list has none");
    if (!names.emplace(n.node, i).second) return invalidArgument("node " + singleQuoted(n.node) + " is listed twice");
  }
  std::optional<ProcessStatus> step;
  if (b.step_pid != 0) {
    if (b.step_pid <= 1) return invalidArgument("step_pid " + std::to_string(b.step_pid) + " is not a step's process id");
    step = processes_.read(b.step_pid);
    if (!step) return invalidArgument("step_pid " + std::to_string(b.step_pid) + " is not a running process");
  }

  std::lock_guard lock(mutex_);
  auto it = jobs_.find(b.job_id);
  // Between two steps of an allocation (salloc runs them one after the
  // other) a scheduler's job has no process here and no end told: the next
  // step goes on with it, energy and all. One whose end is known, or
  // another user's or source's, is over.
  if (it != jobs_.end() && endedLocked(it->second)) {
    const JobRecord& was = it->second.record;
    if (was.end != JobEnd::kRunning || was.uid != b.uid || was.source != b.source) {
      jobs_.erase(it);
      it = jobs_.end();
    }
  }
  if (it == jobs_.end()) {
    makeRoomLocked();
    Job job;
    job.record.job_id = b.job_id;
    job.record.uid = b.uid;
    job.record.created_ns = b.now_ns;
    it = jobs_.emplace(b.job_id, std::move(job)).first;
  } else if (it->second.record.uid != b.uid) {
    return permissionDenied("job " + singleQuoted(b.job_id) + " belongs to uid " + std::to_string(it->second.record.uid) +
                            ", not " + std::to_string(b.uid));
  }
  // First: the one part that can fail on a job already here.
  if (step)
    if (Status s = attachLocked(it->second, b.job_id, b.step_pid, step->start_time, b.now_ns); !s) return s;
  JobRecord& record = it->second.record;
  record.source = std::move(b.source);
  record.settings = std::move(b.settings);
  if (record.program.empty()) record.program = std::move(b.program);
  // The ranks' own list knows which rank runs where; the scheduler's does not.
  if (record.nodes.empty() && !b.nodes.empty()) {
    record.nodes = std::move(b.nodes);
    record.nodes_from = record.source;
  }
  record.last_activity_ns = b.now_ns;
  membership_generation_.fetch_add(1, std::memory_order_release);
  return {};
}

Status JobRegistry::attachProcess(std::string_view job_id, pid_t pid, int64_t now_ns) {
  if (pid <= 1) return invalidArgument("pid " + std::to_string(pid) + " is not a task's process id");
  auto status = processes_.read(pid);
  if (!status) return invalidArgument("pid " + std::to_string(pid) + " is not a running process");
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return noSuchJob(job_id);
  return attachLocked(it->second, job_id, pid, status->start_time, now_ns);
}

Status JobRegistry::attachLocked(Job& job, std::string_view job_id, pid_t pid, uint64_t start_time, int64_t now_ns) {
  auto& attached = job.attached;
  for (const AttachedProcess& p : attached)
    if (p.pid == pid && p.start_time == start_time) return {};
  if (attached.size() >= kMaxAttachedProcesses) {
    std::erase_if(attached, [&](const AttachedProcess& p) { return isDead(processes_.stateOf(p.pid, p.start_time)); });
    if (attached.size() >= kMaxAttachedProcesses)
      return resourceExhausted("job " + singleQuoted(job_id) + " has " + std::to_string(attached.size()) +
                               " processes attached here already");
  }
  attached.push_back({pid, start_time});
  job.record.last_activity_ns = now_ns;
  membership_generation_.fetch_add(1, std::memory_order_release);
  return {};
}

JobRecord JobRegistry::snapshot(const Job& job) {
  JobRecord record = job.record;
  record.ranks.reserve(job.ranks.size());
  for (const auto& [number, rank] : job.ranks) record.ranks.push_back(rank);
  return record;
}

std::optional<JobRecord> JobRegistry::job(std::string_view job_id) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return snapshot(it->second);
}

std::vector<JobRecord> JobRegistry::list(std::optional<uid_t> only_uid) const {
  std::lock_guard lock(mutex_);
  std::vector<JobRecord> out;
  for (const auto& [id, job] : jobs_)
    if (!only_uid || job.record.uid == *only_uid) out.push_back(snapshot(job));
  return out;
}

size_t JobRegistry::size() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

}  // namespace nk
