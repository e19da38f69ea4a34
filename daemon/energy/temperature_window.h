#pragma once

#include <cstdint>

namespace nk {

// Per-core temperature spread over one dT_DCT interval (Shafik et al.'s eq. 3).
class TemperatureWindow {
 public:
  void add(double temp_c);
  void reset();
  double stdDev() const;
  double mean() const { return mean_; }
  uint32_t samples() const { return count_; }

 private:
  // Welford's running mean and M2: no buffer, no cancellation.
  uint32_t count_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
};

}  // namespace nk
