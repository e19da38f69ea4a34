#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "node_profile.h"

namespace nk {

// What the daemon (or any tool) wrote into one emulated cpufreq policy.
struct EmulatedPolicyControls {
  std::string governor;
  uint64_t min_khz = 0;
  uint64_t max_khz = 0;
  std::optional<uint64_t> setspeed_khz;  // when the userspace governor is on
};

// Which control files someone wrote since the last look.
struct EmulatedControlChanges {
  std::vector<uint32_t> policies;  // policyN numbers
  std::vector<uint32_t> packages;  // RAPL zones
  bool everything = false;         // events were lost: re-read all
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
  ~EmulatedSysfsTree();
  EmulatedSysfsTree(EmulatedSysfsTree&&) noexcept;
  EmulatedSysfsTree& operator=(EmulatedSysfsTree&&) noexcept;

  // Policies are numbered as the kernel does: policyN with N the first CPU
  // of the core. Emulated core c has CPUs c*T .. c*T+T-1 (T threads per core),
  // the numbering hwloc's synthetic topology uses too.
  std::vector<uint32_t> policyIds() const;
  uint32_t policyOfCore(uint32_t core) const;
  // True when open() found a matching tree and kept it.
  bool reused() const;

  // Control files as last written by anyone, sanitised the way the kernel
  // would show them (values clamped to cpuinfo limits, garbage ignored).
  // `policy` is the N of policyN; an unknown one gives empty controls.
  EmulatedPolicyControls readControls(uint32_t policy);

  // Control files written since the previous call, from inotify, so that
  // an idle node does not re-read ~50 files every tick. When watching is not
  // possible (no inotify), watchingControls() is false and the caller must
  // poll readControls() itself.
  bool watchingControls() const;
  EmulatedControlChanges takeControlChanges();

  // Output files the kernel would update.
  void writeCurrentFrequency(uint32_t policy, uint64_t khz);
  void writeEnergy(uint32_t package, uint64_t energy_uj);
  void writeCoreTemperature(uint32_t package, uint32_t core_id, double celsius);
  void writePackageTemperature(uint32_t package, double celsius);
  // Power limit the daemon set (constraint_0_power_limit_uw), if enabled.
  std::optional<uint64_t> readPowerLimitUw(uint32_t package);

  // What an existing tree holds, so that a restarted node continues the
  // energy counter and starts from the temperatures it left.
  uint64_t readEnergyUj(uint32_t package) const;
  std::optional<double> readCoreTemperature(uint32_t package, uint32_t core_id) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  struct State;
  EmulatedSysfsTree(std::filesystem::path root, NodeProfile profile);
  std::filesystem::path root_;
  NodeProfile profile_;
  std::unique_ptr<State> state_;
};

}  // namespace nk
