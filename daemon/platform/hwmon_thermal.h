#pragma once

#include <filesystem>
#include <vector>

#include "held_sysfs_file.h"
#include "thermal_sensors.h"

namespace nk {

// coretemp straight from <root>/sys/class/hwmon/hwmonN/temp*_{label,input}.
// Used under a non-default sysfs root, which libsensors cannot read.
class HwmonThermal final : public ThermalSensors {
 public:
  explicit HwmonThermal(std::filesystem::path root = "/");
  Result<std::vector<TemperatureReading>> read() override;

 private:
  // Finding the sensors walks directories and resolves symlinks; the
  // sampler reads ten times a second, so the inputs found are remembered and
  // only their values re-read, with a fresh walk on any failure and now and
  // then in case chips come or go.
  Result<std::vector<TemperatureReading>> discover();
  struct KnownInput {
    TemperatureReading reading;  // all but celsius
    HeldSysfsFile input;
  };
  std::filesystem::path hwmon_dir_;
  std::vector<KnownInput> known_;
  unsigned reads_since_discovery_ = 0;
};

}  // namespace nk
