#pragma once

#include "energy/energy_decision.h"
#include "energy/energy_snapshot.h"

namespace nk {

// App decisions of the policies without DCT: D = C, affinity left alone.
class FullWidthApps {
 public:
  static void fill(const EnergySnapshot& snapshot, EnergyDecision& decision);
};

}  // namespace nk
