#pragma once

#include <cstdint>
#include <string_view>

#include "energy/energy_policy.h"
#include "pack_and_cap_table.h"

namespace nk::sim {

// A Pack & Cap-style policy: from its offline table, the setting (threads
// packed onto that many cores, one clock for all of them) that runs fastest
// within the app's budget, applied open loop as Cochran et al. do: no
// feedback from measured power.
class PackAndCapPolicy final : public EnergyPolicy {
 public:
  explicit PackAndCapPolicy(PackAndCapTable table) : table_(std::move(table)) {}

  std::string_view name() const override { return "pack-and-cap"; }
  EnergyDecision stepDct(const EnergySnapshot& snapshot) override;
  EnergyDecision stepDvfs(const EnergySnapshot& snapshot) override;

 private:
  EnergyDecision decide(const EnergySnapshot& snapshot) const;
  PackAndCapTable table_;
};

}  // namespace nk::sim
