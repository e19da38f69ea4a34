#include "apps/over_budget_watch.h"

#include <gtest/gtest.h>

#include <string>

namespace nk {
namespace {

OverBudgetWatch::Step over(double power_w, double budget_w) {
  OverBudgetWatch::Step step;
  step.power_w = power_w;
  step.budget_w = budget_w;
  step.effective_budget_w = budget_w;
  step.threads = 6;
  step.floor_threads = 2;
  return step;
}

TEST(OverBudgetWatchTest, SaysNothingUntilOverForSeveralIntervals) {
  OverBudgetWatch watch(3);
  EXPECT_EQ(watch.observe(over(30, 20)), "");
  EXPECT_EQ(watch.observe(over(30, 20)), "");
  std::string why = watch.observe(over(30, 20));
  EXPECT_EQ(why, "over budget for 3 intervals: no cause found (the policy is still bringing it down)");
  // Back under: quiet at once, and the count starts again.
  EXPECT_EQ(watch.observe(over(19, 20)), "");
  EXPECT_EQ(watch.intervalsOver(), 0u);
  EXPECT_EQ(watch.observe(over(30, 20)), "");
}

TEST(OverBudgetWatchTest, AHairOverOrNoBudgetIsNotOver) {
  OverBudgetWatch watch(1);
  EXPECT_EQ(watch.observe(over(20.9, 20)), "");  // within the tolerance
  EXPECT_EQ(watch.observe(over(50, 0)), "");     // no budget
  EXPECT_NE(watch.observe(over(21.5, 20)), "");
}

TEST(OverBudgetWatchTest, NamesTheFloor) {
  OverBudgetWatch watch(1);
  OverBudgetWatch::Step step = over(26, 5);
  step.threads = 2;
  step.at_lowest_clock = true;
  EXPECT_EQ(watch.observe(step), "over budget for 1 intervals: floor reached (D 2 at the lowest clock)");
  // D at its floor but the clocks not yet down: not the floor (yet).
  step.at_lowest_clock = false;
  EXPECT_EQ(watch.observe(step).find("floor reached"), std::string::npos);
}

TEST(OverBudgetWatchTest, NamesTheNodeCapAndForeignLoadTogether) {
  OverBudgetWatch watch(1);
  OverBudgetWatch::Step step = over(30, 40);
  step.effective_budget_w = 18;
  step.foreign_load_cores = 1.5;
  EXPECT_EQ(watch.observe(step),
            "over budget for 1 intervals: node cap (held to 18.0 W of its 40.0 W); "
            "foreign load on its cores (1.5 cores' worth)");
  step.foreign_load_cores = 0.1;  // noise
  EXPECT_EQ(watch.observe(step), "over budget for 2 intervals: node cap (held to 18.0 W of its 40.0 W)");
}

}  // namespace
}  // namespace nk
