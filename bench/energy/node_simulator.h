#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "energy/energy_policy.h"
#include "energy/policy_config.h"
#include "platform/emulated/node_profile.h"
#include "workload_model.h"

namespace nk::sim {

// What one simulated run measured.
struct SimulationResult {
  double time_s = 0.0;
  double energy_j = 0.0;
  double avg_temp_c = 0.0;    // over cores and time
  double peak_temp_c = 0.0;
  double temp_std_c = 0.0;    // time average of the std-dev across cores
  double over_budget_frac = 0.0;  // dT_DCT intervals over budget by more than 5%
  uint64_t dct_intervals = 0;
  double mean_threads = 0.0;  // time average of D
};

// A deterministic, time-stepped node running one OpenMP program under one
// policy: the emulated node's PhysicsModel for power and temperature, the
// daemon's policy classes through the same snapshot/decision interface, and
// the daemon's conventions (stepDvfs every dT_DVFS, stepDct every N-th, all
// of the node's power charged to the app).
class NodeSimulator {
 public:
  struct Options {
    double step_s = 0.005;       // physics and progress step
    double budget_w = 0.0;       // 0: none
    uint32_t max_threads = 0;    // C; 0: the node's cores
    double max_time_s = 3600.0;  // a run that does not finish by then stops
    // Called after every step with its length and the node's power at its
    // end (tests integrate it; plots draw it).
    std::function<void(double time_s, double step_s, double power_w)> on_step;
  };

  NodeSimulator(NodeProfile profile, PolicyConfig config, Options options);

  SimulationResult run(const WorkloadModel& workload, EnergyPolicy& policy);

 private:
  NodeProfile profile_;
  PolicyConfig config_;
  Options options_;
};

}  // namespace nk::sim
