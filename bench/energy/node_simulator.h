#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "energy/energy_policy.h"
#include "energy/policy_config.h"
#include "platform/emulated/node_profile.h"
#include "workload_model.h"

namespace nk::sim {

// What a budget covers.
enum class BudgetScope {
  // Shafik et al.'s P = sum of P_d (Algorithm 1, eq. 2): the power of the cores
  // the app's threads run on (RAPL's PP0 "cores" plane), without uncore
  // and without idle cores.
  kAppCores,
  // The daemon's: all of the node's package power is charged to the app.
  kNode,
};

// What one simulated run measured.
struct SimulationResult {
  bool finished = false;      // false: stopped at max_time_s
  double time_s = 0.0;
  double energy_j = 0.0;      // both packages, uncore included (RAPL package energy)
  double app_energy_j = 0.0;  // in the budget's scope
  double avg_temp_c = 0.0;    // over cores and time
  double peak_temp_c = 0.0;
  double temp_std_c = 0.0;    // time average of the std-dev across cores
  double mttf_years = 0.0;    // ReliabilityModel (RAMP)
  double over_budget_frac = 0.0;  // dT_DCT intervals over budget by more than 5%
  uint64_t dct_intervals = 0;
  double mean_threads = 0.0;  // time average of D
  double mean_active_mhz = 0.0;  // time average of the mean clock of the app's cores
  double work_done_core_s = 0.0;  // of the model's work, when stopped early
  // Since Options::window_from_s:
  double window_s = 0.0;
  double window_app_energy_j = 0.0;
  double window_work_core_s = 0.0;
};

// One dT_DCT interval as the budget sees it.
struct IntervalSample {
  double time_s = 0.0;       // end of the interval
  double power_w = 0.0;      // in the budget's scope, interval average
  double node_power_w = 0.0;
  uint32_t threads = 0;      // D after the interval's DCT step
  double mean_mhz = 0.0;     // mean clock of the app's cores
  double max_temp_c = 0.0;
};

// A deterministic, time-stepped node running one OpenMP program under one
// policy: the emulated node's PhysicsModel for power and temperature, the
// daemon's policy classes through the same snapshot/decision interface, and
// the daemon's calling conventions (stepDvfs every dT_DVFS, stepDct every
// N-th). Within a step the program is a fluid: each thread's time splits
// into computing, memory stalls, spinning at a barrier or in a serial part
// (libomp's blocktime), and blocking in the kernel, in the proportions the
// phase's model gives for the current D and clocks.
class NodeSimulator {
 public:
  struct Options {
    double step_s = 0.005;       // physics and progress step
    double budget_w = 0.0;       // 0: none
    BudgetScope budget_scope = BudgetScope::kAppCores;
    uint32_t max_threads = 0;    // C; 0: the node's cores
    double max_time_s = 3600.0;  // a run that does not finish by then stops
    // Budget intervals in the first warmup_s are not counted: every policy
    // starts from D = C at the highest clock, as a program does.
    double warmup_s = 2.0;
    // Start of the window whose scoped energy, time and work the result
    // reports separately (steady-state measurements).
    double window_from_s = 0.0;
    // Temperature of every core and heatsink at t = 0; NaN: the node's idle
    // steady state (cores at the lowest clock, idle load), as a node that
    // waited for its job is.
    double initial_temp_c = std::numeric_limits<double>::quiet_NaN();
    // Called after every step with its length and the node's power at its
    // end (tests integrate it; plots draw it).
    std::function<void(double time_s, double step_s, double power_w)> on_step;
    // Called at the end of every dT_DCT interval.
    std::function<void(const IntervalSample&)> on_interval;
  };

  // Activity factors of a busy core, relative to full-rate computing: the
  // switching a memory-stalled or spin-waiting pipeline still does.
  static constexpr double kStallActivity = 0.3;
  static constexpr double kSpinActivity = 0.5;

  NodeSimulator(NodeProfile profile, PolicyConfig config, Options options);

  SimulationResult run(const WorkloadModel& workload, EnergyPolicy& policy);

 private:
  NodeProfile profile_;
  PolicyConfig config_;
  Options options_;
};

}  // namespace nk::sim
