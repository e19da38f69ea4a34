#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace nk {

struct TemperatureReading {
  enum class Kind { kCore, kPackage };
  Kind kind = Kind::kCore;
  uint32_t package = 0;
  uint32_t core_id = 0;   // "Core N" (unused for packages)
  double celsius = 0;
  std::string label;      // as the chip names it
};

// Core and package temperatures (coretemp).
class ThermalSensors {
 public:
  virtual ~ThermalSensors() = default;
  virtual Result<std::vector<TemperatureReading>> read() = 0;
};

}  // namespace nk
