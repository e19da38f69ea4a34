#pragma once

#include <string_view>

#include "energy/energy_policy.h"
#include "energy/node_cap_guard.h"

namespace nk {

// Shared body of performance and powersave: every core at one end of its
// range and every app at its full width C.
class FixedFrequencyPolicy : public EnergyPolicy {
 public:
  EnergyDecision stepDct(const EnergySnapshot& snapshot) override { return decide(snapshot); }
  EnergyDecision stepDvfs(const EnergySnapshot& snapshot) override { return decide(snapshot); }

 protected:
  explicit FixedFrequencyPolicy(bool at_max) : at_max_(at_max) {}

 private:
  EnergyDecision decide(const EnergySnapshot& snapshot);

  bool at_max_;
  NodeCapGuard cap_guard_;
};

}  // namespace nk
