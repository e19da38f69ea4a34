#include "apps/app_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fake_process_inspector.h"

namespace nk {
namespace {

using namespace std::chrono_literals;
using test::FakeProcessInspector;

constexpr uid_t kAdminUid = 500;  // an extra admin, like the emulated node's owner
constexpr uid_t kOwnerUid = 1000;
constexpr uid_t kOtherUid = 2000;
constexpr pid_t kAppPid = 4242;

PeerCredentials caller(pid_t pid, uid_t uid) {
  PeerCredentials peer;
  peer.pid = pid;
  peer.uid = uid;
  peer.gid = uid;
  return peer;
}

class AppRegistryTest : public ::testing::Test {
 protected:
  AppRegistryTest() : access_(std::nullopt, {kAdminUid}) {
    auto inspector = std::make_unique<FakeProcessInspector>();
    procs_ = inspector.get();
    procs_->addProcess(kAppPid);
    procs_->addProcess(7000);
    AppRegistry::Options options;
    options.node_power_cap_mw = [this] { return cap_mw_; };
    options.default_max_threads = 12;
    options.policies = {"thermal-aware", "ondemand"};
    options.on_removed = [this](const AppRecord& app) { removed_ids_.push_back(app.id); };
    registry_ = std::make_unique<AppRegistry>(access_, std::move(inspector), std::move(options));
  }

  AppRecord registerOwnerApp(uint32_t max_threads = 8, uint64_t budget = 0) {
    AppRegistration registration;
    registration.name = "stream";
    registration.max_threads = max_threads;
    registration.power_budget_mw = budget;
    auto app = registry_->registerApp(owner_, registration);
    EXPECT_TRUE(app.ok()) << app.error().message;
    return app.ok() ? *app : AppRecord{};
  }

  AccessPolicy access_;
  FakeProcessInspector* procs_ = nullptr;
  std::optional<uint64_t> cap_mw_ = 190000;
  std::vector<uint64_t> removed_ids_;
  std::unique_ptr<AppRegistry> registry_;
  PeerCredentials owner_ = caller(kAppPid, kOwnerUid);
  PeerCredentials admin_ = caller(9999, kAdminUid);
  PeerCredentials root_ = caller(1, 0);
  PeerCredentials other_ = caller(7000, kOtherUid);
};

TEST_F(AppRegistryTest, RegisterTakesIdentityFromCallerAndInitialisesDecision) {
  AppRecord app = registerOwnerApp(6, 50000);
  EXPECT_GT(app.id, 0u);
  EXPECT_EQ(app.pid, kAppPid);
  EXPECT_EQ(app.uid, kOwnerUid);
  EXPECT_EQ(app.name, "stream");
  EXPECT_EQ(app.power_budget_mw, 50000u);
  EXPECT_EQ(app.max_threads, 6u);
  EXPECT_EQ(app.decision.thread_count, 6u);  // D starts at max_threads
  EXPECT_EQ(app.decision.seq, 1u);
  ASSERT_EQ(registry_->list().size(), 1u);
  EXPECT_EQ(registry_->findByPid(kAppPid)->id, app.id);
}

TEST_F(AppRegistryTest, IdsAreUniqueAndDefaultsApply) {
  AppRecord first = registerOwnerApp();
  AppRegistration unnamed;  // no name, no max_threads
  auto second = registry_->registerApp(other_, unnamed);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(first.id, second->id);
  EXPECT_EQ(second->name, "pid 7000");
  EXPECT_EQ(second->max_threads, 12u);
  EXPECT_EQ(second->decision.thread_count, 12u);
}

TEST_F(AppRegistryTest, OneAppPerProcessAndOnlyLiveProcesses) {
  AppRecord first = registerOwnerApp();
  // The same request again (its first answer was late): the same app.
  AppRegistration same;
  same.name = "stream";
  same.max_threads = 8;
  auto retried = registry_->registerApp(owner_, same);
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_EQ(retried->id, first.id);
  EXPECT_EQ(registry_->list().size(), 1u);

  auto again = registry_->registerApp(owner_, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(again.error().message.find("registered already"), std::string::npos);

  auto ghost = registry_->registerApp(caller(31337, kOwnerUid), {});
  ASSERT_FALSE(ghost.ok());
  EXPECT_EQ(ghost.error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(AppRegistryTest, ThreadsAreVerifiedUnderTheAppsProcess) {
  AppRecord app = registerOwnerApp();
  procs_->addThread(kAppPid, kAppPid + 1);
  procs_->addThread(7000, 7001);
  EXPECT_TRUE(registry_->registerThread(owner_, app.id, kAppPid).ok());
  EXPECT_TRUE(registry_->registerThread(owner_, app.id, kAppPid + 1, 1).ok());
  EXPECT_TRUE(registry_->registerThread(owner_, app.id, kAppPid + 1, 1).ok());  // again: no duplicate

  Status foreign = registry_->registerThread(owner_, app.id, 7001);  // another process's thread
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(foreign.error().message.find("not a thread of process 4242"), std::string::npos);
  EXPECT_FALSE(registry_->registerThread(owner_, app.id, 99999).ok());
  EXPECT_FALSE(registry_->registerThread(owner_, app.id, -3).ok());

  Status stranger = registry_->registerThread(other_, app.id, kAppPid);
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().code, ErrorCode::kPermissionDenied);
  EXPECT_FALSE(registry_->registerThread(owner_, app.id + 100, kAppPid).ok());

  auto record = registry_->find(app.id);
  ASSERT_EQ(record->threads.size(), 2u);
  EXPECT_EQ(record->threads[1].tid, kAppPid + 1);
  EXPECT_EQ(record->threads[1].omp_thread_num, 1u);

  EXPECT_TRUE(registry_->unregisterThread(owner_, app.id, kAppPid + 1).ok());
  EXPECT_EQ(registry_->find(app.id)->threads.size(), 1u);
  Status missing = registry_->unregisterThread(owner_, app.id, kAppPid + 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST_F(AppRegistryTest, BudgetMustBePositive) {
  AppRecord app = registerOwnerApp();
  for (int64_t bad : {int64_t{0}, int64_t{-5}}) {
    auto result = registry_->setPowerBudget(owner_, app.id, bad);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(result.error().message.find("power budget must be positive"), std::string::npos)
        << result.error().message;
  }
  auto good = registry_->setPowerBudget(owner_, app.id, 40000);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->power_budget_mw, 40000u);
  EXPECT_EQ(registry_->find(app.id)->power_budget_mw, 40000u);
}

TEST_F(AppRegistryTest, BudgetAboveNodeCapNamesBothNumbers) {
  AppRecord app = registerOwnerApp();
  auto over = registry_->setPowerBudget(owner_, app.id, 190001);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(over.error().message.find("190001 mW"), std::string::npos) << over.error().message;
  EXPECT_NE(over.error().message.find("190000 mW"), std::string::npos) << over.error().message;
  EXPECT_TRUE(registry_->setPowerBudget(owner_, app.id, 190000).ok());

  // The cap is read at each check: the admin may lower it.
  cap_mw_ = 100000;
  EXPECT_FALSE(registry_->setPowerBudget(owner_, app.id, 150000).ok());
  // No cap known: any positive budget.
  cap_mw_ = std::nullopt;
  EXPECT_TRUE(registry_->setPowerBudget(owner_, app.id, 500000).ok());
}

TEST_F(AppRegistryTest, ABudgetUnderTheAppsFloorIsTakenWithAWarning) {
  auto inspector = std::make_unique<FakeProcessInspector>();
  inspector->addProcess(kAppPid);
  AppRegistry::Options options;
  options.default_max_threads = 12;
  std::vector<uint32_t> asked;
  options.budget_floor = BudgetFloor([&asked](uint32_t busy) -> std::optional<double> {
    asked.push_back(busy);
    return 20.0 + 2.5 * busy;
  });
  AppRegistry registry(access_, std::move(inspector), std::move(options));
  AppRegistration registration;
  registration.power_budget_mw = 5000;
  auto app = registry.registerApp(owner_, registration);
  ASSERT_TRUE(app.ok()) << app.error().message;
  EXPECT_EQ(app->power_budget_mw, 5000u);
  EXPECT_EQ(app->budget_floor_mw, 25000u);
  EXPECT_NE(app->budget_warning.find("cannot be met"), std::string::npos) << app->budget_warning;
  EXPECT_EQ(asked, (std::vector<uint32_t>{2}));  // D's floor for C = 12

  auto met = registry.setPowerBudget(owner_, app->id, 40000);
  ASSERT_TRUE(met.ok()) << met.error().message;
  EXPECT_EQ(met->budget_warning, "");
  EXPECT_EQ(met->budget_floor_mw, 25000u);
  auto under = registry.setPowerBudget(owner_, app->id, 20000);
  ASSERT_TRUE(under.ok()) << under.error().message;
  EXPECT_EQ(under->power_budget_mw, 20000u);
  EXPECT_NE(under->budget_warning.find("20.0 W"), std::string::npos) << under->budget_warning;
  // `apps` shows it as long as it holds.
  ASSERT_EQ(registry.list().size(), 1u);
  EXPECT_EQ(registry.list()[0].budget_warning, under->budget_warning);
}

TEST_F(AppRegistryTest, RegistrationBudgetIsCheckedToo) {
  AppRegistration registration;
  registration.power_budget_mw = 300000;
  auto over = registry_->registerApp(owner_, registration);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("above the node's power cap"), std::string::npos);
  registration.power_budget_mw = static_cast<uint64_t>(-1);  // a negative number sent unsigned
  auto negative = registry_->registerApp(owner_, registration);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("must be positive"), std::string::npos);
  EXPECT_TRUE(registry_->list().empty());
}

TEST_F(AppRegistryTest, OnlyOwnerOrAdminSetsBudget) {
  AppRecord app = registerOwnerApp();
  EXPECT_TRUE(registry_->setPowerBudget(owner_, app.id, 10000).ok());
  EXPECT_TRUE(registry_->setPowerBudget(admin_, app.id, 20000).ok());
  EXPECT_TRUE(registry_->setPowerBudget(root_, app.id, 30000).ok());
  // Same uid, another process: still the owner.
  EXPECT_TRUE(registry_->setPowerBudget(caller(555, kOwnerUid), app.id, 35000).ok());

  auto denied = registry_->setPowerBudget(other_, app.id, 40000);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("setting the power budget"), std::string::npos) << denied.error().message;
  EXPECT_NE(denied.error().message.find("you are uid 2000"), std::string::npos) << denied.error().message;
  // Even an invalid budget is refused for permission first.
  EXPECT_EQ(registry_->setPowerBudget(other_, app.id, 0).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(registry_->find(app.id)->power_budget_mw, 35000u);

  EXPECT_EQ(registry_->setPowerBudget(owner_, app.id + 100, 1000).error().code, ErrorCode::kNotFound);
}

TEST_F(AppRegistryTest, UnregisterIsForOwnerOrAdmin) {
  AppRecord app = registerOwnerApp();
  auto denied = registry_->unregisterApp(other_, app.id);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("unregistering"), std::string::npos);
  auto removed = registry_->unregisterApp(admin_, app.id);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->id, app.id);
  EXPECT_TRUE(registry_->list().empty());
  EXPECT_EQ(removed_ids_, std::vector<uint64_t>{app.id});
  EXPECT_EQ(registry_->unregisterApp(owner_, app.id).error().code, ErrorCode::kNotFound);
}

TEST_F(AppRegistryTest, ReapRemovesAppsWhoseProcessIsGoneOrReused) {
  AppRecord first = registerOwnerApp();
  auto second = registry_->registerApp(other_, {});
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(registry_->reapDead().empty());

  procs_->removeProcess(kAppPid);
  auto reaped = registry_->reapDead();
  ASSERT_EQ(reaped.size(), 1u);
  EXPECT_EQ(reaped[0].id, first.id);
  EXPECT_EQ(reaped[0].pid, kAppPid);
  EXPECT_FALSE(registry_->find(first.id));
  EXPECT_TRUE(registry_->find(second->id));

  // The pid now names another process (other start time).
  procs_->addProcess(7000, 999);
  reaped = registry_->reapDead();
  ASSERT_EQ(reaped.size(), 1u);
  EXPECT_EQ(reaped[0].id, second->id);
  EXPECT_TRUE(registry_->list().empty());
  EXPECT_EQ(removed_ids_, (std::vector<uint64_t>{first.id, second->id}));
}

TEST_F(AppRegistryTest, ThreadCountIsValidatedAndBumpsSequence) {
  AppRecord app = registerOwnerApp(8);
  EXPECT_FALSE(registry_->setThreadCount(app.id, 0).ok());
  EXPECT_FALSE(registry_->setThreadCount(app.id, 9).ok());
  ASSERT_TRUE(registry_->setThreadCount(app.id, 4).ok());
  auto record = registry_->find(app.id);
  EXPECT_EQ(record->decision.thread_count, 4u);
  EXPECT_EQ(record->decision.seq, 2u);
  ASSERT_TRUE(registry_->setThreadCount(app.id, 4).ok());  // unchanged: no new decision
  EXPECT_EQ(registry_->find(app.id)->decision.seq, 2u);
}

TEST_F(AppRegistryTest, ControlStreamIsForTheAppsProcessOnce) {
  AppRecord app = registerOwnerApp();
  auto stranger = registry_->attachControl(caller(555, kOwnerUid), app.id);
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(registry_->attachControl(owner_, app.id).ok());
  EXPECT_TRUE(registry_->find(app.id)->control_attached);
  EXPECT_EQ(registry_->attachControl(owner_, app.id).error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(AppRegistryTest, CurrentDecisionIsAvailableAtOnce) {
  AppRecord app = registerOwnerApp(6);
  ASSERT_TRUE(registry_->attachControl(owner_, app.id).ok());
  bool gone = true;
  auto start = std::chrono::steady_clock::now();
  auto decision = registry_->waitDecision(app.id, 0, 5s, &gone);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  ASSERT_TRUE(decision);
  EXPECT_FALSE(gone);
  EXPECT_EQ(decision->thread_count, 6u);
  // Nothing new: times out.
  EXPECT_FALSE(registry_->waitDecision(app.id, decision->seq, 20ms, &gone));
  EXPECT_FALSE(gone);
}

TEST_F(AppRegistryTest, NewDecisionWakesTheWaiterWithoutDelay) {
  AppRecord app = registerOwnerApp(8);
  ASSERT_TRUE(registry_->attachControl(owner_, app.id).ok());
  auto first = registry_->waitDecision(app.id, 0, 1s, nullptr);
  ASSERT_TRUE(first);

  std::atomic<bool> waiting{false};
  std::optional<AppDecisionRecord> got;
  std::chrono::steady_clock::time_point woke;
  std::thread waiter([&] {
    waiting = true;
    bool gone = false;
    got = registry_->waitDecision(app.id, first->seq, 10s, &gone);
    woke = std::chrono::steady_clock::now();
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(50ms);
  auto set_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(registry_->setThreadCount(app.id, 3).ok());
  waiter.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->thread_count, 3u);
  EXPECT_GT(got->seq, first->seq);
  EXPECT_LT(woke - set_at, 200ms);  // woken by the change, not by the 10 s timeout
}

TEST_F(AppRegistryTest, EndingTheStreamUnregistersAndWakesTheWaiter) {
  AppRecord app = registerOwnerApp();
  ASSERT_TRUE(registry_->attachControl(owner_, app.id).ok());
  auto first = registry_->waitDecision(app.id, 0, 1s, nullptr);
  ASSERT_TRUE(first);
  bool gone = false;
  std::thread waiter([&] { (void)registry_->waitDecision(app.id, first->seq, 10s, &gone); });
  std::this_thread::sleep_for(50ms);
  auto removed = registry_->endControl(app.id);
  waiter.join();
  EXPECT_TRUE(gone);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->id, app.id);
  EXPECT_FALSE(registry_->find(app.id));
  EXPECT_EQ(removed_ids_, std::vector<uint64_t>{app.id});
  EXPECT_FALSE(registry_->endControl(app.id));  // once only
}

TEST_F(AppRegistryTest, ReportsAreKept) {
  AppRecord app = registerOwnerApp();
  EXPECT_TRUE(registry_->report(app.id, 5).ok());
  EXPECT_EQ(registry_->find(app.id)->reported_team_size, 5u);
  EXPECT_EQ(registry_->report(app.id + 1, 5).error().code, ErrorCode::kNotFound);
}

TEST_F(AppRegistryTest, PolicyIsForOwnerOrAdminAndMustBeKnown) {
  AppRecord app = registerOwnerApp();
  auto set = registry_->setPolicy(owner_, app.id, "ondemand");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->policy, "ondemand");
  auto unknown = registry_->setPolicy(admin_, app.id, "turbo");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("available: thermal-aware, ondemand"), std::string::npos);
  EXPECT_EQ(registry_->setPolicy(other_, app.id, "thermal-aware").error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(registry_->find(app.id)->policy, "ondemand");  // refusals changed nothing
  ASSERT_TRUE(registry_->setPolicy(admin_, app.id, "").ok());
  EXPECT_EQ(registry_->find(app.id)->policy, "");

  AppRegistration registration;
  registration.policy = "turbo";
  EXPECT_EQ(registry_->registerApp(other_, registration).error().code, ErrorCode::kNotFound);
}

TEST_F(AppRegistryTest, ManagedStateIsShownAndAMoveWakesTheStream) {
  AppRecord app = registerOwnerApp();
  procs_->addThread(kAppPid, kAppPid + 1);
  ASSERT_TRUE(registry_->registerThread(owner_, app.id, kAppPid + 1, 0).ok());
  uint64_t seq = registry_->find(app.id)->decision.seq;

  AppManagedState state;
  state.measured_power_mw = 41000;
  state.effective_budget_mw = 40000;
  state.effective_policy = "thermal-aware";
  state.over_budget_reason = "over budget for 5 intervals: node cap (held to 40.0 W of its 60.0 W)";
  state.placements = {{kAppPid + 1, 3, {1}}, {99999, 4, {0}}};  // the second is not registered
  state.core_khz = {{3, 1800000}};
  registry_->updateManaged(app.id, state);
  AppRecord shown = *registry_->find(app.id);
  EXPECT_EQ(shown.over_budget_reason, state.over_budget_reason);
  EXPECT_EQ(shown.measured_power_mw, 41000u);
  EXPECT_EQ(shown.effective_budget_mw, 40000u);
  EXPECT_EQ(shown.effective_policy, "thermal-aware");
  ASSERT_EQ(shown.threads.size(), 1u);
  EXPECT_EQ(shown.threads[0].core, 3);
  EXPECT_EQ(shown.threads[0].affinity, std::vector<uint32_t>{1});
  EXPECT_EQ(shown.decision.seq, seq + 1);
  ASSERT_EQ(shown.decision.threads.size(), 1u);
  EXPECT_EQ(shown.decision.core_khz.size(), 1u);

  // Frequencies alone do not send a new decision; a move does.
  state.core_khz = {{3, 1700000}};
  registry_->updateManaged(app.id, state);
  EXPECT_EQ(registry_->find(app.id)->decision.seq, seq + 1);
  state.placements = {{kAppPid + 1, 8, {0}}};
  registry_->updateManaged(app.id, state);
  EXPECT_EQ(registry_->find(app.id)->decision.seq, seq + 2);
  EXPECT_EQ(registry_->find(app.id)->threads[0].core, 8);
}

// Tracing alone changes nothing: a tracing-only registration is kept (so
// that a budget can enrol it later) but gets no D until one applies.
TEST_F(AppRegistryTest, TracingOnlyAppIsUnmanagedUntilABudgetApplies) {
  EXPECT_TRUE(registerOwnerApp(8).managed) << "an app that loaded the tool for energy management is managed";
  ASSERT_TRUE(registry_->unregisterApp(owner_, registry_->findByPid(kAppPid)->id).ok());

  AppRegistration registration;
  registration.max_threads = 8;
  registration.tracing_only = true;
  auto app = registry_->registerApp(owner_, registration);
  ASSERT_TRUE(app.ok()) << app.error().message;
  EXPECT_FALSE(app->managed);
  EXPECT_EQ(app->decision.thread_count, 0u) << "0 is 'unchanged' on the control stream";
  ASSERT_TRUE(registry_->attachControl(owner_, app->id).ok());
  bool gone = true;
  auto first = registry_->waitDecision(app->id, 0, 1s, &gone);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->thread_count, 0u);

  ASSERT_TRUE(registry_->setPowerBudget(owner_, app->id, 40000).ok());
  EXPECT_TRUE(registry_->find(app->id)->managed);
  auto enrolled = registry_->waitDecision(app->id, first->seq, 1s, &gone);
  ASSERT_TRUE(enrolled) << "enrolment must reach the control stream";
  EXPECT_EQ(enrolled->thread_count, 8u);
  EXPECT_FALSE(registry_->enrol(app->id)) << "managed already";
}

TEST_F(AppRegistryTest, TracingOnlyAppIsEnrolledByAPolicyOrTheNode) {
  AppRegistration registration;
  registration.tracing_only = true;
  auto by_policy = registry_->registerApp(owner_, registration);
  ASSERT_TRUE(by_policy.ok());
  ASSERT_TRUE(registry_->setPolicy(owner_, by_policy->id, "").ok());
  EXPECT_FALSE(registry_->find(by_policy->id)->managed) << "the node's policy is not one the app asked for";
  ASSERT_TRUE(registry_->setPolicy(owner_, by_policy->id, "ondemand").ok());
  EXPECT_TRUE(registry_->find(by_policy->id)->managed);
  EXPECT_EQ(registry_->find(by_policy->id)->decision.thread_count, 12u);

  auto by_node = registry_->registerApp(other_, registration);
  ASSERT_TRUE(by_node.ok());
  EXPECT_FALSE(by_node->managed);
  EXPECT_TRUE(registry_->enrol(by_node->id));
  EXPECT_TRUE(registry_->find(by_node->id)->managed);
  EXPECT_GT(registry_->find(by_node->id)->decision.seq, by_node->decision.seq);

  registration.power_budget_mw = 30000;
  procs_->addProcess(7100);
  auto with_budget = registry_->registerApp(caller(7100, kOwnerUid), registration);
  ASSERT_TRUE(with_budget.ok());
  EXPECT_TRUE(with_budget->managed) << "a budget at registration applies at once";
}

TEST_F(AppRegistryTest, EnergyStaysWithAnAppAfterItEnds) {
  AppRecord app = registerOwnerApp();
  EXPECT_GT(app.registered_ns, 0);
  registry_->chargeEnergy(app.id, 1.5, "");
  registry_->chargeEnergy(app.id, 2.0, "job-7");
  registry_->chargeEnergy(app.id, -3.0, "");  // never taken away
  EXPECT_EQ(registry_->find(app.id)->energy_j, 3.5);
  EXPECT_EQ(registry_->find(app.id)->job_id, "job-7");
  EXPECT_TRUE(registry_->listEnded().empty());

  procs_->removeProcess(kAppPid);
  ASSERT_EQ(registry_->reapDead().size(), 1u);
  // Charged after it left: the interval it was measured in still counts.
  registry_->chargeEnergy(app.id, 0.5, "job-7");
  auto ended = registry_->listEnded();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].id, app.id);
  EXPECT_EQ(ended[0].energy_j, 4.0);
  EXPECT_EQ(ended[0].job_id, "job-7");
  EXPECT_EQ(ended[0].end_detail, "gone");
  EXPECT_GE(ended[0].ended_ns, ended[0].registered_ns);
  EXPECT_TRUE(registry_->list().empty());
}

TEST_F(AppRegistryTest, UnregisteredAppEndsAsUnregisteredAndHistoryIsBounded) {
  AppRecord first = registerOwnerApp();
  ASSERT_TRUE(registry_->unregisterApp(owner_, first.id).ok());
  auto ended = registry_->listEnded();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].end_detail, "unregistered");
  // 256 more: the oldest one made room.
  for (int i = 0; i < 256; ++i) {
    AppRecord app = registerOwnerApp();
    ASSERT_TRUE(registry_->unregisterApp(owner_, app.id).ok());
  }
  ended = registry_->listEnded();
  EXPECT_EQ(ended.size(), 256u);
  EXPECT_NE(ended.front().id, first.id);
}

}  // namespace
}  // namespace nk
