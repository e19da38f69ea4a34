#pragma once

#include <filesystem>
#include <map>
#include <mutex>

#include "held_sysfs_file.h"
#include "power_meter.h"

namespace nk {

// RAPL through <root>/sys/class/powercap/intel-rapl:N/.
class SysfsRapl final : public PowerMeter {
 public:
  explicit SysfsRapl(std::filesystem::path root = "/");

  Result<std::vector<RaplZone>> readZones() override;
  Result<uint64_t> readEnergyUj(uint32_t zone) override;
  Status setPowerLimitUw(uint32_t zone, uint64_t microwatts) override;
  Status setEnabled(uint32_t zone, bool enabled) override;

 private:
  std::filesystem::path zoneDir(uint32_t zone) const;
  std::filesystem::path powercap_dir_;
  std::mutex energy_mutex_;
  std::map<uint32_t, HeldSysfsFile> energy_;  // energy_uj per zone
};

}  // namespace nk
