#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "platform/cpu_freq.h"
#include "platform/energy_counter.h"
#include "platform/host_cpu_load.h"
#include "platform/node_topology.h"
#include "platform/power_meter.h"
#include "platform/thermal_sensors.h"
#include "telemetry_sample.h"

namespace nk {

// Samples the node on its own thread so that telemetry RPCs answer from
// memory; a caller that needs the hardware's value now asks for a fresh one.
class TelemetrySampler {
 public:
  TelemetrySampler(const NodeTopology& topology, CpuFreq& cpufreq, PowerMeter& meter, ThermalSensors& thermal,
                   std::unique_ptr<HostCpuLoad> host_load, std::chrono::milliseconds interval);
  ~TelemetrySampler();

  void start();
  void stop();

  std::shared_ptr<const TelemetrySample> latest() const;
  // Reads what moves (frequencies, temperatures, energy) now; limits and
  // governors come from the last re-read: the sampler's, once a second, or
  // one after a write (invalidatePolicies).
  std::shared_ptr<const TelemetrySample> sampleNow();
  // sampleNow, unless the latest sample is younger than `max_age` and no
  // write has happened since (invalidatePolicies): then that one. However
  // often callers ask (GetTelemetry's `fresh`, from any number of users),
  // the hardware is read at most once per max_age.
  std::shared_ptr<const TelemetrySample> sampleNoOlderThan(std::chrono::nanoseconds max_age);
  // The latest sample once its seq exceeds `seq`, waiting up to `timeout`
  // for the sampler; nullptr if none came. Lets streams follow the sampler
  // instead of reading the hardware a second time.
  std::shared_ptr<const TelemetrySample> waitForNewer(uint64_t seq, std::chrono::milliseconds timeout) const;
  // Re-read policy limits and governors at the next sample (after a write).
  void invalidatePolicies() { policies_stale_ = true; }
  // Monotonic time of the sampler's last periodic sample, for the watchdog.
  int64_t lastPeriodicSampleNs() const { return last_periodic_ns_.load(); }
  std::chrono::milliseconds interval() const { return interval_; }

 private:
  std::shared_ptr<const TelemetrySample> takeSample(bool periodic);
  void refreshPolicies(std::vector<std::string>& warnings);
  void run();

  const NodeTopology& topology_;
  CpuFreq& cpufreq_;
  PowerMeter& meter_;
  ThermalSensors& thermal_;
  std::unique_ptr<HostCpuLoad> host_load_;
  std::chrono::milliseconds interval_;

  // Guarded by sample_mutex_: state carried from sample to sample.
  std::mutex sample_mutex_;
  uint64_t seq_ = 0;
  std::vector<int> core_policy_;  // policy id per core, -1 if none
  std::vector<CpuFreqPolicy> policy_cache_;
  std::vector<RaplZone> zone_cache_;
  std::vector<EnergyCounter> counters_;
  std::vector<double> last_power_w_;
  std::vector<double> power_point_j_;
  int64_t power_point_ns_ = 0;
  std::vector<double> utilisation_;
  unsigned samples_since_policy_read_ = 0;
  std::atomic<bool> policies_stale_{true};

  mutable std::mutex latest_mutex_;
  mutable std::condition_variable latest_cv_;
  std::shared_ptr<const TelemetrySample> latest_;

  std::atomic<int64_t> last_periodic_ns_{0};
  std::mutex run_mutex_;
  std::condition_variable run_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nk
