#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "faults/cancellation_check.h"
#include "faults/cpu_progress_tracker.h"
#include "faults/fault_localiser.h"
#include "faults/fault_record.h"
#include "faults/fault_report_log.h"
#include "faults/fault_rule_base.h"
#include "faults/local_rank_watch.h"
#include "faults/peer_network.h"
#include "faults/prober.h"
#include "faults/scheduling_delay.h"
#include "faults/self_answering_prober.h"

namespace nk {

class JobRegistry;
class SymptomStore;

// The daemon's fault localisation: one FaultLocaliser per job whose node
// list names this node, all driven from one thread, so that a slow peer
// (every network call has a deadline) delays the tree's work but never a
// gRPC handler. Handlers hand over symptoms and heartbeats and return at
// once; a backlog over `max_queue` makes this node say it is overloaded,
// and TFD at the sender then tries the suspect's next localiser.
class FaultTreeCoordinator {
 public:
  struct NodeState {
    double load = 0;  // per CPU
    double max_temperature_c = 0;
    bool thermal_alarm = false;
  };
  struct Options {
    FaultLocaliser::Settings localiser;
    size_t fan_out = 4;
    size_t max_queue = 10000;
    // A job's tree is dropped once this node left it and nobody heartbeats
    // here any more, or when no rank of it lives here and nothing happened
    // for this long.
    std::chrono::seconds linger{30};
    std::function<NodeState()> node_state;
    // Each fault published here (this node is the root or acting root), once.
    std::function<void(const FaultRecord&)> on_published;
    std::function<void(const std::string&)> log_info;
    // Where the symptoms this daemon raises itself (a rank that exited or
    // stopped, a lost heartbeat, a thermal alarm) are listed beside the
    // ranks' (`nodekeeper symptoms`): once each, here where they are
    // raised, not where the tree sends them. Null: not listed.
    SymptomStore* symptoms = nullptr;
    // The time between heartbeat ticks, each tick (busy_node_bench reads it).
    std::function<void(const std::string&)> log_debug;
    // Run first on the coordinator's thread (the daemon raises its priority).
    std::function<void()> on_thread_start;
    // The log probe about this node, read here (MessageLogProbe): probes
    // about this node never go through the network (SelfAnsweringProber).
    // Null: unanswered.
    std::function<LogFindings(std::string_view job_id, int64_t from_ns, int64_t to_ns)> local_log_probe;
    // The signal an ended rank's agent marked before it ended (its message
    // log), for a rank whose report of it never arrived: mpirun SIGKILLs a
    // rank still in its SIGTERM handler a second later, and on a busy node
    // the report may not be out by then. 0: none. Null: not read.
    std::function<int(pid_t pid, uid_t uid)> ending_signal_left;
    // Fed here with how late each heartbeat tick woke and with the CPU
    // pressure; its factor grows stall_after, the lost heartbeat's timeout
    // and TFA's thresholds. Null: timeouts stay as configured.
    std::shared_ptr<SchedulingDelay> scheduling_delay;
    // A job whose ranks here ended by a cancelling signal is listed as
    // cancelled only after this long (grown by the scheduling delay)
    // without news of a crash on another node (CancellationCheck).
    std::chrono::milliseconds cancellation_grace{1000};
    // "some avg10" of /proc/pressure/cpu, read once a tick (CpuPressure).
    std::function<std::optional<double>()> cpu_pressure;
  };

  // `default_node`: this node's name when no rank of a job says otherwise.
  FaultTreeCoordinator(std::string default_node, JobRegistry& jobs, PeerNetwork& network, Prober& prober,
                       FaultReportLog& reports, std::shared_ptr<const FaultRuleBase> rules, Options options);
  ~FaultTreeCoordinator();
  FaultTreeCoordinator(const FaultTreeCoordinator&) = delete;
  FaultTreeCoordinator& operator=(const FaultTreeCoordinator&) = delete;

  void start();
  void stop();

  // The job's node list arrived (SetJobNodes): build or rebuild its tree.
  void jobNodesChanged(const std::string& job_id);
  // A symptom one of this node's ranks reported (TFD from here).
  void detect(SymptomRecord symptom);
  // A symptom another node's TFD sent here; false: overloaded.
  bool receive(SymptomRecord symptom);
  // True when this node is in the job's tree. `sender_delay_factor`: the
  // sender's scheduling delay factor (FaultLocaliser::heartbeatFrom).
  bool heartbeat(const std::string& job_id, const std::string& from, bool leaving, double sender_delay_factor = 1.0);
  // A fault for this node to publish as root: the fault with its id, or
  // nullopt when it had been reported.
  std::optional<FaultRecord> publish(FaultRecord fault);
  // The status probe's answer about this node's ranks of the job.
  StatusFindings localStatus(const std::string& job_id) const;
  void setRules(std::shared_ptr<const FaultRuleBase> rules);
  bool overloaded() const;
  // The node name this daemon has in the job's tree ("" when none).
  std::string selfIn(const std::string& job_id) const;
  // True when `node` is this daemon's name in the job's tree; with an
  // empty `job_id`, in any job's tree here (or its default name).
  bool isSelf(std::string_view job_id, std::string_view node) const;
  // True when `node` is in the job's tree here.
  bool inTree(const std::string& job_id, const std::string& node) const;
  size_t jobCount() const;

 private:
  struct JobTree {
    std::unique_ptr<FaultLocaliser> localiser;
    LocalRankWatch watch;
    int64_t last_activity_ns = 0;
    CancellationCheck cancellation{std::chrono::milliseconds(0)};
    bool overruled_said = false;
  };
  using Event = std::function<void(int64_t now_ns)>;

  void post(Event event);
  void run();
  void tickAll(int64_t now_ns);
  std::vector<RankStatus> rankStatuses(const std::string& job_id, int64_t now_ns) const;
  std::shared_ptr<const FaultRuleBase> rules() const;
  void listRaised(const SymptomRecord& raised) const;
  // A rank of the job crashed on `node`: this node's SIGTERM endings, if
  // any, are the crash's teardown, not a cancellation.
  void crashNews(const std::string& job_id, JobTree& tree, const std::string& node);
  void sayOverruled(const std::string& job_id, JobTree& tree);

  const std::string default_node_;
  JobRegistry& jobs_;
  PeerNetwork& network_;
  FaultReportLog& reports_;
  Options options_;
  // What the localisers probe with: this node answered here, others by `prober`.
  SelfAnsweringProber prober_;

  mutable std::mutex mutex_;  // queue, rules, selves
  std::condition_variable wake_;
  std::deque<Event> queue_;
  std::shared_ptr<const FaultRuleBase> rules_;
  std::map<std::string, std::string> selves_;  // job -> this node's name in it
  std::map<std::string, std::set<std::string>> members_;  // job -> its tree's nodes
  bool stopping_ = false;
  std::thread thread_;

  std::map<std::string, JobTree> trees_;  // only the thread touches these
  // Looked at by the thread's ticks and by status probes' handlers alike.
  mutable CpuProgressTracker cpu_progress_;
};

}  // namespace nk
