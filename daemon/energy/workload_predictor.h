#pragma once

#include <array>
#include <cstdint>

namespace nk {

// EWMA workload prediction of one thread (Shafik et al.'s eq. 6).
class WorkloadPredictor {
 public:
  static constexpr uint32_t kMaxWindow = 16;

  WorkloadPredictor(double omega = 0.5, uint32_t window = 4, bool normalise = false);

  void observe(double workload);
  double predict() const;
  uint32_t samples() const { return count_; }

 private:
  double omega_;
  uint32_t window_;
  bool normalise_;
  std::array<double, kMaxWindow> history_{};  // ring; head_ is the newest
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace nk
