#pragma once

// A discrete-event simulation of one job's fault localisation tree: one
// FaultLocaliser per node (the daemon's own class, rules and analyser),
// each with its own simulated network endpoint (PeerNetwork and Prober),
// driven by a virtual clock in one process. Every call the localisers make
// is synchronous, as in the daemon: the calling node's thread is busy for
// the call's round trip, or for its deadline when the other node is dead or
// the message is lost. Events for a node whose thread is busy wait until it
// is free, as they wait in FaultTreeCoordinator's queue. See
// fault_tree_sim_bench.cc for what is measured.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faults/fault_localiser.h"
#include "faults/fault_record.h"
#include "faults/fault_report_log.h"
#include "faults/fault_rule_base.h"
#include "faults/fault_tree.h"
#include "faults/peer_network.h"
#include "faults/symptom_record.h"

namespace nk::faultsim {

enum class Scenario { kLeafCrash, kInnerCrash, kProcessHang, kFaultFree };
std::string_view scenarioName(Scenario scenario);

struct SimConfig {
  size_t nodes = 1000;
  size_t fan_out = 4;
  double loss = 0.01;          // each call's message is lost with this probability
  double delay_mean_us = 200;  // one way
  bool uniform_jitter = false; // delays uniform in [0.5, 1.5] x mean; else exponential
  // GrpcPeerNetwork's deadlines (the heartbeat's is the heartbeat period).
  std::chrono::milliseconds heartbeat_deadline{100};
  std::chrono::milliseconds message_deadline{500};
  std::chrono::milliseconds probe_deadline{250};
  FaultLocaliser::Settings localiser;
  std::chrono::milliseconds warmup{2000};
  uint64_t seed = 1;
};

// Messages sent (call attempts, whether or not they arrived). Heartbeats
// are counted apart: they are the background, the rest is fault traffic.
struct MessageCounts {
  uint64_t forwards = 0, publishes = 0, probes = 0, heartbeats = 0;
  uint64_t about_victim = 0;  // forwards, publishes and probes whose subject is the victim
  uint64_t total() const { return forwards + publishes + probes; }
};

struct PublishedFault {
  int64_t t_ns = 0;  // when it reached the node that published it
  uint32_t at = 0;   // that node
  bool fresh = false;  // the node's FaultReportLog took it as new
  FaultRecord fault;
};

struct TrialResult {
  Scenario scenario = Scenario::kFaultFree;
  uint64_t seed = 0;
  std::optional<uint32_t> victim;
  size_t victim_depth = 0, victim_children = 0;
  int64_t fault_ns = 0, end_ns = 0;
  uint32_t root = 0;  // who should publish: node 0, or the first live reporter when node 0 crashed
  // The first report about the victim, wherever it was published.
  std::optional<PublishedFault> first;
  bool correct = false;   // it names the victim, its rank and the expected kind
  bool off_root = false;  // it was published somewhere other than `root`
  double localisation_s = 0;
  std::vector<PublishedFault> false_reports;  // fresh reports about other nodes
  size_t duplicates = 0;  // publishes a FaultReportLog dropped as already reported
  // Forwarded symptoms and published faults delivered to `root` from the
  // fault until the first report + 1 s (the end of the run without one).
  size_t root_messages = 0;
  MessageCounts messages;  // sent by any node from the fault to the end of the run
  size_t analyses = 0, probes_by_localisers = 0;  // the localisers' own counters, over the run
  double wall_s = 0;
};

class FaultTreeSim {
 public:
  explicit FaultTreeSim(SimConfig config);
  ~FaultTreeSim();
  FaultTreeSim(const FaultTreeSim&) = delete;
  FaultTreeSim& operator=(const FaultTreeSim&) = delete;

  // Runs the warm-up from t = 0 and keeps its end state: each trial starts
  // from a copy of it.
  void warmUp();
  // Restores the warm-up's end state, injects the scenario's fault at a
  // random victim (or `victim`) a random fraction of a heartbeat period
  // later, and runs `after` past the fault.
  TrialResult runTrial(Scenario scenario, uint64_t seed, std::chrono::milliseconds after,
                       std::optional<uint32_t> victim = std::nullopt);

  const FaultTree& tree() const { return *tree_; }
  const SimConfig& config() const { return config_; }
  double buildWallS() const { return build_wall_s_; }
  double warmupWallS() const { return warmup_wall_s_; }
  // After the warm-up: non-root nodes their FLN does not watch (0 when
  // every node has heartbeated), and faults published during it.
  size_t unwatchedAfterWarmup() const { return unwatched_after_warmup_; }
  const std::vector<PublishedFault>& warmupReports() const { return warmup_reports_; }

  // What one localiser costs at this size: bytes, and one tick with an
  // instant network. For planning a run before building it.
  struct Cost {
    double bytes_per_localiser = 0;
    double tick_s = 0;
  };
  static Cost measureCost(size_t nodes, size_t fan_out);

 private:
  class Endpoint;
  friend class Endpoint;

  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  enum class EventType : uint8_t { kTick, kHeartbeat, kSymptom, kFault, kHang };
  struct Event {
    int64_t t;
    uint64_t seq;
    uint32_t node;
    uint32_t from;     // heartbeats
    uint32_t payload;  // index into the symptom or fault pool
    EventType type;
    bool leaving;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  };
  struct NodeState {
    int64_t busy_until = 0;
    int64_t dead_at = kNever;     // crashed: its daemon answers nothing
    int64_t stopped_at = kNever;  // its rank's process stopped (hang)
  };
  // Everything a trial changes, copied from the warm-up's end.
  struct State {
    std::vector<std::unique_ptr<FaultLocaliser>> localisers;
    std::vector<NodeState> nodes;
    std::priority_queue<Event, std::vector<Event>, Later> queue;
    uint64_t seq = 0;
    std::vector<SymptomRecord> symptoms;
    std::vector<uint32_t> free_symptoms;
    std::vector<FaultRecord> faults;
    std::vector<uint32_t> free_faults;
    std::mt19937_64 rng;
    int64_t now = 0;
  };
  struct Delivered {
    int64_t t;
    uint32_t to;
  };

  void copyState(const State& from, State& to) const;
  void push(Event event);
  void runUntil(int64_t end_ns);
  bool dead(uint32_t node, int64_t t) const { return t >= state_.nodes[node].dead_at; }
  std::optional<uint32_t> indexOf(std::string_view name) const;
  int64_t sampleDelay();
  bool lost();
  RankStatus rankStatus(uint32_t node, int64_t t) const;
  void published(uint32_t at, const FaultRecord& fault, int64_t t);
  void countSent(uint64_t MessageCounts::*kind, uint32_t subject);
  int64_t periodNs() const;

  // The endpoints' calls, made by the node whose event is being handled.
  PeerNetwork::Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom);
  PeerNetwork::Delivery publishFault(std::string_view node, const FaultRecord& fault);
  PeerNetwork::Delivery heartbeat(std::string_view node, bool leaving);
  std::vector<Result<PeerProgress>> rankProgress(std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds deadline);
  ResponseFindings responseProbe(std::string_view node, size_t attempts);
  StatusFindings statusProbe(std::string_view node);
  LogFindings logProbe(std::string_view node);

  SimConfig config_;
  // One tree and one rank map for every localiser, as in no daemon but
  // necessary at 10,000 nodes in one process.
  std::shared_ptr<const FaultTree> tree_;
  std::shared_ptr<const FaultLocaliser::NodeRanks> node_ranks_;
  std::shared_ptr<const FaultRuleBase> rules_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  State state_;
  State warm_;
  std::exponential_distribution<double> exp_delay_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};

  // The node whose event is being handled, and its thread's virtual time.
  uint32_t current_ = kNone;
  int64_t cursor_ = 0;

  // Per trial.
  bool measuring_ = false;
  int64_t measure_from_ = 0;
  uint32_t victim_ = kNone;
  MessageCounts sent_;
  std::vector<Delivered> delivered_;  // forwards and publishes, from measure_from_
  std::vector<PublishedFault> published_;
  std::map<uint32_t, std::unique_ptr<FaultReportLog>> logs_;

  double build_wall_s_ = 0, warmup_wall_s_ = 0;
  size_t unwatched_after_warmup_ = 0;
  std::vector<PublishedFault> warmup_reports_;
  bool warm_kept_ = false;
};

}  // namespace nk::faultsim
