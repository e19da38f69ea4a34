#pragma once

#include <string_view>

#include "energy/energy_decision.h"
#include "energy/energy_snapshot.h"

namespace nk {

// A control policy: a pure function of its snapshots (plus the state it
// keeps between steps), so that the daemon and a simulator drive it alike.
// Calling convention: stepDvfs every dT_DVFS; on every N-th tick stepDct
// follows with the same snapshot (same time_s). Each decision is the full
// desired state, so applying it is idempotent.
class EnergyPolicy {
 public:
  virtual ~EnergyPolicy() = default;
  virtual std::string_view name() const = 0;
  // Every dT_DCT: thread count, affinity, budgets (and frequencies).
  virtual EnergyDecision stepDct(const EnergySnapshot& snapshot) = 0;
  // Every dT_DVFS = dT_DCT / N: frequencies.
  virtual EnergyDecision stepDvfs(const EnergySnapshot& snapshot) = 0;
};

}  // namespace nk
