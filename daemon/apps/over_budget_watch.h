#pragma once

#include <cstdint>
#include <string>

namespace nk {

// Why an app stays over its budget. One per app, fed every control step;
// once the app has been over for `intervals` steps in a row it says why,
// and it is quiet again at the first step at or under the budget. A few
// steps over are normal (the policy is still bringing the app down); many
// need a reason the user can act on.
class OverBudgetWatch {
 public:
  struct Step {
    double power_w = 0;             // measured: the app's share of the node
    double budget_w = 0;            // the app's own budget; 0: none
    double effective_budget_w = 0;  // after the node cap and sharing; 0: none
    uint32_t threads = 0;           // D
    uint32_t floor_threads = 0;     // D's floor (BudgetFloor::floorThreads)
    bool at_lowest_clock = false;   // every core of the app at its lowest frequency
    // Busy time on the app's cores that is not the app's, in cores' worth
    // (other processes on the host; 0 on an emulated node that ignores them).
    double foreign_load_cores = 0;
  };

  static constexpr uint32_t kIntervals = 5;
  // Over means over by more than this share: the policy steers around the
  // budget, and a hair above it is on target.
  static constexpr double kTolerance = 0.05;
  // Foreign load under this many cores' worth is noise, not a cause.
  static constexpr double kForeignLoadCores = 0.25;

  explicit OverBudgetWatch(uint32_t intervals = kIntervals) : intervals_(intervals) {}

  // "" while the app is under (or not yet long over) its budget; else the
  // causes, e.g. "over budget for 5 intervals: floor reached (D 2 at the
  // lowest clock); node cap (held to 18.0 W)".
  std::string observe(const Step& step);
  uint32_t intervalsOver() const { return over_; }

 private:
  uint32_t intervals_;
  uint32_t over_ = 0;
};

}  // namespace nk
