#include "faults/scheduling_delay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nk {

void SchedulingDelay::tickLate(std::chrono::nanoseconds lateness, std::chrono::nanoseconds period, int64_t now_ns) {
  if (period.count() <= 0) return;
  const double ratio = std::max(0.0, static_cast<double>(lateness.count()) / static_cast<double>(period.count()));
  const int64_t memory_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.memory).count();
  std::lock_guard lock(mutex_);
  while (!late_ticks_.empty() && now_ns - late_ticks_.front().first > memory_ns) late_ticks_.pop_front();
  // Only a lateness larger than every one after it can be the maximum
  // while it is remembered: the rest need not be kept.
  while (!late_ticks_.empty() && late_ticks_.back().second <= ratio) late_ticks_.pop_back();
  late_ticks_.emplace_back(now_ns, ratio);
}

void SchedulingDelay::cpuPressure(std::optional<double> some_avg10_percent) {
  std::lock_guard lock(mutex_);
  pressure_percent_ = some_avg10_percent ? std::clamp(*some_avg10_percent, 0.0, 100.0) : 0.0;
}

double SchedulingDelay::fromTicksLocked() const {
  return 1.0 + (late_ticks_.empty() ? 0.0 : late_ticks_.front().second);
}

double SchedulingDelay::boundedLocked(double factor) const {
  factor = std::clamp(factor, 1.0, std::max(1.0, options_.max_factor));
  // A wake-up a few percent of a period late is timer slack, not a busy host.
  return factor < 1.05 ? 1.0 : factor;
}

double SchedulingDelay::factor() const {
  std::lock_guard lock(mutex_);
  const double from_pressure = 1.0 + options_.pressure_weight * pressure_percent_ / 100.0;
  return boundedLocked(std::max(fromTicksLocked(), from_pressure));
}

double SchedulingDelay::threadFactor() const {
  std::lock_guard lock(mutex_);
  return boundedLocked(fromTicksLocked());
}

std::chrono::milliseconds SchedulingDelay::scale(std::chrono::milliseconds timeout, double factor) {
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(static_cast<double>(timeout.count()) * std::max(1.0, factor))));
}

std::string SchedulingDelay::describe(std::chrono::milliseconds timeout, double factor) {
  if (factor <= 1.0) return std::to_string(timeout.count()) + " ms";
  char text[128];
  std::snprintf(text, sizeof text, "%lld ms x%.1f for this host's scheduling delay = %lld ms",
                static_cast<long long>(timeout.count()), factor, static_cast<long long>(scale(timeout, factor).count()));
  return text;
}

}  // namespace nk
