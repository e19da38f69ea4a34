#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nk {

// A machine the emulated node pretends to be. Loaded from a TOML file
// (profiles/*.toml); every number has a unit in its name.
struct NodeProfile {
  std::string name;               // e.g. "xeon-e5-2630"
  std::string cpu_model;          // as /proc/cpuinfo would say
  uint32_t packages = 2;
  uint32_t cores_per_package = 6;
  uint32_t threads_per_core = 1;

  // cpufreq
  std::string driver = "acpi-cpufreq";  // or "intel_pstate" (active mode)
  std::vector<uint64_t> frequencies_khz;  // ascending; the P-state table
  std::vector<std::string> governors;     // scaling_available_governors
  std::string default_governor = "ondemand";
  uint32_t transition_latency_ns = 10000;

  // Power: P_core = C_eff * V(f)^2 * f * u + V(f) * (I0 + I1 * (T - T_ref))
  double voltage_min_v = 0.98;    // at the lowest frequency
  double voltage_max_v = 1.35;    // at the highest; linear in between
  double capacitance_f = 0;       // effective switched capacitance per core
  double leakage_current_a = 0;   // I0 per core at T_ref
  double leakage_current_a_per_c = 0;  // I1 per core
  double leakage_ref_c = 50;
  double uncore_power_w = 0;      // per package, always on
  double idle_utilisation = 0;    // floor of utilisation (OS noise)

  // Thermal RC network per package
  double ambient_c = 25;
  double core_heat_capacity_j_per_k = 0;
  double core_to_heatsink_k_per_w = 0;
  double core_to_neighbour_k_per_w = 0;  // lateral coupling in a row of cores
  double heatsink_heat_capacity_j_per_k = 0;
  double heatsink_to_ambient_k_per_w = 0;
  double tjmax_c = 100;

  // RAPL
  uint64_t rapl_max_energy_range_uj = 262143328850ULL;
  double rapl_default_limit_w = 95;

  uint32_t cores() const { return packages * cores_per_package; }

  // Parses TOML text; errors name the key and, for syntax errors, the line.
  static Result<NodeProfile> parse(std::string_view toml_text, std::string_view source_name = "profile");
  static Result<NodeProfile> load(const std::filesystem::path& path);
  // The default profile: Shafik et al.'s Xeon E5-2630 (2 x 6 cores, 1.2-2.6 GHz).
  static NodeProfile xeonE5_2630();
  // hwloc synthetic description, e.g. "package:2 core:6 pu:1".
  std::string hwlocSynthetic() const;
  // Checks ranges and consistency; parse() calls it.
  Status validate() const;
};

}  // namespace nk
