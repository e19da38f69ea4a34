#include "platform/emulated/emulated_governor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "platform/emulated/emulated_sysfs_tree.h"

namespace nk {
namespace {

EmulatedPolicyControls controls(std::string governor, uint64_t min_khz = 1200000, uint64_t max_khz = 2600000,
                                std::optional<uint64_t> setspeed = std::nullopt) {
  EmulatedPolicyControls c;
  c.governor = std::move(governor);
  c.min_khz = min_khz;
  c.max_khz = max_khz;
  c.setspeed_khz = setspeed;
  return c;
}

NodeProfile laptop() {
  NodeProfile p = NodeProfile::xeonE5_2630();
  p.driver = "intel_pstate";
  p.governors = {"performance", "powersave"};
  p.default_governor = "powersave";
  p.frequencies_khz.clear();
  for (uint64_t khz = 800000; khz <= 3600000; khz += 100000) p.frequencies_khz.push_back(khz);
  return p;
}

TEST(EmulatedGovernor, PerformanceRunsAtMax) {
  EmulatedGovernor g(NodeProfile::xeonE5_2630());
  EXPECT_EQ(g.targetKhz(controls("performance"), 0.0), 2600000u);
  EXPECT_EQ(g.targetKhz(controls("performance", 1200000, 2000000), 0.0), 2000000u);
  // A limit between table entries: the highest entry below it.
  EXPECT_EQ(g.targetKhz(controls("performance", 1200000, 2050000), 1.0), 2000000u);
}

TEST(EmulatedGovernor, PowersaveRunsAtMin) {
  EmulatedGovernor g(NodeProfile::xeonE5_2630());
  EXPECT_EQ(g.targetKhz(controls("powersave"), 1.0), 1200000u);
  EXPECT_EQ(g.targetKhz(controls("powersave", 1800000), 1.0), 1800000u);
  EXPECT_EQ(g.targetKhz(controls("powersave", 1750000), 1.0), 1800000u);  // lowest entry above the limit
}

TEST(EmulatedGovernor, IntelPstatePowersaveFollowsTheLoad) {
  EmulatedGovernor g(laptop());
  EXPECT_EQ(g.targetKhz(controls("powersave", 800000, 3600000), 0.0), 800000u);
  EXPECT_EQ(g.targetKhz(controls("powersave", 800000, 3600000), 1.0), 3600000u);
  uint64_t half = g.targetKhz(controls("powersave", 800000, 3600000), 0.4);
  EXPECT_EQ(half, 2200000u);  // 0.8 + 0.4 * 2.8 / 0.8 = 2.2 GHz
  // Steering scaling_max_freq is how a daemon limits intel_pstate.
  EXPECT_EQ(g.targetKhz(controls("powersave", 800000, 2000000), 1.0), 2000000u);
  EXPECT_EQ(g.targetKhz(controls("performance", 800000, 3600000), 0.0), 3600000u);
}

TEST(EmulatedGovernor, UserspaceRunsAtSetspeedWithinLimits) {
  EmulatedGovernor g(NodeProfile::xeonE5_2630());
  EXPECT_EQ(g.targetKhz(controls("userspace", 1200000, 2600000, 2100000), 0.0), 2100000u);
  EXPECT_EQ(g.targetKhz(controls("userspace", 1200000, 2600000, 2150000), 0.0), 2200000u);  // CPUFREQ_RELATION_L
  EXPECT_EQ(g.targetKhz(controls("userspace", 1200000, 2200000, 2500000), 0.0), 2200000u);
  EXPECT_EQ(g.targetKhz(controls("userspace", 1500000, 2600000, 1000000), 1.0), 1500000u);
  EXPECT_EQ(g.targetKhz(controls("userspace"), 1.0), 1200000u);  // no setspeed yet: min
}

TEST(EmulatedGovernor, OndemandJumpsToMaxAboveTheThreshold) {
  EmulatedGovernor g(NodeProfile::xeonE5_2630());
  for (const char* governor : {"ondemand", "conservative", "schedutil"}) {
    EXPECT_EQ(g.targetKhz(controls(governor), 0.81), 2600000u) << governor;
    EXPECT_EQ(g.targetKhz(controls(governor), 1.0), 2600000u) << governor;
    EXPECT_EQ(g.targetKhz(controls(governor, 1200000, 2300000), 0.95), 2300000u) << governor;
    EXPECT_EQ(g.targetKhz(controls(governor), 0.0), 1200000u) << governor;
  }
}

TEST(EmulatedGovernor, OndemandIsProportionalBelowTheThreshold) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  EmulatedGovernor g(p);
  for (double u = 0.0; u <= 0.8; u += 0.01) {
    const double target = 1200000 + u * 1400000 / 0.8;
    uint64_t expected = 0;
    for (uint64_t khz : p.frequencies_khz) {
      if (static_cast<double>(khz) >= target - 1e-3) {
        expected = khz;
        break;
      }
    }
    EXPECT_EQ(g.targetKhz(controls("ondemand"), u), expected) << "u = " << u;
  }
  EXPECT_EQ(g.targetKhz(controls("ondemand"), 0.4), 1900000u);
  EXPECT_EQ(g.targetKhz(controls("ondemand"), 0.41), 2000000u);
  // Limits bound the proportional range too.
  EXPECT_EQ(g.targetKhz(controls("ondemand", 2000000, 2400000), 0.0), 2000000u);
  EXPECT_EQ(g.targetKhz(controls("ondemand", 2000000, 2400000), 0.4), 2200000u);
}

TEST(EmulatedGovernor, TableLookups) {
  EmulatedGovernor g(NodeProfile::xeonE5_2630());
  EXPECT_EQ(g.atOrAbove(1250000, 1200000, 2600000), 1300000u);
  EXPECT_EQ(g.atOrAbove(1300000, 1200000, 2600000), 1300000u);
  EXPECT_EQ(g.atOrAbove(3000000, 1200000, 2600000), 2600000u);
  EXPECT_EQ(g.atOrBelow(1250000, 1200000, 2600000), 1200000u);
  EXPECT_EQ(g.atOrBelow(1000000, 1200000, 2600000), 1200000u);
  EXPECT_EQ(g.atOrBelow(2600000, 1200000, 2000000), 2000000u);
}

}  // namespace
}  // namespace nk
