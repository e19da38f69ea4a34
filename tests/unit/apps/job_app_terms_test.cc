#include "apps/job_app_terms.h"

#include <gtest/gtest.h>

#include "apps/app_registry.h"
#include "fake_process_inspector.h"

namespace nk {
namespace {

using test::FakeProcessInspector;

constexpr uid_t kUser = 1000;

PeerCredentials caller(pid_t pid) {
  PeerCredentials peer;
  peer.pid = pid;
  peer.uid = kUser;
  peer.gid = kUser;
  return peer;
}

class JobAppTermsTest : public ::testing::Test {
 protected:
  JobAppTermsTest() : access_(std::nullopt, {}) {
    auto inspector = std::make_unique<FakeProcessInspector>();
    for (pid_t pid : {10, 11, 12, 20}) inspector->addProcess(pid);
    procs_ = inspector.get();
    AppRegistry::Options options;
    options.node_power_cap_mw = [] { return std::optional<uint64_t>(190000); };
    options.policies = {"thermal-aware", "ondemand"};
    options.on_removed = [this](const AppRecord& app) {
      if (terms_) terms_->appLeft(app);
    };
    registry_ = std::make_unique<AppRegistry>(access_, std::move(inspector), std::move(options));
    terms_ = std::make_unique<JobAppTerms>(
        *registry_,
        [this](pid_t pid) -> std::optional<JobTerms> {
          if (pid == 10 || pid == 11 || pid == 12) return job_;
          return std::nullopt;
        },
        [this](const std::string& message) { warnings_.push_back(message); });
  }

  AppRecord registerApp(pid_t pid, AppRegistration registration = {}) {
    auto app = terms_->registerApp(caller(pid), registration);
    EXPECT_TRUE(app.ok()) << app.error().message;
    return app.ok() ? *app : AppRecord{};
  }

  AccessPolicy access_;
  FakeProcessInspector* procs_ = nullptr;
  std::unique_ptr<AppRegistry> registry_;
  JobTerms job_{"77", 40000, "thermal-aware"};
  std::vector<std::string> warnings_;
  std::unique_ptr<JobAppTerms> terms_;
};

TEST_F(JobAppTermsTest, AnAppOfAJobGetsItsBudgetAndPolicy) {
  AppRecord app = registerApp(10);
  EXPECT_EQ(app.power_budget_mw, 40000u);
  EXPECT_EQ(app.policy, "thermal-aware");
  EXPECT_TRUE(app.managed);
}

TEST_F(JobAppTermsTest, AnAppOutsideJobsOrWithItsOwnBudgetKeepsItsOwn) {
  EXPECT_EQ(registerApp(20).power_budget_mw, 0u);
  AppRegistration own;
  own.power_budget_mw = 25000;
  EXPECT_EQ(registerApp(10, own).power_budget_mw, 25000u);
}

TEST_F(JobAppTermsTest, TheJobsAppsHereShareItsBudget) {
  AppRecord first = registerApp(10);
  AppRecord second = registerApp(11);
  EXPECT_EQ(second.power_budget_mw, 20000u);
  EXPECT_EQ(registry_->find(first.id)->power_budget_mw, 20000u);
  AppRecord third = registerApp(12);
  EXPECT_EQ(third.power_budget_mw, 13333u);
  EXPECT_EQ(registry_->find(first.id)->power_budget_mw, 13333u);
  EXPECT_EQ(registry_->find(second.id)->power_budget_mw, 13333u);
}

TEST_F(JobAppTermsTest, ALeavingAppHandsItsShareBack) {
  AppRecord first = registerApp(10);
  AppRecord second = registerApp(11);
  AppRecord third = registerApp(12);
  ASSERT_TRUE(registry_->unregisterApp(caller(11), second.id).ok());
  EXPECT_EQ(registry_->find(first.id)->power_budget_mw, 20000u);
  EXPECT_EQ(registry_->find(third.id)->power_budget_mw, 20000u);
  // A process that dies without a word: found by the reaper.
  procs_->removeProcess(12);
  registry_->reapDead();
  EXPECT_EQ(registry_->find(first.id)->power_budget_mw, 40000u);
  // The last one gone, a new app of the job has the whole budget.
  ASSERT_TRUE(registry_->unregisterApp(caller(10), first.id).ok());
  EXPECT_EQ(registerApp(11).power_budget_mw, 40000u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(JobAppTermsTest, AnAppWithItsOwnBudgetLeavingChangesNoShare) {
  AppRecord first = registerApp(10);
  AppRegistration own;
  own.power_budget_mw = 25000;
  AppRecord other = registerApp(11, own);  // the job's, on its own terms
  ASSERT_TRUE(registry_->unregisterApp(caller(11), other.id).ok());
  EXPECT_EQ(registry_->find(first.id)->power_budget_mw, 40000u);
}

TEST_F(JobAppTermsTest, TheSameProcessAskingAgainGetsTheAppItHas) {
  AppRecord first = registerApp(10);
  AppRecord again = registerApp(10);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.power_budget_mw, 40000u);
}

TEST_F(JobAppTermsTest, TermsTheRegistryRefusesLeaveTheAppItsOwnWithAWarning) {
  job_.policy = "no-such-policy";
  AppRecord app = registerApp(10);
  EXPECT_EQ(app.power_budget_mw, 0u);
  EXPECT_EQ(app.policy, "");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("job 77"), std::string::npos);
}

}  // namespace
}  // namespace nk
