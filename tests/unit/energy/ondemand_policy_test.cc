#include "energy/ondemand_policy.h"

#include <cmath>

#include <gtest/gtest.h>

#include "snapshot_builder.h"

namespace nk {
namespace {

constexpr uint64_t kMin = 1200000, kMax = 2600000;

// od_update(): freq_next = min_f + load * (max_f - min_f) / 100, integers.
uint64_t odNext(uint64_t load) { return kMin + load * (kMax - kMin) / 100; }

EnergySnapshot withLoads(std::initializer_list<double> utils, bool table = true) {
  EnergySnapshot s = test::node(static_cast<uint32_t>(utils.size()), table);
  size_t i = 0;
  for (double u : utils)
    s.cores[i++].util = u;
  return s;
}

TEST(OndemandPolicy, KernelDefaults) {
  OndemandTunables t;
  EXPECT_EQ(t.up_threshold, 80u);          // DEF_FREQUENCY_UP_THRESHOLD
  EXPECT_EQ(t.sampling_down_factor, 1u);   // DEF_SAMPLING_DOWN_FACTOR
  EXPECT_EQ(t.relation, FrequencyRelation::kClosest);
}

TEST(OndemandPolicy, AboveUpThresholdGoesToMax) {
  OndemandPolicy p;
  EnergyDecision d = p.stepDvfs(withLoads({0.81, 0.85, 1.0}));
  for (const CoreDecision& c : d.cores)
    EXPECT_EQ(c.target_khz, kMax);
}

TEST(OndemandPolicy, AtOrBelowThresholdIsProportionalAndResolvedClosest) {
  OndemandPolicy p;
  EnergyDecision d = p.stepDvfs(withLoads({0.80, 0.50, 0.33, 0.25, 0.0}));
  // 80 is not > 80: 2.32 GHz, closest entry 2.3.
  EXPECT_EQ(odNext(80), 2320000u);
  EXPECT_EQ(d.cores[0].target_khz, 2300000u);
  EXPECT_EQ(odNext(50), 1900000u);
  EXPECT_EQ(d.cores[1].target_khz, 1900000u);
  EXPECT_EQ(odNext(33), 1662000u);  // 1.7 is 38 MHz away, 1.6 is 62
  EXPECT_EQ(d.cores[2].target_khz, 1700000u);
  EXPECT_EQ(odNext(25), 1550000u);  // a tie: the lower entry
  EXPECT_EQ(d.cores[3].target_khz, 1500000u);
  EXPECT_EQ(d.cores[4].target_khz, kMin);
}

TEST(OndemandPolicy, RelationLAndThreshold) {
  PolicyConfig cfg;
  cfg.ondemand.relation = FrequencyRelation::kLowestAtOrAbove;
  cfg.ondemand.up_threshold = 95;
  OndemandPolicy p(cfg);
  EnergyDecision d = p.stepDvfs(withLoads({0.90, 0.33, 0.96}));
  EXPECT_EQ(odNext(90), 2460000u);
  EXPECT_EQ(d.cores[0].target_khz, 2500000u);  // lowest at or above 2.46
  EXPECT_EQ(d.cores[1].target_khz, 1700000u);
  EXPECT_EQ(d.cores[2].target_khz, kMax);
}

TEST(OndemandPolicy, ContinuousDriverAndPolicyLimits) {
  OndemandPolicy p;
  EnergySnapshot s = withLoads({0.50, 0.70, 0.90}, false);
  for (CoreReading& c : s.cores)
    c.max_khz = 2000000;  // admin limit below the hardware max
  EnergyDecision d = p.stepDvfs(s);
  EXPECT_EQ(d.cores[0].target_khz, odNext(50));
  // 2.18 GHz over the hardware range, then clamped to the policy max.
  EXPECT_EQ(odNext(70), 2180000u);
  EXPECT_EQ(d.cores[1].target_khz, 2000000u);
  EXPECT_EQ(d.cores[2].target_khz, 2000000u);
}

TEST(OndemandPolicy, SamplingDownFactorHoldsMax) {
  PolicyConfig cfg;
  cfg.ondemand.sampling_down_factor = 3;
  OndemandPolicy p(cfg);
  EnergySnapshot s = withLoads({0.3});
  s.cores[0].cur_khz = kMin;
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 1600000u);  // odNext(30) = 1.62 -> 1.6
  s.cores[0].util = 0.95;
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, kMax);
  s.cores[0].util = 0.1;
  // rate_mult = 3: the next two samples are skipped.
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, kMax);
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, kMax);
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 1300000u);  // odNext(10) = 1.34 -> 1.3
}

TEST(OndemandPolicy, DctStepDoesNotResample) {
  OndemandPolicy p;
  EnergySnapshot s = withLoads({0.5});
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 1900000u);
  s.cores[0].util = 1.0;
  EXPECT_EQ(p.stepDct(s).cores[0].target_khz, 1900000u);
}

TEST(OndemandPolicy, BadUtilisation) {
  OndemandPolicy p;
  EnergyDecision d = p.stepDvfs(withLoads({NAN, -1.0, 7.0}));
  EXPECT_EQ(d.cores[0].target_khz, kMin);
  EXPECT_EQ(d.cores[1].target_khz, kMin);
  EXPECT_EQ(d.cores[2].target_khz, kMax);
  EnergySnapshot empty;
  EXPECT_TRUE(p.stepDvfs(empty).cores.empty());
}

}  // namespace
}  // namespace nk
