#include "apps/energy_attribution.h"

#include <gtest/gtest.h>

#include <vector>

namespace nk {
namespace {

// Counters are in µJ and chosen so that every share is exact in binary
// floating point; the oracles are worked out by hand in the comments.

TEST(EnergyAttribution, FirstReadingIsOnlyTheBaseline) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> counters = {{0, 5'000'000, 0}};
  std::vector<AppPackageUse> apps = {{1, 0, 1.0}};
  EnergySplit split = attribution.account(1, counters, apps, {});
  EXPECT_TRUE(split.app_j.empty());
  EXPECT_EQ(split.packages_j, 0);
  EXPECT_EQ(attribution.packagesJ(), 0);
}

TEST(EnergyAttribution, TwoAppsSplitAPackageByTheirCpuTime) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 1'000'000, 0}};
  attribution.account(1, start, {}, {});
  // 8 J over the interval; app 1 ran 3 s, app 2 ran 1 s: 6 J and 2 J.
  std::vector<PackageCounter> end = {{0, 9'000'000, 0}};
  std::vector<AppPackageUse> apps = {{1, 0, 3.0}, {2, 0, 1.0}};
  EnergySplit split = attribution.account(2, end, apps, {});
  EXPECT_EQ(split.packages_j, 8.0);
  EXPECT_EQ(split.app_j.at(1), 6.0);
  EXPECT_EQ(split.app_j.at(2), 2.0);
  EXPECT_EQ(split.unattributed_j, 0.0);
}

TEST(EnergyAttribution, OtherProcessesShareStaysUnattributed) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 0, 0}};
  attribution.account(1, start, {}, {});
  // 16 J; the app ran 1 s, unregistered processes 3 s: 4 J to the app,
  // 12 J unattributed.
  std::vector<PackageCounter> end = {{0, 16'000'000, 0}};
  std::vector<AppPackageUse> apps = {{7, 0, 1.0}};
  EnergySplit split = attribution.account(2, end, apps, {{0, 3.0}});
  EXPECT_EQ(split.app_j.at(7), 4.0);
  EXPECT_EQ(split.unattributed_j, 12.0);
  EXPECT_EQ(attribution.unattributedJ(), 12.0);
}

TEST(EnergyAttribution, APackageNothingUsedIsUnattributed) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 0, 0}};
  attribution.account(1, start, {}, {});
  std::vector<PackageCounter> end = {{0, 2'500'000, 0}};
  EnergySplit split = attribution.account(2, end, {}, {});
  EXPECT_TRUE(split.app_j.empty());
  EXPECT_EQ(split.packages_j, 2.5);
  EXPECT_EQ(split.unattributed_j, 2.5);
}

TEST(EnergyAttribution, WrappedCounterCountsTheWayAround) {
  EnergyAttribution attribution;
  // Range 10 J: from 9 J the counter wraps and reads 3 J: 1 J + 3 J = 4 J.
  std::vector<PackageCounter> start = {{0, 9'000'000, 10'000'000}};
  attribution.account(1, start, {}, {});
  std::vector<PackageCounter> end = {{0, 3'000'000, 10'000'000}};
  std::vector<AppPackageUse> apps = {{1, 0, 0.5}};
  EnergySplit split = attribution.account(2, end, apps, {});
  EXPECT_EQ(split.packages_j, 4.0);
  EXPECT_EQ(split.app_j.at(1), 4.0);
}

TEST(EnergyAttribution, CounterGoingBackWithoutARangeIsARestartNotEnergy) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 9'000'000, 0}};
  attribution.account(1, start, {}, {});
  std::vector<PackageCounter> reset = {{0, 1'000'000, 0}};
  std::vector<AppPackageUse> apps = {{1, 0, 1.0}};
  EnergySplit split = attribution.account(2, reset, apps, {});
  EXPECT_EQ(split.packages_j, 0.0);
  EXPECT_TRUE(split.app_j.empty());
  // ...and counts again from the new value.
  std::vector<PackageCounter> later = {{0, 3'000'000, 0}};
  split = attribution.account(3, later, apps, {});
  EXPECT_EQ(split.app_j.at(1), 2.0);
}

TEST(EnergyAttribution, DeltaHelperWrapsOnlyWithinTheRange) {
  EXPECT_EQ(EnergyAttribution::deltaUj(5, 7, 0), 2u);
  EXPECT_EQ(EnergyAttribution::deltaUj(90, 10, 100), 20u);
  EXPECT_EQ(EnergyAttribution::deltaUj(90, 10, 0), std::nullopt);
  EXPECT_EQ(EnergyAttribution::deltaUj(150, 10, 100), std::nullopt);
}

TEST(EnergyAttribution, AppLeavingMidIntervalGetsTheShareOfWhatItRan) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 0, 0}};
  attribution.account(1, start, {}, {});
  // App 2 ended a quarter into the interval: it ran 0.5 s, app 1 ran 1.5 s
  // (two threads, three quarters of the time between them). 12 J: 3 J and 9 J.
  std::vector<PackageCounter> end = {{0, 12'000'000, 0}};
  std::vector<AppPackageUse> apps = {{1, 0, 1.5}, {2, 0, 0.5}};
  EnergySplit split = attribution.account(2, end, apps, {});
  EXPECT_EQ(split.app_j.at(1), 9.0);
  EXPECT_EQ(split.app_j.at(2), 3.0);
  // Next interval it is gone: app 1 has the package to itself.
  std::vector<PackageCounter> later = {{0, 20'000'000, 0}};
  std::vector<AppPackageUse> only_one = {{1, 0, 2.0}};
  split = attribution.account(3, later, only_one, {});
  EXPECT_EQ(split.app_j.at(1), 8.0);
  EXPECT_FALSE(split.app_j.contains(2));
}

TEST(EnergyAttribution, AppsOnTwoPackagesAreChargedPerPackage) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 0, 0}, {1, 0, 0}};
  attribution.account(1, start, {}, {});
  // Package 0: 10 J, app 1 ran 1 s and app 2 ran 1 s there: 5 J each.
  // Package 1: 6 J, only app 2 (2 s) and others (1 s): 4 J to app 2, 2 J
  // unattributed. App 1: 5 J; app 2: 9 J.
  std::vector<PackageCounter> end = {{0, 10'000'000, 0}, {1, 6'000'000, 0}};
  std::vector<AppPackageUse> apps = {{1, 0, 1.0}, {2, 0, 1.0}, {2, 1, 2.0}};
  EnergySplit split = attribution.account(2, end, apps, {{1, 1.0}});
  EXPECT_EQ(split.packages_j, 16.0);
  EXPECT_EQ(split.app_j.at(1), 5.0);
  EXPECT_EQ(split.app_j.at(2), 9.0);
  EXPECT_EQ(split.unattributed_j, 2.0);
}

TEST(EnergyAttribution, SameSampleAgainCarriesTheCpuTimeToTheNextReading) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> start = {{0, 0, 0}};
  attribution.account(1, start, {}, {});
  // A step that saw no new sample: app 1's second is kept, not lost.
  std::vector<AppPackageUse> first = {{1, 0, 1.0}};
  EXPECT_TRUE(attribution.account(1, start, first, {}).app_j.empty());
  std::vector<PackageCounter> end = {{0, 4'000'000, 0}};
  std::vector<AppPackageUse> second = {{2, 0, 1.0}};
  EnergySplit split = attribution.account(2, end, second, {});
  EXPECT_EQ(split.app_j.at(1), 2.0);
  EXPECT_EQ(split.app_j.at(2), 2.0);
}

TEST(EnergyAttribution, AppsAndUnattributedAddUpToThePackages) {
  EnergyAttribution attribution;
  std::vector<PackageCounter> counters = {{0, 0, 0}, {1, 0, 0}};
  attribution.account(1, counters, {}, {});
  double apps_total = 0;
  for (uint64_t seq = 2; seq < 50; ++seq) {
    counters[0].raw_uj += 1'000'003 * seq;
    counters[1].raw_uj += 700'001;
    std::vector<AppPackageUse> apps = {{1, 0, 0.3 * static_cast<double>(seq % 4)}, {2, 1, 0.7}, {2, 0, 0.1}};
    EnergySplit split = attribution.account(seq, counters, apps, {{0, 0.05}});
    for (const auto& [id, joules] : split.app_j) apps_total += joules;
  }
  EXPECT_NEAR(apps_total + attribution.unattributedJ(), attribution.packagesJ(), 1e-9);
  EXPECT_GT(attribution.unattributedJ(), 0);
}

}  // namespace
}  // namespace nk
