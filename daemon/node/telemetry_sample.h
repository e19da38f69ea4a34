#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nk {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

struct CoreSample {
  uint32_t id = 0;
  uint32_t package = 0;
  uint64_t cur_khz = 0;
  uint64_t min_khz = 0;
  uint64_t max_khz = 0;
  std::string governor;
  double temperature_c = kUnknown;
  double utilisation = kUnknown;
};

struct PackageSample {
  uint32_t id = 0;
  double power_w = kUnknown;
  double energy_j = 0;
  uint64_t raw_energy_uj = 0;
  uint64_t max_energy_range_uj = 0;
  double power_limit_w = 0;
  bool power_limit_enabled = false;
  double temperature_c = kUnknown;
};

// One reading of the whole node.
struct TelemetrySample {
  uint64_t seq = 0;
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
  std::vector<CoreSample> cores;
  std::vector<PackageSample> packages;
  double node_power_w = kUnknown;
  double node_energy_j = 0;
  std::vector<std::string> warnings;
};

}  // namespace nk
