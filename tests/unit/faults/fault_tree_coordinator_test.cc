#include "faults/fault_tree_coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "faults/job_registry.h"
#include "faults/process_state_reader.h"
#include "faults/rule_file_parser.h"
#include "faults/symptom_store.h"

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr uid_t kUid = 1000;
constexpr int64_t kMs = 1'000'000;

int64_t realNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Polls `done` until it holds or `timeout` passes; the result of the last look.
bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// The processes the test says exist, in the state it sets. Locked: the
// coordinator's thread reads them (through the JobRegistry) while the test
// changes them.
class FakeProcessStateReader final : public ProcessStateReader {
 public:
  void set(pid_t pid, ProcessState state, uint64_t start_time = 1000) {
    std::lock_guard lock(mutex_);
    processes_[pid] = {state, start_time};
  }
  void remove(pid_t pid) {
    std::lock_guard lock(mutex_);
    processes_.erase(pid);
  }
  void setCpuTime(pid_t pid, std::chrono::microseconds cpu_time) {
    std::lock_guard lock(mutex_);
    processes_[pid].cpu_time = cpu_time;
  }
  std::optional<ProcessStatus> read(pid_t pid) const override {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<pid_t, ProcessStatus> processes_;
};

// The other nodes' daemons, as the coordinator's thread reaches them: every
// call is recorded, and each node answers as configured (a node never
// configured does not answer).
class FakeNetwork final : public PeerNetwork, public Prober {
 public:
  struct HeartbeatCall {
    std::string node, job_id, from;
    bool leaving = false;
  };
  struct SymptomCall {
    std::string node;
    SymptomRecord symptom;
  };
  struct FaultCall {
    std::string node;
    FaultRecord fault;
  };
  struct ProbeCall {
    std::string kind;  // "response", "status", "log"
    std::string node;
    std::string job_id;
    size_t attempts = 0;
  };

  void addNode(const std::string& node, bool alive = true) {
    std::lock_guard lock(mutex_);
    nodes_[node].alive = alive;
  }
  void setStatus(const std::string& node, StatusFindings status) {
    std::lock_guard lock(mutex_);
    nodes_[node].status = std::move(status);
  }

  Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom) override {
    std::lock_guard lock(mutex_);
    symptoms_.push_back({std::string(node), symptom});
    return deliver(node);
  }
  Delivery publishFault(std::string_view node, const FaultRecord& fault) override {
    std::lock_guard lock(mutex_);
    faults_.push_back({std::string(node), fault});
    return deliver(node);
  }
  Delivery heartbeat(std::string_view node, std::string_view job_id, std::string_view from, bool leaving) override {
    std::lock_guard lock(mutex_);
    heartbeats_.push_back({std::string(node), std::string(job_id), std::string(from), leaving});
    return deliver(node);
  }

  ResponseFindings responseProbe(std::string_view node, size_t attempts) override {
    std::lock_guard lock(mutex_);
    probes_.push_back({"response", std::string(node), "", attempts});
    ResponseFindings findings;
    findings.attempts = attempts;
    if (aliveLocked(node)) {
      findings.answered = attempts;
      findings.best_rtt = 200us;
    }
    return findings;
  }
  StatusFindings statusProbe(std::string_view job_id, std::string_view node) override {
    std::lock_guard lock(mutex_);
    probes_.push_back({"status", std::string(node), std::string(job_id), 0});
    if (!aliveLocked(node)) return {};
    StatusFindings findings = nodes_.find(std::string(node))->second.status;
    findings.answered = true;
    return findings;
  }
  // Only the symptom intake asks for ranks' progress, never the coordinator.
  std::vector<Result<PeerProgress>> rankProgress(std::string_view, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds) override {
    ADD_FAILURE() << "the coordinator asked for ranks' progress";
    return std::vector<Result<PeerProgress>>(nodes.size(), unavailable("not modelled"));
  }
  LogFindings logProbe(std::string_view job_id, std::string_view node, int64_t, int64_t) override {
    std::lock_guard lock(mutex_);
    probes_.push_back({"log", std::string(node), std::string(job_id), 0});
    LogFindings findings;
    findings.answered = aliveLocked(node);
    return findings;
  }

  std::vector<HeartbeatCall> heartbeats() const {
    std::lock_guard lock(mutex_);
    return heartbeats_;
  }
  std::vector<SymptomCall> symptoms() const {
    std::lock_guard lock(mutex_);
    return symptoms_;
  }
  std::vector<FaultCall> faults() const {
    std::lock_guard lock(mutex_);
    return faults_;
  }
  std::vector<ProbeCall> probes() const {
    std::lock_guard lock(mutex_);
    return probes_;
  }
  size_t heartbeatCount(const std::string& node, const std::string& job_id) const {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const HeartbeatCall& h : heartbeats_)
      if (h.node == node && h.job_id == job_id) ++n;
    return n;
  }
  size_t probeCount(const std::string& kind, const std::string& node) const {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const ProbeCall& p : probes_)
      if (p.kind == kind && p.node == node) ++n;
    return n;
  }

 private:
  struct Node {
    bool alive = true;
    StatusFindings status;
  };
  bool aliveLocked(std::string_view node) const {
    auto it = nodes_.find(std::string(node));
    return it != nodes_.end() && it->second.alive;
  }
  Delivery deliver(std::string_view node) const {
    return aliveLocked(node) ? Delivery::kAccepted : Delivery::kUnreachable;
  }

  mutable std::mutex mutex_;
  std::map<std::string, Node> nodes_;
  std::vector<HeartbeatCall> heartbeats_;
  std::vector<SymptomCall> symptoms_;
  std::vector<FaultCall> faults_;
  std::vector<ProbeCall> probes_;
};

RankStatus rankStatus(uint32_t rank, ProcessState state, bool finalized = false) {
  RankStatus r;
  r.rank = rank;
  r.state = state;
  r.finalized = finalized;
  return r;
}

SymptomRecord symptom(SymptomKind kind, const std::string& suspect, const std::string& reporter_node,
                      uint32_t reporter_rank, std::string operation, int64_t timestamp_ns,
                      const std::string& job = "jobA") {
  SymptomRecord s;
  s.job_id = job;
  s.uid = kUid;
  s.kind = kind;
  s.reporter_node = reporter_node;
  s.reporter_rank = reporter_rank;
  s.suspect_node = suspect;
  s.operation = std::move(operation);
  s.timestamp_ns = timestamp_ns;
  return s;
}

class FaultTreeCoordinatorTest : public ::testing::Test {
 protected:
  FaultTreeCoordinatorTest() {
    options.localiser.heartbeat_period = 20ms;
    options.localiser.heartbeat_misses = 3;
    options.node_state = [this] {
      ++ticks;  // tickAll asks once per tick
      std::lock_guard lock(mutex);
      return node_state;
    };
    options.on_published = [this](const FaultRecord& fault) {
      std::lock_guard lock(mutex);
      published.push_back(fault);
    };
    options.log_info = [this](const std::string& line) {
      std::lock_guard lock(mutex);
      logs.push_back(line);
    };
  }

  static std::shared_ptr<const FaultRuleBase> builtInRules() {
    return std::make_shared<const FaultRuleBase>(RuleFileParser::builtIn());
  }

  void make(std::shared_ptr<const FaultRuleBase> rules = builtInRules()) {
    coordinator = std::make_unique<FaultTreeCoordinator>("default-node", jobs, network, network, reports,
                                                         std::move(rules), options);
  }

  // now_ns 0: a rank that never reported has no report age, so it is never
  // stalled however slow the test machine is.
  void registerRank(const std::string& job, uint32_t rank, uint32_t size, const std::string& node, pid_t pid,
                    int64_t now_ns = 0) {
    processes.set(pid, ProcessState::kSleeping);
    RankRegistration r;
    r.job_id = job;
    r.rank = rank;
    r.size = size;
    r.node = node;
    r.pid = pid;
    r.uid = kUid;
    r.endpoint = "unix:/run/nodekeeper-" + node + ".sock";
    r.now_ns = now_ns;
    Status status = jobs.registerRank(r);
    ASSERT_TRUE(status.ok()) << status.error().message;
  }

  void setNodes(const std::string& job, const std::vector<std::pair<std::string, std::vector<uint32_t>>>& list) {
    std::vector<JobNodeRecord> nodes;
    for (const auto& [name, ranks] : list) nodes.push_back({name, "unix:/run/nodekeeper-" + name + ".sock", ranks});
    Status status = jobs.setNodes(job, std::move(nodes), 0);
    ASSERT_TRUE(status.ok()) << status.error().message;
  }

  // The standard job: n1 (rank 0), n2 (rank 1), n3 (rank 2); this daemon
  // holds `local_rank` on its node.
  // A report from rank `rank` of jobA, as its agent sends it.
  struct Report {
    uint32_t rank = 0;
    std::string operation;
    int64_t now_ns = 0;
    int ending_signal = 0;
    bool finalized = false;
  };
  Status report(const Report& r) {
    ProgressUpdate update;
    update.job_id = "jobA";
    update.rank = r.rank;
    update.current_operation = r.operation;
    update.now_ns = r.now_ns;
    update.ending_signal = r.ending_signal;
    update.finalized = r.finalized;
    return jobs.recordProgress(std::move(update), std::nullopt);
  }
  void threeNodeJob(uint32_t local_rank, pid_t pid) {
    static const char* kNames[] = {"n1", "n2", "n3"};
    registerRank("jobA", local_rank, 3, kNames[local_rank], pid);
    setNodes("jobA", {{"n1", {0}}, {"n2", {1}}, {"n3", {2}}});
  }

  // Starts the coordinator and waits for the job's tree.
  void startWithTree(const std::string& job, const std::string& self) {
    coordinator->start();
    coordinator->jobNodesChanged(job);
    ASSERT_TRUE(waitFor([&] { return coordinator->selfIn(job) == self; })) << coordinator->selfIn(job);
  }

  // At least `n` more ticks of the coordinator's thread (tickAll) happen;
  // two guarantee that an event posted before the call has been handled.
  void waitTicks(int n) {
    const int target = ticks.load() + n;
    ASSERT_TRUE(waitFor([&] { return ticks.load() >= target; }));
  }

  size_t publishedCount() {
    std::lock_guard lock(mutex);
    return published.size();
  }
  std::vector<std::string> logLines() {
    std::lock_guard lock(mutex);
    return logs;
  }

  FakeProcessStateReader processes;
  JobRegistry jobs{processes};
  FakeNetwork network;
  FaultReportLog reports;
  FaultTreeCoordinator::Options options;
  SymptomStore store;  // the daemon's, when a test lists raised symptoms there

  std::mutex mutex;  // guards the next three
  FaultTreeCoordinator::NodeState node_state;
  std::vector<FaultRecord> published;
  std::vector<std::string> logs;
  std::atomic<int> ticks{0};

  std::unique_ptr<FaultTreeCoordinator> coordinator;  // last: destroyed (stopped) first
};

// 1 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, JobNodesChangedBuildsTheJobsTree) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  EXPECT_EQ(coordinator->selfIn("jobA"), "");
  EXPECT_EQ(coordinator->jobCount(), 0u);
  startWithTree("jobA", "n2");  // the registered rank's node, not "default-node"

  EXPECT_EQ(coordinator->jobCount(), 1u);
  EXPECT_TRUE(coordinator->inTree("jobA", "n1"));
  EXPECT_TRUE(coordinator->inTree("jobA", "n2"));
  EXPECT_TRUE(coordinator->inTree("jobA", "n3"));
  EXPECT_FALSE(coordinator->inTree("jobA", "zz"));
  EXPECT_FALSE(coordinator->inTree("jobB", "n1"));
  EXPECT_EQ(coordinator->selfIn("jobB"), "");

  // n2 is node 1 of the tree: its FLN is the root n1.
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 3; }));
  for (const auto& h : network.heartbeats()) {
    EXPECT_EQ(h.node, "n1");
    EXPECT_EQ(h.job_id, "jobA");
    EXPECT_EQ(h.from, "n2");
    EXPECT_FALSE(h.leaving);
  }
  EXPECT_TRUE(network.symptoms().empty());

  // The same node list again (another rank of the job arrived): no rebuild.
  coordinator->jobNodesChanged("jobA");
  waitTicks(2);
  EXPECT_EQ(logLines(),
            std::vector<std::string>{"job jobA: fault tree of 3 nodes, fan-out 4; this node n2 is below n1 with 0 children"});
  EXPECT_EQ(coordinator->selfIn("jobA"), "n2");
}

TEST_F(FaultTreeCoordinatorTest, NoTreeWhenThisNodeIsNotInTheNodeList) {
  network.addNode("n1");
  network.addNode("n2");
  registerRank("jobA", 1, 2, "n9", 101);  // the rank says n9; the node list does not have it
  setNodes("jobA", {{"n1", {0}}, {"n2", {1}}});
  make();
  coordinator->start();
  coordinator->jobNodesChanged("jobA");
  ASSERT_TRUE(waitFor([&] { return !logLines().empty(); }));
  EXPECT_EQ(logLines(), std::vector<std::string>{
                            "job jobA: this node (n9) is not in the job's node list; no fault tree"});
  waitTicks(3);
  EXPECT_EQ(coordinator->selfIn("jobA"), "");
  EXPECT_FALSE(coordinator->inTree("jobA", "n1"));
  EXPECT_EQ(coordinator->jobCount(), 0u);
  EXPECT_FALSE(coordinator->heartbeat("jobA", "n1", false));
  EXPECT_TRUE(network.heartbeats().empty());
}

// 2 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, JobsOnOverlappingNodesGetTheirOwnTrees) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  registerRank("jobA", 1, 2, "n2", 101);
  setNodes("jobA", {{"n1", {0}}, {"n2", {1}}});
  registerRank("jobB", 1, 2, "n2", 102);
  setNodes("jobB", {{"n3", {0}}, {"n2", {1}}});
  make();
  coordinator->start();
  coordinator->jobNodesChanged("jobA");
  coordinator->jobNodesChanged("jobB");
  ASSERT_TRUE(waitFor([&] { return coordinator->jobCount() == 2; }));
  EXPECT_EQ(coordinator->selfIn("jobA"), "n2");
  EXPECT_EQ(coordinator->selfIn("jobB"), "n2");
  EXPECT_TRUE(coordinator->inTree("jobA", "n1"));
  EXPECT_FALSE(coordinator->inTree("jobA", "n3"));
  EXPECT_TRUE(coordinator->inTree("jobB", "n3"));
  EXPECT_FALSE(coordinator->inTree("jobB", "n1"));

  ASSERT_TRUE(waitFor([&] {
    return network.heartbeatCount("n1", "jobA") >= 2 && network.heartbeatCount("n3", "jobB") >= 2;
  }));
  EXPECT_EQ(network.heartbeatCount("n3", "jobA"), 0u);
  EXPECT_EQ(network.heartbeatCount("n1", "jobB"), 0u);
  for (const auto& h : network.heartbeats()) {
    EXPECT_EQ(h.from, "n2");
    EXPECT_FALSE(h.leaving);
  }
}

// 3 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, RankGoneWithoutFinalizeIsSentToTheParent) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  startWithTree("jobA", "n2");
  // The tree ticks and has seen the rank alive.
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 2; }));
  EXPECT_TRUE(network.symptoms().empty());

  processes.remove(101);
  ASSERT_TRUE(waitFor([&] { return !network.symptoms().empty(); }));
  // Its only rank gone, the job is over here: the node leaves the tree
  // (after it said why) rather than be blamed later for a job that ended.
  auto left = [&] {
    for (const auto& h : network.heartbeats())
      if (h.leaving) return true;
    return false;
  };
  ASSERT_TRUE(waitFor(left));

  auto calls = network.symptoms();
  ASSERT_EQ(calls.size(), 1u);  // once
  EXPECT_EQ(calls[0].node, "n1");
  const SymptomRecord& s = calls[0].symptom;
  EXPECT_EQ(s.job_id, "jobA");
  EXPECT_EQ(s.kind, SymptomKind::kRankExited);
  EXPECT_EQ(s.suspect_node, "n2");
  EXPECT_EQ(s.suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.reporter_node, "n2");
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_EQ(s.detail, "rank 1's process ended without MPI_Finalize");
  // No rank of the job is left here: the node left its tree, once, last.
  auto heartbeats = network.heartbeats();
  ASSERT_FALSE(heartbeats.empty());
  EXPECT_TRUE(heartbeats.back().leaving);
  EXPECT_EQ(std::count_if(heartbeats.begin(), heartbeats.end(), [](const auto& h) { return h.leaving; }), 1);
  EXPECT_TRUE(waitFor([&] { return coordinator->selfIn("jobA").empty(); }));
}

TEST_F(FaultTreeCoordinatorTest, FinalizedRankThatIsGoneRaisesNothingAndLeaves) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  ASSERT_TRUE(report({.rank = 1, .operation = "MPI_Finalize", .now_ns = 0, .finalized = true}).ok());
  processes.remove(101);
  make();
  // Everything is in place before the thread starts, so its first tick sees
  // the rank finalized and gone.
  coordinator->jobNodesChanged("jobA");
  coordinator->start();

  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 1; }));
  waitTicks(3);
  auto heartbeats = network.heartbeats();
  ASSERT_EQ(heartbeats.size(), 1u);
  EXPECT_EQ(heartbeats[0].node, "n1");
  EXPECT_EQ(heartbeats[0].job_id, "jobA");
  EXPECT_EQ(heartbeats[0].from, "n2");
  EXPECT_TRUE(heartbeats[0].leaving);
  EXPECT_TRUE(network.symptoms().empty());
  // A leaf that left, with no one heartbeating to it, drops the job's tree.
  EXPECT_EQ(coordinator->jobCount(), 0u);
  EXPECT_EQ(coordinator->selfIn("jobA"), "");
}

// A rank ended by SIGINT, which its agent said before it ended: the job is
// cancelled (said once, in the log and in the registry), no symptom goes to
// the parent and nothing is published; the node leaves the tree.
TEST_F(FaultTreeCoordinatorTest, ARankEndedBySigintCancelsTheJobWithoutASymptom) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  ASSERT_TRUE(report({.rank = 1, .operation = "MPI_Allreduce", .now_ns = 0, .ending_signal = SIGINT}).ok());
  processes.remove(101);
  make();
  coordinator->jobNodesChanged("jobA");
  coordinator->start();

  auto left = [&] {
    for (const auto& h : network.heartbeats())
      if (h.leaving) return true;
    return false;
  };
  ASSERT_TRUE(waitFor(left));
  // Said after a grace without news of a crash elsewhere.
  ASSERT_TRUE(waitFor([&] { return jobs.job("jobA")->cancelled_by_signal == SIGINT; }));
  waitTicks(3);
  EXPECT_TRUE(network.symptoms().empty());
  EXPECT_EQ(publishedCount(), 0u);
  auto lines = logLines();
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) {
                            return l == "job jobA: cancelled (SIGINT): rank 1 on n2 ended by it; not a fault";
                          }),
            1)
      << ::testing::PrintToString(lines);
}

// A rank on n3 crashed and mpirun ended this node's rank with SIGTERM: this
// node sees only SIGTERM, but n3's rank_exited reaches it (it is n3's FLN
// here, the root) within the grace, so the job is not listed cancelled.
TEST_F(FaultTreeCoordinatorTest, SigtermHereAfterACrashOnAnotherNodeIsNotACancellation) {
  network.addNode("n2");
  network.addNode("n3");
  options.cancellation_grace = 60s;  // the news surely comes within it
  threeNodeJob(0, 100);              // this daemon is n1, the root
  make();
  startWithTree("jobA", "n1");
  ASSERT_TRUE(report({.rank = 0, .operation = "MPI_Allreduce", .now_ns = realNowNs(), .ending_signal = SIGTERM}).ok());
  processes.remove(100);
  waitTicks(2);
  SymptomRecord crash = symptom(SymptomKind::kRankExited, "n3", "n3", kDaemonReporter, "MPI_Allreduce", realNowNs());
  crash.suspect_ranks = {2};
  ASSERT_TRUE(coordinator->receive(crash));
  const std::string said = "job jobA: rank 0 on n1 ended by SIGTERM after a rank crashed on n3; not a cancellation";
  ASSERT_TRUE(waitFor([&] {
    auto lines = logLines();
    return std::find(lines.begin(), lines.end(), said) != lines.end();
  })) << ::testing::PrintToString(logLines());
  waitTicks(3);
  EXPECT_EQ(jobs.job("jobA")->cancelled_by_signal, 0);
  for (const std::string& line : logLines()) EXPECT_EQ(line.find("cancelled ("), std::string::npos) << line;
}

// The same with the news as a process_crash fault published here.
TEST_F(FaultTreeCoordinatorTest, AProcessCrashPublishedAboutAnotherNodeIsCrashNewsToo) {
  network.addNode("n1");
  network.addNode("n3");
  options.cancellation_grace = 60s;
  threeNodeJob(1, 101);  // this daemon is n2
  make();
  startWithTree("jobA", "n2");
  FaultRecord fault;
  fault.job_id = "jobA";
  fault.uid = kUid;
  fault.kind = FaultKind::kProcessCrash;
  fault.node = "n3";
  fault.ranks = {2};
  ASSERT_TRUE(coordinator->publish(fault));
  ASSERT_TRUE(report({.rank = 1, .now_ns = realNowNs(), .ending_signal = SIGTERM}).ok());
  processes.remove(101);
  const std::string said = "job jobA: rank 1 on n2 ended by SIGTERM after a rank crashed on n3; not a cancellation";
  ASSERT_TRUE(waitFor([&] {
    auto lines = logLines();
    return std::find(lines.begin(), lines.end(), said) != lines.end();
  })) << ::testing::PrintToString(logLines());
  EXPECT_EQ(jobs.job("jobA")->cancelled_by_signal, 0);
}

// 4 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, StoppedRankIsSentOncePerEpisode) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  startWithTree("jobA", "n2");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 2; }));

  processes.set(101, ProcessState::kStopped);
  ASSERT_TRUE(waitFor([&] { return !network.symptoms().empty(); }));
  size_t heartbeats = network.heartbeatCount("n1", "jobA");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= heartbeats + 5; }));

  auto calls = network.symptoms();
  ASSERT_EQ(calls.size(), 1u);  // still stopped: not said again
  EXPECT_EQ(calls[0].node, "n1");
  const SymptomRecord& s = calls[0].symptom;
  EXPECT_EQ(s.job_id, "jobA");
  EXPECT_EQ(s.kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(s.suspect_node, "n2");
  EXPECT_EQ(s.suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.reporter_node, "n2");
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_EQ(s.detail, "rank 1's process is stopped");

  // Continued, then stopped again: a new episode, said again.
  processes.set(101, ProcessState::kSleeping);
  waitTicks(3);
  EXPECT_EQ(network.symptoms().size(), 1u);
  processes.set(101, ProcessState::kStopped);
  ASSERT_TRUE(waitFor([&] { return network.symptoms().size() >= 2; }));
  heartbeats = network.heartbeatCount("n1", "jobA");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= heartbeats + 3; }));
  calls = network.symptoms();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].node, "n1");
  EXPECT_EQ(calls[1].symptom.kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(calls[1].symptom.suspect_ranks, (std::vector<uint32_t>{1}));
}

// 5 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, RootProbesASilentChildAndPublishesItDown) {
  network.addNode("n1");
  network.addNode("n2", /*alive=*/false);
  network.addNode("n3");
  threeNodeJob(0, 100);  // this daemon is n1, the root; n2 and n3 are its children
  make();
  startWithTree("jobA", "n1");

  EXPECT_TRUE(coordinator->heartbeat("jobA", "n2", false));
  // Then silence: after heartbeat_misses periods the root suspects n2, its
  // TFA probes it and, no answer, publishes node_down.
  ASSERT_TRUE(waitFor([&] { return publishedCount() >= 1; }));
  waitTicks(5);
  EXPECT_EQ(publishedCount(), 1u);

  auto probes = network.probes();
  ASSERT_EQ(probes.size(), 1u);  // node_down confirmed by the response probe alone
  EXPECT_EQ(probes[0].kind, "response");
  EXPECT_EQ(probes[0].node, "n2");
  EXPECT_EQ(probes[0].attempts, 3u);  // the built-in probe_attempts

  auto batch = reports.since(0, {});
  ASSERT_EQ(batch.faults.size(), 1u);
  const FaultRecord& f = batch.faults[0];
  EXPECT_EQ(f.fault_id, 1u);
  EXPECT_EQ(f.job_id, "jobA");
  EXPECT_EQ(f.uid, kUid);
  EXPECT_EQ(f.kind, FaultKind::kNodeDown);
  EXPECT_EQ(f.node, "n2");
  EXPECT_EQ(f.ranks, (std::vector<uint32_t>{1}));  // from the node list
  EXPECT_EQ(f.localised_by, "n1");
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(published.size(), 1u);
    EXPECT_EQ(published[0].fault_id, 1u);
    EXPECT_EQ(published[0].kind, FaultKind::kNodeDown);
    EXPECT_EQ(published[0].node, "n2");
  }
  // The root localises its children itself and heartbeats to no one.
  EXPECT_TRUE(network.symptoms().empty());
  EXPECT_TRUE(network.heartbeats().empty());
  EXPECT_TRUE(network.faults().empty());
}

// This node's rank stops and no other node answers, so the symptom about
// this node stays here for TFA, and its probes about this node are answered
// here. The network does not know n2 either: a probe through it would find
// n2 down, and this daemon would report its own node down.
TEST_F(FaultTreeCoordinatorTest, ProbesAboutThisNodeAreAnsweredHereNotThroughTheNetwork) {
  threeNodeJob(1, 101);  // this daemon is n2
  make();
  startWithTree("jobA", "n2");
  processes.set(101, ProcessState::kStopped);
  ASSERT_TRUE(waitFor([&] { return publishedCount() >= 1; }));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(published[0].kind, FaultKind::kProcessHang) << ::testing::PrintToString(published[0].evidence);
    EXPECT_EQ(published[0].node, "n2");
  }
  EXPECT_EQ(network.probeCount("response", "n2"), 0u);
  EXPECT_EQ(network.probeCount("status", "n2"), 0u);
  EXPECT_EQ(network.probeCount("log", "n2"), 0u);
  EXPECT_TRUE(coordinator->isSelf("jobA", "n2"));
  EXPECT_TRUE(coordinator->isSelf("", "n2"));
  EXPECT_FALSE(coordinator->isSelf("jobA", "n1"));
  EXPECT_FALSE(coordinator->isSelf("jobB", "n2"));
}

// The tick feeds the scheduling delay (CPU pressure here: lateness cannot
// be made to order), and a rank's stall is judged against the grown stall_after.
TEST_F(FaultTreeCoordinatorTest, TheTickFeedsTheSchedulingDelayAndStallAfterGrowsWithIt) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  options.scheduling_delay = std::make_shared<SchedulingDelay>();
  options.cpu_pressure = [] { return std::optional<double>(100.0); };  // factor 4
  // Registered 3 s ago without a report since: past stall_after (2 s), not past 2 s x4.
  registerRank("jobA", 1, 3, "n2", 101, realNowNs() - 3000 * kMs);
  setNodes("jobA", {{"n1", {0}}, {"n2", {1}}, {"n3", {2}}});
  processes.set(101, ProcessState::kRunning);
  make();
  startWithTree("jobA", "n2");
  waitTicks(5);
  EXPECT_DOUBLE_EQ(options.scheduling_delay->factor(), 4.0);
  EXPECT_TRUE(network.symptoms().empty());
}

// The status probe's answer says what /proc says of a rank's progress: its
// CPU time, and how long ago a look found it grown (the ticks look too).
TEST_F(FaultTreeCoordinatorTest, LocalStatusSaysARanksCpuTimeAndWhenItLastGrew) {
  network.addNode("n1");
  network.addNode("n3");
  threeNodeJob(1, 101);
  processes.setCpuTime(101, 5s);
  make();
  startWithTree("jobA", "n2");
  waitTicks(2);
  StatusFindings before = coordinator->localStatus("jobA");
  ASSERT_EQ(before.ranks.size(), 1u);
  EXPECT_EQ(before.ranks[0].cpu_time, std::chrono::microseconds(5s));
  EXPECT_FALSE(before.ranks[0].cpu_grew_ago) << "not seen to grow yet";
  processes.setCpuTime(101, 6s);
  waitTicks(2);
  StatusFindings after = coordinator->localStatus("jobA");
  ASSERT_EQ(after.ranks.size(), 1u);
  ASSERT_TRUE(after.ranks[0].cpu_grew_ago);
  EXPECT_LT(*after.ranks[0].cpu_grew_ago, 10s);
}

TEST_F(FaultTreeCoordinatorTest, ReceivedSymptomsAreHeldUntilATriggerFires) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  StatusFindings n3;
  n3.ranks = {rankStatus(2, ProcessState::kGone)};
  network.setStatus("n3", n3);
  threeNodeJob(0, 100);
  make();
  startWithTree("jobA", "n1");

  // One response timeout is below the built-in trigger_count of 2.
  const int64_t t0 = realNowNs();
  EXPECT_TRUE(coordinator->receive(symptom(SymptomKind::kResponseTimeout, "n3", "n2", 1, "MPI_Recv", t0)));
  waitTicks(3);
  EXPECT_TRUE(network.probes().empty());
  EXPECT_EQ(publishedCount(), 0u);

  // A second, distinct one fires it; TFA analyses both.
  EXPECT_TRUE(coordinator->receive(symptom(SymptomKind::kResponseTimeout, "n3", "n1", 0, "MPI_Bcast", t0 + kMs)));
  ASSERT_TRUE(waitFor([&] { return publishedCount() >= 1; }));
  waitTicks(3);
  EXPECT_EQ(publishedCount(), 1u);
  EXPECT_EQ(network.probeCount("response", "n3"), 1u);
  EXPECT_EQ(network.probeCount("status", "n3"), 1u);

  auto batch = reports.since(0, {});
  ASSERT_EQ(batch.faults.size(), 1u);
  const FaultRecord& f = batch.faults[0];
  EXPECT_EQ(f.kind, FaultKind::kProcessCrash);
  EXPECT_EQ(f.node, "n3");
  EXPECT_EQ(f.ranks, (std::vector<uint32_t>{2}));
  EXPECT_EQ(f.localised_by, "n1");
  EXPECT_EQ(f.first_symptom_ns, t0);  // the first, held symptom is part of the group
  ASSERT_GE(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0], "response_timeout from rank 1@n2: MPI_Recv");
  EXPECT_EQ(f.evidence[1], "response_timeout from rank 0@n1: MPI_Bcast");
}

TEST_F(FaultTreeCoordinatorTest, ChildFindsItsDeadParentAndReportsAsActingRoot) {
  network.addNode("n1", /*alive=*/false);
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  startWithTree("jobA", "n2");
  // heartbeat_misses unanswered heartbeats to n1, then heartbeat_lost about
  // n1; the root's localisers are n2 (this node) then n3, so TFA runs here.
  ASSERT_TRUE(waitFor([&] { return publishedCount() >= 1; }));
  waitTicks(3);
  EXPECT_EQ(publishedCount(), 1u);
  EXPECT_GE(network.heartbeatCount("n1", "jobA"), 3u);
  EXPECT_EQ(network.probeCount("response", "n1"), 1u);
  auto batch = reports.since(0, {});
  ASSERT_EQ(batch.faults.size(), 1u);
  EXPECT_EQ(batch.faults[0].kind, FaultKind::kNodeDown);
  EXPECT_EQ(batch.faults[0].node, "n1");
  EXPECT_EQ(batch.faults[0].ranks, (std::vector<uint32_t>{0}));
  EXPECT_EQ(batch.faults[0].uid, kUid);
  EXPECT_EQ(batch.faults[0].localised_by, "n2");
  EXPECT_TRUE(network.symptoms().empty());  // kept here, not sent to n3
  EXPECT_TRUE(network.faults().empty());    // n1 is down: n2 publishes itself
}

TEST_F(FaultTreeCoordinatorTest, DetectRoutesALocalRanksSymptomToTheSuspectsLocaliser) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  startWithTree("jobA", "n2");
  // Rank 1 here waited for rank 2 on n3; n3's FLN is the root n1.
  coordinator->detect(symptom(SymptomKind::kResponseTimeout, "n3", "n2", 1, "MPI_Recv", realNowNs()));
  ASSERT_TRUE(waitFor([&] { return !network.symptoms().empty(); }));
  // About a node outside the tree, or a job without a tree here: dropped.
  coordinator->detect(symptom(SymptomKind::kResponseTimeout, "zz", "n2", 1, "MPI_Recv", realNowNs()));
  coordinator->detect(symptom(SymptomKind::kResponseTimeout, "n3", "n2", 1, "MPI_Recv", realNowNs(), "jobZ"));
  waitTicks(3);
  auto calls = network.symptoms();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].node, "n1");
  EXPECT_EQ(calls[0].symptom.kind, SymptomKind::kResponseTimeout);
  EXPECT_EQ(calls[0].symptom.suspect_node, "n3");
  EXPECT_EQ(calls[0].symptom.reporter_rank, 1u);
  EXPECT_TRUE(network.probes().empty());  // analysed at n1, not here
}

// 6 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, PublishDedupes) {
  make();  // publish() needs no thread
  FaultRecord fault;
  fault.job_id = "jobA";
  fault.uid = kUid;
  fault.kind = FaultKind::kProcessHang;
  fault.node = "n3";
  fault.ranks = {2};
  fault.localised_by = "n1";

  auto first = coordinator->publish(fault);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->fault_id, 1u);
  EXPECT_EQ(first->node, "n3");
  EXPECT_EQ(first->kind, FaultKind::kProcessHang);
  EXPECT_FALSE(coordinator->publish(fault).has_value());
  EXPECT_EQ(reports.size(), 1u);
  EXPECT_EQ(publishedCount(), 1u);

  // Another kind about the same node is another fault.
  fault.kind = FaultKind::kOverheating;
  auto other = coordinator->publish(fault);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->fault_id, 2u);
  EXPECT_EQ(reports.size(), 2u);
  std::lock_guard lock(mutex);
  ASSERT_EQ(published.size(), 2u);
  EXPECT_EQ(published[0].fault_id, 1u);
  EXPECT_EQ(published[1].fault_id, 2u);
  EXPECT_EQ(published[1].kind, FaultKind::kOverheating);
}

// 7 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, LocalStatusReportsTheLocalRanksAndTheNodeState) {
  registerRank("jobA", 0, 3, "n2", 200);
  registerRank("jobA", 1, 3, "n2", 201);
  setNodes("jobA", {{"n2", {0, 1}}, {"n3", {2}}});
  ASSERT_TRUE(
      report({.rank = 0, .operation = "MPI_Finalize", .now_ns = realNowNs() - 5000 * kMs, .finalized = true}).ok());
  processes.set(201, ProcessState::kStopped);
  {
    std::lock_guard lock(mutex);
    node_state.load = 0.75;
    node_state.max_temperature_c = 81.5;
    node_state.thermal_alarm = true;
  }
  make();

  StatusFindings findings = coordinator->localStatus("jobA");
  EXPECT_TRUE(findings.answered);
  EXPECT_DOUBLE_EQ(findings.load, 0.75);
  EXPECT_DOUBLE_EQ(findings.max_temperature_c, 81.5);
  EXPECT_TRUE(findings.thermal_alarm);
  EXPECT_FALSE(findings.overloaded);
  ASSERT_EQ(findings.ranks.size(), 2u);
  EXPECT_EQ(findings.ranks[0].rank, 0u);
  EXPECT_EQ(findings.ranks[0].state, ProcessState::kSleeping);
  EXPECT_TRUE(findings.ranks[0].finalized);
  EXPECT_EQ(findings.ranks[0].current_operation, "MPI_Finalize");
  ASSERT_TRUE(findings.ranks[0].report_age.has_value());
  EXPECT_GE(*findings.ranks[0].report_age, 5000ms);
  EXPECT_EQ(findings.ranks[1].rank, 1u);
  EXPECT_EQ(findings.ranks[1].state, ProcessState::kStopped);
  EXPECT_FALSE(findings.ranks[1].finalized);
  EXPECT_FALSE(findings.ranks[1].report_age.has_value());  // never reported, registered at time 0

  processes.remove(200);
  findings = coordinator->localStatus("jobA");
  ASSERT_EQ(findings.ranks.size(), 2u);
  EXPECT_EQ(findings.ranks[0].state, ProcessState::kGone);
  EXPECT_TRUE(findings.ranks[0].finalized);

  // A job not registered here: answered, with no ranks, and the node's state.
  findings = coordinator->localStatus("jobZ");
  EXPECT_TRUE(findings.answered);
  EXPECT_TRUE(findings.ranks.empty());
  EXPECT_DOUBLE_EQ(findings.load, 0.75);
  EXPECT_TRUE(findings.thermal_alarm);
}

// 8 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, HeartbeatIsRefusedForAJobWithoutATree) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(0, 100);
  make();
  EXPECT_FALSE(coordinator->heartbeat("jobZ", "n2", false));
  EXPECT_FALSE(coordinator->heartbeat("jobA", "n2", false));  // no node list handed over yet
  startWithTree("jobA", "n1");
  EXPECT_TRUE(coordinator->heartbeat("jobA", "n2", false));
  EXPECT_TRUE(coordinator->heartbeat("jobA", "n3", true));
  EXPECT_FALSE(coordinator->heartbeat("jobZ", "n2", false));
}

TEST_F(FaultTreeCoordinatorTest, ReceiveIsRefusedWhenTheQueueIsFull) {
  options.max_queue = 2;
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(0, 100);
  make();  // not started: events wait in the queue
  const int64_t t0 = realNowNs();
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(coordinator->receive(symptom(SymptomKind::kMpiError, "n3", "n2", 1, "op" + std::to_string(i), t0)))
        << i;
  EXPECT_TRUE(coordinator->overloaded());
  EXPECT_FALSE(coordinator->receive(symptom(SymptomKind::kMpiError, "n3", "n2", 1, "op3", t0)));
  EXPECT_TRUE(coordinator->localStatus("jobA").overloaded);
  coordinator->start();
  ASSERT_TRUE(waitFor([&] { return !coordinator->overloaded(); }));
  EXPECT_TRUE(coordinator->receive(symptom(SymptomKind::kMpiError, "n3", "n2", 1, "op4", t0)));
}

// 9 ---------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, SetRulesSwapsTheRuleBase) {
  network.addNode("n1");
  network.addNode("n2", /*alive=*/false);
  network.addNode("n3");
  StatusFindings n3;
  n3.ranks = {rankStatus(2, ProcessState::kSleeping)};
  network.setStatus("n3", n3);
  threeNodeJob(0, 100);
  make();
  startWithTree("jobA", "n1");

  // With the built-in rules one heartbeat_lost is analysed at once.
  EXPECT_TRUE(coordinator->receive(
      symptom(SymptomKind::kHeartbeatLost, "n3", "n1", kDaemonReporter, "", realNowNs())));
  ASSERT_TRUE(waitFor([&] { return network.probeCount("response", "n3") == 1; }));

  FaultRuleBase quiet = RuleFileParser::builtIn();
  quiet.trigger_now.clear();
  quiet.trigger_count = 100;
  coordinator->setRules(std::make_shared<const FaultRuleBase>(quiet));
  EXPECT_TRUE(coordinator->receive(
      symptom(SymptomKind::kHeartbeatLost, "n2", "n1", kDaemonReporter, "", realNowNs())));
  waitTicks(5);
  EXPECT_EQ(network.probeCount("response", "n2"), 0u);
  EXPECT_EQ(network.probes().size(), 2u);  // n3's response and status probes, nothing since
  EXPECT_EQ(publishedCount(), 0u);
  EXPECT_EQ(reports.size(), 0u);
}

// 10 --------------------------------------------------------------------------

TEST_F(FaultTreeCoordinatorTest, StopJoinsPromptlyAndTheDestructorIsSafe) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  // A period of an hour: stop() must wake the thread, not wait for its tick.
  options.localiser.heartbeat_period = std::chrono::hours(1);
  make();
  startWithTree("jobA", "n2");
  auto stopped = std::async(std::launch::async, [&] { coordinator->stop(); });
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
  coordinator->stop();  // again: nothing to join
  auto destroyed = std::async(std::launch::async, [&] { coordinator.reset(); });
  ASSERT_EQ(destroyed.wait_for(10s), std::future_status::ready);

  // Never started: stop() and the destructor have nothing to join.
  make();
  coordinator->stop();
  coordinator.reset();
}

TEST_F(FaultTreeCoordinatorTest, RestartsAfterStopAndIsDestroyedWhileRunning) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  make();
  startWithTree("jobA", "n2");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 2; }));
  coordinator->stop();
  const size_t before = network.heartbeatCount("n1", "jobA");
  coordinator->start();
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= before + 2; }));
  // Destroyed while its thread runs: the destructor stops and joins it.
  auto destroyed = std::async(std::launch::async, [&] { coordinator.reset(); });
  ASSERT_EQ(destroyed.wait_for(10s), std::future_status::ready);
}

// 9 (daemon-raised symptoms listed) -------------------------------------------

TEST_F(FaultTreeCoordinatorTest, ARankStoppedHereIsListedOnceInTheSymptomStore) {
  network.addNode("n1");
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  options.symptoms = &store;
  make();
  startWithTree("jobA", "n2");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= 2; }));
  // What the ranks report reaches the store through the service, not here:
  // a symptom handed to the tree (detect) or sent by a peer (receive) is
  // not listed again.
  coordinator->detect(symptom(SymptomKind::kResponseTimeout, "n3", "n2", 1, "MPI_Recv", realNowNs()));
  EXPECT_TRUE(coordinator->receive(symptom(SymptomKind::kResponseTimeout, "n2", "n3", 2, "MPI_Recv", realNowNs())));
  waitTicks(2);
  EXPECT_EQ(store.size(), 0u);

  processes.set(101, ProcessState::kStopped);
  ASSERT_TRUE(waitFor([&] { return store.size() >= 1; }));
  // It also went up the tree, and stays stopped for a while: still once.
  size_t heartbeats = network.heartbeatCount("n1", "jobA");
  ASSERT_TRUE(waitFor([&] { return network.heartbeatCount("n1", "jobA") >= heartbeats + 5; }));
  auto sent = network.symptoms();
  ASSERT_EQ(std::count_if(sent.begin(), sent.end(),
                          [](const auto& call) { return call.symptom.reporter_rank == kDaemonReporter; }),
            1);
  auto listed = store.since(0, {});
  ASSERT_EQ(listed.symptoms.size(), 1u);
  const SymptomRecord& s = listed.symptoms[0];
  EXPECT_EQ(s.symptom_id, 1u);
  EXPECT_EQ(s.job_id, "jobA");
  EXPECT_EQ(s.uid, kUid);
  EXPECT_EQ(s.kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(s.reporter_node, "n2");
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_EQ(s.suspect_node, "n2");
  EXPECT_EQ(s.suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.detail, "rank 1's process is stopped");
  // The job's user sees it: the store's uid filter keeps it.
  SymptomStore::Filter mine;
  mine.uid = kUid;
  EXPECT_EQ(store.since(0, mine).symptoms.size(), 1u);
}

TEST_F(FaultTreeCoordinatorTest, AHeartbeatLostByTheLocaliserIsListedOnce) {
  network.addNode("n1", /*alive=*/false);
  network.addNode("n2");
  network.addNode("n3");
  threeNodeJob(1, 101);
  options.symptoms = &store;
  make();
  startWithTree("jobA", "n2");
  // The parent n1 does not answer: heartbeat_lost about n1, localised here.
  ASSERT_TRUE(waitFor([&] { return publishedCount() >= 1; }));
  waitTicks(5);
  auto listed = store.since(0, {});
  ASSERT_EQ(listed.symptoms.size(), 1u);
  const SymptomRecord& s = listed.symptoms[0];
  EXPECT_EQ(s.job_id, "jobA");
  EXPECT_EQ(s.uid, kUid);
  EXPECT_EQ(s.kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(s.reporter_node, "n2");
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_EQ(s.suspect_node, "n1");
  EXPECT_EQ(s.detail, "its child n2 got no answer to 3 heartbeats");
}

}  // namespace
}  // namespace nk
