#include "energy/fixed_frequency_policy.h"

#include "energy/frequency_table.h"
#include "energy/full_width_apps.h"

namespace nk {

EnergyDecision FixedFrequencyPolicy::decide(const EnergySnapshot& snapshot) {
  EnergyDecision decision;
  FrequencyTable table(snapshot.freq_table_khz);
  decision.cores.reserve(snapshot.cores.size());
  for (const CoreReading& core : snapshot.cores) {
    CoreLimits limits = table.limitsOf(core);
    uint64_t khz = at_max_ ? table.resolve(static_cast<double>(limits.max_khz), limits,
                                           FrequencyRelation::kHighestAtOrBelow)
                           : table.resolve(static_cast<double>(limits.min_khz), limits,
                                           FrequencyRelation::kLowestAtOrAbove);
    decision.cores.push_back({core.id, khz, at_max_ ? Governor::kPerformance : Governor::kPowersave});
  }
  FullWidthApps::fill(snapshot, decision);
  decision.reason = at_max_ ? "performance: all cores at max" : "powersave: all cores at min";
  if (cap_guard_.apply(snapshot, decision))
    decision.reason += "; node over its power cap, frequencies limited";
  return decision;
}

}  // namespace nk
