#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk {

// One core as the telemetry sampler saw it (frequencies in kHz).
struct CoreReading {
  uint32_t id = 0;
  uint64_t cur_khz = 0;
  uint64_t min_khz = 0;           // policy limits: targets are clamped to these
  uint64_t max_khz = 0;
  uint64_t cpuinfo_min_khz = 0;   // hardware limits; 0 = same as min_khz/max_khz
  uint64_t cpuinfo_max_khz = 0;
  double temp_c = 0.0;            // NaN when the sensor failed
  double util = 0.0;              // busy fraction of the last interval, 0..1
};

enum class WorkloadUnit {
  kCycles,      // perf cycles over the last interval
  kCpuSeconds,  // schedstat run time over the last interval
};

struct ThreadSample {
  int32_t tid = 0;
  int32_t core = -1;       // core it ran on last; -1 = unknown
  double workload = 0.0;   // over the last interval, in EnergySnapshot::workload_unit
  // Share of the thread's busy cycles stalled on memory over the last
  // interval (a backend-stall counter over the cycle counter); negative =
  // not measured. It says how much of the thread's time a lower clock
  // would not stretch.
  double stall_fraction = -1.0;
};

struct AppSample {
  std::string id;
  double budget_w = 0.0;       // 0 = no budget
  uint32_t max_threads = 0;    // C; 0 = as many as the node has cores
  uint32_t threads = 0;        // D the app currently runs with
  std::vector<ThreadSample> thread_samples;
  double power_w = 0.0;        // measured: sum over the app's cores
};

// Everything a policy sees at one control step.
struct EnergySnapshot {
  double time_s = 0.0;
  std::vector<CoreReading> cores;
  // Ascending; empty = the driver takes any frequency in [min, max].
  std::vector<uint64_t> freq_table_khz;
  std::vector<double> package_power_w;
  double power_cap_w = 0.0;    // admin's node cap; 0 = none
  WorkloadUnit workload_unit = WorkloadUnit::kCycles;
  std::vector<AppSample> apps;
};

}  // namespace nk
