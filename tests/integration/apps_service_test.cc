// Integration tests of the apps service: a real nodekeeperd on an emulated
// node, and this test process registering itself (and its threads) as an app
// over the daemon's Unix socket.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <regex>
#include <thread>

#include "nodekeeper/v1/apps.grpc.pb.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/daemon_fixture.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;
constexpr const char* kAsOtherFlag = "--nk-set-budget-as-other";

std::unique_ptr<grpc::ClientContext> contextWithDeadline(std::chrono::seconds timeout = 5s) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

class AppsServiceTest : public DaemonFixture {
 protected:
  AppsServiceTest() : DaemonFixture("apps") {}
  void SetUp() override {
    DaemonFixture::SetUp();
    apps_ = v1::AppsService::NewStub(channel_);
    node_ = v1::NodeService::NewStub(channel_);
  }

  v1::App registerSelf(uint32_t max_threads = 4, uint64_t budget_mw = 0) {
    v1::RegisterAppRequest request;
    request.set_name("apps_service_test");
    request.set_max_threads(max_threads);
    request.set_power_budget_mw(budget_mw);
    v1::App app;
    auto context = contextWithDeadline();
    grpc::Status status = apps_->RegisterApp(context.get(), request, &app);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return app;
  }
  grpc::Status registerThread(uint64_t app_id, pid_t tid, bool end = false) {
    v1::RegisterThreadRequest request;
    request.set_app_id(app_id);
    request.set_tid(tid);
    request.set_end(end);
    v1::RegisterThreadResponse response;
    auto context = contextWithDeadline();
    return apps_->RegisterThread(context.get(), request, &response);
  }
  grpc::Status setBudget(uint64_t app_id, uint64_t mw, v1::App* out = nullptr) {
    v1::SetPowerBudgetRequest request;
    request.set_app_id(app_id);
    request.set_power_budget_mw(mw);
    v1::App app;
    auto context = contextWithDeadline();
    grpc::Status status = apps_->SetPowerBudget(context.get(), request, &app);
    if (out) *out = app;
    return status;
  }
  v1::AppList list() {
    v1::AppList apps;
    auto context = contextWithDeadline();
    EXPECT_TRUE(apps_->ListApps(context.get(), v1::ListAppsRequest(), &apps).ok());
    return apps;
  }
  uint64_t nodeCapMw() {
    v1::PowerCaps caps;
    auto context = contextWithDeadline();
    EXPECT_TRUE(node_->GetPowerCaps(context.get(), v1::GetPowerCapsRequest(), &caps).ok());
    double watts = 0;
    for (const auto& cap : caps.caps())
      if (cap.enabled()) watts += cap.limit_w();
    return static_cast<uint64_t>(watts * 1000 + 0.5);
  }
  template <typename Predicate>
  bool eventually(Predicate predicate, std::chrono::milliseconds timeout = 3000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (predicate()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return predicate();
  }
  // This test program, copied where other users can run it.
  std::string selfForOtherUsers() {
    auto copy = dir_ / "apps_service_test";
    if (!std::filesystem::exists(copy)) {
      std::filesystem::copy_file("/proc/self/exe", copy);
      std::filesystem::permissions(copy, std::filesystem::perms(0755));
    }
    return copy.string();
  }

  std::unique_ptr<v1::AppsService::Stub> apps_;
  std::unique_ptr<v1::NodeService::Stub> node_;
};

// Threads that stay alive until released, each telling its kernel tid.
class LiveThreads {
 public:
  explicit LiveThreads(int count) {
    for (int i = 0; i < count; ++i)
      threads_.emplace_back([this] {
        std::unique_lock lock(mutex_);
        tids_.push_back(static_cast<pid_t>(syscall(SYS_gettid)));
        changed_.notify_all();
        changed_.wait(lock, [this] { return released_; });
      });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return tids_.size() == static_cast<size_t>(count); });
  }
  ~LiveThreads() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }
  std::vector<pid_t> tids() {
    std::lock_guard lock(mutex_);
    return tids_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<pid_t> tids_;
  bool released_ = false;
  std::vector<std::thread> threads_;
};

TEST_F(AppsServiceTest, RegistersTheCallerFromItsCredentials) {
  v1::App app = registerSelf(4, 20000);
  EXPECT_GT(app.app_id(), 0u);
  EXPECT_EQ(app.pid(), getpid());
  EXPECT_EQ(app.uid(), getuid());
  EXPECT_EQ(app.name(), "apps_service_test");
  EXPECT_EQ(app.power_budget_mw(), 20000u);
  EXPECT_EQ(app.max_threads(), 4u);
  EXPECT_EQ(app.thread_count(), 4u);  // D starts at max_threads

  // One app per process.
  v1::App again;
  auto context = contextWithDeadline();
  grpc::Status status = apps_->RegisterApp(context.get(), v1::RegisterAppRequest(), &again);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();

  v1::AppList apps = list();
  ASSERT_EQ(apps.apps_size(), 1);
  EXPECT_EQ(apps.apps(0).app_id(), app.app_id());
}

TEST_F(AppsServiceTest, RegistersOwnThreadsAndRefusesOthers) {
  v1::App app = registerSelf();
  LiveThreads threads(2);
  std::vector<pid_t> tids = threads.tids();
  tids.push_back(static_cast<pid_t>(syscall(SYS_gettid)));
  for (pid_t tid : tids) {
    grpc::Status status = registerThread(app.app_id(), tid);
    EXPECT_TRUE(status.ok()) << "tid " << tid << ": " << status.error_message();
  }
  v1::AppList apps = list();
  ASSERT_EQ(apps.apps_size(), 1);
  std::vector<pid_t> listed;
  for (const auto& thread : apps.apps(0).threads()) listed.push_back(thread.tid());
  std::sort(listed.begin(), listed.end());
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(listed, tids);

  // The daemon's own pid is a live tid, but not one of ours; 1 is init.
  for (pid_t bogus : {daemon_.pid(), 1, 999999999}) {
    grpc::Status status = registerThread(app.app_id(), bogus);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "tid " << bogus;
    EXPECT_NE(status.error_message().find("is not a thread of process " + std::to_string(getpid())),
              std::string::npos)
        << status.error_message();
  }
  EXPECT_EQ(registerThread(app.app_id() + 100, tids[0]).error_code(), grpc::StatusCode::NOT_FOUND);

  EXPECT_TRUE(registerThread(app.app_id(), tids[0], /*end=*/true).ok());
  EXPECT_EQ(list().apps(0).threads_size(), 2);
}

TEST_F(AppsServiceTest, BudgetMustBePositiveAndWithinTheNodeCap) {
  v1::App app = registerSelf();
  grpc::Status zero = setBudget(app.app_id(), 0);
  EXPECT_EQ(zero.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(zero.error_message().find("power budget must be positive"), std::string::npos) << zero.error_message();

  uint64_t cap = nodeCapMw();
  ASSERT_GT(cap, 0u) << "the emulated node should have package caps";
  grpc::Status over = setBudget(app.app_id(), cap + 1);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(over.error_message().find(std::to_string(cap + 1) + " mW"), std::string::npos) << over.error_message();
  EXPECT_NE(over.error_message().find(std::to_string(cap) + " mW"), std::string::npos) << over.error_message();

  v1::App updated;
  grpc::Status good = setBudget(app.app_id(), cap / 2, &updated);
  ASSERT_TRUE(good.ok()) << good.error_message();
  EXPECT_EQ(updated.power_budget_mw(), cap / 2);
  EXPECT_EQ(list().apps(0).power_budget_mw(), cap / 2);
}

// The emulated node's floor for an app of 4 threads: 2 cores busy at the
// lowest clock. Well under it, a budget is taken and called unattainable.
TEST_F(AppsServiceTest, ABudgetUnderTheAppsFloorIsTakenWithAWarning) {
  v1::App app = registerSelf(4, 5000);
  EXPECT_EQ(app.power_budget_mw(), 5000u);
  ASSERT_GT(app.budget_floor_mw(), 5000u);
  EXPECT_NE(app.budget_warning().find("cannot be met"), std::string::npos) << app.budget_warning();

  v1::App updated;
  ASSERT_TRUE(setBudget(app.app_id(), 20000, &updated).ok());
  EXPECT_EQ(updated.power_budget_mw(), 20000u);
  EXPECT_EQ(updated.budget_floor_mw(), app.budget_floor_mw());
  EXPECT_EQ(updated.budget_warning().empty(), updated.budget_floor_mw() <= 20000u) << updated.budget_warning();
  ASSERT_TRUE(setBudget(app.app_id(), app.budget_floor_mw(), &updated).ok());
  EXPECT_EQ(updated.budget_warning(), "");
  ASSERT_TRUE(setBudget(app.app_id(), 5000, &updated).ok());
  EXPECT_NE(updated.budget_warning(), "");

  // `nodekeeper budget` says so in its reply, `apps` for as long as it holds.
  static const std::regex kUnattainable(R"(4\.0 W (\(eff [0-9.]+ W\) )?unattainable, floor)");
  const std::string socket = daemon_.socket().string();
  auto budget = runProgram({cliPath(), "--socket", socket, "budget", std::to_string(app.app_id()), "4"});
  ASSERT_EQ(budget.exit_code, 0) << budget.out << budget.err;
  // The effective budget is the manager's to update, at its next step: on a
  // busy host the row may still show the old one as "(eff 5.0 W)".
  EXPECT_TRUE(std::regex_search(budget.out, kUnattainable)) << budget.out;
  EXPECT_NE(budget.out.find("warning: budget 4.0 W is below"), std::string::npos) << budget.out;
  auto shown = runProgram({cliPath(), "--socket", socket, "apps"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(std::regex_search(shown.out, kUnattainable)) << shown.out;
  auto json = runProgram({cliPath(), "--socket", socket, "apps", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"budget_attainable\": false"), std::string::npos) << json.out;
}

TEST_F(AppsServiceTest, AnotherUserMayListButNotSetTheBudget) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as uid " << kNobody;
  v1::App app = registerSelf();
  ASSERT_TRUE(setBudget(app.app_id(), 10000).ok());
  auto result = runProgram({selfForOtherUsers(), kAsOtherFlag, daemon_.socket().string(),
                            std::to_string(app.app_id())},
                           kNobody);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("list ok 1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("code " + std::to_string(grpc::StatusCode::PERMISSION_DENIED)), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("setting the power budget"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("you are uid 65534"), std::string::npos) << result.out;
  EXPECT_EQ(list().apps(0).power_budget_mw(), 10000u);
}

TEST_F(AppsServiceTest, ControlStreamSendsTheCurrentDecisionAndItsEndUnregisters) {
  v1::App app = registerSelf(6);
  grpc::ClientContext context;
  auto stream = apps_->Control(&context);
  v1::AppReport hello;
  hello.set_app_id(app.app_id());
  hello.set_team_size(6);
  ASSERT_TRUE(stream->Write(hello));

  // The current D arrives at once; Read on a thread so a hang fails, not blocks.
  std::atomic<bool> got{false};
  v1::AppDecision decision;
  auto start = std::chrono::steady_clock::now();
  std::thread reader([&] { got = stream->Read(&decision); });
  ASSERT_TRUE(eventually([&] { return got.load(); }, 2000ms));
  reader.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1000ms);
  EXPECT_EQ(decision.app_id(), app.app_id());
  EXPECT_EQ(decision.thread_count(), 6u);
  EXPECT_GT(decision.sequence(), 0u);
  EXPECT_TRUE(eventually([&] {
    auto apps = list();
    return apps.apps_size() == 1 && apps.apps(0).control_attached() && apps.apps(0).reported_team_size() == 6;
  }));

  ASSERT_TRUE(stream->WritesDone());
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(eventually([&] { return list().apps_size() == 0; }, 1000ms));
}

TEST_F(AppsServiceTest, ControlStreamFindsTheCallersAppAndDropsWithIt) {
  v1::App app = registerSelf(3);
  {
    auto context = std::make_unique<grpc::ClientContext>();
    auto stream = apps_->Control(context.get());
    ASSERT_TRUE(stream->Write(v1::AppReport()));  // app_id 0: my own app
    v1::AppDecision decision;
    ASSERT_TRUE(stream->Read(&decision));
    EXPECT_EQ(decision.app_id(), app.app_id());
    EXPECT_EQ(decision.thread_count(), 3u);
    // The app "dies": its connection goes away without a clean finish.
    context->TryCancel();
    (void)stream->Finish();
  }
  EXPECT_TRUE(eventually([&] { return list().apps_size() == 0; }, 1000ms));
}

TEST_F(AppsServiceTest, UnregisterAppRemovesIt) {
  v1::App app = registerSelf();
  v1::UnregisterAppRequest request;
  request.set_app_id(app.app_id());
  v1::UnregisterAppResponse response;
  auto context = contextWithDeadline();
  ASSERT_TRUE(apps_->UnregisterApp(context.get(), request, &response).ok());
  EXPECT_EQ(list().apps_size(), 0);
  auto again = contextWithDeadline();
  EXPECT_EQ(apps_->UnregisterApp(again.get(), request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Run as another user by the test above: lists the apps, then tries to set
// the budget of the test's app, and prints what the daemon said.
int setBudgetAsOther(const std::string& socket, uint64_t app_id) {
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto apps = v1::AppsService::NewStub(channel);
  v1::AppList list;
  auto list_context = contextWithDeadline();
  grpc::Status listed = apps->ListApps(list_context.get(), v1::ListAppsRequest(), &list);
  std::cout << (listed.ok() ? "list ok " : "list failed ") << list.apps_size() << "\n";
  v1::SetPowerBudgetRequest request;
  request.set_app_id(app_id);
  request.set_power_budget_mw(5000);
  v1::App app;
  auto context = contextWithDeadline();
  grpc::Status status = apps->SetPowerBudget(context.get(), request, &app);
  std::cout << "code " << status.error_code() << ": " << status.error_message() << "\n";
  return 0;
}

}  // namespace
}  // namespace nk::test

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], nk::test::kAsOtherFlag) == 0)
    return nk::test::setBudgetAsOther(argv[2], std::stoull(argv[3]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
