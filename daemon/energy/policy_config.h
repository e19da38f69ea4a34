#pragma once

#include <cstdint>

namespace nk {

enum class FrequencyRelation {
  kLowestAtOrAbove,   // CPUFREQ_RELATION_L
  kHighestAtOrBelow,  // CPUFREQ_RELATION_H
  kClosest,           // CPUFREQ_RELATION_C (ties go to the lower frequency)
};

// drivers/cpufreq/cpufreq_ondemand.c defaults.
struct OndemandTunables {
  uint32_t up_threshold = 80;          // DEF_FREQUENCY_UP_THRESHOLD
  uint32_t sampling_down_factor = 1;   // DEF_SAMPLING_DOWN_FACTOR
  // od_update() asks for RELATION_C on the proportional path.
  FrequencyRelation relation = FrequencyRelation::kClosest;
};

// Shafik et al. leave omega, E, K1, K2 and the "E ~ 0" band to be "evaluated
// empirically"; these are our values, see thermal_aware_policy.cc.
struct ThermalAwareTunables {
  double omega = 0.5;            // eq. 6 moving-average coefficient
  uint32_t window = 4;           // eq. 6 E, at most WorkloadPredictor::kMaxWindow
  bool normalise_ewma = false;   // true: divide eq. 6 by the sum of its weights
  double k1 = 24.0;              // eq. 7, 8; 8 overshoots, 32 corrects too slowly (budget_tracking_bench)
  double k2 = 1.0;               // eq. 9
  double delta_f_khz = 0.0;      // eq. 7, 8 step; 0 = smallest table step, else 100 MHz
  double error_band_pct = 2.0;   // |E| at or below this counts as E ~ 0 (eq. 7)
  // eq. 10 sums the error of the last error_window intervals; 0 = every
  // interval since the last DCT step, as printed in the paper.
  uint32_t error_window = 1;
  // Not in the paper: eq. 8 takes excess back this much faster than it gives
  // slack out (a budget is a limit); 1 = the paper's symmetric rule.
  double over_budget_gain = 2.0;
  // Not in the paper: when DCT adds threads, scale every thread's frequency
  // by D_old / D_new so that the app's power stays put instead of jumping
  // by a whole thread and waiting for eq. 8 to take it back.
  bool dct_feed_forward = true;
  // Not in the paper: DCT adds a thread only while P < budget * (1 - band),
  // band = max(dct_band_pct, 50 / D) %; 0 = the paper's rule (any P below
  // the budget adds one).
  double dct_band_pct = 5.0;
  // Not in the paper: over the budget DCT removes ceil(D (P - B) / P)
  // threads (one when barely over) instead of exactly one.
  bool dct_proportional_cut = true;
  // Not in the paper (the efficiency policy turns it on): D grows whenever
  // every thread could run D / (D+1) as fast and stay at or above the lowest
  // clock, even at the budget: D+1 cores at a lower clock do the work of D
  // for less power, since V falls with f. Over the budget D drops only once
  // the clocks are at the bottom; until then eq. 8 takes the excess back.
  // false = the rules above, where eq. 8, ten times as frequent, takes any
  // slack as clock before DCT can take it as width.
  bool dct_width_first = false;
  // Not in the paper (the efficiency policy turns it on): instead of
  // Algorithm 1's swap by temperature std-dev (lines 7-12), move threads
  // from the app's hottest busy cores to its coolest idle ones, by mean
  // temperature over the interval, while the two differ by more than this
  // many kelvin; 0 = the paper's swap.
  double swap_to_coolest_k = 0.0;
};

// Ours (efficiency): how much slower than at the highest clock a thread
// may run because its clock was lowered for memory stalls.
struct EfficiencyTunables {
  double max_slowdown_pct = 4.0;
  double omega = 0.5;   // moving average of the frequency-insensitive share
};

struct PolicyConfig {
  double dct_interval_s = 0.5;   // dT_DCT
  uint32_t dvfs_per_dct = 10;    // N: dT_DVFS = dT_DCT / N
  OndemandTunables ondemand;
  ThermalAwareTunables thermal;
  EfficiencyTunables efficiency;

  double dvfsIntervalS() const { return dvfs_per_dct ? dct_interval_s / dvfs_per_dct : dct_interval_s; }
};

}  // namespace nk
