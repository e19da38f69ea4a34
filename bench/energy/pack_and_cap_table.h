#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "energy/policy_config.h"
#include "node_simulator.h"
#include "platform/emulated/node_profile.h"
#include "workload_model.h"

namespace nk::sim {

// Pack & Cap's offline knowledge (Cochran et al., MICRO 2011): for every
// thread-packing and DVFS setting, how fast the program runs and how much
// power it draws. Cochran et al. train a classifier over performance
// counters on other programs; this table is measured on the program itself
// (each benchmark's first seconds at every setting), which flatters Pack &
// Cap: it is the best such a table can know.
class PackAndCapTable {
 public:
  struct Entry {
    uint32_t threads = 0;
    uint64_t khz = 0;
    double power_w = 0.0;     // in the budget's scope, warm
    double work_rate = 0.0;   // work seconds per second
  };

  // Runs `workload` for train_s seconds at each setting (every
  // `khz_stride`-th table frequency, always including both ends).
  static PackAndCapTable train(const NodeProfile& profile, const PolicyConfig& config, BudgetScope scope,
                               const WorkloadModel& workload, double train_s = 40.0, uint32_t khz_stride = 2);

  // The fastest setting whose power is within the budget; the least
  // power-hungry one when none is.
  std::optional<Entry> best(double budget_w) const;
  const std::vector<Entry>& entries() const { return entries_; }
  void add(Entry e) { entries_.push_back(e); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace nk::sim
