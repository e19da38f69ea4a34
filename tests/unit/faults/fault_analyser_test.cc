#include "faults/fault_analyser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;

// Canned answers per node; a node it knows nothing about is down. Counts
// every call so that the tests can see what TFA chose to probe.
class FakeProber : public Prober {
 public:
  struct Node {
    ResponseFindings response;
    StatusFindings status;
    LogFindings log;
  };
  std::map<std::string, Node> nodes;
  std::map<std::string, int> response_calls, status_calls, log_calls;
  std::vector<std::pair<int64_t, int64_t>> log_ranges;

  ResponseFindings responseProbe(std::string_view node, size_t attempts) override {
    ++response_calls[std::string(node)];
    auto it = nodes.find(std::string(node));
    if (it == nodes.end()) return {attempts, 0, 0us};
    return it->second.response;
  }
  StatusFindings statusProbe(std::string_view, std::string_view node) override {
    ++status_calls[std::string(node)];
    auto it = nodes.find(std::string(node));
    return it == nodes.end() ? StatusFindings{} : it->second.status;
  }
  LogFindings logProbe(std::string_view, std::string_view node, int64_t from_ns, int64_t to_ns) override {
    ++log_calls[std::string(node)];
    log_ranges.emplace_back(from_ns, to_ns);
    auto it = nodes.find(std::string(node));
    return it == nodes.end() ? LogFindings{} : it->second.log;
  }

  // A live node whose ranks run, wait in MPI_Recv and report fresh.
  Node& healthy(const std::string& name, std::vector<uint32_t> ranks) {
    Node& n = nodes[name];
    n.response = {2, 2, 300us};
    n.status.answered = true;
    n.status.max_temperature_c = 55;
    for (uint32_t r : ranks) n.status.ranks.push_back({r, ProcessState::kSleeping, false, 100ms, "MPI_Recv"});
    n.log.answered = true;
    return n;
  }
  RankStatus& rank(const std::string& name, uint32_t r) {
    for (RankStatus& s : nodes.at(name).status.ranks)
      if (s.rank == r) return s;
    throw std::out_of_range("no rank");
  }
};

FaultRule rule(FaultKind fault, std::set<SymptomKind> when, std::vector<ProbeCondition> confirm, size_t line) {
  return {fault, std::move(when), std::move(confirm), line};
}

// Shaped like the shipped rules, built by hand so as not to depend on the parser.
FaultRuleBase standardRules() {
  using K = SymptomKind;
  using C = ProbeCondition;
  FaultRuleBase base;
  base.window = 2000ms;
  base.stall_after = 2000ms;
  base.slow_rtt = 50ms;
  base.probe_attempts = 2;
  base.source = "test";
  base.rules = {
      rule(FaultKind::kNodeDown, {K::kHeartbeatLost, K::kResponseTimeout, K::kMpiError}, {C::kUnreachable}, 3),
      rule(FaultKind::kProcessCrash, {K::kRankExited, K::kResponseTimeout, K::kMpiError}, {C::kReachable, C::kRankGone},
           5),
      rule(FaultKind::kProcessHang, {K::kResponseTimeout}, {C::kReachable, C::kRankStopped}, 7),
      rule(FaultKind::kProcessHang, {K::kResponseTimeout}, {C::kReachable, C::kRankStalled}, 9),
      rule(FaultKind::kNetworkDegraded, {K::kResponseTimeout, K::kMpiError}, {C::kSlow, C::kRanksHealthy}, 11),
      rule(FaultKind::kOverheating, {K::kThermalAlarm}, {C::kHot}, 13),
  };
  return base;
}

SymptomRecord symptom(SymptomKind kind, std::string suspect, std::vector<uint32_t> ranks, int64_t at_ms,
                      uint32_t reporter_rank = 0, std::string reporter = "n0", std::string op = "MPI_Recv") {
  SymptomRecord s;
  s.job_id = "job1";
  s.uid = 1000;
  s.kind = kind;
  s.reporter_node = std::move(reporter);
  s.reporter_rank = reporter_rank;
  s.suspect_node = std::move(suspect);
  s.suspect_ranks = std::move(ranks);
  s.operation = std::move(op);
  s.timestamp_ns = kT0 + at_ms * kMs;
  s.detail = "waited 5.0 s";
  return s;
}

SymptomRecord timeout(std::string suspect, std::vector<uint32_t> ranks, int64_t at_ms, uint32_t reporter_rank = 0) {
  return symptom(SymptomKind::kResponseTimeout, std::move(suspect), std::move(ranks), at_ms, reporter_rank);
}

bool hasLine(const FaultRecord& f, std::string_view text) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

class FaultAnalyserTest : public ::testing::Test {
 protected:
  FaultAnalyser::Analysis analyse(std::vector<SymptomRecord> symptoms) {
    FaultAnalyser analyser(rules, prober);
    return analyser.analyse(std::move(symptoms), "fln", kT0 + 60'000 * kMs);
  }
  FaultRuleBase rules = standardRules();
  FakeProber prober;
};

TEST_F(FaultAnalyserTest, UnreachableNodeIsDownWithTheRanksItsPeersNamed) {
  // n1 unknown to the prober: no answer.
  auto a = analyse({timeout("n1", {5, 4}, 0, 0), symptom(SymptomKind::kHeartbeatLost, "n1", {}, 100),
                    timeout("n1", {4}, 200, 2)});
  ASSERT_EQ(a.faults.size(), 1u);
  const FaultRecord& f = a.faults[0];
  EXPECT_EQ(f.kind, FaultKind::kNodeDown);
  EXPECT_EQ(f.node, "n1");
  EXPECT_EQ(f.ranks, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(f.job_id, "job1");
  EXPECT_EQ(f.uid, 1000u);
  EXPECT_EQ(f.first_symptom_ns, kT0);
  EXPECT_EQ(f.localised_ns, kT0 + 60'000 * kMs);
  EXPECT_EQ(f.localised_by, "fln");
  EXPECT_TRUE(hasLine(f, "response probe: 0 of 2 attempts answered"));
  EXPECT_TRUE(hasLine(f, "rule node_down at line 3 confirmed: unreachable"));
  EXPECT_EQ(f.evidence.front(), "response_timeout from rank 0@n0: MPI_Recv waited 5.0 s");
  // node_down comes first and holds: no status probe of a dead node.
  EXPECT_EQ(prober.response_calls["n1"], 1);
  EXPECT_EQ(prober.status_calls["n1"], 0);
  EXPECT_EQ(a.probes_sent, 1u);
}

TEST_F(FaultAnalyserTest, StoppedRankIsAHang) {
  prober.healthy("n1", {2, 3});
  prober.rank("n1", 3).state = ProcessState::kStopped;
  auto a = analyse({timeout("n1", {3}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessHang);
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{3}));
  EXPECT_TRUE(hasLine(a.faults[0], "status probe: rank 3 stopped in MPI_Recv"));
  EXPECT_TRUE(hasLine(a.faults[0], "rule process_hang at line 7 confirmed: reachable, rank_stopped"));
}

TEST_F(FaultAnalyserTest, StalledRankIsAHang) {
  prober.healthy("n1", {2, 3});
  prober.rank("n1", 2).report_age = 9000ms;
  // The symptom names rank 7, which is not on n1: all of n1's ranks are suspect.
  auto a = analyse({timeout("n1", {7}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessHang);
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{2}));
  EXPECT_TRUE(hasLine(a.faults[0], "rule process_hang at line 9 confirmed: reachable, rank_stalled"));
  EXPECT_TRUE(hasLine(a.faults[0], "no report for 9.0 s"));
}

// A late report from a rank whose process is runnable and used CPU lately
// is a busy host: the rank is starved, not stalled, and no hang is found.
TEST_F(FaultAnalyserTest, StarvedRankIsNotStalled) {
  prober.healthy("n1", {2});
  RankStatus& starved = prober.rank("n1", 2);
  starved.report_age = 9000ms;
  starved.state = ProcessState::kRunning;
  starved.cpu_time = 42s;
  starved.cpu_grew_ago = 100ms;
  EXPECT_TRUE(analyse({timeout("n1", {2}, 0)}).faults.empty());
  // Its CPU time stopped growing: now it is stalled.
  starved.cpu_grew_ago = 9000ms;
  auto a = analyse({timeout("n1", {2}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessHang);
}

TEST_F(FaultAnalyserTest, ALateRankThatSleepsOrNeverRanIsStalledNotStarved) {
  prober.healthy("n1", {2, 3});
  prober.rank("n1", 2).report_age = 9000ms;  // sleeping, CPU time grew: not runnable
  prober.rank("n1", 2).cpu_grew_ago = 10ms;
  prober.rank("n1", 3).report_age = 9000ms;  // runnable, never seen to use CPU
  prober.rank("n1", 3).state = ProcessState::kRunning;
  auto a = analyse({timeout("n1", {2, 3}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{2, 3}));
}

TEST_F(FaultAnalyserTest, AStoppedRankThatFinalizedIsNotAHang) {
  prober.healthy("n1", {2});
  prober.rank("n1", 2).state = ProcessState::kStopped;
  prober.rank("n1", 2).finalized = true;
  EXPECT_TRUE(analyse({timeout("n1", {2}, 0)}).faults.empty());
}

TEST_F(FaultAnalyserTest, StallAfterAndSlowRttGrowWithTheDelayFactor) {
  prober.healthy("n1", {2});
  prober.rank("n1", 2).report_age = 5000ms;
  prober.nodes["n1"].response.best_rtt = 100ms;  // above slow_rtt 50 ms, below 50 ms x3
  FaultAnalyser busy(rules, prober, 3.0);
  auto quiet = busy.analyse({timeout("n1", {2}, 0)}, "fln", kT0 + 60'000 * kMs);
  EXPECT_TRUE(quiet.faults.empty()) << "5 s without a report is within stall_after 2 s x3";
  prober.rank("n1", 2).report_age = 7000ms;
  auto a = busy.analyse({timeout("n1", {2}, 0)}, "fln", kT0 + 60'000 * kMs);
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessHang);
  EXPECT_TRUE(hasLine(a.faults[0], "no report for 7.0 s (stall_after 2000 ms x3.0 for this host's scheduling delay = "
                                   "6000 ms)"));
}

TEST_F(FaultAnalyserTest, StaleButFinalizedRankIsNotStalled) {
  prober.healthy("n1", {2});
  prober.rank("n1", 2).report_age = 9000ms;
  prober.rank("n1", 2).finalized = true;
  EXPECT_TRUE(analyse({timeout("n1", {2}, 0)}).faults.empty());
}

TEST_F(FaultAnalyserTest, GoneRankIsACrashOnlyWithoutFinalize) {
  prober.healthy("n1", {2, 3});
  prober.rank("n1", 3).state = ProcessState::kGone;
  auto a = analyse({symptom(SymptomKind::kRankExited, "n1", {3}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessCrash);
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{3}));
  EXPECT_TRUE(hasLine(a.faults[0], "status probe: rank 3 gone"));

  FakeProber finished;
  finished.healthy("n1", {2, 3});
  finished.rank("n1", 3).state = ProcessState::kGone;
  finished.rank("n1", 3).finalized = true;
  FaultAnalyser analyser(rules, finished);
  EXPECT_TRUE(analyser.analyse({symptom(SymptomKind::kRankExited, "n1", {3}, 0)}, "fln", 0).faults.empty());
}

TEST_F(FaultAnalyserTest, ZombieRankIsACrash) {
  prober.healthy("n1", {3});
  prober.rank("n1", 3).state = ProcessState::kZombie;
  auto a = analyse({timeout("n1", {3}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessCrash);
}

TEST_F(FaultAnalyserTest, SlowLinkWithHealthyRanksIsNetworkDegraded) {
  prober.healthy("n1", {2, 3}).response = {2, 2, 80ms};
  auto a = analyse({timeout("n1", {2}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kNetworkDegraded);
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{2}));
  EXPECT_TRUE(hasLine(a.faults[0], "status probe: ranks 2-3 running and reporting"));
  EXPECT_TRUE(hasLine(a.faults[0], "rule network_degraded at line 11 confirmed: slow, ranks_healthy"));

  FakeProber lossy;
  lossy.healthy("n1", {2}).response = {2, 1, 1ms};  // fast, but one attempt lost
  FaultAnalyser analyser(rules, lossy);
  auto b = analyser.analyse({timeout("n1", {2}, 0)}, "fln", 0);
  ASSERT_EQ(b.faults.size(), 1u);
  EXPECT_EQ(b.faults[0].kind, FaultKind::kNetworkDegraded);
}

TEST_F(FaultAnalyserTest, ThermalAlarmConfirmedByStatusIsOverheating) {
  FakeProber::Node& n = prober.healthy("n1", {0});
  n.status.thermal_alarm = true;
  n.status.max_temperature_c = 97;
  auto a = analyse({symptom(SymptomKind::kThermalAlarm, "n1", {}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kOverheating);
  EXPECT_TRUE(hasLine(a.faults[0], "max temperature 97.0 C"));
  EXPECT_EQ(prober.response_calls["n1"], 0);  // the hot rule needs only the status probe

  prober.nodes["n1"].status.thermal_alarm = false;  // cooled down since the alarm
  EXPECT_TRUE(analyse({symptom(SymptomKind::kThermalAlarm, "n1", {}, 0)}).faults.empty());
}

TEST_F(FaultAnalyserTest, UnansweredStatusConfirmsNoStatusCondition) {
  FakeProber::Node& n = prober.healthy("n1", {3});
  n.status.answered = false;
  n.status.ranks[0].state = ProcessState::kStopped;
  n.status.thermal_alarm = true;
  auto a = analyse({timeout("n1", {3}, 0), symptom(SymptomKind::kThermalAlarm, "n1", {}, 100)});
  EXPECT_TRUE(a.faults.empty());
}

TEST_F(FaultAnalyserTest, LogPendingUsesTheGroupsRange) {
  rules.rules = {rule(FaultKind::kNetworkDegraded, {SymptomKind::kMpiError},
                      {ProbeCondition::kReachable, ProbeCondition::kLogPending}, 2)};
  prober.healthy("n1", {1}).log = {true, {"send 1->0", "recv 0<-1"}, 1};
  auto a = analyse({symptom(SymptomKind::kMpiError, "n1", {1}, 1000), symptom(SymptomKind::kMpiError, "n1", {1}, 2500, 3)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_TRUE(hasLine(a.faults[0], "log probe: 1 of 2 messages pending"));
  ASSERT_EQ(prober.log_ranges.size(), 1u);
  EXPECT_EQ(prober.log_ranges[0].first, kT0 + (1000 - 2000) * kMs);
  EXPECT_EQ(prober.log_ranges[0].second, kT0 + 2500 * kMs);

  prober.nodes["n1"].log.pending = 0;
  EXPECT_TRUE(analyse({symptom(SymptomKind::kMpiError, "n1", {1}, 1000)}).faults.empty());
}

TEST_F(FaultAnalyserTest, RuleOrderDecides) {
  prober.healthy("n1", {3, 4});
  prober.rank("n1", 3).state = ProcessState::kStopped;
  prober.rank("n1", 4).state = ProcessState::kGone;
  auto a = analyse({timeout("n1", {3, 4}, 0)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kProcessCrash);  // line 5 before line 7
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{4}));

  std::swap(rules.rules[1], rules.rules[2]);
  auto b = analyse({timeout("n1", {3, 4}, 0)});
  ASSERT_EQ(b.faults.size(), 1u);
  EXPECT_EQ(b.faults[0].kind, FaultKind::kProcessHang);
  EXPECT_EQ(b.faults[0].ranks, (std::vector<uint32_t>{3}));
}

TEST_F(FaultAnalyserTest, OnlyRulesWhoseSymptomsArePresentAreCandidates) {
  // A stopped rank, but the only symptom is a rank_exited: the hang rules
  // (response_timeout only) are not candidates, and the crash rule fails.
  prober.healthy("n1", {3});
  prober.rank("n1", 3).state = ProcessState::kStopped;
  auto a = analyse({symptom(SymptomKind::kRankExited, "n1", {3}, 0)});
  EXPECT_TRUE(a.faults.empty());
  ASSERT_EQ(a.groups.size(), 1u);
}

TEST_F(FaultAnalyserTest, DuplicatesAreDroppedAndCounted) {
  size_t dropped = 0;
  FaultAnalyser analyser(rules, prober);
  auto groups = analyser.group({timeout("n1", {3}, 0), timeout("n1", {3}, 500), timeout("n1", {3}, 1500),
                                timeout("n1", {3}, 700, 1),   // another reporter
                                timeout("n1", {4}, 800),      // other suspects
                                timeout("", {3}, 900)},       // about nobody
                               &dropped);
  EXPECT_EQ(dropped, 3u);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].symptoms.size(), 3u);
  EXPECT_EQ(groups[0].symptoms[0].timestamp_ns, kT0);
  EXPECT_EQ(groups[0].symptoms[1].timestamp_ns, kT0 + 700 * kMs);
  EXPECT_EQ(groups[0].symptoms[2].timestamp_ns, kT0 + 800 * kMs);

  auto a = analyse({timeout("n1", {3}, 0), timeout("n1", {3}, 100)});
  EXPECT_EQ(a.duplicates_dropped, 1u);
}

TEST_F(FaultAnalyserTest, RepeatAfterTheWindowIsKept) {
  size_t dropped = 0;
  FaultAnalyser analyser(rules, prober);
  auto groups = analyser.group({timeout("n1", {3}, 0), timeout("n1", {3}, 2100)}, &dropped);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(groups.size(), 2u);  // and the gap splits them too
}

TEST_F(FaultAnalyserTest, GroupsSplitOnGapsLongerThanTheWindow) {
  FaultAnalyser analyser(rules, prober);
  auto groups = analyser.group({timeout("n1", {1}, 6000, 1), timeout("n1", {1}, 0, 1), timeout("n1", {2}, 2000, 2),
                                timeout("n1", {3}, 4100, 3), timeout("n2", {5}, 100, 5)});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].node, "n1");
  EXPECT_EQ(groups[0].symptoms.size(), 2u);  // 0 and 2000: a gap of exactly the window does not split
  EXPECT_EQ(groups[1].node, "n2");
  EXPECT_EQ(groups[2].node, "n1");
  ASSERT_EQ(groups[2].symptoms.size(), 2u);  // 4100 (2100 after 2000) and 6000
  EXPECT_EQ(groups[2].symptoms[0].timestamp_ns, kT0 + 4100 * kMs);
  EXPECT_EQ(groups[2].symptoms[1].timestamp_ns, kT0 + 6000 * kMs);
}

TEST_F(FaultAnalyserTest, CommaJoinedSuspectsGoToEachNodesGroup) {
  FaultAnalyser analyser(rules, prober);
  auto groups = analyser.group({symptom(SymptomKind::kMpiError, "n1,n2,", {1, 2}, 0)});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].node, "n1");
  EXPECT_EQ(groups[1].node, "n2");
  EXPECT_EQ(groups[1].symptoms.size(), 1u);

  size_t dropped = 0;
  EXPECT_TRUE(analyser.group({symptom(SymptomKind::kMpiError, ",", {1}, 0)}, &dropped).empty());
  EXPECT_EQ(dropped, 1u);
}

TEST_F(FaultAnalyserTest, HealthyNodeIsNeverBlamed) {
  prober.healthy("n1", {2, 3});
  auto a = analyse({timeout("n1", {2}, 0), timeout("n1", {3}, 100, 1),
                    symptom(SymptomKind::kMpiError, "n1", {2}, 200)});
  EXPECT_TRUE(a.faults.empty());
  EXPECT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(prober.response_calls["n1"], 1);
  EXPECT_EQ(prober.status_calls["n1"], 1);
  EXPECT_EQ(a.probes_sent, 2u);
}

TEST_F(FaultAnalyserTest, VictimNextToADeadNodeIsNotBlamed) {
  // Rank 1 on n1 died with its node; rank 0 on n2 waits for it in MPI_Recv,
  // and rank 4 on n3 waits for rank 0: both n1 and n2 are suspects.
  prober.healthy("n2", {0});
  auto a = analyse({timeout("n1", {1}, 0, 0), symptom(SymptomKind::kHeartbeatLost, "n1", {}, 50),
                    timeout("n2", {0}, 300, 4), timeout("n1,n2", {1, 0}, 400, 5)});
  ASSERT_EQ(a.faults.size(), 1u);
  EXPECT_EQ(a.faults[0].kind, FaultKind::kNodeDown);
  EXPECT_EQ(a.faults[0].node, "n1");
  EXPECT_EQ(a.faults[0].ranks, (std::vector<uint32_t>{0, 1}));  // what the symptoms named about n1
  EXPECT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(prober.status_calls["n1"], 0);
  EXPECT_EQ(prober.status_calls["n2"], 1);
}

TEST_F(FaultAnalyserTest, EachNodeIsProbedOncePerKind) {
  // Two groups about n1 (a gap), each trying every rule down to network_degraded.
  prober.healthy("n1", {2});
  auto a = analyse({timeout("n1", {2}, 0), timeout("n1", {2}, 5000, 1), timeout("n1", {2}, 9000, 3)});
  EXPECT_EQ(a.groups.size(), 3u);
  EXPECT_TRUE(a.faults.empty());
  EXPECT_EQ(prober.response_calls["n1"], 1);
  EXPECT_EQ(prober.status_calls["n1"], 1);
  EXPECT_EQ(a.probes_sent, 2u);
}

TEST_F(FaultAnalyserTest, SameFaultFromTwoGroupsIsMerged) {
  prober.healthy("n1", {3, 4});
  prober.rank("n1", 3).state = ProcessState::kStopped;
  prober.rank("n1", 4).state = ProcessState::kStopped;
  auto a = analyse({timeout("n1", {4}, 6000, 1), timeout("n1", {3}, 1000, 0)});
  EXPECT_EQ(a.groups.size(), 2u);
  ASSERT_EQ(a.faults.size(), 1u);
  const FaultRecord& f = a.faults[0];
  EXPECT_EQ(f.kind, FaultKind::kProcessHang);
  EXPECT_EQ(f.ranks, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(f.first_symptom_ns, kT0 + 1000 * kMs);
  EXPECT_TRUE(hasLine(f, "from rank 0@n0"));
  EXPECT_TRUE(hasLine(f, "from rank 1@n0"));
  EXPECT_EQ(std::count(f.evidence.begin(), f.evidence.end(),
                       std::string("rule process_hang at line 7 confirmed: reachable, rank_stopped")),
            1);
  // In order still: both groups' symptoms, the probes, the rule last (the
  // second group's symptom came after the rule).
  ASSERT_GE(f.evidence.size(), 4u);
  EXPECT_NE(f.evidence[0].find("from rank 0@n0"), std::string::npos) << f.evidence[0];
  EXPECT_NE(f.evidence[1].find("from rank 1@n0"), std::string::npos) << f.evidence[1];
  for (size_t i = 2; i + 1 < f.evidence.size(); ++i)
    EXPECT_NE(f.evidence[i].find("probe"), std::string::npos) << "line " << i << ": " << f.evidence[i];
  EXPECT_EQ(f.evidence.back(), "rule process_hang at line 7 confirmed: reachable, rank_stopped");
}

TEST_F(FaultAnalyserTest, EvidenceIsCappedAtTenSymptoms) {
  std::vector<SymptomRecord> many;
  for (uint32_t r = 0; r < 13; ++r) many.push_back(timeout("n1", {9}, r * 10, r));
  auto a = analyse(std::move(many));
  ASSERT_EQ(a.faults.size(), 1u);
  const auto& ev = a.faults[0].evidence;
  ASSERT_GE(ev.size(), 13u);
  EXPECT_EQ(ev[9], "response_timeout from rank 9@n0: MPI_Recv waited 5.0 s");
  EXPECT_EQ(ev[10], "... and 3 more");
  EXPECT_EQ(ev[11], "response probe: 0 of 2 attempts answered");
  EXPECT_EQ(ev.back(), "rule node_down at line 3 confirmed: unreachable");
}

}  // namespace
}  // namespace nk
