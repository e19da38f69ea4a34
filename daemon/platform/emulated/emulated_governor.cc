#include "emulated_governor.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "emulated_sysfs_tree.h"

namespace nk {

namespace {

// ondemand's default up_threshold (80 %): above it the policy jumps to max,
// below it the frequency is proportional to the load.
constexpr double kUpThreshold = 0.8;

}  // namespace

EmulatedGovernor::EmulatedGovernor(const NodeProfile& profile)
    : table_khz_(profile.frequencies_khz), intel_pstate_(profile.driver == "intel_pstate") {}

uint64_t EmulatedGovernor::atOrAbove(uint64_t khz, uint64_t min_khz, uint64_t max_khz) const {
  std::optional<uint64_t> highest_in_range;
  for (uint64_t entry : table_khz_) {
    if (entry < min_khz || entry > max_khz) continue;
    if (entry >= khz) return entry;
    highest_in_range = entry;
  }
  // The tree keeps at least one entry inside the limits; this is only for
  // limits that never went through it.
  return highest_in_range.value_or(std::clamp(khz, min_khz, std::max(min_khz, max_khz)));
}

uint64_t EmulatedGovernor::atOrBelow(uint64_t khz, uint64_t min_khz, uint64_t max_khz) const {
  std::optional<uint64_t> best;
  for (uint64_t entry : table_khz_) {
    if (entry < min_khz || entry > max_khz) continue;
    if (entry <= khz || !best) best = entry;
    if (entry >= khz) break;
  }
  return best.value_or(std::clamp(khz, min_khz, std::max(min_khz, max_khz)));
}

uint64_t EmulatedGovernor::targetKhz(const EmulatedPolicyControls& controls, double utilisation) const {
  const uint64_t min_khz = controls.min_khz;
  const uint64_t max_khz = std::max(controls.min_khz, controls.max_khz);
  const std::string& governor = controls.governor;
  if (governor == "performance") return atOrBelow(max_khz, min_khz, max_khz);
  // intel_pstate's active "powersave" is its own load-driven algorithm, not
  // the generic governor that pins the minimum.
  if (governor == "powersave" && !intel_pstate_) return atOrAbove(min_khz, min_khz, max_khz);
  if (governor == "userspace") return atOrAbove(controls.setspeed_khz.value_or(min_khz), min_khz, max_khz);

  // ondemand, conservative, schedutil, intel_pstate powersave: all follow the
  // load; the ondemand rule stands in for all of them.
  if (!(utilisation >= 0)) utilisation = 0;
  if (utilisation > kUpThreshold) return atOrBelow(max_khz, min_khz, max_khz);
  double span = static_cast<double>(max_khz - min_khz);
  // The slack keeps rounding noise (0.4 * 1.4 GHz / 0.8 landing a hair above
  // 0.7 GHz) from pushing the result up a whole table step.
  double above_min = std::max(0.0, utilisation * span / kUpThreshold - 1e-3);
  uint64_t target = min_khz + static_cast<uint64_t>(std::ceil(above_min));
  return atOrAbove(target, min_khz, max_khz);
}

}  // namespace nk
