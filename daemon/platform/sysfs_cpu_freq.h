#pragma once

#include <filesystem>
#include <map>
#include <mutex>

#include "cpu_freq.h"
#include "held_sysfs_file.h"

namespace nk {

// cpufreq through <root>/sys/devices/system/cpu/cpufreq/policyN/.
// Writes only the file asked; validation against the policy's limits is the
// caller's (FrequencyControl), so this class stays a thin view of sysfs.
class SysfsCpuFreq final : public CpuFreq {
 public:
  explicit SysfsCpuFreq(std::filesystem::path root = "/");

  Result<std::vector<uint32_t>> policyIds() override;
  Result<CpuFreqPolicy> readPolicy(uint32_t policy) override;
  Result<uint64_t> readCurrentKhz(uint32_t policy) override;
  Status setMinKhz(uint32_t policy, uint64_t khz) override;
  Status setMaxKhz(uint32_t policy, uint64_t khz) override;
  Status setSpeedKhz(uint32_t policy, uint64_t khz) override;
  Status setGovernor(uint32_t policy, std::string_view governor) override;

 private:
  std::filesystem::path policyDir(uint32_t policy) const;
  std::filesystem::path cpufreq_dir_;
  std::filesystem::path intel_pstate_status_;
  std::mutex current_mutex_;
  std::map<uint32_t, HeldSysfsFile> current_;  // scaling_cur_freq per policy
};

}  // namespace nk
