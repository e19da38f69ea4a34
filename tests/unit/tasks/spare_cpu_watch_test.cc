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
  watch.observe({.cpus = 2, .busy_cpus = 2.0, .own_cpus = 0});
  EXPECT_FALSE(watch.spare());
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 0.0);
}

TEST(SpareCpuWatchTest, HalfAnIdleCpuIsEnough) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 2, .busy_cpus = 1.5, .own_cpus = 0});
  EXPECT_TRUE(watch.spare());
  watch.observe({.cpus = 2, .busy_cpus = 1.6, .own_cpus = 0});
  EXPECT_FALSE(watch.spare());
}

// The builder's own time was idle time before it took it: counting it as
// busy would stop the builder as soon as it used what it was given.
TEST(SpareCpuWatchTest, TheWatchersOwnTimeCountsAsSpare) {
  SpareCpuWatch watch(0.5);
  watch.observe({.cpus = 2, .busy_cpus = 2.0, .own_cpus = 1.0});
  EXPECT_TRUE(watch.spare());
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 1.0);
  // A program spinning on both cores that yields some time to the builder
  // (sched_yield) leaves less than the bound.
  watch.observe({.cpus = 2, .busy_cpus = 2.0, .own_cpus = 0.3});
  EXPECT_FALSE(watch.spare());
}

TEST(SpareCpuWatchTest, MoreOwnTimeThanBusyTimeIsNotMoreThanEveryCpu) {
  SpareCpuWatch watch;
  watch.observe({.cpus = 4, .busy_cpus = 0.5, .own_cpus = 0.9});
  EXPECT_DOUBLE_EQ(watch.spareCpus(), 4.0);
}

}  // namespace
}  // namespace nk
