#include "apps/app_load_accounting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nk {
namespace {

TEST(AppLoadAccounting, FirstReadingOnlyStartsTheThread) {
  AppLoadAccounting accounting;
  EXPECT_FALSE(accounting.observe({10, 1000, 0, std::nullopt}, 1.0).has_value());
}

TEST(AppLoadAccounting, BusyCountsRunAndWaitOverTheInterval) {
  AppLoadAccounting accounting;
  accounting.observe({10, 1'000'000'000, 500'000'000, 7000}, 1.0);
  // 30 ms on a CPU and 20 ms waiting for one, over 100 ms.
  auto activity = accounting.observe({10, 1'030'000'000, 520'000'000, 7000 + 42'000'000}, 1.1);
  ASSERT_TRUE(activity);
  EXPECT_NEAR(activity->busy, 0.5, 1e-9);
  EXPECT_NEAR(activity->cpu_s, 0.03, 1e-12);
  EXPECT_NEAR(activity->interval_s, 0.1, 1e-12);
  ASSERT_TRUE(activity->cycles);
  EXPECT_DOUBLE_EQ(*activity->cycles, 42'000'000.0);
}

TEST(AppLoadAccounting, BusyIsClampedAndCountersGoingBackRestart) {
  AppLoadAccounting accounting;
  accounting.observe({10, 0, 0, std::nullopt}, 1.0);
  // More run + wait than wall time (clock granularity): at most 1.
  auto activity = accounting.observe({10, 80'000'000, 40'000'000, std::nullopt}, 1.1);
  ASSERT_TRUE(activity);
  EXPECT_DOUBLE_EQ(activity->busy, 1.0);
  EXPECT_FALSE(activity->cycles.has_value());
  // A reused tid starts from zero: no activity, and the next interval counts again.
  EXPECT_FALSE(accounting.observe({10, 5, 0, std::nullopt}, 1.2).has_value());
  auto next = accounting.observe({10, 50'000'005, 0, std::nullopt}, 1.3);
  ASSERT_TRUE(next);
  EXPECT_NEAR(next->busy, 0.5, 1e-9);
}

TEST(AppLoadAccounting, ForgottenThreadsStartAgain) {
  AppLoadAccounting accounting;
  accounting.observe({10, 0, 0, std::nullopt}, 1.0);
  accounting.observe({11, 0, 0, std::nullopt}, 1.0);
  std::vector<pid_t> live = {11};
  accounting.forgetExcept(live);
  EXPECT_FALSE(accounting.observe({10, 10, 0, std::nullopt}, 1.1).has_value());
  EXPECT_TRUE(accounting.observe({11, 10, 0, std::nullopt}, 1.1).has_value());
}

TEST(AppLoadAccounting, PowerIsSplitByBusyThreadsAndAllOfItIsCharged) {
  std::vector<double> busy = {3.0, 1.0};
  auto shares = AppLoadAccounting::apportionPower(80.0, busy);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 60.0);
  EXPECT_DOUBLE_EQ(shares[1], 20.0);
  // Nobody busy: an even split, still the whole node.
  std::vector<double> idle = {0.0, 0.0};
  auto even = AppLoadAccounting::apportionPower(30.0, idle);
  EXPECT_DOUBLE_EQ(even[0], 15.0);
  EXPECT_DOUBLE_EQ(even[1], 15.0);
  // Unknown power: nothing charged.
  auto unknown = AppLoadAccounting::apportionPower(NAN, busy);
  EXPECT_DOUBLE_EQ(unknown[0], 0.0);
}

}  // namespace
}  // namespace nk
