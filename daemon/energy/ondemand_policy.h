#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "energy/energy_policy.h"
#include "energy/node_cap_guard.h"
#include "energy/policy_config.h"

namespace nk {

// Linux's ondemand governor (od_update()), sampling at every stepDvfs().
class OndemandPolicy final : public EnergyPolicy {
 public:
  explicit OndemandPolicy(const PolicyConfig& config = {});

  std::string_view name() const override { return "ondemand"; }
  EnergyDecision stepDct(const EnergySnapshot& snapshot) override;
  EnergyDecision stepDvfs(const EnergySnapshot& snapshot) override;

 private:
  struct CoreState {
    uint32_t core = 0;
    uint64_t target_khz = 0;
    uint32_t rate_mult = 1;  // the kernel's rate_mult: sample every rate_mult-th time
    uint32_t skip = 0;       // samples left before the next evaluation
  };
  CoreState& stateFor(uint32_t core);
  EnergyDecision decide(const EnergySnapshot& snapshot, bool sample);

  OndemandTunables tunables_;
  std::vector<CoreState> cores_;
  NodeCapGuard cap_guard_;
};

}  // namespace nk
