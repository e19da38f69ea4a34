#include "energy/temperature_window.h"

#include <cmath>

namespace nk {

// A failed sensor read (NaN, or absurd values) is skipped rather than
// counted, so one bad sample cannot make a core look like the hottest.
void TemperatureWindow::add(double temp_c) {
  if (!std::isfinite(temp_c) || temp_c < -100.0 || temp_c > 200.0)
    return;
  ++count_;
  double delta = temp_c - mean_;
  mean_ += delta / count_;
  m2_ += delta * (temp_c - mean_);
}

void TemperatureWindow::reset() {
  count_ = 0;
  mean_ = 0.0;
  m2_ = 0.0;
}

// Eq. 3: std(Temp_c) = sqrt(1/N * sum_t (Temp_c,t - mean Temp_c)^2), the
// population form (divide by the sample count, not count - 1).
double TemperatureWindow::stdDev() const {
  if (count_ < 2)
    return 0.0;
  double var = m2_ / count_;
  return var > 0.0 ? std::sqrt(var) : 0.0;
}

}  // namespace nk
