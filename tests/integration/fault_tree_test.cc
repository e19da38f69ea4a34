// The fault localisation tree end to end: eight real nodekeeperd as eight
// emulated nodes n1..n8, each on a loopback address of its own (TCP between
// the daemons, with a shared peer token), and a real Open MPI job across
// them, one rank per node (rank i-1 on n<i>) with libnodekeeper-pmpi
// preloaded. Nodes are killed, a rank is stopped, and the faults the tree's
// root publishes are read back with the CLI (`nodekeeper faults --json`).
//
// The tree: the nodes ordered by their lowest rank, n1 the root, fan-out 4:
//   n1 -> n2 n3 n4 n5;  n2 -> n6 n7 n8.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "testlib/daemon_cluster.h"
#include "testlib/daemon_process.h"
#include "testlib/mpi_job.h"
#include "testlib/processes.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace nk::test {
namespace {

constexpr const char* kJob = "job1";
constexpr const char* kTokenKey = "x-nodekeeper-peer-token";
// The probe line of a node_down fault: its daemon does not answer.
constexpr const char* kDown = "response probe: 0 of 3 attempts answered";

class FaultTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (envOr("NK_MPI_CHECK").empty() || envOr("NK_PMPI_LIB").empty()) GTEST_SKIP() << "no MPI programs built";
    token_ = dir_ / "token";
    token_text_ = DaemonCluster::writePeerToken(token_);
  }

  void TearDown() override {
    job_.kill();
    for (pid_t p : rank_pids_)
      if (p > 0 && cmdlineOf(p).find("mpi_check") != std::string::npos) ::kill(p, SIGKILL);
    cluster_.killAll();
  }

  const std::string& address(int i) const { return cluster_.address(i); }
  std::string socket(int i) const { return cluster_.node(i).socket().string(); }
  DaemonProcess& node(int i) { return cluster_.node(i); }

  // Daemons n1..n<count>, sharing the peer token.
  void startCluster(int count) {
    ASSERT_EQ(cluster_.start(count, [this](int) { return std::vector<std::string>{"--peer-token", token_.string()}; }),
              "");
  }

  std::vector<std::string> mpirun(const std::vector<std::string>& program) const {
    std::vector<std::string> command = {envOr("NK_MPI_CHECK")};
    command.insert(command.end(), program.begin(), program.end());
    return cluster_.mpirun({std::string("NODEKEEPER_JOB_ID=") + kJob}, command);
  }

  std::string treeLine() const { return "job " + std::string(kJob) + ": fault tree of " +
                                        std::to_string(cluster_.size()) + " nodes"; }

  // Every daemon built the job's tree (its log says so); then the first
  // heartbeats go round.
  bool waitForTree(std::chrono::seconds timeout = 90s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int i = 1; i <= cluster_.size(); ++i) {
      while (node(i).lastError().find(treeLine()) == std::string::npos) {
        if (std::chrono::steady_clock::now() > deadline || job_.wait(0ms) >= 0) {
          ADD_FAILURE() << nodeName(i) << " built no tree; its log:\n"
                        << node(i).lastError() << "\nmpirun stderr:\n" << job_.err();
          return false;
        }
        std::this_thread::sleep_for(100ms);
      }
    }
    std::this_thread::sleep_for(500ms);
    return true;
  }

  // Starts the job and waits for the tree and every rank's pid.
  void startJob(const std::vector<std::string>& program) {
    ASSERT_TRUE(job_.start(mpirun(program), dir_ / "job.out", dir_ / "job.err"));
    ASSERT_TRUE(waitForTree());
    rank_pids_.assign(static_cast<size_t>(cluster_.size()) + 1, -1);
    for (int i = 1; i <= cluster_.size(); ++i) {
      Json jobs = cliJson(i, {"jobs"});
      ASSERT_TRUE(jobs.contains("jobs")) << jobs.dump();
      for (const auto& j : jobs["jobs"]) {
        if (j["job_id"] != kJob) continue;
        EXPECT_EQ(j["size"], cluster_.size()) << j.dump();
        EXPECT_EQ(j["nodes"].size(), static_cast<size_t>(cluster_.size())) << j.dump();
        ASSERT_EQ(j["ranks"].size(), 1u) << j.dump();
        EXPECT_EQ(j["ranks"][0]["rank"], i - 1) << j.dump();
        EXPECT_EQ(j["ranks"][0]["node"], nodeName(i)) << j.dump();
        rank_pids_[i] = j["ranks"][0]["pid"].get<pid_t>();
      }
      ASSERT_GT(rank_pids_[i], 0) << nodeName(i) << ": " << jobs.dump();
      EXPECT_NE(cmdlineOf(rank_pids_[i]).find("mpi_check"), std::string::npos) << cmdlineOf(rank_pids_[i]);
    }
  }

  Json cliJson(int i, std::vector<std::string> args) {
    std::vector<std::string> argv = {cliPath(), "--socket", socket(i), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = runProgram(argv, std::nullopt, 15s);
    EXPECT_EQ(r.exit_code, 0) << "nodekeeper " << args[0] << " at " << nodeName(i) << ": " << r.out << r.err;
    if (r.exit_code != 0) return Json();
    Json parsed = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }

  // The faults published at n<i>.
  Json faults(int i) {
    Json list = cliJson(i, {"faults"});
    EXPECT_TRUE(list.is_array()) << list.dump();
    return list.is_array() ? list : Json::array();
  }

  static std::string show(const Json& list) { return list.dump(2); }

  // The first fault at n<i> about `node`, polled every 100 ms.
  std::optional<Json> waitForFault(int i, const std::string& node, std::chrono::milliseconds timeout = 10000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      for (const auto& f : faults(i))
        if (f.value("node", "") == node) return f;
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(100ms);
    }
  }

  // Node n<i> fails: its daemon, then its rank, SIGKILLed.
  void killNode(int i) {
    node(i).kill9();
    if (rank_pids_[i] > 0) ::kill(rank_pids_[i], SIGKILL);
  }

  std::string logs() const { return cluster_.logs(); }

  // Checks one published fault: its job, kind, node, the ranks it hit, who
  // localised it, its times, and that its evidence ends with the rule that
  // confirmed it after a probe line `probe`.
  void expectFault(const Json& f, const std::string& kind, const std::string& node, const std::string& by,
                   const std::vector<uint32_t>& ranks, const std::string& probe) {
    SCOPED_TRACE(f.dump(2));
    EXPECT_EQ(f.value("job_id", ""), kJob);
    EXPECT_EQ(f.value("kind", ""), kind);
    EXPECT_EQ(f.value("node", ""), node);
    EXPECT_EQ(f.value("localised_by", ""), by);
    EXPECT_GT(f.value("fault_id", 0), 0);
    EXPECT_EQ(f.value("ranks", std::vector<uint32_t>{}), ranks);
    ASSERT_TRUE(f.contains("evidence") && f["evidence"].is_array() && !f["evidence"].empty());
    std::string evidence;
    for (const auto& line : f["evidence"]) evidence += line.get<std::string>() + "\n";
    EXPECT_NE(evidence.find(probe), std::string::npos) << evidence;
    EXPECT_EQ(f["evidence"].back().get<std::string>().rfind("rule " + kind + " at line ", 0), 0u) << evidence;
    const int64_t first = f.value("first_symptom_ns", int64_t{0});
    const int64_t localised = f.value("localised_ns", int64_t{0});
    EXPECT_GT(first, 0);
    EXPECT_GE(localised, first);
    const double after = f.value("detected_after_s", -1.0);
    EXPECT_GE(after, 0.0);
    EXPECT_LT(after, 10.0);
  }

  // The faults at n<i> are exactly those about `nodes`, in that order.
  void expectOnlyFaultsAbout(int i, const std::vector<std::string>& nodes) {
    Json list = faults(i);
    std::vector<std::string> about;
    for (const auto& f : list) about.push_back(f.value("node", ""));
    EXPECT_EQ(about, nodes) << "faults at " << nodeName(i) << ":\n" << show(list) << "\n" << logs();
  }

  std::unique_ptr<v1::FaultTreeService::Stub> peerStub(int i) {
    return v1::FaultTreeService::NewStub(grpc::CreateChannel(address(i), grpc::InsecureChannelCredentials()));
  }

  TempDir dir_{"faulttree", TempDir::Access::kShared};
  std::filesystem::path token_;
  std::string token_text_;
  DaemonCluster cluster_{dir_.path()};
  std::vector<pid_t> rank_pids_;
  MpiJob job_;
};

// One job, four faults in turn, each localised by the node that should, each
// reported once by the root n1, no other node blamed:
//  1. a leaf (n7) fails: node_down n7, localised by its FLN n2;
//  2. a rank stops (rank 3 on the leaf n4): process_hang of rank 3 at n4;
//  3. an inner node (n2, the FLN of n6 n7 n8) fails: node_down n2 alone;
//  4. n6, whose FLN n2 is gone, fails: node_down n6, localised by its SFLN n1.
TEST_F(FaultTreeTest, LeafHangInnerNodeAndANodeWithoutItsFlnAreEachLocalised) {
  ASSERT_NO_FATAL_FAILURE(startCluster(8));
  ASSERT_NO_FATAL_FAILURE(startJob({"hang", "600", "100"}));
  expectOnlyFaultsAbout(1, {});

  // 1. A leaf.
  killNode(7);
  auto leaf = waitForFault(1, "n7");
  ASSERT_TRUE(leaf) << show(faults(1)) << logs();
  expectFault(*leaf, "node_down", "n7", "n2", {6}, kDown);
  std::this_thread::sleep_for(1500ms);
  expectOnlyFaultsAbout(1, {"n7"});

  // 2. A stopped rank on a leaf.
  ASSERT_EQ(::kill(rank_pids_[4], SIGSTOP), 0);
  auto hang = waitForFault(1, "n4");
  ::kill(rank_pids_[4], SIGCONT);
  ASSERT_TRUE(hang) << show(faults(1)) << logs();
  expectFault(*hang, "process_hang", "n4", "n1", {3}, "status probe: rank 3 stopped");
  std::this_thread::sleep_for(1500ms);
  expectOnlyFaultsAbout(1, {"n7", "n4"});

  // 3. An inner node: its children n6 and n8 lose their FLN, and turn to n1;
  // only n2 is to blame.
  killNode(2);
  auto inner = waitForFault(1, "n2");
  ASSERT_TRUE(inner) << show(faults(1)) << logs();
  expectFault(*inner, "node_down", "n2", "n1", {1}, kDown);
  std::this_thread::sleep_for(1500ms);
  expectOnlyFaultsAbout(1, {"n7", "n4", "n2"});

  // 4. A node whose FLN is gone: its SFLN n1 localises it.
  killNode(6);
  auto orphan = waitForFault(1, "n6");
  ASSERT_TRUE(orphan) << show(faults(1)) << logs();
  expectFault(*orphan, "node_down", "n6", "n1", {5}, kDown);
  std::this_thread::sleep_for(1500ms);
  expectOnlyFaultsAbout(1, {"n7", "n4", "n2", "n6"});

  // Each fault once, with its own id.
  std::set<int64_t> ids;
  for (const auto& f : faults(1)) ids.insert(f.value("fault_id", int64_t{0}));
  EXPECT_EQ(ids.size(), 4u);
}

// The root (n1, rank 0's node) fails: the node after it in the tree, n2,
// takes over as root, localises it and publishes the fault.
TEST_F(FaultTreeTest, TheRootsFailureIsReportedByItsSubstitute) {
  ASSERT_NO_FATAL_FAILURE(startCluster(8));
  ASSERT_NO_FATAL_FAILURE(startJob({"hang", "600", "100"}));
  killNode(1);
  auto root = waitForFault(2, "n1");
  ASSERT_TRUE(root) << show(faults(2)) << logs();
  expectFault(*root, "node_down", "n1", "n2", {0}, kDown);
  std::this_thread::sleep_for(1500ms);
  expectOnlyFaultsAbout(2, {"n1"});
  // No other node took over as root as well.
  for (int i = 3; i <= 8; ++i) expectOnlyFaultsAbout(i, {});
}

// The daemons' TCP service takes only peers that have the token; a forwarded
// symptom must be about a job this node has a tree of, and one of its nodes.
TEST_F(FaultTreeTest, PeersWithoutTheTokenAreRefusedAndUnknownJobsAndNodesAreNotFound) {
  ASSERT_NO_FATAL_FAILURE(startCluster(2));
  auto stub = peerStub(2);
  v1::ProbeRequest probe;
  probe.set_job_id(kJob);
  probe.set_node("n2");
  auto call = [&](const std::optional<std::string>& token, v1::ProbeResponse* reply) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (token) context.AddMetadata(kTokenKey, *token);
    return stub->ResponseProbe(&context, probe, reply);
  };
  v1::ProbeResponse reply;
  grpc::Status none = call(std::nullopt, &reply);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  EXPECT_FALSE(reply.alive());
  grpc::Status wrong = call(std::string("not-the-token-at-all-0123456789"), &reply);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED) << wrong.error_message();
  EXPECT_FALSE(reply.alive());
  // The right token with a byte changed is wrong too.
  std::string almost = token_text_;
  almost.back() = almost.back() == 'A' ? 'B' : 'A';
  grpc::Status close = call(almost, &reply);
  EXPECT_EQ(close.error_code(), grpc::StatusCode::UNAUTHENTICATED) << close.error_message();
  grpc::Status right = call(token_text_, &reply);
  ASSERT_TRUE(right.ok()) << right.error_message();
  EXPECT_TRUE(reply.alive());
  EXPECT_EQ(reply.node(), "n2");

  // A job: rank 0 (this process) at n1, the node list n1 n2.
  auto local = v1::FaultsService::NewStub(grpc::CreateChannel("unix:" + socket(1), grpc::InsecureChannelCredentials()));
  {
    v1::RegisterRankRequest request;
    request.set_job_id(kJob);
    request.set_rank(0);
    request.set_size(2);
    request.set_node("n1");
    request.set_pid(getpid());
    request.set_endpoint(address(1));
    v1::RegisterRankResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    grpc::Status s = local->RegisterRank(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  {
    v1::SetJobNodesRequest request;
    request.set_job_id(kJob);
    for (int i = 1; i <= 2; ++i) {
      v1::JobNode* n = request.add_nodes();
      n->set_node(nodeName(i));
      n->set_endpoint(address(i));
      n->add_ranks(static_cast<uint32_t>(i - 1));
    }
    v1::SetJobNodesResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    grpc::Status s = local->SetJobNodes(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  bool built = false;
  for (int i = 0; i < 100 && !(built = node(1).lastError().find(treeLine()) != std::string::npos); ++i)
    std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(built) << node(1).lastError();

  auto root = peerStub(1);
  auto forward = [&](const std::string& job, const std::string& suspect, const std::optional<std::string>& token) {
    v1::Symptom symptom;
    symptom.set_job_id(job);
    symptom.set_kind(v1::SYMPTOM_KIND_RESPONSE_TIMEOUT);
    symptom.set_reporter_node("n2");
    symptom.set_reporter_rank(1);
    symptom.set_suspect_node(suspect);
    symptom.set_operation("MPI_Allreduce");
    symptom.set_timestamp_ns(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (token) context.AddMetadata(kTokenKey, *token);
    v1::ReportSymptomResponse response;
    return root->ForwardSymptom(&context, symptom, &response);
  };
  grpc::Status no_token = forward(kJob, "n2", std::nullopt);
  EXPECT_EQ(no_token.error_code(), grpc::StatusCode::UNAUTHENTICATED) << no_token.error_message();
  grpc::Status unknown_job = forward("no-such-job", "n2", token_text_);
  EXPECT_EQ(unknown_job.error_code(), grpc::StatusCode::NOT_FOUND) << unknown_job.error_message();
  EXPECT_NE(unknown_job.error_message().find("no-such-job"), std::string::npos) << unknown_job.error_message();
  grpc::Status unknown_node = forward(kJob, "n99", token_text_);
  EXPECT_EQ(unknown_node.error_code(), grpc::StatusCode::NOT_FOUND) << unknown_node.error_message();
  EXPECT_NE(unknown_node.error_message().find("n99"), std::string::npos) << unknown_node.error_message();
  // None of this made a fault.
  std::this_thread::sleep_for(500ms);
  expectOnlyFaultsAbout(1, {});
}

// A job that runs to its end without a fault: nothing is reported, not
// even when the nodes leave the tree one after another.
TEST_F(FaultTreeTest, AFaultFreeRunReportsNoFault) {
  ASSERT_NO_FATAL_FAILURE(startCluster(8));
  ASSERT_TRUE(job_.start(mpirun({"alltoall", "200"}), dir_ / "job.out", dir_ / "job.err"));
  int rc = job_.wait(180s);
  ASSERT_EQ(rc, 0) << job_.out() << job_.err();
  EXPECT_NE(job_.out().find("ok 200"), std::string::npos) << job_.out();
  // The run had its tree on every node (else no fault could have been seen).
  for (int i = 1; i <= 8; ++i)
    EXPECT_NE(node(i).lastError().find(treeLine()), std::string::npos) << nodeName(i) << ":\n" << node(i).lastError();
  std::this_thread::sleep_for(2000ms);
  for (int i = 1; i <= 8; ++i) expectOnlyFaultsAbout(i, {});
}

// A daemon that crashes and comes back: its node is reported down, and once
// restarted (same flags) it builds the job's tree again from its rank,
// which registers again.
TEST_F(FaultTreeTest, ARestartedDaemonRejoinsTheTree) {
  ASSERT_NO_FATAL_FAILURE(startCluster(8));
  ASSERT_NO_FATAL_FAILURE(startJob({"hang", "600", "100"}));
  node(7).kill9();  // the daemon only: rank 6 runs on
  auto down = waitForFault(1, "n7");
  ASSERT_TRUE(down) << show(faults(1)) << logs();
  expectFault(*down, "node_down", "n7", "n2", {6}, kDown);

  ASSERT_TRUE(cluster_.restart(7)) << node(7).lastError();
  bool rejoined = false;
  for (int i = 0; i < 100 && !(rejoined = node(7).lastError().find(treeLine()) != std::string::npos); ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(rejoined) << node(7).lastError();
  EXPECT_NE(node(7).lastError().find("this node n7 is below n2"), std::string::npos) << node(7).lastError();
  // Rank 6 is back at n7, the same process.
  Json jobs = cliJson(7, {"jobs"});
  ASSERT_TRUE(jobs.contains("jobs")) << jobs.dump();
  ASSERT_EQ(jobs["jobs"].size(), 1u) << jobs.dump();
  ASSERT_EQ(jobs["jobs"][0]["ranks"].size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs["jobs"][0]["ranks"][0]["rank"], 6);
  EXPECT_EQ(jobs["jobs"][0]["ranks"][0]["pid"], rank_pids_[7]);
  std::this_thread::sleep_for(1500ms);
  // Still the one fault: the rejoined node is not reported again, nor any other.
  expectOnlyFaultsAbout(1, {"n7"});
  EXPECT_EQ(job_.wait(0ms), -1) << "the job ended: " << job_.err();
}

}  // namespace
}  // namespace nk::test
