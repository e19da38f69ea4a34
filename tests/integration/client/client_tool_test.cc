// Integration tests of libnodekeeper's OMPT tool: real OpenMP programs (one
// built with clang++ -fopenmp on libomp, one built with g++ -fopenmp and run
// on libomp through LD_PRELOAD) load the tool with OMP_TOOL_LIBRARIES and
// talk to a fake nodekeeperd (an AppsService on a Unix socket in this test),
// to one that answers UNIMPLEMENTED, to one that hangs, or to none.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "nodekeeper/v1/apps.grpc.pb.h"
#include "testlib/run_program.h"
#include "testlib/wait_for.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

// Stands in for the daemon's apps API: registers, records threads, and
// sends D on the Control stream as soon as it opens.
class FakeAppsService final : public v1::AppsService::Service {
 public:
  explicit FakeAppsService(uint32_t d, std::chrono::milliseconds register_delay = 0ms)
      : d_(d), register_delay_(register_delay) {}

  grpc::Status RegisterApp(grpc::ServerContext*, const v1::RegisterAppRequest* request, v1::App* app) override {
    std::this_thread::sleep_for(register_delay_);
    ++registrations_;
    app->set_app_id(7);
    app->set_name(request->name());
    budget_ = request->power_budget_mw();
    registered_ = true;
    return grpc::Status::OK;
  }
  grpc::Status RegisterThread(grpc::ServerContext*, const v1::RegisterThreadRequest* request,
                              v1::RegisterThreadResponse*) override {
    std::this_thread::sleep_for(thread_delay_);
    std::lock_guard lock(mutex_);
    if (!request->end()) tids_.insert(request->tid());
    return grpc::Status::OK;
  }
  grpc::Status UnregisterApp(grpc::ServerContext*, const v1::UnregisterAppRequest*,
                             v1::UnregisterAppResponse*) override {
    unregistered_ = true;
    return grpc::Status::OK;
  }
  grpc::Status Control(grpc::ServerContext*, grpc::ServerReaderWriter<v1::AppDecision, v1::AppReport>* stream) override {
    v1::AppDecision decision;
    decision.set_thread_count(d_);
    stream->Write(decision);
    v1::AppReport report;
    while (stream->Read(&report)) reports_++;
    return grpc::Status::OK;
  }

  size_t threads() {
    std::lock_guard lock(mutex_);
    return tids_.size();
  }
  std::atomic<bool> registered_{false};
  std::atomic<bool> unregistered_{false};
  std::atomic<uint64_t> budget_{0};
  std::atomic<int> reports_{0};
  std::atomic<int> registrations_{0};
  // How long a thread's registration takes: a daemon slow to answer an app
  // it has registered.
  std::chrono::milliseconds thread_delay_{0};

 private:
  uint32_t d_;
  std::chrono::milliseconds register_delay_;
  std::mutex mutex_;
  std::set<int> tids_;
};

struct Program {
  std::string name;
  std::string path;
  bool preload_libomp;
};

class ClientToolTest : public ::testing::TestWithParam<Program> {
 protected:
  void SetUp() override {
    socket_ = (dir_ / "nk.sock").string();
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  // A service the fixture owns, for serve(): it must outlive the server,
  // whose handler threads may still run (a late RegisterApp) when the test
  // body returns; the server is shut down in TearDown, before this goes.
  template <class Service, class... Args>
  Service& ownService(Args&&... args) {
    auto service = std::make_unique<Service>(std::forward<Args>(args)...);
    Service& kept = *service;
    service_ = std::move(service);
    return kept;
  }

  // Serves `service` (the fixture's, see ownService) on the socket.
  void serve(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
  }

  ProcessResult run(std::vector<std::string> env, std::vector<std::string> args, bool tool = true) {
    std::vector<std::string> argv = {"/usr/bin/env", "OMP_NUM_THREADS=4", "NODEKEEPER_SOCKET=" + socket_};
    if (GetParam().preload_libomp) argv.push_back("LD_PRELOAD=" + envOr("NK_LIBOMP"));
    if (tool) argv.push_back("OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"));
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(GetParam().path);
    argv.insert(argv.end(), args.begin(), args.end());
    return runProgram(argv);
  }

  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  TempDir dir_{"client", TempDir::Access::kShared};
  std::string socket_;
  // Declared before server_, so destroyed after it.
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_P(ClientToolTest, ForcedThreadCountSetsTheNextTeamSize) {
  auto result = run({"NK_TEST_FORCE_THREADS=3,2"}, {"4"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "region 0 threads 4\nregion 1 threads 3\nregion 2 threads 2\nregion 3 threads 2\n"
                        "checksum 1998000\n");
  EXPECT_EQ(result.err, "");
}

TEST_P(ClientToolTest, ToolLoadsAndSeesTheThreads) {
  auto result = run({"NK_DEBUG=1", "NK_TEST_FORCE_THREADS=4"}, {"3"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("threads_begun=4 "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("parallel_regions=3 "), std::string::npos) << result.err;
}

TEST_P(ClientToolTest, DaemonAbsentLeavesOutputAloneAndSaysOneLine) {
  auto plain = run({}, {"6"}, /*tool=*/false);
  auto result = run({}, {"6"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, plain.out);
  auto err = lines(result.err);
  ASSERT_EQ(err.size(), 1u) << result.err;
  EXPECT_EQ(err[0], "nodekeeper: nodekeeperd not reachable at " + socket_ + " (no socket); running unmanaged");
}

TEST_P(ClientToolTest, DaemonWithoutAppsApiSaysOneLine) {
  // Every method answers UNIMPLEMENTED, as today's daemon.
  auto& unimplemented = ownService<v1::AppsService::Service>();
  serve(&unimplemented);
  auto plain = run({}, {"6"}, /*tool=*/false);
  auto result = run({}, {"6"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, plain.out);
  auto err = lines(result.err);
  ASSERT_EQ(err.size(), 1u) << result.err;
  EXPECT_NE(err[0].find("apps API not implemented by the daemon"), std::string::npos) << err[0];
}

// A daemon that answers late may only be busy: a short program neither
// waits for it nor cries wolf about it (issue 17: only a gone daemon, or one
// silent for several seconds, is "not reachable").
TEST_P(ClientToolTest, HangingDaemonDoesNotHangTheProgram) {
  auto& service = ownService<FakeAppsService>(3, 3s);
  serve(&service);
  auto start = std::chrono::steady_clock::now();
  auto result = run({}, {"4"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(result.err, "") << "a slow daemon was reported as absent";
}

// A registered app whose threads the daemon takes half a second each to
// register (a busy node) keeps its registration. It used to give up on the
// call after 300 ms, give back what the daemon had decided and register
// anew as another app, for as long as the daemon stayed slow.
TEST_P(ClientToolTest, ASlowAnswerToARegisteredAppIsWaitedFor) {
  auto& service = ownService<FakeAppsService>(0);
  service.thread_delay_ = 500ms;
  serve(&service);
  // Ten regions half a second apart: time for the four threads' two seconds
  // of registrations.
  auto result = run({}, {"10", "500000"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(service.registrations_, 1);
  EXPECT_EQ(service.threads(), 4u);
  EXPECT_EQ(result.err, "") << "a slow daemon was reported";
}

// A program that ends while such a call waits cancels it and unregisters:
// it neither waits for the daemon nor leaves its registration behind.
TEST_P(ClientToolTest, AProgramThatEndsCancelsASlowCallAndUnregisters) {
  auto& service = ownService<FakeAppsService>(0);
  service.thread_delay_ = 3s;
  serve(&service);
  ASSERT_TRUE(waitFor([&] {
    auto result = run({}, {"4"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "") << "a slow daemon was reported";
    // Registered before the program ended (a loaded host may start the
    // link's thread late): else there was nothing to cancel; run again.
    return service.registrations_ > 0;
  }, 60s));
  EXPECT_TRUE(waitFor([&] { return service.unregistered_.load(); }, 10s));
}

TEST_P(ClientToolTest, DaemonDecisionDrivesTheTeamSize) {
  auto& service = ownService<FakeAppsService>(3);
  serve(&service);
  auto result = run({"NODEKEEPER_POWER_BUDGET_MW=12000"}, {"150", "10000"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err, "");
  auto out = lines(result.out);
  ASSERT_EQ(out.size(), 151u);
  EXPECT_EQ(out[0], "region 0 threads 4");
  EXPECT_EQ(out[149], "region 149 threads 3");
  EXPECT_TRUE(service.registered_);
  EXPECT_EQ(service.budget_, 12000u);
  EXPECT_GE(service.threads(), 4u);  // the initial thread and three workers
  EXPECT_GE(service.reports_, 1);
  EXPECT_TRUE(service.unregistered_);
}

INSTANTIATE_TEST_SUITE_P(Programs, ClientToolTest,
                         ::testing::Values(Program{"clang", envOr("NK_PROBE_CLANG"), false},
                                           Program{"gcc_on_libomp", envOr("NK_PROBE_GCC"), true}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nk::test
