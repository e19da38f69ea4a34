#include "energy/performance_policy.h"
#include "energy/powersave_policy.h"

#include <gtest/gtest.h>

#include "snapshot_builder.h"

namespace nk {
namespace {

TEST(PerformancePolicy, MaxFrequencyAndFullWidth) {
  PerformancePolicy p;
  EnergySnapshot s = test::node(4);
  s.cores[2].max_khz = 2000000;
  s.apps.push_back(test::app("a", 20.0, 4, 2, 10.0));
  EnergyDecision d = p.stepDvfs(s);
  EXPECT_EQ(p.name(), "performance");
  EXPECT_EQ(d.cores[0].target_khz, 2600000u);
  EXPECT_EQ(d.cores[2].target_khz, 2000000u);
  EXPECT_EQ(d.cores[0].governor, Governor::kPerformance);
  ASSERT_EQ(d.apps.size(), 1u);
  EXPECT_EQ(d.apps[0].threads, 4u);  // D = C
  EXPECT_EQ(d.apps[0].thread_decisions[0].core, -1);
}

TEST(PowersavePolicy, MinFrequency) {
  PowersavePolicy p;
  EnergySnapshot s = test::node(2);
  s.cores[1].min_khz = 1500000;
  EnergyDecision d = p.stepDct(s);
  EXPECT_EQ(d.cores[0].target_khz, 1200000u);
  EXPECT_EQ(d.cores[1].target_khz, 1500000u);
  EXPECT_EQ(d.cores[0].governor, Governor::kPowersave);
}

// The node cap wins over a policy that does not look at power: scale the
// current frequency by cap / P and round down to the table.
TEST(PerformancePolicy, NodeCapLimitsFrequency) {
  PerformancePolicy p;
  EnergySnapshot s = test::node(2);
  s.power_cap_w = 100.0;
  s.package_power_w = {60.0, 60.0};
  EnergyDecision d = p.stepDvfs(s);
  double wanted = 2600000.0 * 100.0 / 120.0;  // 2.1667 GHz
  EXPECT_LT(wanted, 2200000.0);
  EXPECT_EQ(d.cores[0].target_khz, 2100000u);
  // Under the cap but above 95 % of it: the ceiling holds.
  s.package_power_w = {48.0, 48.0};
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 2100000u);
  // Well under: it creeps back up by 5 % a step until released.
  s.package_power_w = {30.0, 30.0};
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 2200000u);  // 2.1667 * 1.05 = 2.275 -> 2.2
  for (int i = 0; i < 5; ++i)
    p.stepDvfs(s);
  EXPECT_EQ(p.stepDvfs(s).cores[0].target_khz, 2600000u);
}

}  // namespace
}  // namespace nk
