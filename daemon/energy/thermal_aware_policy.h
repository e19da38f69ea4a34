#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "energy/energy_policy.h"
#include "energy/ilc_controller.h"
#include "energy/policy_config.h"
#include "energy/temperature_window.h"
#include "energy/workload_predictor.h"

namespace nk {

// The paper's controls (Shafik et al.): DCT and thermal affinity swapping every dT_DCT,
// EWMA + ILC frequency control every dT_DVFS. State kept between steps:
// per core the temperature samples of the current dT_DCT interval (eq. 3),
// per app D and its cores, per thread the workload history (eq. 1, 6), its
// budget share (eq. 4, 5) and its ILC state (eq. 7-10). Apps and threads
// missing from a snapshot are forgotten.
class ThermalAwarePolicy final : public EnergyPolicy {
 public:
  explicit ThermalAwarePolicy(const PolicyConfig& config = {});

  std::string_view name() const override { return "thermal-aware"; }
  EnergyDecision stepDct(const EnergySnapshot& snapshot) override;
  EnergyDecision stepDvfs(const EnergySnapshot& snapshot) override;

 private:
  struct ThreadState {
    int32_t tid = 0;
    int32_t core = -1;          // assigned by the last DCT step
    WorkloadPredictor predictor;
    IlcController ilc;
    double share = 0.0;         // fraction of the app budget (eq. 4, 5)
    bool has_share = false;
    double workload_sum = 0.0;  // eq. 1 over the current dT_DCT interval
    uint32_t workload_samples = 0;
    bool present = false;
  };
  struct AppState {
    std::string id;
    uint32_t threads = 0;       // D
    std::vector<ThreadState> thread_states;
    std::vector<uint32_t> cores;  // this app's fair share of the node's cores
    double budget_w = 0.0;      // effective budget; 0 = uncontrolled
    double power_sum = 0.0;     // eq. 2 summed over threads = app power
    uint32_t power_samples = 0;
    double floor_w_per_thread = 0.0;  // dct_width_first: P / D seen at the bottom clock
    bool present = false;
  };
  struct CoreState {
    uint32_t id = 0;
    TemperatureWindow temps;    // eq. 3 over the current dT_DCT interval
    double request_khz = 0.0;   // scratch while building a decision
  };

  void resolveDeltaF(const EnergySnapshot& snapshot);
  bool clockAndFloor(const AppState& app, const EnergySnapshot& snapshot, double& clock_khz, double& floor_khz) const;
  void sampleTemperatures(const EnergySnapshot& snapshot);
  void computeBudgets(const EnergySnapshot& snapshot);
  void partitionCores(const EnergySnapshot& snapshot);
  AppState& appFor(const AppSample& app, const EnergySnapshot& snapshot);
  ThreadState& threadFor(AppState& app, int32_t tid);
  CoreState* coreFor(uint32_t id);
  const CoreReading* coreSample(const EnergySnapshot& snapshot, int32_t id) const;
  uint32_t upperBound(const AppSample& app, const AppState& state, const EnergySnapshot& snapshot) const;
  void placeThreads(AppState& app, const AppSample& sample);
  uint32_t swapAffinity(AppState& app);
  uint32_t moveToCoolest(AppState& app);
  void allocateBudgets(AppState& app);
  void dropAbsent();
  void buildDecision(const EnergySnapshot& snapshot, EnergyDecision& decision);

  PolicyConfig config_;
  IlcParams ilc_params_;
  std::vector<AppState> apps_;
  std::vector<CoreState> cores_;
  bool sampled_once_ = false;
  double last_sample_time_ = 0.0;
  // Scratch kept between steps so that a step does not allocate.
  std::vector<double> demand_w_;
  std::vector<double> share_w_;
  std::vector<uint32_t> demand_cores_;
  std::vector<uint32_t> share_cores_;
  std::vector<uint32_t> order_;
  std::vector<uint8_t> used_;
};

}  // namespace nk
