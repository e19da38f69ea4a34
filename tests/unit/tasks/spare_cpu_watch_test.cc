#include "tasks/spare_cpu_watch.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(SpareCpuWatchTest, SpareUntilTheFirstSample) {
  SpareCpuWatch watch;
  EXPECT_TRUE(watch.spare());
}

TEST(SpareCpuWatchTest, EveryCpuBusyLeavesNothingToSpare) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 2, .busy_cpus = 2.0});
  EXPECT_FALSE(watch.spare());
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 0.0);
}

TEST(SpareCpuWatchTest, HalfAnIdleCpuIsEnough) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 2, .busy_cpus = 1.5});
  EXPECT_TRUE(watch.spare());
  watch.observe({.cpus = 2, .busy_cpus = 1.6});
  EXPECT_FALSE(watch.spare());
}

// A program spinning on both cores yields time to the idle-class builder:
// the host shows every CPU busy, builder or not, and that time was the
// program's.
TEST(SpareCpuWatchTest, TimeTakenFromYieldingWorkersIsNotSpare) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 2, .busy_cpus = 2.0});
  EXPECT_FALSE(watch.spare());
  // Idle time is spare whoever used the rest.
  watch.observe({.cpus = 2, .busy_cpus = 1.2});
  EXPECT_TRUE(watch.spare());
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 0.8);
}

TEST(SpareCpuWatchTest, AForgottenIntervalIsNotSpareUntilTheNextSample) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 4, .busy_cpus = 0.0});
  ASSERT_TRUE(watch.spare());
  watch.forget();
  EXPECT_FALSE(watch.spare());
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 0.0);
  watch.observe({.cpus = 4, .busy_cpus = 1.0});
  EXPECT_TRUE(watch.spare());
}

TEST(SpareCpuWatchTest, MoreBusyTimeThanCpusLeavesNothingSpare) {
  SpareCpuWatch watch;
  watch.observe({.cpus = 2, .busy_cpus = 2.3});  // rounding in /proc/stat's ticks
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 0.0);
}

}  // namespace
}  // namespace nk
