#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "faults/fault_analyser.h"
#include "faults/fault_record.h"
#include "faults/fault_rule_base.h"
#include "faults/fault_tree.h"
#include "faults/peer_network.h"
#include "faults/prober.h"
#include "faults/symptom_record.h"

namespace nk {

// One node's part in one job's fault localisation tree: TFD (MPFL's
// Algorithm 1) for the symptoms seen here, the symptom set and TFA
// (Algorithm 2) for the nodes it localises, heartbeats to its FLN and the
// watch over those who heartbeat to it, and reporting to the root. Plain
// logic over a PeerNetwork and a Prober, driven by its caller's clock, so
// that the daemon and the simulation in bench/ run the same code. Not
// thread-safe: one caller at a time (the daemon's FaultTreeCoordinator
// thread, or the simulation's event loop).
class FaultLocaliser {
 public:
  struct Settings {
    std::chrono::milliseconds heartbeat_period{100};
    // Heartbeats missed (to or from a node) before it is suspected.
    size_t heartbeat_misses = 3;
    // A node that did not take a message is passed over by TFD and by
    // heartbeats for this long before it is tried again.
    std::chrono::milliseconds unreachable_hold{2000};
    // More held symptoms than this, and this node says it is overloaded.
    size_t max_held_symptoms = 10000;
    // The time a fault is confirmed at, when it is not the caller's `now`:
    // the daemon's probes take time that its tick's clock does not see.
    std::function<int64_t()> clock;
    // Each symptom this localiser raises itself (a lost heartbeat), once,
    // as it raises it: the daemon lists it with the ranks' symptoms.
    std::function<void(const SymptomRecord&)> on_raised;
    // How much this host's scheduling delay grows TFA's stall_after and
    // slow_rtt: SchedulingDelay's factor. Null: 1.
    std::function<double()> delay_factor;
    // How much it grows the lost heartbeat's timeout: heartbeats are sent
    // and watched by the daemon's raised fault-tree thread, so only that
    // thread's own lateness counts (SchedulingDelay's threadFactor). Null:
    // delay_factor.
    std::function<double()> heartbeat_delay_factor;
  };
  // Where a fault goes when this node is the one to report it.
  using FaultSink = std::function<void(const FaultRecord&)>;

  // The tree (and the node ranks below) may be shared by the localisers of
  // many nodes in one process (the simulation): nothing here copies them.
  FaultLocaliser(std::string job_id, uid_t uid, std::shared_ptr<const FaultTree> tree, std::string self,
                 Settings settings, std::shared_ptr<const FaultRuleBase> rules, PeerNetwork& network, Prober& prober,
                 FaultSink report);
  FaultLocaliser(std::string job_id, uid_t uid, FaultTree tree, std::string self, Settings settings,
                 std::shared_ptr<const FaultRuleBase> rules, PeerNetwork& network, Prober& prober, FaultSink report)
      : FaultLocaliser(std::move(job_id), uid, std::make_shared<const FaultTree>(std::move(tree)), std::move(self),
                       settings, std::move(rules), network, prober, std::move(report)) {}

  const FaultTree& tree() const { return *tree_; }
  const std::string& self() const { return self_; }
  const std::string& jobId() const { return job_id_; }
  uid_t uid() const { return uid_; }
  // The node this one heartbeats to now: its FLN, or an SFLN after the FLN
  // stopped answering; "" at the root.
  std::string currentParent() const;

  // TFD: a symptom seen at this node (its ranks, its own watch) about its
  // suspect node(s) goes to each suspect's localiser, the first that takes
  // it. A symptom naming a node outside the tree is dropped (false).
  bool detect(SymptomRecord symptom, int64_t now_ns);
  // A symptom another node sent here (or detect() kept here): held, and
  // TFA runs at once if it fires a trigger. Returns false when overloaded.
  bool receive(SymptomRecord symptom, int64_t now_ns);
  // A heartbeat from `node`: watched from now on until it leaves.
  // `sender_delay_factor`: the sender's own scheduling delay factor; its
  // silence is judged by the larger of that and this node's.
  void heartbeatFrom(const std::string& node, bool leaving, int64_t now_ns, double sender_delay_factor = 1.0);
  // A fault sent here for reporting (this node is the root or acting root).
  void publishHere(const FaultRecord& fault);
  // Every heartbeat period: heartbeat to the parent, watch the others' heartbeats, run TFA where
  // triggers fired.
  void tick(int64_t now_ns);
  // This node's ranks are done: say so to the parent and stop heartbeating.
  void leave(int64_t now_ns);
  // The job's ranks on each node: a fault whose symptoms named no rank (a
  // node that stopped heartbeating) is reported with its node's ranks.
  using NodeRanks = std::map<std::string, std::vector<uint32_t>>;
  void setNodeRanks(std::shared_ptr<const NodeRanks> node_ranks) { node_ranks_ = std::move(node_ranks); }
  void setNodeRanks(NodeRanks node_ranks) { node_ranks_ = std::make_shared<const NodeRanks>(std::move(node_ranks)); }
  // A different rule base (SIGHUP).
  void setRules(std::shared_ptr<const FaultRuleBase> rules) { rules_ = std::move(rules); }

  bool overloaded() const { return heldCount() > settings_.max_held_symptoms; }
  bool left() const { return left_; }
  // Nodes that heartbeat here and have not left.
  std::vector<std::string> watched() const;
  size_t heldCount() const;
  // What it did, for tests, logs and the simulation.
  struct Counters {
    size_t symptoms_detected = 0, symptoms_forwarded = 0, symptoms_received = 0, symptoms_dropped = 0;
    size_t analyses = 0, probes = 0, faults_confirmed = 0, faults_published = 0, heartbeats_sent = 0;
  };
  const Counters& counters() const { return counters_; }

 private:
  struct Watched {
    int64_t last_heard_ns = 0;
    bool suspected = false;  // a heartbeat_lost symptom was raised and not yet answered by a heartbeat
    double sender_delay_factor = 1.0;  // its own, as its last heartbeat said
  };

  void analyse(const std::string& node, int64_t now_ns);
  // The symptom, announced to Settings::on_raised: call it once per loss.
  SymptomRecord heartbeatLost(const std::string& suspect, int64_t timestamp_ns, std::string detail) const;
  SymptomRecord forNode(const SymptomRecord& symptom, const std::string& node) const;
  bool triggers(const std::string& node, const SymptomRecord& newest, int64_t now_ns) const;
  void report(FaultRecord fault, int64_t now_ns);
  void sendHeartbeat(int64_t now_ns, bool leaving);
  void watchHeartbeats(int64_t now_ns);
  bool reachable(const std::string& node, int64_t now_ns) const;
  void markUnreachable(const std::string& node, int64_t now_ns);
  void dropOld(int64_t now_ns);
  int64_t heartbeatTimeoutNs(double delay_factor) const;
  double delayFactor() const;
  double heartbeatDelayFactor() const;

  std::string job_id_;
  uid_t uid_;
  std::shared_ptr<const FaultTree> tree_;
  std::string self_;
  size_t self_index_;
  Settings settings_;
  std::shared_ptr<const FaultRuleBase> rules_;
  PeerNetwork& network_;
  Prober& prober_;
  FaultSink report_;

  std::map<std::string, std::vector<SymptomRecord>> held_;  // by suspect node
  std::set<std::string> due_;                               // nodes whose trigger fired
  std::map<std::string, std::set<FaultKind>> confirmed_;    // the faults found about each node
  std::set<std::string> down_;                              // nodes found down
  std::map<std::string, int64_t> last_analysis_ns_;
  std::set<std::string> lost_before_;  // localisers this node's heartbeats lost once
  std::string current_parent_;
  std::shared_ptr<const NodeRanks> node_ranks_;
  std::map<std::string, Watched> watched_;
  std::map<std::string, int64_t> unreachable_until_;
  size_t missed_heartbeats_ = 0;
  int64_t last_heartbeat_ns_ = 0;
  bool left_ = false;
  Counters counters_;
};

}  // namespace nk
