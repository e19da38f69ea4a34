#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "faults/process_state_reader.h"

namespace nk {

// How far one rank got in one communicator's collectives.
struct CommProgressRecord {
  std::string communicator;
  uint64_t collectives_entered = 0;
};

// One node of a job, as its rank 0 listed them (SetJobNodes).
struct JobNodeRecord {
  std::string node;
  std::string endpoint;  // where that node's daemon answers
  std::vector<uint32_t> ranks;
};

// One rank of a job registered at this daemon.
struct RankRecord {
  uint32_t rank = 0;
  std::string node;
  pid_t pid = -1;
  uint64_t start_time = 0;  // of `pid` at registration: tells a reused pid apart
  std::string endpoint;     // how other daemons reach this one, as the rank saw it
  std::vector<CommProgressRecord> communicators;
  std::string current_operation;
  int64_t registered_ns = 0;   // CLOCK_REALTIME, this daemon's
  int64_t last_report_ns = 0;  // of its last progress report; 0 before the first
  bool finalized = false;      // its last report came from MPI_Finalize
  int ending_signal = 0;       // its last report's (see RankEnding)
};

// How a job ended, as far as this daemon knows (the proto's JobEnd).
enum class JobEnd { kRunning, kCompleted, kFailed, kCancelled, kAborted, kUnknown };
std::string_view jobEndName(JobEnd end);

// What a job asked nodekeeper for (srun --nk-*).
struct JobSettings {
  uint64_t power_budget_mw = 0;  // 0: none
  std::string policy;
  std::string tasks;  // "", "lossless" or "lossy"
  bool debug = false;
};

struct JobRecord {
  std::string job_id;
  uid_t uid = 0;  // of its ranks' processes
  uint32_t size = 0;
  std::vector<JobNodeRecord> nodes;  // empty until SetJobNodes
  std::vector<RankRecord> ranks;     // registered here, by rank
  int64_t created_ns = 0;
  int64_t last_activity_ns = 0;
  // Its ranks here were ended by this signal (SIGINT, SIGTERM, SIGHUP):
  // cancelled, not faulty. 0 when not.
  int cancelled_by_signal = 0;
  std::string program;  // of its first process here; "" when not known
  int64_t end_ns = 0;   // 0 while it runs here (created_ns is its start)
  JobEnd end = JobEnd::kRunning;
  std::string end_detail;  // in a person's words: "exit 0", "cancelled by scancel (SIGTERM)"
  double energy_j = 0;     // what this node's packages spent on it
  std::string source = "mpi";  // who told this daemon of it: "mpi", "slurm"
  JobSettings settings;
  std::string nodes_from;  // "pmix", "mpi", "slurm"; "" before SetJobNodes
};

struct RankRegistration {
  std::string job_id;
  uint32_t rank = 0;
  uint32_t size = 0;
  std::string node;
  pid_t pid = -1;
  uid_t uid = 0;
  std::string endpoint;
  int64_t now_ns = 0;
};

// A scheduler's word that a job starts on this node (the Slurm plugin):
// its owner, its nodes (endpoints "" when the site gives no peer port) and
// what it asked for.
struct JobBeginning {
  std::string job_id;
  uid_t uid = 0;
  std::vector<JobNodeRecord> nodes;  // ranks empty: the scheduler does not know them
  JobSettings settings;
  std::string program;
  std::string source = "slurm";
  // The step's own process (slurmstepd), or 0: the tasks it starts are its
  // children, so attaching it makes every task the job's without a call per
  // task (each was a CLI run on the task's start path).
  pid_t step_pid = 0;
  int64_t now_ns = 0;
};

struct ProgressUpdate {
  std::string_view job_id;
  uint32_t rank = 0;
  std::vector<CommProgressRecord> communicators;
  std::string current_operation;
  int64_t now_ns = 0;
  bool finalized = false;
  int ending_signal = 0;
};

// The MPI jobs whose ranks registered at this daemon: each job's size and
// owner, the node list its rank 0 gave, and the progress of its local
// ranks. Jobs stay after their ranks end, for post-mortem listing; memory is
// bounded by a number of jobs, the oldest ended job making room first. A
// job id whose ranks have all gone may be used again by a new job.
class JobRegistry {
 public:
  struct Options {
    size_t max_jobs = 1000;
    size_t max_communicators = 4096;  // per rank and progress report
  };

  explicit JobRegistry(const ProcessStateReader& processes) : JobRegistry(processes, Options{}) {}
  JobRegistry(const ProcessStateReader& processes, Options options);

  // Adds the rank, or replaces an earlier registration of the same rank.
  // The job is its first rank's user's: ranks of other users may join it
  // only with `any_owner` (an admin).
  Status registerRank(RankRegistration registration, bool any_owner = false);
  // Checks that the nodes are named, have endpoints, and hold every rank of
  // the job exactly once, then replaces the job's node list. `source`: how
  // it was learnt: "pmix", "mpi", "slurm" ("" when not said).
  Status setNodes(std::string_view job_id, std::vector<JobNodeRecord> nodes, int64_t now_ns,
                  std::string_view source = {});
  // `caller_pid`: when set, the rank must have been registered by it.
  Status recordProgress(ProgressUpdate update, std::optional<pid_t> caller_pid);
  // OK when `caller_pid` registered `rank` of the job, or with no rank given,
  // any of its ranks here.
  Status checkCaller(std::string_view job_id, std::optional<uint32_t> rank, pid_t caller_pid) const;

  // The job ended here as cancelled, by `signal`: true the first time.
  // Also ends it as cancelled unless its end is known already.
  bool markCancelled(std::string_view job_id, int signal, int64_t now_ns);
  // Its end, as the first one to know tells it: true when this set it.
  bool markEnded(std::string_view job_id, JobEnd end, std::string detail, int64_t now_ns);
  // Energy this node's packages spent on the job (kept after it ends);
  // `program` names the job when it has no program yet.
  void addEnergy(std::string_view job_id, double joules, std::string_view program);
  // The job one of whose processes here is `pid`: a rank, a process
  // attached to it, or a descendant of one (found through its parents, at
  // most kMaxAncestors up).
  std::optional<std::string> jobOfProcess(pid_t pid) const;
  // Changes whenever a process may have joined or left a job here (a rank
  // registered, a job begun, a task attached, a job dropped): a caller that
  // keeps jobOfProcess' answers looks again only then.
  uint64_t membershipGeneration() const { return membership_generation_.load(std::memory_order_acquire); }

  // A scheduler begins the job here, or tells it again (another step):
  // then its settings and nodes are replaced. A job its ranks registered
  // first is taken over when the uid matches. An ended job's id begins a
  // new job. Such a job is not over when it has no ranks: it ends when
  // markEnded says so or every process attached to it is gone. A step_pid
  // is attached as attachProcess would, or nothing is changed.
  Status beginJob(JobBeginning beginning);
  // `pid` (a task the scheduler started) belongs to the job; so do its
  // descendants (jobOfProcess).
  Status attachProcess(std::string_view job_id, pid_t pid, int64_t now_ns);

  static constexpr size_t kMaxAttachedProcesses = 4096;  // per job
  static constexpr size_t kMaxJobNodes = 65536;
  static constexpr int kMaxAncestors = 64;

  std::optional<JobRecord> job(std::string_view job_id) const;
  std::vector<JobRecord> list(std::optional<uid_t> only_uid = std::nullopt) const;
  size_t size() const;

  ProcessState stateOf(const RankRecord& rank) const;
  // Its state and CPU time (ProcessStateReader::statusOf).
  ProcessStatus statusOf(const RankRecord& rank) const;
  // True when no process of the job's local ranks is left.
  bool ended(const JobRecord& job) const;

 private:
  struct AttachedProcess {
    pid_t pid = -1;
    uint64_t start_time = 0;
  };
  struct Job {
    JobRecord record;  // its `ranks` stay empty: they live in `ranks`
    std::map<uint32_t, RankRecord> ranks;
    std::vector<AttachedProcess> attached;  // by a scheduler (attachProcess)
  };

  static JobRecord snapshot(const Job& job);
  Status attachLocked(Job& job, std::string_view job_id, pid_t pid, uint64_t start_time, int64_t now_ns);
  bool endedLocked(const Job& job) const;
  void makeRoomLocked();

  const ProcessStateReader& processes_;
  Options options_;
  mutable std::mutex mutex_;
  std::map<std::string, Job, std::less<>> jobs_;
  std::atomic<uint64_t> membership_generation_{0};
};

}  // namespace nk
