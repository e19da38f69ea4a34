#pragma once

#include <cstdint>
#include <string>

namespace nk::cli {

// Numbers with their units for human output; "-" where a value is unknown
// (NaN, or 0 where 0 means "not reported").
class ValueFormatter {
 public:
  static std::string frequency(uint64_t khz);                   // "2.60 GHz"
  static std::string frequencyRange(uint64_t min_khz, uint64_t max_khz);  // "1.20-2.60 GHz"
  static std::string temperature(double celsius);               // "54.3 °C"
  static std::string utilisation(double fraction);              // 0.374 -> "37 %"
  static std::string power(double watts);                       // "45.2 W"
  static std::string energy(double joules);                     // "512.3 J", "12.35 kJ"
  static std::string powerLimit(double watts, bool enabled);    // "45.0 W (enabled)", "none"
  static std::string timestamp(int64_t realtime_ns);            // local "2024-05-01 12:00:03"
};

}  // namespace nk::cli
