#include "energy/efficiency_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "energy/thermal_aware_policy.h"
#include "snapshot_builder.h"

namespace nk {
namespace {

using test::app;
using test::coreOf;
using test::node;

TEST(EfficiencyPolicy, CeilingIsTheLowestClockWithinTheSlowdown) {
  // (1 - m) f_max / f + m = 1 + s  =>  f = (1 - m) f_max / (1 + s - m)
  EXPECT_DOUBLE_EQ(EfficiencyPolicy::ceilingKhz(0.0, 0.03, 2600000), 2600000 / 1.03);
  EXPECT_DOUBLE_EQ(EfficiencyPolicy::ceilingKhz(0.6, 0.03, 2600000), 0.4 * 2600000 / 0.43);
  EXPECT_DOUBLE_EQ(EfficiencyPolicy::ceilingKhz(1.0, 0.03, 2600000), 0.0);
  // Check the definition itself at m = 0.5: the slowdown at the ceiling is 3%.
  double f = EfficiencyPolicy::ceilingKhz(0.5, 0.03, 2600000);
  EXPECT_NEAR(0.5 * 2600000 / f + 0.5, 1.03, 1e-12);
}

// The hand-worked clocks below are for a 3% slowdown allowance.
PolicyConfig threePercent() {
  PolicyConfig config;
  config.efficiency.max_slowdown_pct = 3.0;
  return config;
}

EnergySnapshot memoryBound(double stall_fraction, double budget_w, double power_w) {
  EnergySnapshot s = node(4);
  AppSample a = app("a", budget_w, 4, 4, power_w);
  for (ThreadSample& t : a.thread_samples) t.stall_fraction = stall_fraction;
  s.apps.push_back(a);
  return s;
}

TEST(EfficiencyPolicy, WithoutBudgetAMemoryBoundThreadGetsItsCeiling) {
  EfficiencyPolicy policy(threePercent());
  // Stalled 60% of its cycles at 2.6 GHz: m = 0.6, ceiling 0.4 * 2.6 / 0.43 =
  // 2.419 GHz, the table's 2.5 GHz at or above it.
  EnergyDecision d = policy.stepDvfs(memoryBound(0.6, 0.0, 40.0));
  for (uint32_t c = 0; c < 4; ++c) {
    const CoreDecision* cd = coreOf(d, c);
    ASSERT_NE(cd, nullptr);
    EXPECT_EQ(cd->target_khz, 2500000u) << c;
    EXPECT_EQ(cd->governor, Governor::kUserspace);
  }
}

TEST(EfficiencyPolicy, StallsMeasuredAtALowerClockMeanTheSameShareAtFmax) {
  EfficiencyPolicy policy(threePercent());
  // At 1.3 GHz a thread with m = 0.9 (at f_max) stalls 0.9 / (0.1 * 2 + 0.9)
  // = 81.8% of its cycles. Ceiling: 0.1 * 2.6 / 0.13 = 2.0 GHz.
  EnergySnapshot s = memoryBound(0.9 / 1.1, 0.0, 40.0);
  for (CoreReading& c : s.cores) c.cur_khz = 1300000;
  EnergyDecision d = policy.stepDvfs(s);
  EXPECT_EQ(coreOf(d, 0)->target_khz, 2000000u);
}

TEST(EfficiencyPolicy, ComputeBoundThreadsKeepAlmostTheFullClock) {
  EfficiencyPolicy policy(threePercent());
  // m = 0: ceiling 2.6 / 1.03 = 2.524 GHz -> 2.6 GHz at or above it.
  EnergyDecision d = policy.stepDvfs(memoryBound(0.0, 0.0, 40.0));
  const CoreDecision* cd = coreOf(d, 0);
  ASSERT_NE(cd, nullptr);
  EXPECT_EQ(cd->target_khz, 0u);  // not limited: left to the governor
}

// Without stall readings the clocks are the thermal-aware policy's (same
// ILC, same inputs), made one per team: the mean, rounded down to the
// table. The thermal-aware clocks do differ between these identical
// threads (eq. 5 shares and the affinity swaps move them apart).
TEST(EfficiencyPolicy, UnmeasuredStallsGiveTheTeamTheMeanThermalAwareClock) {
  PolicyConfig config;
  EfficiencyPolicy ours(config);
  ThermalAwarePolicy seed(config);
  EnergySnapshot s = memoryBound(-1.0, 20.0, 30.0);
  bool spread_seen = false;
  for (int step = 0; step < 12; ++step) {
    s.time_s = 0.05 * step;
    EnergyDecision a = ours.stepDvfs(s);
    EnergyDecision b = seed.stepDvfs(s);
    double mean = 0.0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t c = 0; c < 4; ++c) {
      uint64_t f = coreOf(b, c)->target_khz;
      mean += static_cast<double>(f) / 4.0;
      lo = std::min(lo, f);
      hi = std::max(hi, f);
    }
    spread_seen = spread_seen || lo != hi;
    uint64_t expected = 0;
    for (uint64_t f : test::xeonTable())
      if (static_cast<double>(f) <= mean) expected = f;
    for (uint32_t c = 0; c < 4; ++c) EXPECT_EQ(coreOf(a, c)->target_khz, expected) << "step " << step << " core " << c;
  }
  EXPECT_TRUE(spread_seen);  // else the test would not test the averaging
}

TEST(EfficiencyPolicy, UnderABudgetTheClockIsTheLowerOfCeilingAndIlc) {
  PolicyConfig config;
  EfficiencyPolicy ours(config);
  ThermalAwarePolicy seed(config);
  // Far over budget: the ILC cuts below the ceiling, and both agree.
  EnergySnapshot over = memoryBound(0.6, 10.0, 40.0);
  EnergyDecision a = ours.stepDvfs(over);
  EnergyDecision b = seed.stepDvfs(over);
  EXPECT_LT(coreOf(b, 0)->target_khz, 2500000u);
  EXPECT_EQ(coreOf(a, 0)->target_khz, coreOf(b, 0)->target_khz);
  // Well under budget: the ILC would stay high; the ceiling holds.
  EfficiencyPolicy ours2(config);
  EnergySnapshot under = memoryBound(0.6, 100.0, 20.0);
  EnergyDecision c = ours2.stepDvfs(under);
  EXPECT_LE(coreOf(c, 0)->target_khz, 2500000u);
}

}  // namespace
}  // namespace nk
