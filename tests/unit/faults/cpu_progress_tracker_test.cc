#include "faults/cpu_progress_tracker.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;

TEST(CpuProgressTrackerTest, TheFirstLookIsABaselineNotGrowth) {
  CpuProgressTracker tracker;
  EXPECT_FALSE(tracker.look("j", 0, 10, 5s, kT0));
  EXPECT_FALSE(tracker.look("j", 0, 10, 5s, kT0 + 100 * kMs)) << "the same CPU time: not seen to grow";
}

TEST(CpuProgressTrackerTest, SaysHowLongAgoALookFoundTheCpuTimeGrown) {
  CpuProgressTracker tracker;
  tracker.look("j", 0, 10, 5s, kT0);
  EXPECT_EQ(tracker.look("j", 0, 10, 5010ms, kT0 + 100 * kMs), 0ms);
  EXPECT_EQ(tracker.look("j", 0, 10, 5010ms, kT0 + 400 * kMs), 300ms);
  EXPECT_EQ(tracker.look("j", 0, 10, 5010ms, kT0 + 2100 * kMs), 2000ms);
  EXPECT_EQ(tracker.look("j", 0, 10, 5020ms, kT0 + 2200 * kMs), 0ms);
}

TEST(CpuProgressTrackerTest, RanksJobsAndPidsAreKeptApart) {
  CpuProgressTracker tracker;
  tracker.look("j", 0, 10, 5s, kT0);
  tracker.look("j", 1, 11, 5s, kT0);
  tracker.look("k", 0, 12, 5s, kT0);
  EXPECT_EQ(tracker.look("j", 0, 10, 6s, kT0 + 100 * kMs), 0ms);
  EXPECT_FALSE(tracker.look("j", 1, 11, 5s, kT0 + 100 * kMs));
  EXPECT_FALSE(tracker.look("k", 0, 12, 5s, kT0 + 100 * kMs));
  // The rank registered again from another process: a new baseline.
  EXPECT_FALSE(tracker.look("j", 0, 99, 7s, kT0 + 200 * kMs));
  EXPECT_EQ(tracker.size(), 3u);
  tracker.forget("j");
  EXPECT_EQ(tracker.size(), 1u);
}

TEST(CpuProgressTrackerTest, UnknownCpuTimeSaysNothing) {
  CpuProgressTracker tracker;
  EXPECT_FALSE(tracker.look("j", 0, 10, std::nullopt, kT0));
  EXPECT_EQ(tracker.size(), 0u);
}

}  // namespace
}  // namespace nk
