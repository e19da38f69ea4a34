#pragma once

#include <cstdint>
#include <vector>

#include "energy/energy_snapshot.h"
#include "energy/policy_config.h"

namespace nk {

// A core's usable range after bad input is repaired (kHz).
struct CoreLimits {
  uint64_t min_khz = 0;
  uint64_t max_khz = 0;
  uint64_t cpuinfo_min_khz = 0;
  uint64_t cpuinfo_max_khz = 0;
};

// Maps a wanted frequency onto what the driver accepts, as cpufreq does.
class FrequencyTable {
 public:
  explicit FrequencyTable(const std::vector<uint64_t>& table_khz) : table_(table_khz) {}

  uint64_t resolve(double target_khz, const CoreLimits& limits, FrequencyRelation relation) const;
  CoreLimits limitsOf(const CoreReading& core) const;
  // Delta-f of eq. 7/8 when not configured: the driver's step.
  double smallestStepKhz() const;

 private:
  const std::vector<uint64_t>& table_;
};

}  // namespace nk
