#include "energy/workload_predictor.h"

#include <algorithm>
#include <cmath>

namespace nk {

WorkloadPredictor::WorkloadPredictor(double omega, uint32_t window, bool normalise)
    : omega_(std::isfinite(omega) ? std::clamp(omega, 0.0, 1.0) : 0.5),
      window_(std::clamp<uint32_t>(window, 1, kMaxWindow)),
      normalise_(normalise) {}

// A missing or negative counter reading would poison every later prediction.
void WorkloadPredictor::observe(double workload) {
  if (!std::isfinite(workload) || workload < 0.0)
    workload = 0.0;
  head_ = (head_ + 1) % kMaxWindow;
  history_[head_] = workload;
  if (count_ < kMaxWindow)
    ++count_;
}

// Eq. 6 as printed: W^_t = omega * W_{t-1} + sum_{i=1..E} (1 - omega)^i * W_{t-i}.
// W_{t-1} appears in both terms and the weights sum to more than 1
// (omega + (1-omega)(1-(1-omega)^E)/omega); normalise_ divides by that sum
// for a plain weighted average. Before E samples exist the sum runs over
// the samples there are.
double WorkloadPredictor::predict() const {
  if (count_ == 0)
    return 0.0;
  uint32_t terms = std::min(window_, count_);
  double newest = history_[head_];
  double value = omega_ * newest;
  double weights = omega_;
  double decay = 1.0;
  for (uint32_t i = 1; i <= terms; ++i) {
    decay *= (1.0 - omega_);
    value += decay * history_[(head_ + kMaxWindow - (i - 1)) % kMaxWindow];
    weights += decay;
  }
  if (normalise_ && weights > 0.0)
    value /= weights;
  return value;
}

}  // namespace nk
