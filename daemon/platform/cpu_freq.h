#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nk {

// Everything cpufreq tells about one policy (all frequencies in kHz).
struct CpuFreqPolicy {
  uint32_t id = 0;                      // policyN
  std::vector<uint32_t> affected_cpus;
  std::string driver;                   // scaling_driver
  std::string governor;
  std::vector<std::string> available_governors;
  uint64_t cur_khz = 0;
  uint64_t min_khz = 0;
  uint64_t max_khz = 0;
  uint64_t cpuinfo_min_khz = 0;
  uint64_t cpuinfo_max_khz = 0;
  // scaling_setspeed holds a number only under the userspace governor.
  std::optional<uint64_t> setspeed_khz;
  // Empty when the driver has no table (intel_pstate).
  std::vector<uint64_t> available_khz;
  // intel_pstate in active mode: no userspace governor, steer max instead.
  bool intel_pstate_active = false;
};

// cpufreq control for all policies of a node.
class CpuFreq {
 public:
  virtual ~CpuFreq() = default;
  virtual Result<std::vector<uint32_t>> policyIds() = 0;
  virtual Result<CpuFreqPolicy> readPolicy(uint32_t policy) = 0;
  // Cheap read of scaling_cur_freq only, for the telemetry sampler.
  virtual Result<uint64_t> readCurrentKhz(uint32_t policy) = 0;
  virtual Status setMinKhz(uint32_t policy, uint64_t khz) = 0;
  virtual Status setMaxKhz(uint32_t policy, uint64_t khz) = 0;
  virtual Status setSpeedKhz(uint32_t policy, uint64_t khz) = 0;
  virtual Status setGovernor(uint32_t policy, std::string_view governor) = 0;
};

}  // namespace nk
