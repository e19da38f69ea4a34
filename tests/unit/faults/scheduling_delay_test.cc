#include "faults/scheduling_delay.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;

TEST(SchedulingDelayTest, OnTimeTicksAndNoPressureLeaveTimeoutsAsTheyAre) {
  SchedulingDelay delay;
  EXPECT_EQ(delay.factor(), 1.0);
  delay.tickLate(0ms, 100ms, kT0);
  delay.tickLate(2ms, 100ms, kT0 + 100 * kMs);  // timer slack
  EXPECT_EQ(delay.factor(), 1.0);
  EXPECT_EQ(SchedulingDelay::scale(2000ms, delay.factor()), 2000ms);
  EXPECT_EQ(SchedulingDelay::describe(2000ms, delay.factor()), "2000 ms");
}

TEST(SchedulingDelayTest, ALateTickGrowsTheFactorByItsLatenessInPeriods) {
  SchedulingDelay delay;
  delay.tickLate(150ms, 100ms, kT0);
  EXPECT_DOUBLE_EQ(delay.factor(), 2.5);
  EXPECT_EQ(SchedulingDelay::scale(2000ms, delay.factor()), 5000ms);
  EXPECT_EQ(SchedulingDelay::describe(2000ms, delay.factor()),
            "2000 ms x2.5 for this host's scheduling delay = 5000 ms");
}

TEST(SchedulingDelayTest, TheLargestLatenessIsRememberedForItsMemoryThenForgotten) {
  SchedulingDelay::Options options;
  options.memory = 1000ms;
  SchedulingDelay delay(options);
  delay.tickLate(300ms, 100ms, kT0);
  delay.tickLate(100ms, 100ms, kT0 + 500 * kMs);
  delay.tickLate(0ms, 100ms, kT0 + 900 * kMs);
  EXPECT_DOUBLE_EQ(delay.factor(), 4.0);
  delay.tickLate(0ms, 100ms, kT0 + 1200 * kMs);  // the 300 ms is older than the memory
  EXPECT_DOUBLE_EQ(delay.factor(), 2.0);
  delay.tickLate(0ms, 100ms, kT0 + 1600 * kMs);
  EXPECT_DOUBLE_EQ(delay.factor(), 1.0);
}

TEST(SchedulingDelayTest, CpuPressureGrowsTheFactorAndTheLargerCauseWins) {
  SchedulingDelay delay;
  delay.cpuPressure(50.0);
  EXPECT_DOUBLE_EQ(delay.factor(), 2.5);  // 1 + 3 x 0.5
  delay.tickLate(300ms, 100ms, kT0);
  EXPECT_DOUBLE_EQ(delay.factor(), 4.0);
  delay.cpuPressure(100.0);
  EXPECT_DOUBLE_EQ(delay.factor(), 4.0);
  delay.cpuPressure(std::nullopt);
  delay.tickLate(0ms, 100ms, kT0 + 20'000 * kMs);
  EXPECT_DOUBLE_EQ(delay.factor(), 1.0);
}

TEST(SchedulingDelayTest, TheThreadFactorCountsTheTicksLatenessButNotThePressure) {
  SchedulingDelay delay;
  delay.cpuPressure(100.0);
  EXPECT_DOUBLE_EQ(delay.factor(), 4.0);
  EXPECT_EQ(delay.threadFactor(), 1.0);
  delay.tickLate(50ms, 100ms, kT0);
  EXPECT_DOUBLE_EQ(delay.threadFactor(), 1.5);
  EXPECT_DOUBLE_EQ(delay.factor(), 4.0);
  delay.tickLate(60s, 100ms, kT0 + 100 * kMs);
  EXPECT_DOUBLE_EQ(delay.threadFactor(), 10.0);
}

TEST(SchedulingDelayTest, TheFactorIsBounded) {
  SchedulingDelay delay;
  delay.tickLate(60s, 100ms, kT0);
  EXPECT_DOUBLE_EQ(delay.factor(), 10.0);
  EXPECT_EQ(SchedulingDelay::scale(2000ms, delay.factor()), 20000ms);
  EXPECT_EQ(SchedulingDelay::scale(2000ms, 0.5), 2000ms) << "never shrinks";
}

}  // namespace
}  // namespace nk
