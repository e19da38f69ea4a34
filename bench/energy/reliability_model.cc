#include "reliability_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nk::sim {

namespace {

constexpr double kBoltzmannEv = 8.617e-5;
constexpr double kCelsiusToK = 273.15;
// RAMP's constants (ISCA 2004, section 3).
constexpr double kEmActivationEv = 0.9;
constexpr double kSmActivationEv = 0.9;
constexpr double kSmStressFreeK = 500.0;  // metal deposition temperature T0
constexpr double kSmExponent = 2.5;
constexpr double kTddbA = 78.0;
constexpr double kTddbB = -0.081;
constexpr double kTddbX = 0.759;
constexpr double kTddbY = -66.8;
constexpr double kTddbZ = -8.37e-4;
constexpr double kTcExponent = 2.35;  // Coffin-Manson q
constexpr double kMechanisms = 4.0;

// Logarithms of each mechanism's MTTF up to its proportionality constant;
// rates are formed as ratios to the qualification point.
double logEm(double k) { return kEmActivationEv / (kBoltzmannEv * k); }
double logSm(double k) {
  return -kSmExponent * std::log(std::max(1.0, std::fabs(kSmStressFreeK - k))) + kSmActivationEv / (kBoltzmannEv * k);
}
double logTddb(double k, double v) {
  return (kTddbA - kTddbB * k) * std::log(1.0 / v) + (kTddbX + kTddbY / k + kTddbZ * k) / (kBoltzmannEv * k);
}

}  // namespace

ReliabilityModel::ReliabilityModel(uint32_t cores, double ambient_c, double qualification_v)
    : ambient_k_(ambient_c + kCelsiusToK),
      qualification_v_(qualification_v),
      rate_time_(cores, 0.0),
      temp_time_(cores, 0.0) {}

void ReliabilityModel::add(const std::vector<double>& core_temp_c, const std::vector<double>& core_volts, double dt_s) {
  const double q = kQualificationK;
  const double v0 = qualification_v_;
  for (size_t c = 0; c < rate_time_.size() && c < core_temp_c.size(); ++c) {
    double k = core_temp_c[c] + kCelsiusToK;
    double v = c < core_volts.size() && core_volts[c] > 0 ? core_volts[c] : v0;
    // Rate relative to one mechanism at qualification = exp(logMTTF_q - logMTTF).
    double rate = std::exp(logEm(q) - logEm(k)) + std::exp(logSm(q) - logSm(k)) +
                  std::exp(logTddb(q, v0) - logTddb(k, v));
    rate_time_[c] += rate * dt_s;
    temp_time_[c] += k * dt_s;
  }
  time_s_ += dt_s;
}

double ReliabilityModel::mttfYears() const {
  if (time_s_ <= 0 || rate_time_.empty()) return std::numeric_limits<double>::infinity();
  const double cores = static_cast<double>(rate_time_.size());
  double q_swing = kQualificationK - ambient_k_;
  double relative = 0.0;  // sum over cores of rate / (one mechanism's rate at qualification)
  for (size_t c = 0; c < rate_time_.size(); ++c) {
    double avg_k = temp_time_[c] / time_s_;
    double swing = std::max(avg_k - ambient_k_, 1e-3);
    relative += rate_time_[c] / time_s_ + std::pow(swing / q_swing, kTcExponent);
  }
  // At qualification every core has relative rate kMechanisms and the
  // processor lives kQualifiedYears.
  return kQualifiedYears * kMechanisms * cores / relative;
}

}  // namespace nk::sim
