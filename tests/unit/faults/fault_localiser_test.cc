#include "faults/fault_localiser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "faults/local_rank_watch.h"
#include "faults/rule_file_parser.h"

namespace nk {
namespace {

using namespace std::chrono_literals;
using Delivery = PeerNetwork::Delivery;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;
constexpr size_t kNodes = 13;  // n0 .. n12
constexpr size_t kFanOut = 3;  // n0 -> n1..n3 -> n4..n12: three levels
constexpr uint32_t kRanksPerNode = 4;  // node i runs ranks 4i .. 4i+3
constexpr std::chrono::milliseconds kStep{50};
const std::string kJob = "job1";
constexpr uid_t kUid = 1000;

std::string nodeName(size_t i) { return "n" + std::to_string(i); }

std::vector<uint32_t> ranksOf(size_t node) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < kRanksPerNode; ++r) out.push_back(static_cast<uint32_t>(node) * kRanksPerNode + r);
  return out;
}

std::shared_ptr<const FaultRuleBase> builtInRules() {
  return std::make_shared<const FaultRuleBase>(RuleFileParser::builtIn());
}

// What one node's daemon sees arriving from its peers.
struct Traffic {
  size_t heartbeats = 0, leaving_heartbeats = 0;
  size_t forwards = 0, forwards_accepted = 0;    // forwardSymptom: tried / taken
  size_t publishes = 0, publishes_accepted = 0;  // publishFault: tried / taken
  std::vector<SymptomRecord> forwarded;          // the symptoms it took
  size_t faultMessages() const { return forwards + publishes; }
};

// A fault as a node's sink got it, with who published it.
struct Report {
  std::string publisher;
  FaultRecord fault;
};

class Cluster;

// Delivers at once to the target's localiser, unless it is dead (no answer)
// or overloaded (takes no symptoms). Every call is counted for its target.
class FakeNetwork : public PeerNetwork {
 public:
  explicit FakeNetwork(Cluster& cluster) : cluster_(cluster) {}
  Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom) override;
  Delivery publishFault(std::string_view node, const FaultRecord& fault) override;
  Delivery heartbeat(std::string_view node, std::string_view job_id, std::string_view from, bool leaving) override;
  // Only the symptom intake asks for ranks' progress, never a localiser.
  std::vector<Result<PeerProgress>> rankProgress(std::string_view, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds) override {
    ADD_FAILURE() << "a localiser asked for ranks' progress";
    return std::vector<Result<PeerProgress>>(nodes.size(), unavailable("not modelled"));
  }

 private:
  Cluster& cluster_;
};

// Answers probes from the cluster's model of its nodes.
class FakeProber : public Prober {
 public:
  explicit FakeProber(Cluster& cluster) : cluster_(cluster) {}
  ResponseFindings responseProbe(std::string_view node, size_t attempts) override;
  StatusFindings statusProbe(std::string_view job_id, std::string_view node) override;
  LogFindings logProbe(std::string_view job_id, std::string_view node, int64_t from_ns, int64_t to_ns) override;
  std::map<std::string, size_t> response_calls, status_calls, log_calls;
  size_t total() const {
    size_t n = 0;
    for (const auto* calls : {&response_calls, &status_calls, &log_calls})
      for (const auto& [node, count] : *calls) n += count;
    return n;
  }

 private:
  Cluster& cluster_;
};

// N localisers of one job on a virtual clock: every step (50 ms) the clock
// advances, and every heartbeat period each live node ticks, in tree order.
// A delivery to a localiser that is already on the call stack (the same one,
// re-entered) is queued and run once the outer call returns.
class Cluster {
 public:
  struct NodeModel {
    bool dead = false;
    bool overloaded = false;  // answers, but takes no symptoms
    std::vector<RankStatus> ranks;
    bool thermal_alarm = false;
    double temperature_c = 55;
    std::chrono::microseconds rtt{300};
  };

  explicit Cluster(FaultLocaliser::Settings settings = {}) : settings_(settings), network_(*this), prober_(*this) {
    std::vector<std::string> names;
    std::map<std::string, std::vector<uint32_t>> node_ranks;
    for (size_t i = 0; i < kNodes; ++i) {
      names.push_back(nodeName(i));
      node_ranks[nodeName(i)] = ranksOf(i);
      NodeModel model;
      for (uint32_t r : ranksOf(i)) model.ranks.push_back({r, ProcessState::kSleeping, false, 100ms, "MPI_Allreduce"});
      models_.push_back(std::move(model));
    }
    FaultTree tree(names, kFanOut);
    auto rules = builtInRules();
    for (size_t i = 0; i < kNodes; ++i) {
      localisers_.push_back(std::make_unique<FaultLocaliser>(
          kJob, kUid, tree, names[i], settings_, rules, network_, prober_,
          [this, i](const FaultRecord& fault) { reports.push_back({nodeName(i), fault}); }));
      localisers_.back()->setNodeRanks(node_ranks);
    }
    traffic_.resize(kNodes);
    busy_.assign(kNodes, 0);
  }

  FaultLocaliser& at(size_t i) { return *localisers_.at(i); }
  NodeModel& model(size_t i) { return models_.at(i); }
  const Traffic& traffic(size_t i) const { return traffic_.at(i); }
  void resetTraffic() { traffic_.assign(kNodes, {}); }
  int64_t now() const { return now_ns_; }
  int64_t periodNs() const { return std::chrono::nanoseconds(settings_.heartbeat_period).count(); }
  const FaultLocaliser::Settings& settings() const { return settings_; }
  FakeProber& prober() { return prober_; }
  size_t deferred() const { return deferred_; }

  void kill(size_t i) { models_.at(i).dead = true; }
  void revive(size_t i) { models_.at(i).dead = false; }

  // Runs `fn` as node i's daemon would: one call into its localiser.
  template <typename Fn>
  auto as(size_t i, Fn fn) {
    struct Done {
      Cluster& c;
      ~Done() { c.drain(); }
    } done{*this};
    Busy busy(*this, i);
    return fn(at(i));
  }

  void run(std::chrono::milliseconds duration) {
    const int64_t until = now_ns_ + std::chrono::nanoseconds(duration).count();
    while (now_ns_ < until) {
      now_ns_ += std::chrono::nanoseconds(kStep).count();
      if ((now_ns_ - kT0) % periodNs() != 0) continue;
      for (size_t i = 0; i < kNodes; ++i) {
        if (models_[i].dead) continue;
        as(i, [&](FaultLocaliser& l) { l.tick(now_ns_); });
      }
    }
  }

  // "publisher <- kind node by localiser", in the order published.
  std::vector<std::string> summary() const {
    std::vector<std::string> out;
    for (const Report& r : reports)
      out.push_back(r.publisher + " <- " + std::string(faultKindName(r.fault.kind)) + " " + r.fault.node + " by " +
                    r.fault.localised_by);
    return out;
  }

  std::vector<Report> reports;

 private:
  friend class FakeNetwork;
  friend class FakeProber;
  enum class Message { kHeartbeat, kForward, kPublish };

  struct Busy {
    Busy(Cluster& c, size_t i) : c(c), i(i) { ++c.busy_[i]; }
    ~Busy() { --c.busy_[i]; }
    Cluster& c;
    size_t i;
  };

  NodeModel* find(std::string_view node) {
    for (size_t i = 0; i < kNodes; ++i)
      if (nodeName(i) == node) return &models_[i];
    return nullptr;
  }

  Delivery deliver(std::string_view node, Message kind, std::function<bool(FaultLocaliser&)> act) {
    auto index = at(0).tree().indexOf(node);
    if (!index) return Delivery::kUnreachable;
    const size_t i = *index;
    Traffic& t = traffic_[i];
    if (kind == Message::kForward) ++t.forwards;
    if (kind == Message::kPublish) ++t.publishes;
    if (models_[i].dead) return Delivery::kUnreachable;
    if (kind == Message::kForward && (models_[i].overloaded || at(i).overloaded())) return Delivery::kOverloaded;
    bool taken = true;
    if (busy_[i] > 0) {
      ++deferred_;
      queue_.push_back([this, i, act] {
        if (models_[i].dead) return;
        Busy busy(*this, i);
        act(at(i));
      });
    } else {
      Busy busy(*this, i);
      taken = act(at(i));
    }
    if (!taken) return Delivery::kOverloaded;
    if (kind == Message::kForward) ++t.forwards_accepted;
    if (kind == Message::kPublish) ++t.publishes_accepted;
    return Delivery::kAccepted;
  }

  void drain() {
    if (draining_) return;
    draining_ = true;
    while (!queue_.empty()) {
      auto next = std::move(queue_.front());
      queue_.pop_front();
      next();
    }
    draining_ = false;
  }

  FaultLocaliser::Settings settings_;
  FakeNetwork network_;
  FakeProber prober_;
  std::vector<NodeModel> models_;
  std::vector<std::unique_ptr<FaultLocaliser>> localisers_;
  std::vector<Traffic> traffic_;
  std::vector<int> busy_;
  std::deque<std::function<void()>> queue_;
  bool draining_ = false;
  size_t deferred_ = 0;
  int64_t now_ns_ = kT0;
};

Delivery FakeNetwork::forwardSymptom(std::string_view node, const SymptomRecord& symptom) {
  return cluster_.deliver(node, Cluster::Message::kForward, [this, node = std::string(node), symptom](FaultLocaliser& l) {
    bool taken = l.receive(symptom, cluster_.now());
    if (taken) cluster_.traffic_[*l.tree().indexOf(node)].forwarded.push_back(symptom);
    return taken;
  });
}

Delivery FakeNetwork::publishFault(std::string_view node, const FaultRecord& fault) {
  return cluster_.deliver(node, Cluster::Message::kPublish, [fault](FaultLocaliser& l) {
    l.publishHere(fault);
    return true;
  });
}

Delivery FakeNetwork::heartbeat(std::string_view node, std::string_view job_id, std::string_view from, bool leaving) {
  EXPECT_EQ(job_id, kJob);
  if (auto index = cluster_.at(0).tree().indexOf(node)) {
    ++cluster_.traffic_[*index].heartbeats;
    if (leaving) ++cluster_.traffic_[*index].leaving_heartbeats;
  }
  return cluster_.deliver(node, Cluster::Message::kHeartbeat, [this, from = std::string(from), leaving](FaultLocaliser& l) {
    l.heartbeatFrom(from, leaving, cluster_.now());
    return true;
  });
}

ResponseFindings FakeProber::responseProbe(std::string_view node, size_t attempts) {
  ++response_calls[std::string(node)];
  Cluster::NodeModel* m = cluster_.find(node);
  if (!m || m->dead) return {attempts, 0, 0us};
  return {attempts, attempts, m->rtt};
}

StatusFindings FakeProber::statusProbe(std::string_view job_id, std::string_view node) {
  ++status_calls[std::string(node)];
  Cluster::NodeModel* m = cluster_.find(node);
  if (!m || m->dead || job_id != kJob) return {};
  StatusFindings s;
  s.answered = true;
  s.load = 0.5;
  s.overloaded = m->overloaded;
  s.ranks = m->ranks;
  s.max_temperature_c = m->temperature_c;
  s.thermal_alarm = m->thermal_alarm;
  return s;
}

LogFindings FakeProber::logProbe(std::string_view, std::string_view node, int64_t, int64_t) {
  ++log_calls[std::string(node)];
  Cluster::NodeModel* m = cluster_.find(node);
  if (!m || m->dead) return {};
  return {true, {}, 0};
}

SymptomRecord symptom(SymptomKind kind, std::string suspect, std::vector<uint32_t> suspect_ranks, std::string reporter,
                      uint32_t reporter_rank, int64_t at_ns, std::string op = "MPI_Recv") {
  SymptomRecord s;
  s.job_id = kJob;
  s.uid = kUid;
  s.kind = kind;
  s.reporter_node = std::move(reporter);
  s.reporter_rank = reporter_rank;
  s.suspect_node = std::move(suspect);
  s.suspect_ranks = std::move(suspect_ranks);
  s.operation = std::move(op);
  s.timestamp_ns = at_ns;
  s.detail = "waited 5.0 s";
  return s;
}

bool hasLine(const FaultRecord& f, std::string_view text) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

std::vector<std::string> strings(std::initializer_list<const char*> list) { return {list.begin(), list.end()}; }

size_t levels(const FaultTree& tree) { return tree.height() + 1; }

class FaultLocaliserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(levels(c.at(0).tree()), 3u);
    c.run(1000ms);  // warm-up: everyone heartbeats to its FLN and is watched
    ASSERT_TRUE(c.reports.empty());
  }
  // The time it takes at most to see a node's silence: heartbeat_misses
  // periods, then the next tick, with a period to spare.
  std::chrono::milliseconds detectionTime() const {
    return c.settings().heartbeat_period * static_cast<int64_t>(c.settings().heartbeat_misses + 2);
  }
  Cluster c;
};

// --- 6 (part): the tree settles and stays quiet -------------------------------

TEST_F(FaultLocaliserTest, FaultFreeRunReportsNothingAndEveryoneIsWatchedByItsFln) {
  c.resetTraffic();
  c.run(10s);
  EXPECT_TRUE(c.summary().empty());
  EXPECT_EQ(c.prober().total(), 0u);
  EXPECT_EQ(c.deferred(), 0u);
  for (size_t i = 0; i < kNodes; ++i) {
    EXPECT_EQ(c.at(i).currentParent(), i == 0 ? "" : nodeName((i - 1) / kFanOut)) << i;
    EXPECT_EQ(c.at(i).counters().symptoms_detected, 0u) << i;
    EXPECT_EQ(c.at(i).counters().faults_published, 0u) << i;
    EXPECT_EQ(c.traffic(i).faultMessages(), 0u) << i;
    // 100 periods in 10 s, one heartbeat per child per period.
    EXPECT_EQ(c.traffic(i).heartbeats, 100u * c.at(0).tree().children(i).size()) << i;
  }
  EXPECT_EQ(c.at(0).watched(), strings({"n1", "n2", "n3"}));
  EXPECT_EQ(c.at(1).watched(), strings({"n4", "n5", "n6"}));
  EXPECT_EQ(c.at(2).watched(), strings({"n7", "n8", "n9"}));
  EXPECT_EQ(c.at(3).watched(), strings({"n10", "n11", "n12"}));
  for (size_t i = 4; i < kNodes; ++i) EXPECT_TRUE(c.at(i).watched().empty()) << i;
}

// --- 1: a leaf crashes ---------------------------------------------------------

TEST_F(FaultLocaliserTest, LeafCrashIsReportedOnceAtTheRootLocalisedByItsFln) {
  const int64_t killed = c.now();
  c.kill(4);
  c.run(detectionTime());
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n4 by n1"}));
  const FaultRecord& f = c.reports[0].fault;
  EXPECT_EQ(f.job_id, kJob);
  EXPECT_EQ(f.uid, kUid);
  EXPECT_EQ(f.ranks, ranksOf(4));  // no symptom named a rank: the node's own ranks
  // Its last heartbeat was at `killed`: the symptom dates from one period later.
  EXPECT_EQ(f.first_symptom_ns, killed + c.periodNs());
  EXPECT_GT(f.localised_ns - killed, static_cast<int64_t>(c.settings().heartbeat_misses) * c.periodNs());
  EXPECT_LE(f.localised_ns - killed, std::chrono::nanoseconds(detectionTime()).count());
  EXPECT_TRUE(hasLine(f, "heartbeat_lost from the daemon of n1")) << f.describe();
  EXPECT_TRUE(hasLine(f, "response probe: 0 of 3 attempts answered")) << f.describe();
  EXPECT_EQ(c.at(1).counters().faults_confirmed, 1u);
  EXPECT_EQ(c.prober().response_calls, (std::map<std::string, size_t>{{"n4", 1}}));

  c.run(5s);  // and never again
  EXPECT_EQ(c.summary(), strings({"n0 <- node_down n4 by n1"}));
  for (size_t i = 0; i < kNodes; ++i)
    if (i != 1) {
      EXPECT_EQ(c.at(i).counters().faults_confirmed, 0u) << i;
    }
}

// --- 10: what a leaf crash costs the root --------------------------------------

TEST_F(FaultLocaliserTest, LeafCrashCostsTheRootFewMessages) {
  c.resetTraffic();
  c.kill(7);
  c.run(3s);
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n7 by n2"}));
  const size_t bound = levels(c.at(0).tree()) + 2;
  EXPECT_LE(c.traffic(0).faultMessages(), bound);
  // Exactly: the one report; the symptom stayed at the FLN.
  EXPECT_EQ(c.traffic(0).publishes, 1u);
  EXPECT_EQ(c.traffic(0).forwards, 0u);
  EXPECT_EQ(c.at(0).counters().analyses, 0u);
  EXPECT_EQ(c.at(0).counters().probes, 0u);
}

// --- 2: an inner node crashes ----------------------------------------------------

TEST_F(FaultLocaliserTest, InnerNodeCrashBlamesOnlyItAndItsChildrenMoveToTheirSfln) {
  c.resetTraffic();
  c.kill(1);
  c.run(detectionTime());
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n1 by n0"}));
  EXPECT_EQ(c.reports[0].fault.ranks, ranksOf(1));
  for (size_t child : {4, 5, 6}) {
    EXPECT_EQ(c.at(child).currentParent(), "n0") << child;
    EXPECT_EQ(c.at(child).counters().faults_confirmed, 0u) << child;
  }
  // Each child said once that its FLN was lost; the root analysed once.
  EXPECT_EQ(c.traffic(0).forwards_accepted, 3u);
  EXPECT_LE(c.traffic(0).faultMessages(), levels(c.at(0).tree()) + 2);
  EXPECT_EQ(c.at(0).counters().analyses, 1u);

  // Past the unreachable hold (2 s), when the children try their FLN again:
  // still the one report, still watched by the root.
  c.run(5s);
  EXPECT_EQ(c.summary(), strings({"n0 <- node_down n1 by n0"}));
  for (size_t child : {4, 5, 6}) EXPECT_EQ(c.at(child).currentParent(), "n0") << child;
  EXPECT_EQ(c.at(0).watched(), strings({"n1", "n2", "n3", "n4", "n5", "n6"}));
  // n1's other relatives noticed nothing.
  for (size_t i : {2, 3, 7, 8, 9, 10, 11, 12}) EXPECT_EQ(c.at(i).currentParent(), nodeName((i - 1) / kFanOut));
}

TEST_F(FaultLocaliserTest, FlnSilentForFewerThanHeartbeatMissesIsNoFault) {
  c.kill(1);
  c.run(150ms);  // one heartbeat of each child unanswered
  c.revive(1);
  c.run(3s);
  EXPECT_TRUE(c.summary().empty());
  for (size_t child : {4, 5, 6}) {
    EXPECT_EQ(c.at(child).currentParent(), "n1") << child;
    EXPECT_EQ(c.at(child).counters().symptoms_detected, 0u) << child;
  }
  EXPECT_EQ(c.at(0).counters().symptoms_detected, 0u);
  EXPECT_EQ(c.at(1).watched(), strings({"n4", "n5", "n6"}));
}

// A leaf silent for longer than heartbeat_misses periods, on a host whose
// scheduling delay grows the timeout fivefold: late, not lost. Without the
// factor the same silence is node_down (LeafCrashIsReported...).
TEST(FaultLocaliserDelayTest, TheHeartbeatTimeoutGrowsWithTheDelayFactor) {
  FaultLocaliser::Settings settings;
  double factor = 5.0;
  settings.delay_factor = [&factor] { return factor; };
  Cluster c(settings);
  c.run(1000ms);
  c.kill(4);
  c.run(800ms);  // 8 periods: more than 3, fewer than 3 x 5
  c.revive(4);
  c.run(3s);
  EXPECT_TRUE(c.summary().empty());
  EXPECT_EQ(c.at(1).counters().symptoms_detected, 0u);
  // Silent past the grown timeout: found, and the symptom says the timeout.
  c.kill(4);
  c.run(3s);
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n4 by n1"}));
  ASSERT_FALSE(c.reports.empty());
  bool said = false;
  for (const std::string& line : c.reports.front().fault.evidence)
    said = said || line.find("(timeout 300 ms x5.0 for this host's scheduling delay = 1500 ms)") != std::string::npos;
  EXPECT_TRUE(said) << ::testing::PrintToString(c.reports.front().fault.evidence);
}

// CPU pressure grows stall_after (delay_factor) but not the heartbeat's
// timeout, when the watching thread itself runs on time
// (heartbeat_delay_factor 1): a killed leaf is found as fast as on an idle
// host. With the pressure counted there too, the same silence is not yet a
// fault.
TEST(FaultLocaliserDelayTest, TheHeartbeatTimeoutFollowsTheWatchingThreadsOwnDelay) {
  for (double heartbeat_factor : {1.0, 5.0}) {
    FaultLocaliser::Settings settings;
    settings.delay_factor = [] { return 5.0; };
    settings.heartbeat_delay_factor = [heartbeat_factor] { return heartbeat_factor; };
    Cluster c(settings);
    c.run(1000ms);
    c.kill(4);
    c.run(800ms);  // 8 periods: more than 3, fewer than 3 x 5
    if (heartbeat_factor == 1.0)
      EXPECT_EQ(c.summary(), strings({"n0 <- node_down n4 by n1"}));
    else
      EXPECT_TRUE(c.summary().empty()) << ::testing::PrintToString(c.summary());
  }
}

// The watcher itself is not busy, but the sender said its own scheduling
// delay grows its timeouts fivefold: its heartbeats are late, not lost.
TEST(FaultLocaliserDelayTest, TheSendersDelayFactorGrowsTheTimeoutOfItsHeartbeats) {
  FaultTree tree({"a", "b"}, 2);
  class Quiet final : public PeerNetwork, public Prober {
   public:
    Delivery forwardSymptom(std::string_view, const SymptomRecord&) override { return Delivery::kAccepted; }
    Delivery publishFault(std::string_view, const FaultRecord&) override { return Delivery::kAccepted; }
    Delivery heartbeat(std::string_view, std::string_view, std::string_view, bool) override {
      return Delivery::kAccepted;
    }
    std::vector<Result<PeerProgress>> rankProgress(std::string_view, std::span<const JobNodeRecord> nodes,
                                                   std::chrono::milliseconds) override {
      return std::vector<Result<PeerProgress>>(nodes.size(), unavailable("none"));
    }
    ResponseFindings responseProbe(std::string_view, size_t attempts) override { return {attempts, 0, 0us}; }
    StatusFindings statusProbe(std::string_view, std::string_view) override { return {}; }
    LogFindings logProbe(std::string_view, std::string_view, int64_t, int64_t) override { return {}; }
  } quiet;
  std::vector<SymptomRecord> raised;
  FaultLocaliser::Settings settings;
  settings.on_raised = [&](const SymptomRecord& s) { raised.push_back(s); };
  FaultLocaliser root(kJob, kUid, tree, "a", settings, builtInRules(), quiet, quiet, [](const FaultRecord&) {});
  root.heartbeatFrom("b", false, kT0, 5.0);
  for (int64_t t = 100; t <= 1400; t += 100) root.tick(kT0 + t * kMs);  // past 3 x 100 ms, within x5
  EXPECT_TRUE(raised.empty());
  root.heartbeatFrom("b", false, kT0 + 1400 * kMs, 1.0);  // no longer busy
  for (int64_t t = 1500; t <= 1800; t += 100) root.tick(kT0 + t * kMs);
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(raised[0].suspect_node, "b");
}

// --- 3: the FLN, then the node -----------------------------------------------------

TEST_F(FaultLocaliserTest, NodeWhoseFlnIsDownIsLocalisedByItsSfln) {
  c.kill(1);
  c.run(1s);
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n1 by n0"}));
  ASSERT_EQ(c.at(4).currentParent(), "n0");
  c.kill(4);
  c.run(1s);
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n1 by n0", "n0 <- node_down n4 by n0"}));
  EXPECT_EQ(c.reports[1].fault.ranks, ranksOf(4));
  EXPECT_EQ(c.reports[1].fault.localised_by, "n0");
  c.run(3s);
  EXPECT_EQ(c.reports.size(), 2u);
}

// --- 4: the root crashes ---------------------------------------------------------------

TEST_F(FaultLocaliserTest, RootCrashIsReportedByTheActingRoot) {
  c.kill(0);
  c.run(detectionTime());
  ASSERT_EQ(c.summary(), strings({"n1 <- node_down n0 by n1"}));
  EXPECT_EQ(c.reports[0].fault.ranks, ranksOf(0));
  c.run(5s);
  EXPECT_EQ(c.summary(), strings({"n1 <- node_down n0 by n1"}));
  // The root's children keep each other watched: n1 heartbeats to the next
  // reporter (n2), the others to n1. Grandchildren keep their FLNs.
  EXPECT_EQ(c.at(1).currentParent(), "n2");
  EXPECT_EQ(c.at(2).currentParent(), "n1");
  EXPECT_EQ(c.at(3).currentParent(), "n1");
  EXPECT_EQ(c.at(4).currentParent(), "n1");
  EXPECT_EQ(c.at(12).currentParent(), "n3");
}

TEST_F(FaultLocaliserTest, AfterTheRootIsDownLaterFaultsGoToTheActingRoot) {
  c.kill(0);
  c.run(1s);
  ASSERT_EQ(c.summary(), strings({"n1 <- node_down n0 by n1"}));
  c.kill(8);
  c.run(1s);
  EXPECT_EQ(c.summary(), strings({"n1 <- node_down n0 by n1", "n1 <- node_down n8 by n2"}));
  c.kill(5);  // a fault the acting root localises itself
  c.run(3s);
  EXPECT_EQ(c.summary(),
            strings({"n1 <- node_down n0 by n1", "n1 <- node_down n8 by n2", "n1 <- node_down n5 by n1"}));
}

// --- 5: a hang, a crash, heat, seen by the node's own watch ----------------------------------

class LocalWatchTest : public FaultLocaliserTest {
 protected:
  // What the daemon of node i does each period: its watch over its ranks,
  // each symptom into TFD.
  std::vector<SymptomRecord> watchAt(size_t i) {
    Cluster::NodeModel& m = c.model(i);
    auto out = watch(i).check(kJob, kUid, nodeName(i), m.ranks, m.thermal_alarm, m.temperature_c, c.now());
    for (const SymptomRecord& s : out.symptoms) EXPECT_TRUE(c.as(i, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
    return out.symptoms;
  }
  std::map<size_t, LocalRankWatch> watches_;
  LocalRankWatch& watch(size_t i) { return watches_.try_emplace(i, 2000ms).first->second; }
  void SetUp() override {
    FaultLocaliserTest::SetUp();
    for (size_t i = 0; i < kNodes; ++i) watch(i);
  }
};

TEST_F(LocalWatchTest, StoppedRankIsAProcessHang) {
  c.resetTraffic();
  c.model(5).ranks[1].state = ProcessState::kStopped;  // rank 21
  ASSERT_EQ(watchAt(5).size(), 1u);
  c.run(500ms);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(watchAt(5).empty());  // one episode, said once
  ASSERT_EQ(c.summary(), strings({"n0 <- process_hang n5 by n1"}));
  const FaultRecord& f = c.reports[0].fault;
  EXPECT_EQ(f.ranks, (std::vector<uint32_t>{21}));
  EXPECT_TRUE(hasLine(f, "status probe: rank 21 stopped")) << f.describe();
  EXPECT_TRUE(hasLine(f, "heartbeat_lost from the daemon of n5")) << f.describe();
  EXPECT_EQ(c.traffic(1).forwards_accepted, 1u);  // TFD: to the node's FLN
  EXPECT_EQ(c.traffic(0).forwards, 0u);
  EXPECT_EQ(c.traffic(0).publishes, 1u);
  c.run(3s);
  EXPECT_EQ(c.reports.size(), 1u);
}

TEST_F(LocalWatchTest, RankThatExitedWithoutFinalizeIsAProcessCrash) {
  c.model(9).ranks[2].state = ProcessState::kGone;  // rank 38
  ASSERT_EQ(watchAt(9).size(), 1u);
  c.run(500ms);
  ASSERT_EQ(c.summary(), strings({"n0 <- process_crash n9 by n2"}));
  EXPECT_EQ(c.reports[0].fault.ranks, (std::vector<uint32_t>{38}));
}

TEST_F(LocalWatchTest, ThermalAlarmConfirmedByTheSensorsIsOverheating) {
  c.model(12).thermal_alarm = true;
  c.model(12).temperature_c = 92;
  ASSERT_EQ(watchAt(12).size(), 1u);
  c.run(500ms);
  ASSERT_EQ(c.summary(), strings({"n0 <- overheating n12 by n3"}));
  EXPECT_EQ(c.reports[0].fault.ranks, ranksOf(12));
}

TEST_F(LocalWatchTest, StalledRankOnTheRootIsLocalisedByTheRootsSubstitute) {
  c.model(0).ranks[3].report_age = 5000ms;  // rank 3: running, silent
  ASSERT_EQ(watchAt(0).size(), 1u);
  c.run(500ms);
  // The root has no FLN: its first child localises it, and the root,
  // which still answers, publishes.
  ASSERT_EQ(c.summary(), strings({"n0 <- process_hang n0 by n1"}));
  EXPECT_EQ(c.reports[0].fault.ranks, (std::vector<uint32_t>{3}));
  // n0's detect() led to n1 publishing back to n0: the fake network queued
  // that delivery rather than re-enter n0.
  EXPECT_EQ(c.deferred(), 1u);
}

// A hang found once does not silence the node: its going down later is a
// second fault.
TEST_F(LocalWatchTest, NodeThatHungAndThenWentDownIsReportedDown) {
  c.model(5).ranks[1].state = ProcessState::kStopped;
  watchAt(5);
  c.run(500ms);
  ASSERT_EQ(c.summary(), strings({"n0 <- process_hang n5 by n1"}));
  c.kill(5);
  c.run(2s);
  EXPECT_EQ(c.summary(), strings({"n0 <- process_hang n5 by n1", "n0 <- node_down n5 by n1"}));
}

// --- 5 (as the brief puts it): a heartbeat_lost symptom straight into X's detect() ----------

TEST_F(FaultLocaliserTest, HeartbeatLostAboutARankThatIsStoppedIsAHang) {
  c.model(10).ranks[0].state = ProcessState::kStopped;  // rank 40
  SymptomRecord s = symptom(SymptomKind::kHeartbeatLost, "n10", {40}, "n10", kDaemonReporter, c.now(), "MPI_Bcast");
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  c.run(300ms);
  ASSERT_EQ(c.summary(), strings({"n0 <- process_hang n10 by n3"}));
  EXPECT_EQ(c.reports[0].fault.ranks, (std::vector<uint32_t>{40}));
}

// --- 6: a storm about a healthy node -------------------------------------------------------

TEST_F(FaultLocaliserTest, ResponseTimeoutStormAboutAHealthyNodeIsNoFault) {
  c.resetTraffic();
  const int64_t at = c.now();
  size_t from_elsewhere = 0;
  // 30 ranks on 10 nodes time out waiting for rank 28 on n7, all at once.
  for (size_t node : {0, 1, 2, 3, 4, 8, 9, 10, 11, 12}) {
    for (uint32_t r : {0u, 1u, 2u}) {
      const uint32_t rank = static_cast<uint32_t>(node) * kRanksPerNode + r;
      SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, nodeName(node), rank, at);
      EXPECT_TRUE(c.as(node, [&](FaultLocaliser& l) { return l.detect(s, at); }));
      if (node != 2) ++from_elsewhere;
    }
  }
  // Every one went to n7's FLN (n2's own ranks' straight into it).
  EXPECT_EQ(c.traffic(2).forwards_accepted, from_elsewhere);
  EXPECT_EQ(c.at(2).heldCount(), 30u);
  for (size_t i = 0; i < kNodes; ++i)
    if (i != 2) {
      EXPECT_EQ(c.traffic(i).forwards, 0u) << i;
    }

  c.run(5s);
  EXPECT_TRUE(c.summary().empty());
  // Analysed when the trigger first fired, then once more a period later for
  // the rest of the storm: not once per symptom.
  EXPECT_EQ(c.at(2).counters().analyses, 2u);
  EXPECT_EQ(c.prober().response_calls, (std::map<std::string, size_t>{{"n7", 2}}));
  EXPECT_EQ(c.prober().status_calls, (std::map<std::string, size_t>{{"n7", 2}}));
  EXPECT_TRUE(c.prober().log_calls.empty());  // not slow: the log is never asked
  EXPECT_EQ(c.at(2).counters().faults_confirmed, 0u);
  // Held long enough to meet later symptoms, then let go.
  EXPECT_EQ(c.at(2).heldCount(), 30u);
  c.run(6s);
  EXPECT_EQ(c.at(2).heldCount(), 0u);
  EXPECT_TRUE(c.summary().empty());
}

TEST_F(FaultLocaliserTest, OneResponseTimeoutAloneIsNotAnalysed) {
  SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n4", 16, c.now());
  EXPECT_TRUE(c.as(4, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  SymptomRecord again = s;  // the same reporter saying it twice is one report
  again.timestamp_ns += 100 * kMs;
  EXPECT_TRUE(c.as(4, [&](FaultLocaliser& l) { return l.detect(again, c.now()); }));
  c.run(1s);
  EXPECT_EQ(c.at(2).heldCount(), 2u);
  EXPECT_EQ(c.at(2).counters().analyses, 0u);
  EXPECT_EQ(c.prober().total(), 0u);
  EXPECT_TRUE(c.summary().empty());
}

// --- 7: TFD ------------------------------------------------------------------------------

TEST_F(FaultLocaliserTest, TfdSendsASymptomToTheSuspectsFln) {
  c.resetTraffic();
  SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n10", 40, c.now());
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  EXPECT_EQ(c.traffic(2).forwards, 1u);
  EXPECT_EQ(c.traffic(2).forwards_accepted, 1u);
  ASSERT_EQ(c.traffic(2).forwarded.size(), 1u);
  EXPECT_EQ(c.traffic(2).forwarded[0].suspect_node, "n7");
  EXPECT_EQ(c.traffic(2).forwarded[0].reporter_rank, 40u);
  for (size_t i = 0; i < kNodes; ++i)
    if (i != 2) {
      EXPECT_EQ(c.traffic(i).forwards, 0u) << i;
    }
  EXPECT_EQ(c.at(10).counters().symptoms_detected, 1u);
  EXPECT_EQ(c.at(10).counters().symptoms_forwarded, 1u);
  EXPECT_EQ(c.at(10).heldCount(), 0u);
  EXPECT_EQ(c.at(2).counters().symptoms_received, 1u);
  EXPECT_EQ(c.at(2).heldCount(), 1u);
}

TEST_F(FaultLocaliserTest, TfdSplitsASymptomAboutSeveralNodes) {
  c.resetTraffic();
  SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n4,n8,n0", {16, 32, 1}, "n12", 48, c.now());
  EXPECT_TRUE(c.as(12, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  ASSERT_EQ(c.traffic(1).forwarded.size(), 2u);  // about n4 (its FLN) and about n0 (the root's substitute)
  EXPECT_EQ(c.traffic(1).forwarded[0].suspect_node, "n4");
  EXPECT_EQ(c.traffic(1).forwarded[1].suspect_node, "n0");
  ASSERT_EQ(c.traffic(2).forwarded.size(), 1u);
  EXPECT_EQ(c.traffic(2).forwarded[0].suspect_node, "n8");
  EXPECT_EQ(c.traffic(0).forwards, 0u);
  EXPECT_EQ(c.at(12).counters().symptoms_forwarded, 3u);
}

TEST_F(FaultLocaliserTest, TfdPassesADeadFlnOverForTheNextAncestor) {
  c.kill(2);
  c.resetTraffic();
  SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n10", 40, c.now());
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  EXPECT_EQ(c.traffic(2).forwards, 1u);
  EXPECT_EQ(c.traffic(2).forwards_accepted, 0u);
  EXPECT_EQ(c.traffic(0).forwards_accepted, 1u);
  EXPECT_EQ(c.at(0).heldCount(), 1u);
  // Within the unreachable hold the dead FLN is not tried again.
  SymptomRecord later = symptom(SymptomKind::kMpiError, "n7", {28}, "n10", 41, c.now());
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(later, c.now()); }));
  EXPECT_EQ(c.traffic(2).forwards, 1u);
  EXPECT_EQ(c.traffic(0).forwards_accepted, 2u);
  EXPECT_EQ(c.at(10).counters().symptoms_forwarded, 2u);
}

TEST_F(FaultLocaliserTest, TfdPassesAnOverloadedFlnOverButTriesItAgainNextTime) {
  c.model(2).overloaded = true;
  c.resetTraffic();
  for (uint32_t rank : {40u, 41u}) {
    SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n10", rank, c.now(), "MPI_Send");
    EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  }
  EXPECT_EQ(c.traffic(2).forwards, 2u);  // overloaded is not unreachable: asked each time
  EXPECT_EQ(c.traffic(2).forwards_accepted, 0u);
  EXPECT_EQ(c.traffic(0).forwards_accepted, 2u);
  EXPECT_EQ(c.at(2).heldCount(), 0u);
  EXPECT_EQ(c.at(0).heldCount(), 2u);
  // Two distinct reports about n7 at the root: analysed there; healthy, so no fault.
  EXPECT_EQ(c.at(0).counters().analyses, 1u);
  c.run(2s);
  EXPECT_TRUE(c.summary().empty());
  // And it still heartbeats: overloaded with symptoms, not gone.
  EXPECT_EQ(c.at(7).currentParent(), "n2");
}

TEST(FaultLocaliserOverload, ALocaliserHoldingTooManySymptomsSaysItIsOverloaded) {
  FaultLocaliser::Settings settings;
  settings.max_held_symptoms = 3;
  Cluster c(settings);
  c.run(1s);
  for (uint32_t rank = 0; rank < 4; ++rank) {
    SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n10", 40 + rank, c.now());
    EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  }
  EXPECT_EQ(c.at(2).heldCount(), 4u);
  EXPECT_TRUE(c.at(2).overloaded());
  c.resetTraffic();
  SymptomRecord more = symptom(SymptomKind::kResponseTimeout, "n7", {28}, "n10", 44, c.now());
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(more, c.now()); }));
  EXPECT_EQ(c.traffic(2).forwards, 1u);
  EXPECT_EQ(c.traffic(2).forwards_accepted, 0u);
  EXPECT_EQ(c.traffic(0).forwards_accepted, 1u);
  // Given one directly, it drops it and says so.
  EXPECT_FALSE(c.as(2, [&](FaultLocaliser& l) { return l.receive(more, c.now()); }));
  EXPECT_EQ(c.at(2).counters().symptoms_dropped, 1u);
  EXPECT_EQ(c.at(2).heldCount(), 4u);
}

TEST_F(FaultLocaliserTest, SymptomNoLocaliserTakesStaysWithTheNodeThatSawIt) {
  c.kill(1);
  c.kill(0);
  c.resetTraffic();
  SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n4", {16}, "n10", 40, c.now());
  EXPECT_TRUE(c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); }));
  EXPECT_EQ(c.traffic(1).forwards, 1u);
  EXPECT_EQ(c.traffic(0).forwards, 1u);
  EXPECT_EQ(c.at(10).heldCount(), 1u);
  EXPECT_EQ(c.at(10).counters().symptoms_forwarded, 0u);
}

// --- 8: leaving ------------------------------------------------------------------------

TEST_F(FaultLocaliserTest, NodeThatLeftIsNotWatchedAndItsSilenceIsNoFault) {
  c.resetTraffic();
  c.as(6, [&](FaultLocaliser& l) { l.leave(c.now()); });
  EXPECT_TRUE(c.at(6).left());
  EXPECT_EQ(c.traffic(1).leaving_heartbeats, 1u);
  EXPECT_EQ(c.at(1).watched(), strings({"n4", "n5"}));
  const size_t sent = c.at(6).counters().heartbeats_sent;
  c.run(2s);  // its daemon still runs, but no longer heartbeats
  EXPECT_EQ(c.at(6).counters().heartbeats_sent, sent);
  c.kill(6);
  c.run(5s);
  EXPECT_TRUE(c.summary().empty());
  EXPECT_EQ(c.at(1).watched(), strings({"n4", "n5"}));
  EXPECT_EQ(c.prober().total(), 0u);
  // Leaving twice says nothing more.
  c.as(6, [&](FaultLocaliser& l) { l.leave(c.now()); });
  EXPECT_EQ(c.traffic(1).leaving_heartbeats, 1u);
}

// --- 9: a symptom about a node outside the tree ------------------------------------------------

TEST_F(FaultLocaliserTest, SymptomAboutANodeOutsideTheTreeIsDropped) {
  c.resetTraffic();
  SymptomRecord outside = symptom(SymptomKind::kResponseTimeout, "n99", {99}, "n4", 16, c.now());
  EXPECT_FALSE(c.as(4, [&](FaultLocaliser& l) { return l.detect(outside, c.now()); }));
  SymptomRecord nobody = symptom(SymptomKind::kResponseTimeout, "", {}, "n4", 16, c.now());
  EXPECT_FALSE(c.as(4, [&](FaultLocaliser& l) { return l.detect(nobody, c.now()); }));
  EXPECT_EQ(c.at(4).counters().symptoms_detected, 2u);
  EXPECT_EQ(c.at(4).heldCount(), 0u);
  for (size_t i = 0; i < kNodes; ++i) EXPECT_EQ(c.traffic(i).forwards, 0u) << i;
  // One of the suspects in the tree: that one goes on.
  SymptomRecord mixed = symptom(SymptomKind::kResponseTimeout, "n99,n5", {99, 20}, "n4", 16, c.now());
  EXPECT_TRUE(c.as(4, [&](FaultLocaliser& l) { return l.detect(mixed, c.now()); }));
  ASSERT_EQ(c.traffic(1).forwarded.size(), 1u);
  EXPECT_EQ(c.traffic(1).forwarded[0].suspect_node, "n5");
  // receive() ignores them too.
  SymptomRecord sent_here = symptom(SymptomKind::kHeartbeatLost, "n99", {}, "n3", kDaemonReporter, c.now());
  EXPECT_TRUE(c.as(1, [&](FaultLocaliser& l) { return l.receive(sent_here, c.now()); }));
  c.run(1s);
  EXPECT_EQ(c.prober().total(), 0u);
  EXPECT_TRUE(c.summary().empty());
}

// A response_timeout naming ranks on two nodes reaches each node's FLN. When
// one of them is down, the node_down names the ranks its peers waited for.
TEST_F(FaultLocaliserTest, NodeDownNamesOnlyRanksOfThatNode) {
  c.kill(4);
  for (uint32_t rank : {40u, 44u}) {
    SymptomRecord s = symptom(SymptomKind::kResponseTimeout, "n4,n8", {16, 32}, "n10", rank, c.now());
    c.as(10, [&](FaultLocaliser& l) { return l.detect(s, c.now()); });
  }
  ASSERT_EQ(c.summary(), strings({"n0 <- node_down n4 by n1"}));
  EXPECT_EQ(c.reports[0].fault.ranks, (std::vector<uint32_t>{16}));
}

}  // namespace
}  // namespace nk
