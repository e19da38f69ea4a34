#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "base/result.h"
#include "energy/energy_policy.h"
#include "energy/policy_config.h"

namespace nk {

// Policies by name, for `nodekeeper policy set` and the simulator.
class PolicyRegistry {
 public:
  static std::span<const std::string_view> names();
  static Result<std::unique_ptr<EnergyPolicy>> make(std::string_view name, const PolicyConfig& config);
};

Result<std::unique_ptr<EnergyPolicy>> makePolicy(std::string_view name, const PolicyConfig& config = {});

}  // namespace nk
