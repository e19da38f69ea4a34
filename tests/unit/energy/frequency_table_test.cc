#include "energy/frequency_table.h"

#include <cmath>

#include <gtest/gtest.h>

#include "snapshot_builder.h"

namespace nk {
namespace {

TEST(FrequencyTable, RelationsPickTheRightNeighbour) {
  std::vector<uint64_t> t = test::xeonTable();
  FrequencyTable table(t);
  CoreLimits l{1200000, 2600000, 1200000, 2600000};
  EXPECT_EQ(table.resolve(1662000, l, FrequencyRelation::kLowestAtOrAbove), 1700000u);
  EXPECT_EQ(table.resolve(1662000, l, FrequencyRelation::kHighestAtOrBelow), 1600000u);
  EXPECT_EQ(table.resolve(1662000, l, FrequencyRelation::kClosest), 1700000u);
  EXPECT_EQ(table.resolve(1620000, l, FrequencyRelation::kClosest), 1600000u);
  // A tie goes to the lower entry, as cpufreq_table_find_index_ac().
  EXPECT_EQ(table.resolve(1650000, l, FrequencyRelation::kClosest), 1600000u);
  EXPECT_EQ(table.resolve(1800000, l, FrequencyRelation::kLowestAtOrAbove), 1800000u);
}

TEST(FrequencyTable, ClampsToPolicyLimitsFirst) {
  std::vector<uint64_t> t = test::xeonTable();
  FrequencyTable table(t);
  CoreLimits l{1500000, 2000000, 1200000, 2600000};
  EXPECT_EQ(table.resolve(2500000, l, FrequencyRelation::kLowestAtOrAbove), 2000000u);
  EXPECT_EQ(table.resolve(100000, l, FrequencyRelation::kHighestAtOrBelow), 1500000u);
  EXPECT_EQ(table.resolve(NAN, l, FrequencyRelation::kClosest), 2000000u);
}

TEST(FrequencyTable, ContinuousWhenNoTable) {
  std::vector<uint64_t> none;
  FrequencyTable table(none);
  CoreLimits l{1200000, 2600000, 1200000, 2600000};
  EXPECT_EQ(table.resolve(1234567.4, l, FrequencyRelation::kClosest), 1234567u);
  EXPECT_EQ(table.resolve(9e9, l, FrequencyRelation::kClosest), 2600000u);
  EXPECT_DOUBLE_EQ(table.smallestStepKhz(), 100000.0);
}

TEST(FrequencyTable, RepairsMissingLimits) {
  std::vector<uint64_t> t = test::xeonTable();
  FrequencyTable table(t);
  CoreReading c;
  c.min_khz = 0;
  c.max_khz = 0;
  CoreLimits l = table.limitsOf(c);
  EXPECT_EQ(l.min_khz, 1200000u);
  EXPECT_EQ(l.max_khz, 2600000u);
  c.min_khz = 3000000;  // min above max
  c.max_khz = 2000000;
  l = table.limitsOf(c);
  EXPECT_LE(l.min_khz, l.max_khz);
}

}  // namespace
}  // namespace nk
