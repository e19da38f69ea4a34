#include "task_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace nk::client {
namespace {

using namespace std::chrono_literals;

// Waits (bounded) until `done` holds; a gate that never lets go fails the
// test instead of hanging it.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

class TaskGateTest : public ::testing::Test {
 protected:
  std::atomic<int> wakes{0};
  TaskGate gate{[this] { ++wakes; }, [](uint64_t key) { return key == 7 ? std::string("stencil") : std::string("other"); }};
};

TEST_F(TaskGateTest, WithNoControlEverythingMayStartInTheRuntimesOrder) {
  EXPECT_FALSE(gate.active());
  gate.admit(1);
  EXPECT_TRUE(gate.mayStart(1));
  std::vector<uint64_t> ready{5, 6};
  EXPECT_EQ(gate.select(ready), 0u);
  EXPECT_TRUE(gate.takeReports().empty());
}

TEST_F(TaskGateTest, BreakParksAWorkerUntilContinue) {
  gate.hold(11, true);
  EXPECT_TRUE(gate.active());
  std::atomic<bool> started{false};
  std::thread worker([&] {
    gate.admit(42);
    started = true;
  });
  ASSERT_TRUE(eventually([&] { return gate.parkedWorkers() == 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(started);
  gate.hold(12, false);
  worker.join();
  EXPECT_TRUE(started);
  EXPECT_FALSE(gate.active());
  auto reports = gate.takeReports();
  ASSERT_GE(reports.size(), 3u);
  EXPECT_EQ(reports[0].control_id, 11u);
  EXPECT_TRUE(reports[0].held);
  EXPECT_EQ(reports[1].control_id, 0u);  // the worker parked
  EXPECT_EQ(reports[1].parked_workers, 1u);
  EXPECT_EQ(reports[1].task, 42u);
  EXPECT_EQ(reports.back().control_id, 12u);
  EXPECT_GT(wakes.load(), 0);
}

TEST_F(TaskGateTest, StepOneLetsExactlyOneOfTwoWorkersThrough) {
  gate.hold(1, true);
  std::atomic<int> started{0};
  std::vector<std::thread> workers;
  for (uint64_t task : {100u, 101u}) workers.emplace_back([&, task] {
    gate.admit(task);
    ++started;
  });
  ASSERT_TRUE(eventually([&] { return gate.parkedWorkers() == 2; }));
  gate.step(2, 1);
  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(gate.parkedWorkers(), 1u);
  gate.hold(3, false);
  for (auto& w : workers) w.join();
  EXPECT_EQ(started.load(), 2);
}

TEST_F(TaskGateTest, StepZeroIsRefusedAndChangesNothing) {
  gate.step(5, 0);
  auto reports = gate.takeReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_FALSE(reports[0].ok);
  EXPECT_FALSE(gate.active());
}

TEST_F(TaskGateTest, ABlockedTaskIsSkippedBySelectAndHeldByAdmitUntilUnblocked) {
  std::vector<uint64_t> blocked{8};
  gate.block(1, blocked, true);
  EXPECT_FALSE(gate.mayStart(8));
  EXPECT_TRUE(gate.mayStart(9));
  std::vector<uint64_t> ready{8, 9};
  EXPECT_EQ(gate.select(ready), 1u);
  std::vector<uint64_t> only_blocked{8};
  EXPECT_EQ(gate.select(only_blocked), std::nullopt);
  std::atomic<bool> started{false};
  std::thread worker([&] {
    gate.admit(8);
    started = true;
  });
  ASSERT_TRUE(eventually([&] { return gate.parkedWorkers() == 1; }));
  gate.admit(9);  // others run meanwhile
  EXPECT_FALSE(started);
  gate.block(2, blocked, false);
  worker.join();
  EXPECT_TRUE(started);
}

TEST_F(TaskGateTest, SelectPrefersTheHighestPriority) {
  gate.priority(1, 30, 5);
  gate.priority(2, 20, 9);
  std::vector<uint64_t> ready{10, 20, 30};
  EXPECT_EQ(gate.select(ready), 1u);
  gate.admit(20);  // a started task's priority is forgotten
  std::vector<uint64_t> rest{10, 30};
  EXPECT_EQ(gate.select(rest), 1u);
}

TEST_F(TaskGateTest, AFunctionBlockCatchesTasksCreatedAfterIt) {
  gate.blockFunction(1, "stencil", true);
  gate.created(50, 7);  // named "stencil"
  gate.created(51, 8);  // "other"
  EXPECT_FALSE(gate.mayStart(50));
  EXPECT_TRUE(gate.mayStart(51));
}

TEST_F(TaskGateTest, PauseOnTaskEndHoldsAfterTheNextEnd) {
  gate.pauseOn(1, TaskGate::PauseEvent::kTaskEnd, true);
  EXPECT_TRUE(gate.mayStart(3));
  gate.finished(2);
  EXPECT_FALSE(gate.mayStart(3));
  auto reports = gate.takeReports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].paused_on, TaskGate::PauseEvent::kTaskEnd);
  EXPECT_EQ(reports[1].task, 2u);
}

TEST_F(TaskGateTest, ReleaseAllLetsEveryParkedWorkerGo) {
  gate.hold(1, true);
  std::vector<uint64_t> blocked{61};
  gate.block(2, blocked, true);
  std::thread a([&] { gate.admit(60); });
  std::thread b([&] { gate.admit(61); });
  ASSERT_TRUE(eventually([&] { return gate.parkedWorkers() == 2; }));
  gate.releaseAll(0, "test");
  a.join();
  b.join();
  EXPECT_FALSE(gate.active());
}

}  // namespace
}  // namespace nk::client
