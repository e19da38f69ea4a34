#include "tasks/idle_priority.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace nk {
namespace {

using namespace std::chrono_literals;

int ownPolicy() { return ::sched_getscheduler(0); }

// Waits (without a deadline that could fail a slow run, but with one that
// ends a broken one) until `done` holds.
template <typename Condition>
bool waitFor(Condition done) {
  for (auto give_up = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < give_up;) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

TEST(IdlePriority, IdleOnlyInItsScopeLiftedByOthersUntilItSettles) {
  if (!IdlePriority::liftable()) GTEST_SKIP() << "leaving SCHED_IDLE needs CAP_SYS_NICE";
  IdlePriority priority;
  std::atomic<int> step{0};
  int in_scope = -1, lifted = -1, settled = -1, after = -1;
  std::thread worker([&] {
    priority.adopt();
    {
      IdlePriority::Idle idle(priority);
      in_scope = ownPolicy();
      step = 1;
      waitFor([&] { return step.load() == 2; });
      lifted = ownPolicy();
      priority.settle();
      settled = ownPolicy();
    }
    after = ownPolicy();
  });
  ASSERT_TRUE(waitFor([&] { return step.load() == 1; }));
  EXPECT_FALSE(priority.onIdleThread());
  priority.lift();
  priority.lift();  // lifted already: not again
  step = 2;
  worker.join();
  EXPECT_EQ(in_scope, SCHED_IDLE);
  EXPECT_EQ(lifted, SCHED_OTHER);
  EXPECT_EQ(settled, SCHED_IDLE);
  EXPECT_EQ(after, SCHED_OTHER);
  EXPECT_EQ(priority.lifts(), 1u);
}

// The idle thread holds the lock and cannot go on until it is lifted: the
// waiter's Lock must lift it, or neither moves (and the test fails on the
// worker's wait, not on time).
TEST(IdlePriority, AWaiterLiftsTheIdleThreadHoldingTheLock) {
  if (!IdlePriority::liftable()) GTEST_SKIP() << "leaving SCHED_IDLE needs CAP_SYS_NICE";
  IdlePriority priority;
  std::timed_mutex mutex;
  std::atomic<bool> idle_holds{false};
  std::atomic<bool> holding{false};
  bool saw_lift = false;
  std::thread worker([&] {
    priority.adopt();
    IdlePriority::Idle idle(priority);
    IdlePriority::Lock lock(&priority, mutex, idle_holds);
    holding = true;
    saw_lift = waitFor([] { return ownPolicy() == SCHED_OTHER; });
  });
  ASSERT_TRUE(waitFor([&] { return holding.load(); }));
  EXPECT_TRUE(idle_holds.load());
  {
    IdlePriority::Lock lock(&priority, mutex, idle_holds);
    EXPECT_FALSE(idle_holds.load());  // this thread is not the idle one
  }
  worker.join();
  EXPECT_TRUE(saw_lift);
  EXPECT_EQ(priority.lifts(), 1u);
}

// A thread that is not the idle one never marks a lock as the idle
// thread's, so its waiters do not lift anybody.
TEST(IdlePriority, OtherHoldersAreNotLifted) {
  IdlePriority priority;
  std::timed_mutex mutex;
  std::atomic<bool> idle_holds{false};
  std::atomic<bool> holding{false}, release{false};
  std::thread holder([&] {
    IdlePriority::Lock lock(&priority, mutex, idle_holds);
    holding = true;
    waitFor([&] { return release.load(); });
  });
  ASSERT_TRUE(waitFor([&] { return holding.load(); }));
  EXPECT_FALSE(idle_holds.load());
  std::thread waiter([&] { IdlePriority::Lock lock(&priority, mutex, idle_holds); });
  std::this_thread::sleep_for(50ms);  // the waiter tries and waits meanwhile
  release = true;
  holder.join();
  waiter.join();
  EXPECT_EQ(priority.lifts(), 0u);
}

}  // namespace
}  // namespace nk
