#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace nk {

// One top-level RAPL zone (a package), as powercap shows it.
struct RaplZone {
  uint32_t index = 0;          // N in intel-rapl:N
  std::string name;            // "package-0"
  uint64_t energy_uj = 0;
  uint64_t max_energy_range_uj = 0;
  std::optional<uint64_t> power_limit_uw;  // constraint_0_power_limit_uw
  // constraint_0_max_power_uw: the highest limit the package takes (absent
  // on some hardware: then only the daemon's own ceiling applies).
  std::optional<uint64_t> max_power_uw;
  bool enabled = false;
};

// Package energy and power cap (RAPL).
class PowerMeter {
 public:
  virtual ~PowerMeter() = default;
  virtual Result<std::vector<RaplZone>> readZones() = 0;
  // Only energy_uj, for the sampler.
  virtual Result<uint64_t> readEnergyUj(uint32_t zone) = 0;
  virtual Status setPowerLimitUw(uint32_t zone, uint64_t microwatts) = 0;
  virtual Status setEnabled(uint32_t zone, bool enabled) = 0;
};

}  // namespace nk
