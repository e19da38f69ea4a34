#pragma once

#include <filesystem>

#include "thermal_sensors.h"

namespace nk {

// coretemp straight from <root>/sys/class/hwmon/hwmonN/temp*_{label,input}.
// Used under a non-default sysfs root, which libsensors cannot read.
class HwmonThermal final : public ThermalSensors {
 public:
  explicit HwmonThermal(std::filesystem::path root = "/");
  Result<std::vector<TemperatureReading>> read() override;

 private:
  std::filesystem::path hwmon_dir_;
};

}  // namespace nk
