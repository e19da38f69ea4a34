// Runs the apps commands ("apps", "budget", "policy --app") against fake
// AppsService and NodeService on a Unix socket: AppsClient, the resolution
// of APP, the requests sent and the output, without nodekeeperd.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/command_runner.h"
#include "nodekeeper/v1/apps.grpc.pb.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/temp_dir.h"

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;
using namespace std::chrono_literals;

class FakeAppsService final : public pb::AppsService::Service {
 public:
  FakeAppsService() {
    pb::App* probe = apps_.add_apps();
    probe->set_app_id(1);
    probe->set_pid(41230);
    probe->set_uid(1000);
    probe->set_name("omp_probe");
    probe->set_thread_count(12);
    probe->set_max_threads(12);
    probe->set_effective_policy("thermal-aware");
    pb::AppThread* thread = probe->add_threads();
    thread->set_tid(41230);
    thread->set_core(0);
    thread->mutable_affinity()->add_cpus(0);
    pb::App* other = apps_.add_apps();
    other->set_app_id(2);
    other->set_pid(777);
    other->set_uid(0);
    other->set_name("root_app");
  }

  std::atomic<int> list_calls{0};
  std::atomic<int> set_budget_calls{0};
  pb::SetPowerBudgetRequest last_budget;
  pb::SetAppPolicyRequest last_policy;
  bool empty = false;

  grpc::Status ListApps(grpc::ServerContext*, const pb::ListAppsRequest*, pb::AppList* reply) override {
    ++list_calls;
    std::lock_guard lock(mutex_);
    if (!empty) *reply = apps_;
    return grpc::Status::OK;
  }

  grpc::Status SetPowerBudget(grpc::ServerContext*, const pb::SetPowerBudgetRequest* request, pb::App* reply) override {
    ++set_budget_calls;
    std::lock_guard lock(mutex_);
    last_budget = *request;
    pb::App* app = find(request->app_id());
    if (app == nullptr) return {grpc::StatusCode::NOT_FOUND, "no app with id " + std::to_string(request->app_id())};
    if (app->uid() == 0)
      return {grpc::StatusCode::PERMISSION_DENIED,
              "permission denied: setting the power budget of app 2 ('root_app', pid 777, uid 0) needs its owner or "
              "the admin role; you are uid 1000"};
    if (request->power_budget_mw() > 90000)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "power budget " + std::to_string(request->power_budget_mw()) +
                  " mW is above the node's power cap of 90000 mW (sum of the package caps)"};
    app->set_power_budget_mw(request->power_budget_mw());
    *reply = *app;
    return grpc::Status::OK;
  }

  grpc::Status SetAppPolicy(grpc::ServerContext*, const pb::SetAppPolicyRequest* request, pb::App* reply) override {
    std::lock_guard lock(mutex_);
    last_policy = *request;
    pb::App* app = find(request->app_id());
    if (app == nullptr) return {grpc::StatusCode::NOT_FOUND, "no app with id " + std::to_string(request->app_id())};
    app->set_policy(request->policy());
    *reply = *app;
    return grpc::Status::OK;
  }

 private:
  pb::App* find(uint64_t app_id) {
    for (auto& app : *apps_.mutable_apps())
      if (app.app_id() == app_id) return &app;
    return nullptr;
  }

  std::mutex mutex_;
  pb::AppList apps_;
};

// Only there to show that "policy" without --app still asks NodeService.
class FakeNodeService final : public pb::NodeService::Service {
 public:
  grpc::Status GetPolicy(grpc::ServerContext*, const pb::GetPolicyRequest*, pb::NodePolicy* reply) override {
    reply->set_policy("thermal-aware");
    reply->add_available("thermal-aware");
    reply->add_available("ondemand");
    return grpc::Status::OK;
  }
};

class AppsCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = (dir_ / "nk.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&apps_service_);
    builder.RegisterService(&node_service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  int run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--socket", socket_});
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

  test::TempDir dir_{"cli-apps-test"};
  std::string socket_;
  FakeAppsService apps_service_;
  FakeNodeService node_service_;
  std::unique_ptr<grpc::Server> server_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(AppsCommandsTest, AppsText) {
  ASSERT_EQ(run({"apps"}), 0) << err_.str();
  std::string text = out_.str();
  EXPECT_EQ(text.rfind("ID", 0), 0u) << text;
  EXPECT_NE(text.find("omp_probe"), std::string::npos);
  EXPECT_NE(text.find("root_app"), std::string::npos);
  EXPECT_NE(text.find("12/12"), std::string::npos);
  EXPECT_NE(text.find("    tid 41230"), std::string::npos) << text;
  EXPECT_TRUE(err_.str().empty());
}

TEST_F(AppsCommandsTest, AppsEmpty) {
  apps_service_.empty = true;
  ASSERT_EQ(run({"apps"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "no apps registered\n");
}

TEST_F(AppsCommandsTest, AppsJson) {
  ASSERT_EQ(run({"apps", "--json"}), 0) << err_.str();
  auto parsed = nlohmann::json::parse(out_.str());
  ASSERT_EQ(parsed["apps"].size(), 2u);
  EXPECT_EQ(parsed["apps"][0]["id"], 1);
  EXPECT_EQ(parsed["apps"][0]["pid"], 41230);
  EXPECT_EQ(parsed["apps"][0]["threads"][0]["affinity"], nlohmann::json::array({0}));
  EXPECT_EQ(parsed["apps"][1]["name"], "root_app");
}

TEST_F(AppsCommandsTest, BudgetByIdSendsMilliwatts) {
  ASSERT_EQ(run({"budget", "1", "40W"}), 0) << err_.str();
  EXPECT_EQ(apps_service_.last_budget.app_id(), 1u);
  EXPECT_EQ(apps_service_.last_budget.power_budget_mw(), 40000u);
  EXPECT_NE(out_.str().find("40.0 W"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("omp_probe"), std::string::npos);
  EXPECT_EQ(out_.str().find("root_app"), std::string::npos) << "only the changed app is shown";
}

TEST_F(AppsCommandsTest, BudgetByPidSendsTheAppId) {
  ASSERT_EQ(run({"budget", "41230", "12500mW", "--json"}), 0) << err_.str();
  EXPECT_EQ(apps_service_.last_budget.app_id(), 1u);
  EXPECT_EQ(apps_service_.last_budget.power_budget_mw(), 12500u);
  auto parsed = nlohmann::json::parse(out_.str());
  EXPECT_EQ(parsed["id"], 1);
  EXPECT_EQ(parsed["budget_mw"], 12500);
}

TEST_F(AppsCommandsTest, BudgetForAnUnknownApp) {
  EXPECT_EQ(run({"budget", "99", "40W"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: no app with id or pid 99 (see 'nodekeeper apps')\n");
  EXPECT_EQ(apps_service_.set_budget_calls, 0);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(AppsCommandsTest, BadWattsFailBeforeAnyCall) {
  EXPECT_EQ(run({"budget", "1", "0W"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: WATTS: power '0W' must be positive\n");
  EXPECT_EQ(run({"budget", "1", "forty"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: WATTS: 'forty' is not a power (e.g. 45W, 45000mW)\n");
  EXPECT_EQ(run({"budget", "one", "40W"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: APP: 'one' is not an app id or pid (see 'nodekeeper apps')\n");
  EXPECT_EQ(apps_service_.list_calls, 0);
  EXPECT_EQ(apps_service_.set_budget_calls, 0);
}

TEST_F(AppsCommandsTest, DaemonRefusalsPassThrough) {
  EXPECT_EQ(run({"budget", "2", "10W"}), 1);
  EXPECT_EQ(err_.str(),
            "nodekeeper: permission denied: setting the power budget of app 2 ('root_app', pid 777, uid 0) needs its "
            "owner or the admin role; you are uid 1000\n");
  EXPECT_EQ(run({"budget", "1", "100W"}), 1);
  EXPECT_EQ(err_.str(),
            "nodekeeper: power budget 100000 mW is above the node's power cap of 90000 mW (sum of the package caps)\n");
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(AppsCommandsTest, AppPolicyGetAndSet) {
  ASSERT_EQ(run({"policy", "get", "--app", "41230"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "App     1 (omp_probe, pid 41230)\nPolicy  (node default) thermal-aware\n");

  ASSERT_EQ(run({"policy", "set", "ondemand", "--app", "1"}), 0) << err_.str();
  EXPECT_EQ(apps_service_.last_policy.app_id(), 1u);
  EXPECT_EQ(apps_service_.last_policy.policy(), "ondemand");
  EXPECT_EQ(out_.str(), "App     1 (omp_probe, pid 41230)\nPolicy  ondemand\n");

  ASSERT_EQ(run({"policy", "set", "default", "--app", "1", "--json"}), 0) << err_.str();
  EXPECT_EQ(apps_service_.last_policy.policy(), "");
  auto parsed = nlohmann::json::parse(out_.str());
  EXPECT_EQ(parsed["app_id"], 1);
  EXPECT_EQ(parsed["policy"], "");
  EXPECT_EQ(parsed["effective_policy"], "thermal-aware");

  ASSERT_EQ(run({"policy", "get", "--app", "2", "--json"}), 0) << err_.str();
  EXPECT_EQ(nlohmann::json::parse(out_.str())["app_id"], 2);

  EXPECT_EQ(run({"policy", "get", "--app", "5"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: no app with id or pid 5 (see 'nodekeeper apps')\n");
}

TEST_F(AppsCommandsTest, PolicyWithoutAppIsStillTheNodes) {
  ASSERT_EQ(run({"policy", "get", "--json"}), 0) << err_.str();
  auto parsed = nlohmann::json::parse(out_.str());
  EXPECT_EQ(parsed["policy"], "thermal-aware");
  EXPECT_EQ(parsed["available"].size(), 2u);
  EXPECT_EQ(apps_service_.list_calls, 0);
}

}  // namespace
}  // namespace nk::cli
