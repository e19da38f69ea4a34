#include "energy/ilc_controller.h"

#include <algorithm>
#include <cmath>

namespace nk {

IlcController::IlcController(const IlcParams& params) : params_(params) {
  if (!(params_.k1 > 0.0) || !std::isfinite(params_.k1))
    params_.k1 = 8.0;
  if (!std::isfinite(params_.k2))
    params_.k2 = 1.0;
  if (!(params_.delta_f_khz > 0.0) || !std::isfinite(params_.delta_f_khz))
    params_.delta_f_khz = 100000.0;
  params_.error_window = std::min(params_.error_window, kMaxWindow);
  if (!(params_.over_budget_gain > 0.0) || !std::isfinite(params_.over_budget_gain))
    params_.over_budget_gain = 1.0;
}

void IlcController::start(double f_khz) {
  f_khz_ = std::isfinite(f_khz) ? f_khz : 0.0;
  started_ = true;
  resetError();
}

void IlcController::resetError() {
  head_ = 0;
  count_ = 0;
  total_diff_ = 0.0;
}

// f_{t-1} is the controller's own last output, kept unquantised: with a
// frequency table the applied value is rounded, and feeding the rounded
// value back would swallow every correction smaller than a table step.
double IlcController::step(double power_w, double budget_w, double predicted_cycles,
                           double interval_s, double fmin_khz, double fmax_khz) {
  if (!started_)
    start(fmax_khz);
  if (!std::isfinite(power_w) || power_w < 0.0)
    power_w = budget_w;  // no reading: no evidence of an error
  if (!(budget_w > 0.0)) {
    last_error_pct_ = 0.0;
    return f_khz_ = std::clamp(f_khz_, fmin_khz, fmax_khz);
  }

  // Eq. 10: E_{t-1} = (1 / P_budget) * sum_{i=1}^{t-1} (P_i - P_budget), in %.
  double diff = power_w - budget_w;
  head_ = (head_ + 1) % kMaxWindow;
  diffs_[head_] = diff;
  if (count_ < kMaxWindow)
    ++count_;
  total_diff_ += diff;
  double sum = 0.0;
  if (params_.error_window == 0) {
    // As printed. With eq. 8's incremental update this makes f a double
    // integrator of the error: for a plant P = k f the closed loop is
    // z^2 + (a - 2) z + 1 = 0, both roots on the unit circle, so it
    // oscillates instead of settling. Kept for comparison only.
    sum = total_diff_;
  } else {
    uint32_t terms = std::min(params_.error_window, count_);
    for (uint32_t i = 0; i < terms; ++i)
      sum += diffs_[(head_ + kMaxWindow - i) % kMaxWindow];
  }
  double error_pct = 100.0 * sum / budget_w;
  last_error_pct_ = error_pct;

  double f = f_khz_;
  if (std::fabs(error_pct) <= params_.error_band_pct) {
    // Eq. 9: k = exp[K2 * (W^ / (fmax * dt) - 1)], W^ in cycles, fmax in Hz.
    double capacity = fmax_khz * 1000.0 * interval_s;
    double ratio = capacity > 0.0 && std::isfinite(predicted_cycles) ? predicted_cycles / capacity : 0.0;
    double k = std::exp(params_.k2 * (ratio - 1.0));
    if (!std::isfinite(k))
      k = 0.0;
    last_k_ = k;
    last_eq7_ = true;
    // Eq. 7: f_t = f_{t-1} - delta_f * k / K1.
    f -= params_.delta_f_khz * k / params_.k1;
  } else {
    last_eq7_ = false;
    // Eq. 8: f_t = f_{t-1} - (delta_f / K1) * E_{t-1}.
    double gain = error_pct > 0.0 ? params_.over_budget_gain : 1.0;
    f -= params_.delta_f_khz / params_.k1 * gain * error_pct;
  }
  // Clamping the state is the anti-windup: a budget the core cannot reach
  // must not leave a debt that takes many steps to pay back.
  f_khz_ = std::clamp(f, fmin_khz, std::max(fmin_khz, fmax_khz));
  return f_khz_;
}

}  // namespace nk
