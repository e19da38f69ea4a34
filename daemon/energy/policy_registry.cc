#include "energy/policy_registry.h"

#include <array>
#include <cmath>
#include <string>

#include "energy/ondemand_policy.h"
#include "energy/performance_policy.h"
#include "energy/powersave_policy.h"
#include "energy/efficiency_policy.h"
#include "energy/thermal_aware_policy.h"

namespace nk {

namespace {

constexpr std::array<std::string_view, 5> kNames = {"performance", "powersave", "ondemand", "thermal-aware",
                                                    "efficiency"};

std::string availableList() {
  std::string list;
  for (std::string_view n : kNames) {
    if (!list.empty())
      list += ", ";
    list += n;
  }
  return list;
}

}  // namespace

std::span<const std::string_view> PolicyRegistry::names() { return kNames; }

// Bad intervals are refused here rather than silently repaired, since this
// is where an admin's typo arrives.
Result<std::unique_ptr<EnergyPolicy>> PolicyRegistry::make(std::string_view name, const PolicyConfig& config) {
  if (!(config.dct_interval_s > 0.0) || !std::isfinite(config.dct_interval_s))
    return invalidArgument("dT_DCT must be a positive number of seconds");
  if (config.dvfs_per_dct == 0)
    return invalidArgument("N (DVFS steps per DCT step) must be at least 1");
  std::unique_ptr<EnergyPolicy> policy;
  if (name == "performance")
    policy = std::make_unique<PerformancePolicy>();
  else if (name == "powersave")
    policy = std::make_unique<PowersavePolicy>();
  else if (name == "ondemand")
    policy = std::make_unique<OndemandPolicy>(config);
  else if (name == "thermal-aware")
    policy = std::make_unique<ThermalAwarePolicy>(config);
  else if (name == "efficiency")
    policy = std::make_unique<EfficiencyPolicy>(config);
  else
    return invalidArgument("unknown energy policy '" + std::string(name) + "'; available: " + availableList());
  return policy;
}

Result<std::unique_ptr<EnergyPolicy>> makePolicy(std::string_view name, const PolicyConfig& config) {
  return PolicyRegistry::make(name, config);
}

}  // namespace nk
