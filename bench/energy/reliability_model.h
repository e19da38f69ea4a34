#pragma once

#include <cstdint>
#include <vector>

namespace nk::sim {

// Lifetime reliability after RAMP (Srinivasan et al., "The Case for
// Lifetime Reliability-Aware Microprocessors", ISCA 2004 — the model the
// paper (Shafik et al.) cites as [8]): four wear-out mechanisms per core, electromigration
// (EM), stress migration (SM), time-dependent dielectric breakdown (TDDB)
// and thermal cycling (TC), combined by the sum of failure rates (SOFR) over
// mechanisms and over cores (a series system: the first core to fail fails
// the processor). EM, SM and TDDB rates are averaged over time as the
// temperature and voltage move; TC uses each core's average temperature
// above ambient, as RAMP does.
//
// Qualification, RAMP's convention: the processor is rated for 30 years
// with every core at 345 K and the highest voltage, each mechanism taking an
// equal share of the failure rate. EM's current-density term is left at its
// qualification value (the emulated node has no per-core current).
class ReliabilityModel {
 public:
  ReliabilityModel(uint32_t cores, double ambient_c, double qualification_v);

  // One interval of dt seconds at these temperatures and voltages.
  void add(const std::vector<double>& core_temp_c, const std::vector<double>& core_volts, double dt_s);
  // MTTF of the processor, in years; infinite before any add().
  double mttfYears() const;

  static constexpr double kQualificationK = 345.0;
  static constexpr double kQualifiedYears = 30.0;

 private:
  double ambient_k_;
  double qualification_v_;
  double time_s_ = 0.0;
  std::vector<double> rate_time_;   // per core: integral of the EM+SM+TDDB rate
  std::vector<double> temp_time_;   // per core: integral of the temperature (K)
};

}  // namespace nk::sim
