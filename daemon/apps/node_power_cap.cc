#include "node_power_cap.h"

namespace nk {

std::optional<uint64_t> NodePowerCap::sumMw(const std::vector<RaplZone>& zones) {
  uint64_t total_uw = 0;
  bool any = false;
  for (const auto& zone : zones) {
    if (!zone.enabled || !zone.power_limit_uw) continue;
    total_uw += *zone.power_limit_uw;
    any = true;
  }
  if (!any) return std::nullopt;
  return total_uw / 1000;
}

}  // namespace nk
