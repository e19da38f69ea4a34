#include "energy/node_cap_guard.h"

#include <algorithm>
#include <cmath>

#include "energy/frequency_table.h"

namespace nk {

namespace {
// Lift the ceiling only below 95% of the cap, so that it does not chatter
// around the cap, and by 5% a step, so that it creeps rather than jumps.
constexpr double kReleaseFraction = 0.95;
constexpr double kReleaseStep = 1.05;
}  // namespace

// Package power includes what no app accounts for (uncore, idle cores);
// without it the apps' sum is the best we have.
double NodeCapGuard::nodePowerW(const EnergySnapshot& snapshot) {
  double total = 0.0;
  bool any = false;
  for (double p : snapshot.package_power_w) {
    if (std::isfinite(p) && p > 0.0) {
      total += p;
      any = true;
    }
  }
  if (any)
    return total;
  for (const AppSample& app : snapshot.apps)
    if (std::isfinite(app.power_w) && app.power_w > 0.0)
      total += app.power_w;
  return total;
}

NodeCapGuard::Ceiling& NodeCapGuard::ceilingFor(uint32_t core) {
  for (Ceiling& c : ceilings_)
    if (c.core == core)
      return c;
  ceilings_.push_back({core, 0.0});
  return ceilings_.back();
}

// Power scales at least linearly with frequency, so scaling the current
// frequency by cap / P is a conservative first cut.
bool NodeCapGuard::apply(const EnergySnapshot& snapshot, EnergyDecision& decision) {
  double cap = snapshot.power_cap_w;
  if (!(cap > 0.0) || !std::isfinite(cap))
    return false;
  double power = nodePowerW(snapshot);
  FrequencyTable table(snapshot.freq_table_khz);
  bool acted = false;
  for (CoreDecision& cd : decision.cores) {
    const CoreReading* sample = nullptr;
    for (const CoreReading& cs : snapshot.cores)
      if (cs.id == cd.core)
        sample = &cs;
    if (!sample)
      continue;
    CoreLimits limits = table.limitsOf(*sample);
    Ceiling& ceiling = ceilingFor(cd.core);
    if (power > cap) {
      double cur = sample->cur_khz ? static_cast<double>(sample->cur_khz) : static_cast<double>(limits.max_khz);
      double wanted = cur * cap / power;
      ceiling.khz = ceiling.khz > 0.0 ? std::min(ceiling.khz, wanted) : wanted;
    } else if (ceiling.khz > 0.0 && power < kReleaseFraction * cap) {
      ceiling.khz *= kReleaseStep;
      if (ceiling.khz >= static_cast<double>(limits.max_khz))
        ceiling.khz = 0.0;
    }
    if (ceiling.khz > 0.0) {
      uint64_t limit = table.resolve(ceiling.khz, limits, FrequencyRelation::kHighestAtOrBelow);
      if (cd.target_khz == 0 || cd.target_khz > limit) {
        cd.target_khz = limit;
        if (cd.governor == Governor::kUnchanged || cd.governor == Governor::kPerformance)
          cd.governor = Governor::kUserspace;
        acted = true;
      }
    }
  }
  return acted;
}

}  // namespace nk
