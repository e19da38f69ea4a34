#include "fault_tree_sim.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <span>
#include <utility>

#include "faults/local_rank_watch.h"
#include "faults/rule_file_parser.h"

namespace nk::faultsim {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kJob = "sim";
constexpr uid_t kUid = 1000;
constexpr std::string_view kOperation = "MPI_Allreduce";

int64_t toNs(std::chrono::milliseconds ms) { return std::chrono::duration_cast<std::chrono::nanoseconds>(ms).count(); }

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<std::string> nodeNames(size_t n) {
  std::vector<std::string> names;
  names.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string name(1, 'n');  // not "n" + ...: GCC 12 warns about that (-Wrestrict)
    name += std::to_string(i);
    names.push_back(std::move(name));
  }
  return names;
}

template <typename T>
uint32_t store(std::vector<T>& pool, std::vector<uint32_t>& free_slots, T value) {
  if (!free_slots.empty()) {
    uint32_t slot = free_slots.back();
    free_slots.pop_back();
    pool[slot] = std::move(value);
    return slot;
  }
  pool.push_back(std::move(value));
  return static_cast<uint32_t>(pool.size() - 1);
}

// Bytes malloc has handed out and not taken back, from its heap and as
// mmapped chunks (RSS would miss memory that an earlier, freed simulation
// left resident).
double heapInUse() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd);
}

// For measureCost: every call answers at once.
class InstantNetwork final : public PeerNetwork, public Prober {
 public:
  Delivery forwardSymptom(std::string_view, const SymptomRecord&) override { return Delivery::kAccepted; }
  Delivery publishFault(std::string_view, const FaultRecord&) override { return Delivery::kAccepted; }
  Delivery heartbeat(std::string_view, std::string_view, std::string_view, bool) override {
    return Delivery::kAccepted;
  }
  std::vector<Result<PeerProgress>> rankProgress(std::string_view, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds) override {
    return std::vector<Result<PeerProgress>>(nodes.size(), PeerProgress{});
  }
  ResponseFindings responseProbe(std::string_view, size_t attempts) override {
    return {attempts, attempts, std::chrono::microseconds(400)};
  }
  StatusFindings statusProbe(std::string_view, std::string_view) override { return {}; }
  LogFindings logProbe(std::string_view, std::string_view, int64_t, int64_t) override { return {}; }
};

}  // namespace

std::string_view scenarioName(Scenario scenario) {
  switch (scenario) {
    case Scenario::kLeafCrash: return "leaf crash";
    case Scenario::kInnerCrash: return "inner crash";
    case Scenario::kProcessHang: return "process hang";
    case Scenario::kFaultFree: return "fault-free";
  }
  return "?";
}

// One node's network and prober: every call goes to the simulation, made
// by this node's thread (the node whose event is being handled).
class FaultTreeSim::Endpoint final : public PeerNetwork, public Prober {
 public:
  Endpoint(FaultTreeSim& sim, uint32_t self) : sim_(sim), self_(self) {}

  Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom) override {
    check();
    return sim_.forwardSymptom(node, symptom);
  }
  Delivery publishFault(std::string_view node, const FaultRecord& fault) override {
    check();
    return sim_.publishFault(node, fault);
  }
  Delivery heartbeat(std::string_view node, std::string_view, std::string_view, bool leaving) override {
    check();
    return sim_.heartbeat(node, leaving);
  }
  std::vector<Result<PeerProgress>> rankProgress(std::string_view, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds deadline) override {
    check();
    return sim_.rankProgress(nodes, deadline);
  }
  ResponseFindings responseProbe(std::string_view node, size_t attempts) override {
    check();
    return sim_.responseProbe(node, attempts);
  }
  StatusFindings statusProbe(std::string_view, std::string_view node) override {
    check();
    return sim_.statusProbe(node);
  }
  LogFindings logProbe(std::string_view, std::string_view node, int64_t, int64_t) override {
    check();
    return sim_.logProbe(node);
  }

 private:
  void check() const {
    if (sim_.current_ == self_) return;
    std::fprintf(stderr, "fault_tree_sim: node %u called out while node %u's event was handled\n", self_,
                 sim_.current_);
    std::abort();
  }
  FaultTreeSim& sim_;
  uint32_t self_;
};

FaultTreeSim::FaultTreeSim(SimConfig config)
    : config_(config),
      tree_(std::make_shared<const FaultTree>(nodeNames(std::max<size_t>(config.nodes, 2)), config.fan_out)),
      rules_(std::make_shared<FaultRuleBase>(RuleFileParser::builtIn())),
      exp_delay_(1.0 / std::max(1.0, config.delay_mean_us * 1000.0)) {
  auto start = Clock::now();
  const size_t n = tree_->size();
  config_.nodes = n;
  std::mt19937_64 setup(config_.seed);
  endpoints_.reserve(n);
  state_.localisers.reserve(n);
  state_.nodes.assign(n, NodeState{});
  // One rank per node, rank i on node i, as the job's node list says
  // (FaultTreeCoordinator::jobNodesChanged gives every localiser the list).
  FaultLocaliser::NodeRanks node_ranks;
  for (uint32_t i = 0; i < n; ++i) node_ranks[tree_->name(i)] = {i};
  node_ranks_ = std::make_shared<const FaultLocaliser::NodeRanks>(std::move(node_ranks));
  for (uint32_t i = 0; i < n; ++i) {
    endpoints_.push_back(std::make_unique<Endpoint>(*this, i));
    Endpoint& endpoint = *endpoints_.back();
    state_.localisers.push_back(std::make_unique<FaultLocaliser>(
        kJob, kUid, tree_, tree_->name(i), config_.localiser, rules_, endpoint, endpoint,
        [this, i](const FaultRecord& fault) { published(i, fault, cursor_); }));
    state_.localisers.back()->setNodeRanks(node_ranks_);
  }
  // Each daemon started at its own moment: ticks spread over one period.
  std::uniform_int_distribution<int64_t> phase(0, periodNs() - 1);
  for (uint32_t i = 0; i < n; ++i) push({phase(setup), 0, i, 0, 0, EventType::kTick, false});
  state_.rng.seed(setup());
  build_wall_s_ = secondsSince(start);
}

FaultTreeSim::~FaultTreeSim() = default;

int64_t FaultTreeSim::periodNs() const { return toNs(config_.localiser.heartbeat_period); }

void FaultTreeSim::push(Event event) {
  event.seq = state_.seq++;
  state_.queue.push(event);
}

std::optional<uint32_t> FaultTreeSim::indexOf(std::string_view name) const {
  if (name.size() < 2 || name.front() != 'n') return std::nullopt;
  uint32_t index = 0;
  auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), index);
  if (ec != std::errc() || end != name.data() + name.size() || index >= tree_->size() || tree_->name(index) != name)
    return std::nullopt;
  return index;
}

int64_t FaultTreeSim::sampleDelay() {
  double mean = config_.delay_mean_us * 1000.0;
  double d = config_.uniform_jitter ? mean * (0.5 + unit_(state_.rng)) : exp_delay_(state_.rng);
  return std::max<int64_t>(1, static_cast<int64_t>(d));
}

bool FaultTreeSim::lost() { return config_.loss > 0 && unit_(state_.rng) < config_.loss; }

void FaultTreeSim::countSent(uint64_t MessageCounts::*kind, uint32_t subject) {
  if (!measuring_ || cursor_ < measure_from_) return;
  ++(sent_.*kind);
  if (kind != &MessageCounts::heartbeats && subject == victim_) ++sent_.about_victim;
}

RankStatus FaultTreeSim::rankStatus(uint32_t node, int64_t t) const {
  RankStatus r;
  r.rank = node;
  r.finalized = false;
  r.current_operation = std::string(kOperation);
  const int64_t stopped_at = state_.nodes[node].stopped_at;
  if (t >= stopped_at) {
    r.state = ProcessState::kStopped;
    r.report_age = std::chrono::milliseconds(100 + (t - stopped_at) / 1000000);
  } else {
    // The PMPI agent reports every 200 ms: on average 100 ms ago.
    r.state = ProcessState::kRunning;
    r.report_age = std::chrono::milliseconds(100);
  }
  return r;
}

PeerNetwork::Delivery FaultTreeSim::forwardSymptom(std::string_view node, const SymptomRecord& symptom) {
  auto to = indexOf(node);
  if (!to) return PeerNetwork::Delivery::kOverloaded;  // NOT_FOUND: an answer, not a timeout
  countSent(&MessageCounts::forwards, indexOf(symptom.suspect_node).value_or(kNone));
  const int64_t there = sampleDelay(), back = sampleDelay();
  if (lost() || dead(*to, cursor_ + there)) {
    cursor_ += toNs(config_.message_deadline);
    return PeerNetwork::Delivery::kUnreachable;
  }
  const int64_t at = cursor_ + there;
  push({at, 0, *to, current_, store(state_.symptoms, state_.free_symptoms, symptom), EventType::kSymptom, false});
  if (measuring_ && at >= measure_from_) delivered_.push_back({at, *to});
  cursor_ += there + back;
  return PeerNetwork::Delivery::kAccepted;
}

PeerNetwork::Delivery FaultTreeSim::publishFault(std::string_view node, const FaultRecord& fault) {
  auto to = indexOf(node);
  if (!to) return PeerNetwork::Delivery::kOverloaded;
  countSent(&MessageCounts::publishes, indexOf(fault.node).value_or(kNone));
  const int64_t there = sampleDelay(), back = sampleDelay();
  if (lost() || dead(*to, cursor_ + there)) {
    cursor_ += toNs(config_.message_deadline);
    return PeerNetwork::Delivery::kUnreachable;
  }
  const int64_t at = cursor_ + there;
  push({at, 0, *to, current_, store(state_.faults, state_.free_faults, fault), EventType::kFault, false});
  if (measuring_ && at >= measure_from_) delivered_.push_back({at, *to});
  cursor_ += there + back;
  return PeerNetwork::Delivery::kAccepted;
}

PeerNetwork::Delivery FaultTreeSim::heartbeat(std::string_view node, bool leaving) {
  auto to = indexOf(node);
  if (!to) return PeerNetwork::Delivery::kOverloaded;
  countSent(&MessageCounts::heartbeats, *to);
  const int64_t there = sampleDelay(), back = sampleDelay();
  if (lost() || dead(*to, cursor_ + there)) {
    cursor_ += toNs(config_.heartbeat_deadline);
    return PeerNetwork::Delivery::kUnreachable;
  }
  push({cursor_ + there, 0, *to, current_, 0, EventType::kHeartbeat, leaving});
  cursor_ += there + back;
  return PeerNetwork::Delivery::kAccepted;
}

// All nodes are asked at once: the caller's thread waits for the slowest
// answer, or for the deadline when a node does not answer. No localiser
// asks this (the symptom intake does, before a symptom enters the tree), so
// it is not counted as fault traffic.
std::vector<Result<PeerProgress>> FaultTreeSim::rankProgress(std::span<const JobNodeRecord> nodes,
                                                             std::chrono::milliseconds deadline) {
  std::vector<Result<PeerProgress>> answers;
  answers.reserve(nodes.size());
  int64_t waited = 0;
  for (const JobNodeRecord& node : nodes) {
    auto to = indexOf(node.node);
    if (!to) {
      answers.emplace_back(notFound("no node " + node.node + " in the simulation"));
      continue;
    }
    const int64_t there = sampleDelay(), back = sampleDelay();
    if (lost() || dead(*to, cursor_ + there)) {
      waited = std::max(waited, toNs(deadline));
      answers.emplace_back(unavailable("deadline exceeded"));
      continue;
    }
    const int64_t at = cursor_ + there;
    RankStatus status = rankStatus(*to, at);
    PeerRankProgress rank;
    rank.rank = status.rank;
    rank.node = tree_->name(*to);
    if (status.report_age)
      rank.last_report_ns = at - std::chrono::duration_cast<std::chrono::nanoseconds>(*status.report_age).count();
    rank.process_state = std::string(processStateName(status.state));
    answers.emplace_back(PeerProgress{at, {std::move(rank)}});
    waited = std::max(waited, there + back);
  }
  cursor_ += waited;
  return answers;
}

ResponseFindings FaultTreeSim::responseProbe(std::string_view node, size_t attempts) {
  ResponseFindings findings;
  auto to = indexOf(node);
  for (size_t i = 0; i < attempts; ++i) {
    ++findings.attempts;
    if (!to) continue;
    countSent(&MessageCounts::probes, *to);
    const int64_t there = sampleDelay(), back = sampleDelay();
    if (lost() || dead(*to, cursor_ + there)) {
      // A timeout: GrpcPeerNetwork waits before the next attempt only
      // after a fast refusal, which a crashed node does not send.
      cursor_ += toNs(config_.probe_deadline);
      continue;
    }
    cursor_ += there + back;
    ++findings.answered;
    auto rtt = std::chrono::microseconds((there + back) / 1000);
    if (findings.best_rtt.count() == 0 || rtt < findings.best_rtt) findings.best_rtt = rtt;
  }
  return findings;
}

StatusFindings FaultTreeSim::statusProbe(std::string_view node) {
  StatusFindings findings;
  auto to = indexOf(node);
  if (!to) return findings;
  countSent(&MessageCounts::probes, *to);
  const int64_t there = sampleDelay(), back = sampleDelay();
  if (lost() || dead(*to, cursor_ + there)) {
    cursor_ += toNs(config_.probe_deadline);
    return findings;
  }
  findings.answered = true;
  findings.load = 0.5;
  findings.max_temperature_c = 55;
  findings.ranks.push_back(rankStatus(*to, cursor_ + there));
  cursor_ += there + back;
  return findings;
}

LogFindings FaultTreeSim::logProbe(std::string_view node) {
  LogFindings findings;
  auto to = indexOf(node);
  if (!to) return findings;
  countSent(&MessageCounts::probes, *to);
  const int64_t there = sampleDelay(), back = sampleDelay();
  if (lost() || dead(*to, cursor_ + there)) {
    cursor_ += toNs(config_.probe_deadline);
    return findings;
  }
  findings.answered = true;
  cursor_ += there + back;
  return findings;
}

void FaultTreeSim::published(uint32_t at, const FaultRecord& fault, int64_t t) {
  auto& log = logs_[at];
  if (!log) log = std::make_unique<FaultReportLog>();
  std::optional<FaultRecord> fresh = log->publish(fault);
  PublishedFault record{t, at, fresh.has_value(), fresh ? std::move(*fresh) : fault};
  if (warm_kept_) published_.push_back(std::move(record));
  else warmup_reports_.push_back(std::move(record));
}

void FaultTreeSim::runUntil(int64_t end_ns) {
  const int64_t period = periodNs();
  auto& queue = state_.queue;
  while (!queue.empty() && queue.top().t < end_ns) {
    Event e = queue.top();
    queue.pop();
    state_.now = e.t;
    if (dead(e.node, e.t)) {
      if (e.type == EventType::kSymptom) state_.free_symptoms.push_back(e.payload);
      if (e.type == EventType::kFault) state_.free_faults.push_back(e.payload);
      continue;  // a crashed node's ticks stop and what reaches it is lost
    }
    if (e.type == EventType::kFault) {
      // FaultTreeServiceImpl::PublishFault publishes in the gRPC handler,
      // without waiting for the node's fault tree thread.
      FaultRecord fault = std::move(state_.faults[e.payload]);
      state_.free_faults.push_back(e.payload);
      published(e.node, fault, e.t);
      continue;
    }
    NodeState& node = state_.nodes[e.node];
    if (node.busy_until > e.t) {
      // Queued behind what the node's thread is doing.
      e.t = node.busy_until;
      push(e);
      continue;
    }
    current_ = e.node;
    cursor_ = e.t;
    FaultLocaliser& localiser = *state_.localisers[e.node];
    switch (e.type) {
      case EventType::kTick:
        localiser.tick(e.t);
        // FaultTreeCoordinator::run: the next tick a period after this one ended.
        push({cursor_ + period, 0, e.node, 0, 0, EventType::kTick, false});
        break;
      case EventType::kHeartbeat: localiser.heartbeatFrom(tree_->name(e.from), e.leaving, e.t); break;
      case EventType::kSymptom: {
        SymptomRecord symptom = std::move(state_.symptoms[e.payload]);
        state_.free_symptoms.push_back(e.payload);
        localiser.receive(std::move(symptom), e.t);
        break;
      }
      case EventType::kHang: {
        // The node's own watch over its ranks, then TFD from here, as in
        // FaultTreeCoordinator::tickAll.
        LocalRankWatch watch(rules_->stall_after);
        RankStatus rank = rankStatus(e.node, e.t);
        LocalRankWatch::Outcome outcome = watch.check(kJob, localiser.uid(), tree_->name(e.node),
                                                      std::span<const RankStatus>(&rank, 1), false, 55.0, e.t);
        for (SymptomRecord& s : outcome.symptoms) localiser.detect(std::move(s), e.t);
        break;
      }
      case EventType::kFault: break;
    }
    state_.nodes[e.node].busy_until = cursor_;
    current_ = kNone;
  }
  state_.now = std::max(state_.now, end_ns);
}

void FaultTreeSim::copyState(const State& from, State& to) const {
  to.localisers.clear();
  to.localisers.reserve(from.localisers.size());
  for (const auto& l : from.localisers) to.localisers.push_back(std::make_unique<FaultLocaliser>(*l));
  to.nodes = from.nodes;
  to.queue = from.queue;
  to.seq = from.seq;
  to.symptoms = from.symptoms;
  to.free_symptoms = from.free_symptoms;
  to.faults = from.faults;
  to.free_faults = from.free_faults;
  to.rng = from.rng;
  to.now = from.now;
}

void FaultTreeSim::warmUp() {
  auto start = Clock::now();
  runUntil(toNs(config_.warmup));
  // Every node should be watched by its FLN by now.
  unwatched_after_warmup_ = 0;
  for (size_t p = 0; p < tree_->size(); ++p) {
    std::vector<size_t> children = tree_->children(p);
    if (children.empty()) continue;
    std::vector<std::string> watched = state_.localisers[p]->watched();
    std::set<std::string> seen(watched.begin(), watched.end());
    for (size_t c : children)
      if (!seen.count(tree_->name(c))) ++unwatched_after_warmup_;
  }
  copyState(state_, warm_);
  warm_kept_ = true;
  warmup_wall_s_ = secondsSince(start);
}

TrialResult FaultTreeSim::runTrial(Scenario scenario, uint64_t seed, std::chrono::milliseconds after,
                                   std::optional<uint32_t> victim) {
  auto start = Clock::now();
  if (!warm_kept_) warmUp();
  copyState(warm_, state_);
  state_.rng.seed(seed);
  std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ULL);
  logs_.clear();
  for (const PublishedFault& p : warmup_reports_) {
    auto& log = logs_[p.at];
    if (!log) log = std::make_unique<FaultReportLog>();
    log->publish(p.fault);
  }
  published_.clear();
  delivered_.clear();
  sent_ = {};

  size_t analyses_before = 0, probes_before = 0;
  for (const auto& l : state_.localisers) {
    analyses_before += l->counters().analyses;
    probes_before += l->counters().probes;
  }

  TrialResult result;
  result.scenario = scenario;
  result.seed = seed;
  const int64_t fault_ns = state_.now + std::uniform_int_distribution<int64_t>(0, periodNs() - 1)(pick);
  result.fault_ns = fault_ns;
  const size_t n = tree_->size();
  std::vector<uint32_t> candidates;
  for (uint32_t i = 0; i < n; ++i) {
    bool has_children = !tree_->children(i).empty();
    if (scenario == Scenario::kProcessHang || (scenario == Scenario::kLeafCrash && !has_children) ||
        (scenario == Scenario::kInnerCrash && has_children))
      candidates.push_back(i);
  }
  victim_ = kNone;
  if (scenario != Scenario::kFaultFree && !candidates.empty()) {
    victim_ = candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(pick)];
    if (victim && *victim < n) victim_ = *victim;
    result.victim = victim_;
    result.victim_depth = tree_->depth(victim_);
    result.victim_children = tree_->children(victim_).size();
    if (scenario == Scenario::kProcessHang) {
      state_.nodes[victim_].stopped_at = fault_ns;
      push({fault_ns, 0, victim_, 0, 0, EventType::kHang, false});
    } else {
      state_.nodes[victim_].dead_at = fault_ns;
    }
  }
  const bool crash = scenario == Scenario::kLeafCrash || scenario == Scenario::kInnerCrash;
  // Who reports when node 0 is gone: the next of FaultTree::reporters().
  result.root = (crash && victim_ == 0) ? 1 : 0;

  measuring_ = true;
  measure_from_ = fault_ns;
  result.end_ns = fault_ns + toNs(after);
  runUntil(result.end_ns);
  measuring_ = false;

  const std::string victim_name = victim_ == kNone ? std::string() : tree_->name(victim_);
  for (PublishedFault& p : published_) {
    if (!p.fresh) ++result.duplicates;
    if (!victim_name.empty() && p.fault.node == victim_name) {
      if (!result.first || p.t_ns < result.first->t_ns) result.first = p;
    } else if (p.fresh) {
      result.false_reports.push_back(p);
    }
  }
  if (result.first) {
    const FaultRecord& f = result.first->fault;
    FaultKind expected = crash ? FaultKind::kNodeDown : FaultKind::kProcessHang;
    result.correct = f.kind == expected && f.ranks == std::vector<uint32_t>{victim_};
    result.off_root = result.first->at != result.root;
    result.localisation_s = static_cast<double>(result.first->t_ns - fault_ns) / 1e9;
  }
  const int64_t window_end = result.first ? result.first->t_ns + 1'000'000'000LL : result.end_ns;
  for (const Delivered& d : delivered_)
    if (d.to == result.root && d.t >= fault_ns && d.t <= window_end) ++result.root_messages;
  result.messages = sent_;
  for (const auto& l : state_.localisers) {
    result.analyses += l->counters().analyses;
    result.probes_by_localisers += l->counters().probes;
  }
  result.analyses -= analyses_before;
  result.probes_by_localisers -= probes_before;
  victim_ = kNone;
  result.wall_s = secondsSince(start);
  return result;
}

FaultTreeSim::Cost FaultTreeSim::measureCost(size_t nodes, size_t fan_out) {
  nodes = std::max<size_t>(nodes, 2);
  auto shared_tree = std::make_shared<const FaultTree>(nodeNames(nodes), fan_out);
  const FaultTree& tree = *shared_tree;
  auto rules = std::make_shared<FaultRuleBase>(RuleFileParser::builtIn());
  InstantNetwork network;
  const size_t k = std::min<size_t>(16, nodes - 1);
  FaultLocaliser::NodeRanks ranks;
  for (uint32_t i = 0; i < nodes; ++i) ranks[tree.name(i)] = {i};
  auto node_ranks = std::make_shared<const FaultLocaliser::NodeRanks>(std::move(ranks));
  std::vector<std::unique_ptr<FaultLocaliser>> localisers;
  double before = heapInUse();
  for (size_t i = 0; i < k; ++i) {
    size_t self = 1 + i * (nodes - 1) / k;
    localisers.push_back(std::make_unique<FaultLocaliser>(kJob, kUid, shared_tree, tree.name(self), FaultLocaliser::Settings{},
                                                          rules, network, network, nullptr));
    localisers.back()->setNodeRanks(node_ranks);
  }
  Cost cost;
  cost.bytes_per_localiser = std::max(0.0, heapInUse() - before) / static_cast<double>(k);
  const int64_t period = toNs(FaultLocaliser::Settings{}.heartbeat_period);
  for (auto& l : localisers) l->tick(period);  // first heartbeat, first allocations
  auto start = Clock::now();
  const int rounds = 3;
  for (int r = 0; r < rounds; ++r)
    for (auto& l : localisers) l->tick(period * (r + 2));
  cost.tick_s = secondsSince(start) / static_cast<double>(rounds * k);
  return cost;
}

}  // namespace nk::faultsim
