#include "physics_model.h"

#include <algorithm>
#include <cmath>

namespace nk {

namespace {

// Explicit Euler on an RC node is stable for h < 2 RC and free of overshoot
// for h < RC; a fifth of the smallest time constant keeps it accurate too.
constexpr double kSubStepFraction = 0.2;

// Caps one step() call so that a caller that passes a huge dt (a daemon
// suspended for hours) costs bounded CPU; the thermal network has long
// reached its steady state by then anyway.
constexpr double kMaxStepS = 3600;

}  // namespace

PhysicsModel::PhysicsModel(NodeProfile profile) : profile_(std::move(profile)) {
  uint32_t cores = profile_.cores();
  uint64_t initial_khz = profile_.frequencies_khz.empty() ? 0 : profile_.frequencies_khz.front();
  frequency_khz_.assign(cores, initial_khz);
  utilisation_.assign(cores, 0.0);
  core_temp_c_.assign(cores, profile_.ambient_c);
  heatsink_temp_c_.assign(profile_.packages, profile_.ambient_c);
  package_energy_j_.assign(profile_.packages, 0.0);
  core_power_w_.assign(cores, 0.0);
  core_rate_.assign(cores, 0.0);

  // Time constant of each node against everything it is connected to.
  double core_conductance = 1.0 / profile_.core_to_heatsink_k_per_w;
  if (profile_.cores_per_package > 1) core_conductance += 2.0 / profile_.core_to_neighbour_k_per_w;
  double core_tau = profile_.core_heat_capacity_j_per_k / core_conductance;
  double heatsink_conductance =
      profile_.cores_per_package / profile_.core_to_heatsink_k_per_w + 1.0 / profile_.heatsink_to_ambient_k_per_w;
  double heatsink_tau = profile_.heatsink_heat_capacity_j_per_k / heatsink_conductance;
  max_sub_step_s_ = kSubStepFraction * std::min(core_tau, heatsink_tau);
  if (!(max_sub_step_s_ > 0)) max_sub_step_s_ = 1e-3;  // unvalidated profile: stay finite
}

void PhysicsModel::setFrequencyKhz(uint32_t core, uint64_t khz) {
  if (core < frequency_khz_.size()) frequency_khz_[core] = khz;
}

void PhysicsModel::setUtilisation(uint32_t core, double utilisation) {
  if (core >= utilisation_.size()) return;
  if (!(utilisation >= 0)) utilisation = 0;  // also NaN
  utilisation_[core] = std::min(utilisation, 1.0);
}

double PhysicsModel::voltageAt(uint64_t khz) const {
  if (profile_.frequencies_khz.size() < 2) return profile_.voltage_max_v;
  double low = static_cast<double>(profile_.frequencies_khz.front());
  double high = static_cast<double>(profile_.frequencies_khz.back());
  double t = std::clamp((static_cast<double>(khz) - low) / (high - low), 0.0, 1.0);
  return profile_.voltage_min_v + t * (profile_.voltage_max_v - profile_.voltage_min_v);
}

double PhysicsModel::corePowerAt(uint32_t core, double celsius) const {
  uint64_t khz = frequency_khz_[core];
  double volts = voltageAt(khz);
  double dynamic = profile_.capacitance_f * volts * volts * (static_cast<double>(khz) * 1e3) * utilisation_[core];
  // Linear leakage would turn negative far below T_ref; real leakage does not.
  double current =
      std::max(0.0, profile_.leakage_current_a + profile_.leakage_current_a_per_c * (celsius - profile_.leakage_ref_c));
  return dynamic + volts * current;
}

double PhysicsModel::corePowerW(uint32_t core) const {
  if (core >= core_temp_c_.size()) return 0;
  return corePowerAt(core, core_temp_c_[core]);
}

double PhysicsModel::packagePowerW(uint32_t package) const {
  if (package >= profile_.packages) return 0;
  double watts = profile_.uncore_power_w;
  uint32_t first = package * profile_.cores_per_package;
  for (uint32_t i = 0; i < profile_.cores_per_package; ++i) watts += corePowerW(first + i);
  return watts;
}

double PhysicsModel::coreTemperatureC(uint32_t core) const {
  return core < core_temp_c_.size() ? core_temp_c_[core] : profile_.ambient_c;
}

double PhysicsModel::heatsinkTemperatureC(uint32_t package) const {
  return package < heatsink_temp_c_.size() ? heatsink_temp_c_[package] : profile_.ambient_c;
}

double PhysicsModel::packageTemperatureC(uint32_t package) const {
  if (package >= profile_.packages) return profile_.ambient_c;
  uint32_t first = package * profile_.cores_per_package;
  auto begin = core_temp_c_.begin() + first;
  return *std::max_element(begin, begin + profile_.cores_per_package);
}

double PhysicsModel::packageEnergyJ(uint32_t package) const {
  return package < package_energy_j_.size() ? package_energy_j_[package] : 0;
}

void PhysicsModel::setCoreTemperatureC(uint32_t core, double celsius) {
  if (core < core_temp_c_.size() && std::isfinite(celsius)) core_temp_c_[core] = celsius;
}

void PhysicsModel::setHeatsinkTemperatureC(uint32_t package, double celsius) {
  if (package < heatsink_temp_c_.size() && std::isfinite(celsius)) heatsink_temp_c_[package] = celsius;
}

void PhysicsModel::step(double dt_s) {
  if (!(dt_s > 0)) return;  // also NaN
  dt_s = std::min(dt_s, kMaxStepS);
  auto sub_steps = static_cast<uint64_t>(std::ceil(dt_s / max_sub_step_s_));
  sub_steps = std::max<uint64_t>(sub_steps, 1);
  double h = dt_s / static_cast<double>(sub_steps);
  for (uint64_t i = 0; i < sub_steps; ++i) subStep(h);
  elapsed_s_ += dt_s;
}

void PhysicsModel::subStep(double h) {
  const uint32_t n = profile_.cores_per_package;
  const double g_hs = 1.0 / profile_.core_to_heatsink_k_per_w;
  const double g_nb = 1.0 / profile_.core_to_neighbour_k_per_w;
  const double g_amb = 1.0 / profile_.heatsink_to_ambient_k_per_w;
  const double c_core = profile_.core_heat_capacity_j_per_k;
  const double c_hs = profile_.heatsink_heat_capacity_j_per_k;

  for (uint32_t package = 0; package < profile_.packages; ++package) {
    const uint32_t first = package * n;
    const double t_hs = heatsink_temp_c_[package];
    double to_heatsink = 0;
    double package_power = profile_.uncore_power_w;
    // All rates from the state at the start of the sub-step (explicit Euler).
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t core = first + i;
      const double t = core_temp_c_[core];
      const double power = corePowerAt(core, t);
      const double q_hs = (t - t_hs) * g_hs;
      double q_nb = 0;
      if (i > 0) q_nb += (t - core_temp_c_[core - 1]) * g_nb;
      if (i + 1 < n) q_nb += (t - core_temp_c_[core + 1]) * g_nb;
      core_rate_[core] = (power - q_hs - q_nb) / c_core;
      core_power_w_[core] = power;
      to_heatsink += q_hs;
      package_power += power;
    }
    // The uncore sits on the same die and heat spreader: its heat goes to
    // the heatsink, not to any one core.
    const double hs_rate = (to_heatsink + profile_.uncore_power_w - (t_hs - profile_.ambient_c) * g_amb) / c_hs;
    for (uint32_t i = 0; i < n; ++i) core_temp_c_[first + i] += h * core_rate_[first + i];
    heatsink_temp_c_[package] += h * hs_rate;
    package_energy_j_[package] += package_power * h;
  }
}

}  // namespace nk
