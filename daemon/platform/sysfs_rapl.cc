#include "sysfs_rapl.h"

#include "sysfs_file.h"

namespace nk {

namespace {

// Since the PLATYPUS side channel (CVE-2020-8694) the kernel makes energy_uj
// 0400 root; say so, since "Permission denied" alone sends people hunting.
Result<uint64_t> explainEnergyError(Result<uint64_t> energy) {
  if (!energy && energy.error().code == ErrorCode::kPermissionDenied) {
    Error error = energy.error();
    error.message += " (RAPL energy is readable by root only)";
    return error;
  }
  return energy;
}

Result<uint64_t> readEnergy(const std::filesystem::path& zone_dir) {
  return explainEnergyError(SysfsFile::readUint64(zone_dir / "energy_uj"));
}

}  // namespace

SysfsRapl::SysfsRapl(std::filesystem::path root) : powercap_dir_(root / "sys/class/powercap") {}

std::filesystem::path SysfsRapl::zoneDir(uint32_t zone) const {
  return powercap_dir_ / ("intel-rapl:" + std::to_string(zone));
}

// Only intel-rapl:N: the subzones intel-rapl:N:M (core, uncore, dram) are
// already inside their package's count, and "intel-rapl" itself is the
// control type, not a zone.
Result<std::vector<RaplZone>> SysfsRapl::readZones() {
  auto entries = SysfsFile::listIndexed(powercap_dir_, "intel-rapl:");
  if (!entries) {
    Error error = entries.error();
    if (!SysfsFile::exists(powercap_dir_)) error.message += " (is the intel_rapl driver loaded?)";
    return error;
  }
  std::vector<RaplZone> zones;
  for (const auto& entry : *entries) {
    const std::filesystem::path& dir = entry.path;
    RaplZone zone;
    zone.index = entry.index;

    auto name = SysfsFile::readText(dir / "name");
    if (!name) return name.error();
    zone.name = std::move(*name);

    auto energy = readEnergy(dir);
    if (!energy) return energy.error();
    zone.energy_uj = *energy;

    auto range = SysfsFile::readUint64(dir / "max_energy_range_uj");
    if (!range) return range.error();
    zone.max_energy_range_uj = *range;

    if (auto limit = SysfsFile::readUint64(dir / "constraint_0_power_limit_uw")) {
      zone.power_limit_uw = *limit;
    } else if (SysfsFile::exists(dir / "constraint_0_power_limit_uw")) {
      return limit.error();
    }

    // Some firmware shows 0 (no maximum) or nothing at all.
    if (auto max_power = SysfsFile::readUint64(dir / "constraint_0_max_power_uw"); max_power && *max_power > 0)
      zone.max_power_uw = *max_power;

    auto enabled = SysfsFile::readUint64(dir / "enabled");
    if (!enabled) return enabled.error();
    zone.enabled = *enabled != 0;

    zones.push_back(std::move(zone));
  }
  return zones;
}

Result<uint64_t> SysfsRapl::readEnergyUj(uint32_t zone) {
  std::lock_guard lock(energy_mutex_);
  auto it = energy_.find(zone);
  if (it == energy_.end()) it = energy_.emplace(zone, HeldSysfsFile(zoneDir(zone) / "energy_uj")).first;
  return explainEnergyError(it->second.readUint64());
}

Status SysfsRapl::setPowerLimitUw(uint32_t zone, uint64_t microwatts) {
  return SysfsFile::write(zoneDir(zone) / "constraint_0_power_limit_uw", microwatts);
}

Status SysfsRapl::setEnabled(uint32_t zone, bool enabled) {
  return SysfsFile::write(zoneDir(zone) / "enabled", std::string_view(enabled ? "1" : "0"));
}

}  // namespace nk
