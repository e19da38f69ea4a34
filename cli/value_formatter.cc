#include "cli/value_formatter.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/units.h"

namespace nk::cli {

namespace {

std::string printf1(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

std::string ValueFormatter::frequency(uint64_t khz) {
  return khz == 0 ? "-" : formatFrequencyKhz(khz);
}

std::string ValueFormatter::frequencyRange(uint64_t min_khz, uint64_t max_khz) {
  if (min_khz == 0 && max_khz == 0) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f-%.2f GHz", static_cast<double>(min_khz) / 1e6,
                static_cast<double>(max_khz) / 1e6);
  return buffer;
}

std::string ValueFormatter::temperature(double celsius) {
  return std::isfinite(celsius) ? printf1("%.1f °C", celsius) : "-";
}

std::string ValueFormatter::utilisation(double fraction) {
  return std::isfinite(fraction) ? printf1("%.0f %%", fraction * 100.0) : "-";
}

std::string ValueFormatter::power(double watts) {
  return std::isfinite(watts) ? printf1("%.1f W", watts) : "-";
}

std::string ValueFormatter::energy(double joules) {
  if (!std::isfinite(joules)) return "-";
  if (std::fabs(joules) >= 1000.0) return printf1("%.2f kJ", joules / 1000.0);
  return printf1("%.1f J", joules);
}

std::string ValueFormatter::powerLimit(double watts, bool enabled) {
  if (!std::isfinite(watts) || watts <= 0) return enabled ? "enabled, no limit" : "none";
  return power(watts) + (enabled ? " (enabled)" : " (disabled)");
}

std::string ValueFormatter::timestamp(int64_t realtime_ns) {
  if (realtime_ns <= 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1000000000);
  std::tm local{};
  if (localtime_r(&seconds, &local) == nullptr) return "-";
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &local);
  return buffer;
}

}  // namespace nk::cli
