// Integration tests of the faults service: two real nodekeeperd as the
// nodes "a" and "b" of one MPI job, and this test process playing its four
// ranks (0 and 1 at a, 2 and 3 at b) the way the PMPI agent would:
// registration, the node list, progress heartbeats, symptoms.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;
constexpr const char* kAsOtherFlag = "--nk-faults-as-other";
constexpr const char* kJob = "job-1";

std::unique_ptr<grpc::ClientContext> contextWithDeadline(std::chrono::milliseconds timeout = 5000ms) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

std::unique_ptr<v1::FaultsService::Stub> stubFor(const std::string& socket) {
  return v1::FaultsService::NewStub(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
}

grpc::Status registerRank(v1::FaultsService::Stub& stub, const std::string& job, uint32_t rank, uint32_t size,
                          const std::string& node, pid_t pid, const std::string& endpoint) {
  v1::RegisterRankRequest request;
  request.set_job_id(job);
  request.set_rank(rank);
  request.set_size(size);
  request.set_node(node);
  request.set_pid(pid);
  request.set_endpoint(endpoint);
  v1::RegisterRankResponse response;
  auto context = contextWithDeadline();
  return stub.RegisterRank(context.get(), request, &response);
}

grpc::Status reportProgress(v1::FaultsService::Stub& stub, const std::string& job, uint32_t rank, uint64_t world) {
  v1::ProgressReport report;
  report.set_job_id(job);
  report.set_rank(rank);
  v1::CommProgress* comm = report.add_communicators();
  comm->set_communicator("world");
  comm->set_collectives_entered(world);
  report.set_current_operation("MPI_Allreduce");
  v1::ReportProgressResponse response;
  auto context = contextWithDeadline(1000ms);
  return stub.ReportProgress(context.get(), report, &response);
}

v1::Symptom allreduceTimeout(uint32_t reporter, const std::string& node) {
  v1::Symptom symptom;
  symptom.set_job_id(kJob);
  symptom.set_kind(v1::SYMPTOM_KIND_RESPONSE_TIMEOUT);
  symptom.set_reporter_node(node);
  symptom.set_reporter_rank(reporter);
  symptom.set_operation("MPI_Allreduce");
  symptom.set_communicator("world");
  symptom.set_collective_seq(5);
  for (uint32_t r = 0; r < 4; ++r) symptom.add_communicator_members(r);
  symptom.set_waited_s(2.0);
  symptom.set_detail("waiting in MPI_Allreduce");
  return symptom;
}

// The agents' heartbeats: each rank reports every 100 ms from a thread of
// its own (as each rank's agent does, so that one slow daemon delays no
// other rank), rank 3 one collective behind the others, until destroyed.
class ProgressPump {
 public:
  explicit ProgressPump(std::vector<std::pair<v1::FaultsService::Stub*, uint32_t>> ranks) {
    for (auto [stub, rank] : ranks)
      // Init-captures: clang 14 (the sanitizer build) cannot capture structured bindings.
      threads_.emplace_back([this, stub = stub, rank = rank] {
        while (!stop_) {
          (void)reportProgress(*stub, kJob, rank, rank == 3 ? 4 : 5);
          ++reports_;
          for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(10ms);
        }
      });
  }
  ~ProgressPump() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  void waitForReports(int n) {
    for (int i = 0; i < 500 && reports_ < n; ++i) std::this_thread::sleep_for(10ms);
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> reports_{0};
  std::vector<std::thread> threads_;
};

size_t lineCount(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

class FaultsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "a");
    std::filesystem::create_directories(dir_ / "b");
    ASSERT_TRUE(node_a_.start(dir_ / "a")) << node_a_.lastError();
    ASSERT_TRUE(node_b_.start(dir_ / "b")) << node_b_.lastError();
    a_ = stubFor(node_a_.socket().string());
    b_ = stubFor(node_b_.socket().string());
  }
  void TearDown() override {
    node_a_.stop();
    node_b_.stop();
  }

  std::string endpointA() const { return "unix:" + node_a_.socket().string(); }
  std::string endpointB() const { return "unix:" + node_b_.socket().string(); }

  v1::SetJobNodesRequest nodeList() const {
    v1::SetJobNodesRequest request;
    request.set_job_id(kJob);
    v1::JobNode* a = request.add_nodes();
    a->set_node("a");
    a->set_endpoint(endpointA());
    a->add_ranks(0);
    a->add_ranks(1);
    v1::JobNode* b = request.add_nodes();
    b->set_node("b");
    b->set_endpoint(endpointB());
    b->add_ranks(2);
    b->add_ranks(3);
    return request;
  }
  grpc::Status setNodes(v1::FaultsService::Stub& stub, const v1::SetJobNodesRequest& request) {
    v1::SetJobNodesResponse response;
    auto context = contextWithDeadline();
    return stub.SetJobNodes(context.get(), request, &response);
  }

  // Ranks 0 and 1 at a, 2 and 3 at b, all this process unless `rank0_pid`;
  // both daemons get the node list.
  void setUpJob(pid_t rank0_pid = getpid()) {
    ASSERT_TRUE(registerRank(*a_, kJob, 0, 4, "a", rank0_pid, endpointA()).ok());
    ASSERT_TRUE(registerRank(*a_, kJob, 1, 4, "a", getpid(), endpointA()).ok());
    ASSERT_TRUE(registerRank(*b_, kJob, 2, 4, "b", getpid(), endpointB()).ok());
    ASSERT_TRUE(registerRank(*b_, kJob, 3, 4, "b", getpid(), endpointB()).ok());
    ASSERT_TRUE(setNodes(*a_, nodeList()).ok());
    ASSERT_TRUE(setNodes(*b_, nodeList()).ok());
  }
  std::unique_ptr<ProgressPump> pump() {
    auto p = std::make_unique<ProgressPump>(
        std::vector<std::pair<v1::FaultsService::Stub*, uint32_t>>{{a_.get(), 0}, {a_.get(), 1}, {b_.get(), 2},
                                                                     {b_.get(), 3}});
    p->waitForReports(8);
    return p;
  }

  grpc::Status report(v1::FaultsService::Stub& stub, const v1::Symptom& symptom) {
    v1::ReportSymptomResponse response;
    auto context = contextWithDeadline();
    return stub.ReportSymptom(context.get(), symptom, &response);
  }
  std::vector<v1::Symptom> symptoms(v1::FaultsService::Stub& stub, const std::string& job = "") {
    v1::WatchSymptomsRequest request;
    request.set_job_id(job);
    auto context = contextWithDeadline();
    auto reader = stub.WatchSymptoms(context.get(), request);
    std::vector<v1::Symptom> out;
    v1::Symptom s;
    while (reader->Read(&s)) out.push_back(s);
    grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return out;
  }
  // The symptoms the ranks reported, without those the daemons raised
  // themselves (a node that stopped answering, a rank seen stopped).
  static std::vector<v1::Symptom> fromRanks(const std::vector<v1::Symptom>& all) {
    std::vector<v1::Symptom> out;
    for (const auto& s : all)
      if (s.reporter_rank() != kDaemonRaised) out.push_back(s);
    return out;
  }
  static constexpr uint32_t kDaemonRaised = UINT32_MAX;  // reporter_rank
  v1::JobList jobs(v1::FaultsService::Stub& stub) {
    v1::JobList list;
    auto context = contextWithDeadline();
    grpc::Status status = stub.ListJobs(context.get(), v1::ListJobsRequest(), &list);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return list;
  }
  ProcessResult cli(std::vector<std::string> args, const DaemonProcess& daemon) {
    std::vector<std::string> argv = {cliPath(), "--socket", daemon.socket().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return runProgram(argv);
  }
  // This test program, copied where other users can run it.
  std::string selfForOtherUsers() {
    auto copy = dir_ / "faults_service_test";
    if (!std::filesystem::exists(copy)) {
      std::filesystem::copy_file("/proc/self/exe", copy);
      std::filesystem::permissions(copy, std::filesystem::perms(0755));
    }
    return copy.string();
  }

  TempDir dir_{"faults", TempDir::Access::kShared};
  DaemonProcess node_a_, node_b_;
  std::unique_ptr<v1::FaultsService::Stub> a_, b_;
};

TEST_F(FaultsServiceTest, ACollectiveTimeoutNamesTheRankThatHasNotArrived) {
  setUpJob();
  auto heartbeats = pump();
  ASSERT_TRUE(report(*a_, allreduceTimeout(1, "a")).ok());

  auto found = symptoms(*a_);
  ASSERT_EQ(found.size(), 1u);
  const v1::Symptom& s = found[0];
  EXPECT_EQ(s.symptom_id(), 1u);
  EXPECT_EQ(s.job_id(), kJob);
  EXPECT_EQ(s.kind(), v1::SYMPTOM_KIND_RESPONSE_TIMEOUT);
  EXPECT_EQ(s.reporter_rank(), 1u);
  EXPECT_EQ(s.reporter_node(), "a");
  ASSERT_EQ(s.suspect_ranks_size(), 1) << s.DebugString();
  EXPECT_EQ(s.suspect_ranks(0), 3u);
  EXPECT_EQ(s.suspect_node(), "b");
  EXPECT_EQ(s.operation(), "MPI_Allreduce");
  EXPECT_GT(s.timestamp_ns(), 0);
  EXPECT_NE(s.detail().find("waiting in MPI_Allreduce"), std::string::npos) << s.detail();
  EXPECT_NE(s.detail().find("3@b entered 4 of 5 collectives of world"), std::string::npos) << s.detail();
  EXPECT_TRUE(symptoms(*b_).empty());
  EXPECT_EQ(symptoms(*a_, kJob).size(), 1u);
  // Logged once, as a warning.
  std::string log = node_a_.lastError();
  const std::string logged =
      "symptom 1 of job job-1: response_timeout reported by rank 1 on a in MPI_Allreduce (collective 5 of world) "
      "after 2.0 s; suspects: rank 3 on b";
  EXPECT_NE(log.find(logged), std::string::npos) << log;
  EXPECT_EQ(log.find(logged), log.rfind(logged)) << log;
  EXPECT_TRUE(symptoms(*a_, "other-job").empty());

  // What daemon a asked daemon b.
  v1::RankProgressRequest request;
  request.set_job_id(kJob);
  v1::RankProgressResponse progress;
  auto context = contextWithDeadline();
  auto b_tree = v1::FaultTreeService::NewStub(
      grpc::CreateChannel("unix:" + node_b_.socket().string(), grpc::InsecureChannelCredentials()));
  ASSERT_TRUE(b_tree->RankProgress(context.get(), request, &progress).ok());
  ASSERT_EQ(progress.ranks_size(), 2);
  EXPECT_GT(progress.now_ns(), 0);
  EXPECT_EQ(progress.ranks(1).rank(), 3u);
  EXPECT_EQ(progress.ranks(1).node(), "b");
  EXPECT_EQ(progress.ranks(1).pid(), getpid());
  ASSERT_EQ(progress.ranks(1).communicators_size(), 1);
  EXPECT_EQ(progress.ranks(1).communicators(0).collectives_entered(), 4u);
  EXPECT_GT(progress.ranks(1).last_report_ns(), 0);
  EXPECT_TRUE(progress.ranks(1).process_state() == "running" || progress.ranks(1).process_state() == "sleeping")
      << progress.ranks(1).process_state();

  // The CLI shows both.
  ProcessResult listed = cli({"jobs", "--json"}, node_a_);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto job_json = nlohmann::json::parse(listed.out);
  ASSERT_EQ(job_json["jobs"].size(), 1u) << listed.out;
  EXPECT_EQ(job_json["jobs"][0]["job_id"], kJob);
  EXPECT_EQ(job_json["jobs"][0]["size"], 4);
  EXPECT_EQ(job_json["jobs"][0]["nodes"].size(), 2u);
  EXPECT_EQ(job_json["jobs"][0]["nodes"][1]["endpoint"], endpointB());
  ASSERT_EQ(job_json["jobs"][0]["ranks"].size(), 2u);
  EXPECT_EQ(job_json["jobs"][0]["ranks"][1]["rank"], 1);
  EXPECT_EQ(job_json["jobs"][0]["ranks"][1]["pid"], getpid());
  EXPECT_NE(job_json["jobs"][0]["ranks"][1]["process_state"], "gone");

  ProcessResult table = cli({"jobs"}, node_a_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("ENERGY"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("    rank 1  a  pid "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" s ago\n"), std::string::npos) << table.out;

  ProcessResult shown = cli({"symptoms", "--json"}, node_a_);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto symptom_json = nlohmann::json::parse(shown.out);
  ASSERT_EQ(symptom_json["symptoms"].size(), 1u) << shown.out;
  EXPECT_EQ(symptom_json["symptoms"][0]["suspect_ranks"], nlohmann::json::array({3}));
  EXPECT_EQ(symptom_json["symptoms"][0]["suspect_node"], "b");
  EXPECT_EQ(symptom_json["symptoms"][0]["kind"], "response_timeout");

  ProcessResult line = cli({"symptoms", "--job", kJob}, node_a_);
  ASSERT_EQ(line.exit_code, 0) << line.err;
  EXPECT_NE(line.out.find("job-1  response_timeout  rank 1@a  suspect 3@b  MPI_Allreduce (world #5)"),
            std::string::npos)
      << line.out;
  ProcessResult none = cli({"symptoms"}, node_b_);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "No symptoms.\n");
}

TEST_F(FaultsServiceTest, AnUnreachableNodesRanksAreSuspectsAndTheReportStaysQuick) {
  setUpJob();
  auto heartbeats = pump();
  ASSERT_EQ(node_b_.stop(), 0);
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(report(*a_, allreduceTimeout(0, "a")).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);
  // a also lists its own heartbeat_lost about b when it raised it by now.
  auto found = fromRanks(symptoms(*a_));
  ASSERT_EQ(found.size(), 1u);
  const v1::Symptom& s = found[0];
  // Rank 1 is at a: not stale yet (its last report is recent) and arrived.
  ASSERT_EQ(s.suspect_ranks_size(), 2) << s.DebugString();
  EXPECT_EQ(s.suspect_ranks(0), 2u);
  EXPECT_EQ(s.suspect_ranks(1), 3u);
  EXPECT_EQ(s.suspect_node(), "b");
  EXPECT_NE(s.detail().find("its node's daemon did not answer"), std::string::npos) << s.detail();
}

TEST_F(FaultsServiceTest, AStoppedLocalRankIsNamedToo) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    while (true) pause();
  }
  setUpJob(child);  // an admin (this test) may register another process
  {
    auto heartbeats = pump();
    ASSERT_EQ(kill(child, SIGSTOP), 0);
    bool stopped = false;
    for (int i = 0; i < 200 && !stopped; ++i) {
      auto list = jobs(*a_);
      stopped = list.jobs_size() == 1 && list.jobs(0).ranks(0).process_state() == "stopped";
      if (!stopped) std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(stopped);
    ASSERT_TRUE(report(*a_, allreduceTimeout(1, "a")).ok());
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // a may have listed its own about the stopped rank, too (next test).
  auto found = fromRanks(symptoms(*a_));
  ASSERT_EQ(found.size(), 1u);
  const v1::Symptom& s = found[0];
  ASSERT_EQ(s.suspect_ranks_size(), 2) << s.DebugString();
  EXPECT_EQ(s.suspect_ranks(0), 0u);
  EXPECT_EQ(s.suspect_ranks(1), 3u);
  EXPECT_EQ(s.suspect_node(), "a,b");
  EXPECT_NE(s.detail().find("0@a process stopped"), std::string::npos) << s.detail();
  // The rank's process is gone now, and the job shows it.
  EXPECT_EQ(jobs(*a_).jobs(0).ranks(0).process_state(), "gone");
}

TEST_F(FaultsServiceTest, ARankTheDaemonSawStopIsListedOnceBesideTheRanksSymptoms) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    while (true) pause();
  }
  setUpJob(child);
  auto heartbeats = pump();
  ASSERT_TRUE(report(*a_, allreduceTimeout(1, "a")).ok());
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  auto raised = [&] {
    std::vector<v1::Symptom> out;
    for (const auto& s : symptoms(*a_))
      if (s.reporter_rank() == kDaemonRaised && s.suspect_ranks_size() == 1 && s.suspect_ranks(0) == 0)
        out.push_back(s);
    return out;
  };
  std::vector<v1::Symptom> found;
  for (int i = 0; i < 200 && found.empty(); ++i) {
    found = raised();
    if (found.empty()) std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(found.size(), 1u);
  // Several of the tree's periods later, still stopped: still once.
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(raised().size(), 1u);
  const v1::Symptom& s = found[0];
  EXPECT_EQ(s.job_id(), kJob);
  EXPECT_EQ(s.kind(), v1::SYMPTOM_KIND_HEARTBEAT_LOST);
  EXPECT_EQ(s.reporter_node(), "a");
  EXPECT_EQ(s.suspect_node(), "a");
  EXPECT_EQ(s.detail(), "rank 0's process is stopped");
  EXPECT_GT(s.symptom_id(), 0u);
  // Beside the rank's own report, in the CLI's list and its JSON.
  EXPECT_EQ(fromRanks(symptoms(*a_)).size(), 1u);
  ProcessResult line = cli({"symptoms", "--job", kJob}, node_a_);
  ASSERT_EQ(line.exit_code, 0) << line.err;
  EXPECT_NE(line.out.find("heartbeat_lost  daemon@a  suspect 0@a"), std::string::npos) << line.out;
  EXPECT_NE(line.out.find("rank 0's process is stopped"), std::string::npos) << line.out;
  EXPECT_NE(line.out.find("response_timeout  rank 1@a"), std::string::npos) << line.out;
  ProcessResult shown = cli({"symptoms", "--json"}, node_a_);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto json = nlohmann::json::parse(shown.out);
  size_t from_daemon = 0;
  for (const auto& one : json["symptoms"])
    if (one["reporter"] == "daemon" && one["detail"] == "rank 0's process is stopped") ++from_daemon;
  EXPECT_EQ(from_daemon, 1u) << shown.out;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_F(FaultsServiceTest, PointToPointAndErrorSymptomsAreStoredAsSentAndFollowed) {
  setUpJob();
  grpc::ClientContext watch_context;
  v1::WatchSymptomsRequest request;
  request.set_follow(true);
  auto reader = a_->WatchSymptoms(&watch_context, request);
  std::vector<v1::Symptom> seen;
  std::atomic<int> count{0};
  std::thread watcher([&] {
    v1::Symptom s;
    while (reader->Read(&s)) {
      seen.push_back(s);
      ++count;
    }
  });

  v1::Symptom p2p;
  p2p.set_job_id(kJob);
  p2p.set_kind(v1::SYMPTOM_KIND_RESPONSE_TIMEOUT);
  p2p.set_reporter_rank(0);
  p2p.set_operation("MPI_Recv");
  p2p.add_suspect_ranks(2);
  p2p.set_timestamp_ns(12345);
  ASSERT_TRUE(report(*a_, p2p).ok());
  v1::Symptom error;
  error.set_job_id(kJob);
  error.set_kind(v1::SYMPTOM_KIND_MPI_ERROR);
  error.set_reporter_rank(1);
  error.set_operation("MPI_Send");
  error.set_error_code(6);
  ASSERT_TRUE(report(*a_, error).ok());

  for (int i = 0; i < 300 && count < 2; ++i) std::this_thread::sleep_for(10ms);
  watch_context.TryCancel();
  watcher.join();
  (void)reader->Finish();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].suspect_node(), "b");  // from the node list
  EXPECT_EQ(seen[0].reporter_node(), "a");  // from the registration
  EXPECT_EQ(seen[0].timestamp_ns(), 12345);
  EXPECT_EQ(seen[0].detail(), "");
  EXPECT_EQ(seen[1].symptom_id(), 2u);
  EXPECT_EQ(seen[1].error_code(), 6);
  EXPECT_EQ(seen[1].suspect_ranks_size(), 0);
  EXPECT_GT(seen[1].timestamp_ns(), 0);

  // The CLI follows as NDJSON until Ctrl-C.
  BackgroundProgram watch;
  ASSERT_TRUE(watch.start({cliPath(), "--socket", node_a_.socket().string(), "symptoms", "--watch", "--json"},
                          dir_ / "watch.out", dir_ / "watch.err"));
  for (int i = 0; i < 300 && lineCount(watch.out()) < 2; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(report(*a_, error).ok());
  for (int i = 0; i < 300 && lineCount(watch.out()) < 3; ++i)
    std::this_thread::sleep_for(10ms);
  kill(watch.pid(), SIGINT);
  EXPECT_EQ(watch.wait(5000ms), 0) << watch.err();
  std::string out = watch.out();
  std::vector<uint64_t> ids;
  for (size_t at = 0, next; (next = out.find('\n', at)) != std::string::npos; at = next + 1)
    ids.push_back(nlohmann::json::parse(out.substr(at, next - at))["symptom_id"].get<uint64_t>());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3})) << out;
}

TEST_F(FaultsServiceTest, BadInputIsRefusedNamingTheProblem) {
  auto expect = [](const grpc::Status& status, grpc::StatusCode code, const std::string& text) {
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_NE(status.error_message().find(text), std::string::npos) << status.error_message();
  };
  expect(registerRank(*a_, "", 0, 4, "a", getpid(), endpointA()), grpc::StatusCode::INVALID_ARGUMENT, "job_id");
  expect(registerRank(*a_, kJob, 4, 4, "a", getpid(), endpointA()), grpc::StatusCode::INVALID_ARGUMENT,
         "rank 4 is not below size 4");
  expect(registerRank(*a_, kJob, 0, 4, "", getpid(), endpointA()), grpc::StatusCode::INVALID_ARGUMENT, "node");
  expect(setNodes(*a_, nodeList()), grpc::StatusCode::NOT_FOUND, "no job 'job-1'");
  expect(reportProgress(*a_, kJob, 0, 1), grpc::StatusCode::NOT_FOUND, "no job 'job-1'");

  ASSERT_TRUE(registerRank(*a_, kJob, 0, 4, "a", getpid(), endpointA()).ok());
  expect(registerRank(*a_, kJob, 1, 8, "a", getpid(), endpointA()), grpc::StatusCode::INVALID_ARGUMENT, "size 8");
  auto nodes = nodeList();
  nodes.mutable_nodes(1)->clear_ranks();
  nodes.mutable_nodes(1)->add_ranks(2);
  expect(setNodes(*a_, nodes), grpc::StatusCode::INVALID_ARGUMENT, "rank 3 of job 'job-1' is on no node");
  nodes = nodeList();
  nodes.mutable_nodes(0)->clear_endpoint();
  expect(setNodes(*a_, nodes), grpc::StatusCode::INVALID_ARGUMENT, "nodes[0] (node 'a') has no endpoint");
  expect(reportProgress(*a_, kJob, 1, 1), grpc::StatusCode::NOT_FOUND, "rank 1 of job 'job-1' is not registered");

  v1::Symptom symptom = allreduceTimeout(0, "a");
  symptom.set_kind(v1::SYMPTOM_KIND_UNSPECIFIED);
  expect(report(*a_, symptom), grpc::StatusCode::INVALID_ARGUMENT, "kind 0 is not a symptom kind");
  symptom = allreduceTimeout(0, "a");
  symptom.add_communicator_members(9);
  expect(report(*a_, symptom), grpc::StatusCode::INVALID_ARGUMENT, "communicator_members[4] is rank 9");
  symptom = allreduceTimeout(7, "a");
  expect(report(*a_, symptom), grpc::StatusCode::INVALID_ARGUMENT, "reporter_rank 7");
  ASSERT_TRUE(setNodes(*a_, nodeList()).ok());
  symptom = allreduceTimeout(0, "a");
  symptom.set_suspect_node("a,zz");
  expect(report(*a_, symptom), grpc::StatusCode::INVALID_ARGUMENT,
         "suspect_node 'zz' is not a node of job 'job-1' (its nodes: a,b)");
  symptom = allreduceTimeout(0, "a");
  symptom.set_job_id("unknown");
  expect(report(*a_, symptom), grpc::StatusCode::NOT_FOUND, "no job 'unknown'");
  v1::RankProgressResponse progress;
  auto context = contextWithDeadline();
  auto a_tree = v1::FaultTreeService::NewStub(
      grpc::CreateChannel("unix:" + node_a_.socket().string(), grpc::InsecureChannelCredentials()));
  expect(a_tree->RankProgress(context.get(), v1::RankProgressRequest(), &progress), grpc::StatusCode::INVALID_ARGUMENT,
         "job_id is empty");
  EXPECT_TRUE(symptoms(*a_).empty());

  // No fault was published: the stream ends empty.
  auto faults_context = contextWithDeadline();
  auto faults = a_->WatchFaults(faults_context.get(), v1::WatchFaultsRequest());
  v1::FaultReport fault;
  EXPECT_FALSE(faults->Read(&fault));
  EXPECT_TRUE(faults->Finish().ok());
}

TEST_F(FaultsServiceTest, AnotherUserMayOnlyActForItsOwnProcessAndSeeItsOwnJobs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as uid " << kNobody;
  setUpJob();
  ASSERT_TRUE(report(*a_, allreduceTimeout(1, "a")).ok());
  auto result = runProgram({selfForOtherUsers(), kAsOtherFlag, node_a_.socket().string(), std::to_string(getpid())},
                           kNobody);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::string denied = "code " + std::to_string(grpc::StatusCode::PERMISSION_DENIED);
  auto line = [&](const std::string& what) {
    size_t at = result.out.find(what + ": ");
    if (at == std::string::npos) return std::string();
    return result.out.substr(at, result.out.find('\n', at) - at);
  };
  EXPECT_NE(line("register other").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("register other").find("is not yours"), std::string::npos) << result.out;
  EXPECT_NE(line("register own").find("code 0"), std::string::npos) << result.out;
  EXPECT_NE(line("join").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("join").find("belongs to uid 0"), std::string::npos) << result.out;
  EXPECT_NE(line("nodes").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("progress").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("symptom").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("watch").find(denied), std::string::npos) << result.out;
  EXPECT_NE(line("list").find("jobs nobody-job"), std::string::npos) << result.out;
  EXPECT_NE(line("symptoms").find("count 0"), std::string::npos) << result.out;
  EXPECT_NE(line("publish").find(denied + " the fault tree service takes only daemons"), std::string::npos)
      << result.out;
  // The admin sees both users' jobs.
  EXPECT_EQ(jobs(*a_).jobs_size(), 2);
}

// Run as another user by the test above: what the daemon lets it do, one
// line each.
int actAsOther(const std::string& socket, pid_t test_pid) {
  auto stub = stubFor(socket);
  auto say = [](const std::string& what, const grpc::Status& status) {
    std::cout << what << ": code " << status.error_code() << " " << status.error_message() << "\n";
  };
  say("register other", registerRank(*stub, "nobody-job", 0, 1, "a", test_pid, "unix:" + socket));
  say("register own", registerRank(*stub, "nobody-job", 0, 1, "a", getpid(), "unix:" + socket));
  say("join", registerRank(*stub, kJob, 0, 4, "a", getpid(), "unix:" + socket));
  v1::SetJobNodesRequest nodes;
  nodes.set_job_id(kJob);
  v1::JobNode* node = nodes.add_nodes();
  node->set_node("a");
  node->set_endpoint("unix:" + socket);
  for (uint32_t r = 0; r < 4; ++r) node->add_ranks(r);
  v1::SetJobNodesResponse nodes_response;
  auto nodes_context = contextWithDeadline();
  say("nodes", stub->SetJobNodes(nodes_context.get(), nodes, &nodes_response));
  say("progress", reportProgress(*stub, kJob, 0, 9));
  v1::ReportSymptomResponse symptom_response;
  auto symptom_context = contextWithDeadline();
  say("symptom", stub->ReportSymptom(symptom_context.get(), allreduceTimeout(0, "a"), &symptom_response));

  v1::WatchSymptomsRequest watch_request;
  watch_request.set_job_id(kJob);
  auto watch_context = contextWithDeadline();
  auto reader = stub->WatchSymptoms(watch_context.get(), watch_request);
  v1::Symptom s;
  while (reader->Read(&s)) {
  }
  say("watch", reader->Finish());

  v1::JobList list;
  auto list_context = contextWithDeadline();
  grpc::Status listed = stub->ListJobs(list_context.get(), v1::ListJobsRequest(), &list);
  std::cout << "list: code " << listed.error_code() << " jobs";
  for (const auto& job : list.jobs()) std::cout << " " << job.job_id();
  std::cout << "\n";
  auto all_context = contextWithDeadline();
  auto all = stub->WatchSymptoms(all_context.get(), v1::WatchSymptomsRequest());
  int count = 0;
  while (all->Read(&s)) ++count;
  std::cout << "symptoms: code " << all->Finish().error_code() << " count " << count << "\n";

  // The daemons' own service: without a peer token, admins only.
  auto tree = v1::FaultTreeService::NewStub(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  v1::FaultReport fake;
  fake.set_job_id(kJob);
  fake.set_kind(v1::FAULT_KIND_NODE_DOWN);
  fake.set_node("a");
  v1::PublishFaultResponse published;
  auto publish_context = contextWithDeadline();
  say("publish", tree->PublishFault(publish_context.get(), fake, &published));
  return 0;
}

}  // namespace
}  // namespace nk::test

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], nk::test::kAsOtherFlag) == 0)
    return nk::test::actAsOther(argv[2], static_cast<pid_t>(std::stol(argv[3])));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

namespace nk::test {
namespace {

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

bool waitForLog(const DaemonProcess& daemon, const std::string& text, size_t occurrences = 1) {
  for (int i = 0; i < 100; ++i) {
    const std::string log = daemon.lastError();
    size_t count = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++count;
    if (count >= occurrences) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// The rule file: checked at start (the daemon does not start on an error),
// reloaded on SIGHUP, and a reload with an error keeps the rules in force.
TEST(FaultRulesFile, IsCheckedAtStartAndReloadedOnSigHup) {
  TempDir dir("fault-rules", TempDir::Access::kShared);
  const auto rules = dir / "rules.conf";
  writeText(rules, "set window 2x\nrule node_down when heartbeat_lost confirm unreachable\n");
  ProcessResult refused = runProgram({daemonPath(), "--emulate", "--state-dir", (dir / "refused").string(), "--socket",
                                      (dir / "refused.sock").string(), "--config", "/dev/null", "--fault-rules",
                                      rules.string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(rules.string() + ":1: '2x' is not a duration"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "refused.sock"));

  writeText(rules, "rule node_down when heartbeat_lost confirm unreachable\n");
  DaemonProcess daemon;
  std::filesystem::create_directories(dir / "d");
  ASSERT_TRUE(daemon.start(dir / "d", {"--fault-rules", rules.string()})) << daemon.lastError();
  EXPECT_TRUE(waitForLog(daemon, "fault rules: 1 rules from " + rules.string())) << daemon.lastError();

  writeText(rules, "# two rules, the second misspelt\nrule node_down when heartbeat_lost confirm unreachable\n"
                   "rule proces_hang when heartbeat_lost confirm rank_stopped\n");
  ::kill(daemon.pid(), SIGHUP);
  EXPECT_TRUE(waitForLog(daemon, "SIGHUP: keeping the fault rules in force: " + rules.string() +
                                     ":3: unknown fault kind 'proces_hang'"))
      << daemon.lastError();

  writeText(rules, "rule node_down when heartbeat_lost confirm unreachable\n"
                   "rule process_hang when heartbeat_lost confirm reachable rank_stopped\n");
  ::kill(daemon.pid(), SIGHUP);
  EXPECT_TRUE(waitForLog(daemon, "SIGHUP: reloaded 2 fault rules from " + rules.string())) << daemon.lastError();
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace nk::test
