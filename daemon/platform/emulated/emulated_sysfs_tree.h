#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "node_profile.h"

namespace nk {

// What the daemon (or any tool) wrote into one emulated cpufreq policy.
struct EmulatedPolicyControls {
  std::string governor;
  uint64_t min_khz = 0;
  uint64_t max_khz = 0;
  std::optional<uint64_t> setspeed_khz;  // when the userspace governor is on
};

// The sysfs-shaped tree of an emulated node under <root>/sys, laid out as the
// kernel does (cpuN/cpufreq -> ../cpufreq/policyN, class/powercap/intel-rapl:N,
// class/hwmon/hwmonN -> devices/platform/coretemp.N/hwmon/hwmonN), with the
// same file names, units and formats.
class EmulatedSysfsTree {
 public:
  // Creates the tree if absent; keeps an existing one (its controls persist
  // like a real node's across daemon restarts) when it matches the profile.
  static Result<EmulatedSysfsTree> open(std::filesystem::path root, const NodeProfile& profile);

  // Control files as last written by anyone, sanitised the way the kernel
  // would show them (values clamped to cpuinfo limits, garbage ignored).
  EmulatedPolicyControls readControls(uint32_t policy);

  // Output files the kernel would update.
  void writeCurrentFrequency(uint32_t policy, uint64_t khz);
  void writeEnergy(uint32_t package, uint64_t energy_uj);
  void writeCoreTemperature(uint32_t package, uint32_t core_id, double celsius);
  void writePackageTemperature(uint32_t package, double celsius);
  // Power limit the daemon set (constraint_0_power_limit_uw), if enabled.
  std::optional<uint64_t> readPowerLimitUw(uint32_t package);

  const std::filesystem::path& root() const { return root_; }

 private:
  EmulatedSysfsTree(std::filesystem::path root, NodeProfile profile);
  std::filesystem::path root_;
  NodeProfile profile_;
};

}  // namespace nk
