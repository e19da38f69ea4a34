#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "energy/energy_policy.h"
#include "energy/policy_config.h"
#include "energy/thermal_aware_policy.h"

namespace nk {

// Ours: Shafik et al.'s thermal-aware controls with two changes that each save
// energy at the same work done.
// 1. Width before clock (ThermalAwareTunables::dct_width_first): D grows
//    while the threads' clocks can drop to make room for one more, so a
//    budget buys many cores at low V and f instead of few at high ones.
// 2. A clock ceiling per core from how memory-bound its thread is. A thread
//    that waits on memory for a share m of its time (at the highest clock)
//    runs (1-m) f_max/f + m times slower at f, so the lowest clock within
//    max_slowdown_pct costs almost no time and saves the V^2 f power of the
//    stalled cycles. The ceiling is handed to the thermal-aware policy as
//    the core's max limit, so its ILC never plans above it and needs no
//    correction when the ceiling lifts; without a budget the ceiling alone
//    sets the clock. Threads whose stalls are not measured
//    (stall_fraction < 0) get no ceiling.
// 3. One clock per team (equaliseTeams), since a barrier waits for the
//    slowest thread.
class EfficiencyPolicy final : public EnergyPolicy {
 public:
  explicit EfficiencyPolicy(const PolicyConfig& config = {});

  std::string_view name() const override { return "efficiency"; }
  EnergyDecision stepDct(const EnergySnapshot& snapshot) override;
  EnergyDecision stepDvfs(const EnergySnapshot& snapshot) override;

  // Lowest clock (kHz, not yet on the table) at which a thread with
  // frequency-insensitive share m is at most slowdown slower than at f_max.
  static double ceilingKhz(double m, double slowdown, double fmax_khz);

 private:
  struct ThreadState {
    int32_t tid = 0;
    double m = 0.0;     // moving average of the frequency-insensitive share
    bool seen = false;
    bool present = false;
  };
  EnergyDecision step(const EnergySnapshot& snapshot,
                      EnergyDecision (ThermalAwarePolicy::*inner_step)(const EnergySnapshot&));
  EnergySnapshot withCeilings(const EnergySnapshot& snapshot);
  void applyCeilings(const EnergySnapshot& limited, EnergyDecision& decision) const;
  void equaliseTeams(const EnergySnapshot& limited, EnergyDecision& decision) const;
  ThreadState& threadFor(int32_t tid);

  EfficiencyTunables tunables_;
  ThermalAwarePolicy inner_;
  std::vector<ThreadState> threads_;
  double last_observed_s_ = -1.0;
};

}  // namespace nk
