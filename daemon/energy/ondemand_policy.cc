#include "energy/ondemand_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "energy/frequency_table.h"
#include "energy/full_width_apps.h"

namespace nk {

OndemandPolicy::OndemandPolicy(const PolicyConfig& config) : tunables_(config.ondemand) {
  // The kernel refuses up_threshold outside (MIN_FREQUENCY_UP_THRESHOLD = 1, 100].
  tunables_.up_threshold = std::clamp<uint32_t>(tunables_.up_threshold, 2, 100);
  tunables_.sampling_down_factor = std::clamp<uint32_t>(tunables_.sampling_down_factor, 1, 100000);
}

OndemandPolicy::CoreState& OndemandPolicy::stateFor(uint32_t core) {
  for (CoreState& s : cores_)
    if (s.core == core)
      return s;
  cores_.push_back({core, 0, 1, 0});
  return cores_.back();
}

// The daemon calls stepDct right after the stepDvfs of the same tick;
// sampling twice would halve the sampling rate's meaning.
EnergyDecision OndemandPolicy::stepDct(const EnergySnapshot& snapshot) { return decide(snapshot, false); }
EnergyDecision OndemandPolicy::stepDvfs(const EnergySnapshot& snapshot) { return decide(snapshot, true); }

EnergyDecision OndemandPolicy::decide(const EnergySnapshot& snapshot, bool sample) {
  EnergyDecision decision;
  FrequencyTable table(snapshot.freq_table_khz);
  decision.cores.reserve(snapshot.cores.size());
  uint32_t at_max = 0;
  for (const CoreReading& core : snapshot.cores) {
    CoreLimits limits = table.limitsOf(core);
    CoreState& state = stateFor(core.id);
    bool evaluate = sample || state.target_khz == 0;
    if (evaluate && state.skip > 0 && state.target_khz != 0) {
      --state.skip;
      evaluate = false;
    }
    if (evaluate) {
      // dbs_update(): load = 100 * busy / elapsed, an unsigned integer.
      double util = std::isfinite(core.util) ? std::clamp(core.util, 0.0, 1.0) : 0.0;
      uint64_t load = static_cast<uint64_t>(std::floor(util * 100.0 + 1e-9));
      if (load > tunables_.up_threshold) {
        // dbs_freq_increase(policy, policy->max), with rate_mult =
        // sampling_down_factor when coming from below max.
        uint64_t max = table.resolve(static_cast<double>(limits.max_khz), limits,
                                     FrequencyRelation::kHighestAtOrBelow);
        uint64_t cur = state.target_khz ? state.target_khz : core.cur_khz;
        if (cur < max)
          state.rate_mult = tunables_.sampling_down_factor;
        state.target_khz = max;
      } else {
        // freq_next = min_f + load * (max_f - min_f) / 100 over the hardware
        // range (cpuinfo), then clamped to the policy and looked up.
        uint64_t min_f = limits.cpuinfo_min_khz;
        uint64_t max_f = std::max(limits.cpuinfo_max_khz, min_f);
        uint64_t freq_next = min_f + load * (max_f - min_f) / 100;
        state.rate_mult = 1;
        state.target_khz = table.resolve(static_cast<double>(freq_next), limits, tunables_.relation);
      }
      state.skip = state.rate_mult - 1;
    }
    if (state.target_khz >= limits.max_khz)
      ++at_max;
    decision.cores.push_back({core.id, state.target_khz, Governor::kUserspace});
  }
  FullWidthApps::fill(snapshot, decision);
  char buf[96];
  std::snprintf(buf, sizeof buf, "ondemand: %u of %zu cores at max (up_threshold %u)", at_max,
                snapshot.cores.size(), tunables_.up_threshold);
  decision.reason = buf;
  if (cap_guard_.apply(snapshot, decision))
    decision.reason += "; node over its power cap, frequencies limited";
  return decision;
}

}  // namespace nk
