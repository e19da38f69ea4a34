#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "frequency_control.h"
#include "platform/cpu_freq.h"
#include "platform/host_cpu_load.h"
#include "platform/node_topology.h"
#include "platform/power_meter.h"
#include "platform/thermal_sensors.h"
#include "power_cap_control.h"
#include "saved_controls.h"
#include "telemetry_sampler.h"

namespace nk {

// The node's hardware side as one object: topology, telemetry and the
// controls, with every write serialised, validated, saved and restorable.
class NodeController {
 public:
  struct Parts {
    NodeTopology topology;
    std::unique_ptr<CpuFreq> cpufreq;
    std::unique_ptr<PowerMeter> meter;
    std::unique_ptr<ThermalSensors> thermal;
    std::unique_ptr<HostCpuLoad> host_load;  // may be null
    std::filesystem::path saved_controls_file;
    std::chrono::milliseconds telemetry_interval{100};
  };

  // Controls that a crashed run left saved stay pending: the caller decides
  // when to restore them (restoreSavedControls).
  static Result<std::unique_ptr<NodeController>> create(Parts parts);
  ~NodeController();

  bool hasSavedControls() const;

  const NodeTopology& topology() const { return parts_.topology; }
  TelemetrySampler& telemetry() { return *sampler_; }

  Result<std::vector<CpuFreqPolicy>> frequencyPolicies();
  Result<std::string> setFrequencyLimits(const FrequencyRequest& request);
  Result<std::string> setGovernor(const std::vector<uint32_t>& cpus, std::string_view governor);

  Result<std::vector<RaplZone>> powerCaps();
  Result<std::string> setPowerCap(const std::vector<uint32_t>& packages, double watts);
  Result<std::string> disablePowerCap(const std::vector<uint32_t>& packages);

  // Node energy policy: a governor's (set on every core at once), or one the
  // energy manager runs on managed apps' cores (the others keep their governor).
  std::string policy() const;
  std::vector<std::string> availablePolicies() const;
  Result<std::string> setPolicy(std::string_view name);

  // Writes every saved original back and forgets them; returns how many.
  Result<size_t> restoreSavedControls();

 private:
  struct PrivateTag {};

 public:
  NodeController(PrivateTag, Parts parts, SavedControls saved);

 private:
  Parts parts_;
  SavedControls saved_;
  FrequencyControl frequency_;
  PowerCapControl power_caps_;
  std::unique_ptr<TelemetrySampler> sampler_;
  mutable std::mutex control_mutex_;
  std::string policy_ = "default";
};

}  // namespace nk
