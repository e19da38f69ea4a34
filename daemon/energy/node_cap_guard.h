#pragma once

#include <cstdint>
#include <vector>

#include "energy/energy_decision.h"
#include "energy/energy_snapshot.h"

namespace nk {

// Keeps the admin's node power cap above policies that do not look at power.
class NodeCapGuard {
 public:
  static double nodePowerW(const EnergySnapshot& snapshot);

  // Lowers the decision's core targets while the node is over its cap and
  // lets them back up once it is clearly under; returns true if it acted.
  bool apply(const EnergySnapshot& snapshot, EnergyDecision& decision);

 private:
  struct Ceiling {
    uint32_t core = 0;
    double khz = 0.0;   // 0 = no ceiling
  };
  Ceiling& ceilingFor(uint32_t core);

  std::vector<Ceiling> ceilings_;
};

}  // namespace nk
