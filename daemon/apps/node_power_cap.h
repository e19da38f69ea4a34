#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "platform/power_meter.h"

namespace nk {

// The node's power cap as app budgets are checked against it.
class NodePowerCap {
 public:
  // Sum of the package caps (constraint_0_power_limit_uw) in mW, over the
  // zones whose limit is enabled; nullopt when no zone has an enabled limit.
  static std::optional<uint64_t> sumMw(const std::vector<RaplZone>& zones);
};

}  // namespace nk
