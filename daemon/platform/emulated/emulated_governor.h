#pragma once

#include <cstdint>
#include <vector>

#include "node_profile.h"

namespace nk {

struct EmulatedPolicyControls;

// The kernel side of cpufreq for an emulated policy: which frequency the
// selected governor would run at, given the policy limits and the load.
class EmulatedGovernor {
 public:
  explicit EmulatedGovernor(const NodeProfile& profile);

  uint64_t targetKhz(const EmulatedPolicyControls& controls, double utilisation) const;

  // The table lookups of cpufreq_frequency_table_target(), restricted to
  // [min_khz, max_khz]: lowest entry at or above `khz` (CPUFREQ_RELATION_L)
  // and highest at or below it (CPUFREQ_RELATION_H).
  uint64_t atOrAbove(uint64_t khz, uint64_t min_khz, uint64_t max_khz) const;
  uint64_t atOrBelow(uint64_t khz, uint64_t min_khz, uint64_t max_khz) const;

 private:
  std::vector<uint64_t> table_khz_;
  bool intel_pstate_;
};

}  // namespace nk
