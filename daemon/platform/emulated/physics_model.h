#pragma once

#include <cstdint>
#include <vector>

#include "node_profile.h"

namespace nk {

// Power and temperature of an emulated node. Pure: no I/O, no clock; the
// caller feeds frequencies and utilisations and advances time.
class PhysicsModel {
 public:
  explicit PhysicsModel(NodeProfile profile);

  // Per-core inputs for the next step(s).
  void setFrequencyKhz(uint32_t core, uint64_t khz);
  void setUtilisation(uint32_t core, double utilisation);  // clamped to [0, 1]

  // Advances by dt seconds (internally in stable sub-steps).
  void step(double dt_s);

  double voltageAt(uint64_t khz) const;
  double corePowerW(uint32_t core) const;        // at the current state
  double packagePowerW(uint32_t package) const;  // cores + uncore
  double coreTemperatureC(uint32_t core) const;
  double heatsinkTemperatureC(uint32_t package) const;
  double packageTemperatureC(uint32_t package) const;  // hottest core
  // Energy integrated over all steps so far, per package, in joules.
  double packageEnergyJ(uint32_t package) const;
  double elapsedS() const { return elapsed_s_; }

  // Sets all temperatures (e.g. restored from the sysfs tree at start).
  void setCoreTemperatureC(uint32_t core, double celsius);
  void setHeatsinkTemperatureC(uint32_t package, double celsius);

  const NodeProfile& profile() const { return profile_; }
  // Largest internal step that keeps explicit Euler stable.
  double maxSubStepS() const { return max_sub_step_s_; }

 private:
  double corePowerAt(uint32_t core, double celsius) const;
  void subStep(double h_s);

  NodeProfile profile_;
  double max_sub_step_s_ = 0;
  std::vector<uint64_t> frequency_khz_;
  std::vector<double> utilisation_;
  std::vector<double> core_temp_c_;
  std::vector<double> heatsink_temp_c_;
  std::vector<double> package_energy_j_;
  double elapsed_s_ = 0;
  // Reused by subStep() so that stepping allocates nothing.
  std::vector<double> core_power_w_;
  std::vector<double> core_rate_;
};

}  // namespace nk
