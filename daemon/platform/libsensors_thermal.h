#pragma once

#include <memory>

#include "thermal_sensors.h"

namespace nk {

// coretemp through libsensors, on a real host (libsensors reads only /sys).
class LibsensorsThermal final : public ThermalSensors {
 public:
  // Fails when libsensors cannot initialise.
  static Result<std::unique_ptr<LibsensorsThermal>> create();
  ~LibsensorsThermal() override;
  Result<std::vector<TemperatureReading>> read() override;

 private:
  LibsensorsThermal() = default;
};

}  // namespace nk
