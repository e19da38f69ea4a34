// Runs "faults" (and "symptoms", which shares its streaming) against a fake
// FaultsService on a Unix socket: FaultsClient, the requests sent, the
// output and the error wording, without nodekeeperd.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/command_runner.h"
#include "nodekeeper/v1/faults.grpc.pb.h"
#include "testlib/temp_dir.h"

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kThen = 1714564801LL * kSecond;

pb::FaultReport fault(uint64_t id, const std::string& job, pb::FaultKind kind, const std::string& node) {
  pb::FaultReport f;
  f.set_fault_id(id);
  f.set_job_id(job);
  f.set_kind(kind);
  f.set_node(node);
  f.add_ranks(2);
  f.add_ranks(3);
  f.add_evidence("heartbeat_lost from " + node);
  f.add_evidence("response probe of " + node + ": unreachable");
  f.set_first_symptom_ns(kThen);
  f.set_localised_ns(kThen + 2 * kSecond + 500000000);
  f.set_localised_by("a");
  return f;
}

class FakeFaultsService final : public pb::FaultsService::Service {
 public:
  std::vector<pb::FaultReport> faults = {fault(1, "job-1", pb::FAULT_KIND_NODE_DOWN, "c"),
                                         fault(2, "job-2", pb::FAULT_KIND_OVERHEATING, "b")};
  // While following: raise SIGINT after the replay, then wait for the cancel.
  std::atomic<bool> interrupt_when_following{false};
  std::atomic<int> faults_cancelled{0};

  pb::WatchFaultsRequest lastFaultsRequest() {
    std::lock_guard lock(mutex_);
    return last_faults_;
  }
  pb::WatchSymptomsRequest lastSymptomsRequest() {
    std::lock_guard lock(mutex_);
    return last_symptoms_;
  }

  grpc::Status WatchFaults(grpc::ServerContext* context, const pb::WatchFaultsRequest* request,
                           grpc::ServerWriter<pb::FaultReport>* writer) override {
    {
      std::lock_guard lock(mutex_);
      last_faults_ = *request;
    }
    for (const auto& f : faults)
      if (request->job_id().empty() || f.job_id() == request->job_id()) writer->Write(f);
    if (request->follow() && interrupt_when_following) {
      // Ctrl-C once the client has had time to print the replay: a signal
      // right away could cancel the call before it read them.
      std::this_thread::sleep_for(300ms);
      ::kill(::getpid(), SIGINT);
      auto deadline = std::chrono::steady_clock::now() + 5s;
      while (!context->IsCancelled() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
      if (context->IsCancelled()) ++faults_cancelled;
    }
    return grpc::Status::OK;
  }

  grpc::Status WatchSymptoms(grpc::ServerContext*, const pb::WatchSymptomsRequest* request,
                             grpc::ServerWriter<pb::Symptom>* writer) override {
    {
      std::lock_guard lock(mutex_);
      last_symptoms_ = *request;
    }
    pb::Symptom s;
    s.set_symptom_id(4);
    s.set_job_id("job-1");
    s.set_kind(pb::SYMPTOM_KIND_RANK_EXITED);
    s.set_reporter_node("a");
    writer->Write(s);
    return grpc::Status::OK;
  }

 private:
  std::mutex mutex_;
  pb::WatchFaultsRequest last_faults_;
  pb::WatchSymptomsRequest last_symptoms_;
};

// A daemon without the fault tree: every method UNIMPLEMENTED.
class OldFaultsService final : public pb::FaultsService::Service {};

class FaultsCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = (dir_ / "nk.sock").string();
    old_socket_ = (dir_ / "old.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    grpc::ServerBuilder old_builder;
    old_builder.AddListeningPort("unix:" + old_socket_, grpc::InsecureServerCredentials());
    old_builder.RegisterService(&old_service_);
    old_server_ = old_builder.BuildAndStart();
    ASSERT_NE(old_server_, nullptr);
    setenv("TZ", "UTC", 1);
    tzset();
  }

  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
    old_server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  int run(std::vector<std::string> args, const std::string& socket = "") {
    args.insert(args.begin(), {"--socket", socket.empty() ? socket_ : socket});
    out_.str("");
    err_.str("");
    auto invocation = CommandLine::parse(args);
    if (!invocation) {
      err_ << "nodekeeper: " << invocation.error().message << "\n";
      return 1;
    }
    CommandRunner runner(out_, err_, false);
    return runner.run(*invocation);
  }

  test::TempDir dir_{"cli-faults-test"};
  std::string socket_;
  std::string old_socket_;
  FakeFaultsService service_;
  OldFaultsService old_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::Server> old_server_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(FaultsCommandsTest, FaultsTable) {
  ASSERT_EQ(run({"faults"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "ID  JOB    KIND         NODE  RANKS   AFTER  BY  EVIDENCE\n"
            " 1  job-1  node_down    c     2-3    2.500s  a   heartbeat_lost from c (+1 more)\n"
            " 2  job-2  overheating  b     2-3    2.500s  a   heartbeat_lost from b (+1 more)\n")
      << out_.str();
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  auto request = service_.lastFaultsRequest();
  EXPECT_EQ(request.job_id(), "");
  EXPECT_FALSE(request.follow());
}

TEST_F(FaultsCommandsTest, FaultsOfOneJob) {
  ASSERT_EQ(run({"faults", "--job", "job-2"}), 0) << err_.str();
  EXPECT_EQ(service_.lastFaultsRequest().job_id(), "job-2");
  EXPECT_EQ(out_.str().find("job-1"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("overheating"), std::string::npos) << out_.str();

  ASSERT_EQ(run({"faults", "--job", "job-9"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "No faults reported for job job-9.\n");
  service_.faults.clear();
  ASSERT_EQ(run({"faults"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "No faults reported.\n");
  ASSERT_EQ(run({"faults", "--json"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "[]\n");
}

TEST_F(FaultsCommandsTest, FaultsJsonIsOneArray) {
  ASSERT_EQ(run({"faults", "--json"}), 0) << err_.str();
  auto json = nlohmann::json::parse(out_.str());
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["kind"], "node_down");
  EXPECT_EQ(json[1]["kind"], "overheating");
  EXPECT_DOUBLE_EQ(json[0]["detected_after_s"].get<double>(), 2.5);
  EXPECT_EQ(json[0]["evidence"].size(), 2u);
}

TEST_F(FaultsCommandsTest, WatchJsonIsOneObjectPerLine) {
  ASSERT_EQ(run({"faults", "--watch", "--json"}), 0) << err_.str();
  EXPECT_TRUE(service_.lastFaultsRequest().follow());
  std::istringstream lines(out_.str());
  std::string line;
  std::vector<uint64_t> ids;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line);
    ASSERT_TRUE(json.is_object()) << line;
    ids.push_back(json["fault_id"].get<uint64_t>());
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
}

TEST_F(FaultsCommandsTest, WatchTextIsOneLinePerFault) {
  ASSERT_EQ(run({"faults", "--watch"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "2024-05-01 12:00:03.500  fault 1  job-1  node_down  node c  ranks 2-3  after 2.500s  by a  "
            "heartbeat_lost from c (+1 more)\n"
            "2024-05-01 12:00:03.500  fault 2  job-2  overheating  node b  ranks 2-3  after 2.500s  by a  "
            "heartbeat_lost from b (+1 more)\n")
      << out_.str();
}

TEST_F(FaultsCommandsTest, WatchEndsCleanlyOnSigint) {
  service_.interrupt_when_following = true;
  auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(run({"faults", "--watch", "--json"}), 0) << err_.str();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  const std::string out = out_.str();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
  server_->Shutdown(std::chrono::system_clock::now() + 1s);  // lets the handler see the cancel
  EXPECT_EQ(service_.faults_cancelled.load(), 1);
  struct sigaction current {};
  ::sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
}

TEST_F(FaultsCommandsTest, Errors) {
  EXPECT_EQ(run({"faults", "--job="}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: faults: --job needs a job id (see 'nodekeeper jobs')\n");
  EXPECT_EQ(run({"faults"}, old_socket_), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: nodekeeperd does not implement WatchFaults (is it older than this nodekeeper?)\n");
  std::string missing = (dir_ / "missing.sock").string();
  EXPECT_EQ(run({"faults"}, missing), 1);
  EXPECT_EQ(err_.str().rfind("nodekeeper: cannot reach nodekeeperd at " + missing, 0), 0u) << err_.str();
  EXPECT_TRUE(out_.str().empty()) << out_.str();
}

TEST_F(FaultsCommandsTest, SymptomsShareTheStreaming) {
  ASSERT_EQ(run({"symptoms", "--job", "job-1"}), 0) << err_.str();
  EXPECT_EQ(service_.lastSymptomsRequest().job_id(), "job-1");
  EXPECT_FALSE(service_.lastSymptomsRequest().follow());
  EXPECT_NE(out_.str().find("rank_exited"), std::string::npos) << out_.str();
  EXPECT_EQ(run({"symptoms"}, old_socket_), 1);
  EXPECT_EQ(err_.str(),
            "nodekeeper: nodekeeperd does not implement WatchSymptoms (is it older than this nodekeeper?)\n");
}

}  // namespace
}  // namespace nk::cli
