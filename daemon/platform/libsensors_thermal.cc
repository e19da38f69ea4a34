#include "libsensors_thermal.h"

#include <sensors/error.h>
#include <sensors/sensors.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "sysfs_file.h"

namespace nk {

namespace {

// libsensors keeps its chip list in globals and is not thread safe: one
// sensors_init for all instances, torn down with the last, and every call
// made under the same lock.
std::mutex& libsensorsMutex() {
  static std::mutex mutex;
  return mutex;
}
int libsensors_users = 0;  // guarded by libsensorsMutex()

std::string label(const sensors_chip_name* chip, const sensors_feature* feature) {
  char* raw = sensors_get_label(chip, feature);
  if (!raw) return feature->name ? feature->name : "";
  std::string text = raw;
  std::free(raw);
  return text;
}

}  // namespace

Result<std::unique_ptr<LibsensorsThermal>> LibsensorsThermal::create() {
  std::lock_guard lock(libsensorsMutex());
  if (libsensors_users == 0) {
    // nullptr: the default /etc/sensors3.conf and /etc/sensors.d, as the
    // `sensors` tool uses, so that labels match what admins see.
    int rc = sensors_init(nullptr);
    if (rc != 0) return unavailable(std::string("libsensors initialisation failed: ") + sensors_strerror(rc));
  }
  ++libsensors_users;
  return std::unique_ptr<LibsensorsThermal>(new LibsensorsThermal());
}

LibsensorsThermal::~LibsensorsThermal() {
  std::lock_guard lock(libsensorsMutex());
  if (--libsensors_users == 0) sensors_cleanup();
}

Result<std::vector<TemperatureReading>> LibsensorsThermal::read() {
  std::lock_guard lock(libsensorsMutex());
  std::vector<TemperatureReading> readings;
  std::string first_failure;
  int chip_nr = 0;
  while (const sensors_chip_name* chip = sensors_get_detected_chips(nullptr, &chip_nr)) {
    if (!chip->prefix || std::strncmp(chip->prefix, "coretemp", 8) != 0) continue;

    struct Sensor {
      TemperatureReading reading;
      const sensors_subfeature* input;
    };
    std::vector<Sensor> sensors;
    std::optional<uint32_t> labelled_package;
    int feature_nr = 0;
    while (const sensors_feature* feature = sensors_get_features(chip, &feature_nr)) {
      if (feature->type != SENSORS_FEATURE_TEMP) continue;
      const sensors_subfeature* input = sensors_get_subfeature(chip, feature, SENSORS_SUBFEATURE_TEMP_INPUT);
      if (!input) continue;
      Sensor sensor{{}, input};
      sensor.reading.label = label(chip, feature);
      if (auto package = SysfsFile::indexAfterPrefix(sensor.reading.label, "Package id ")) {
        sensor.reading.kind = TemperatureReading::Kind::kPackage;
        if (!labelled_package) labelled_package = *package;
      } else if (auto core = SysfsFile::indexAfterPrefix(sensor.reading.label, "Core ")) {
        sensor.reading.kind = TemperatureReading::Kind::kCore;
        sensor.reading.core_id = *core;
      } else {
        continue;
      }
      sensors.push_back(std::move(sensor));
    }

    // coretemp.N is a platform device whose N is the package; libsensors
    // puts that N in addr.
    uint32_t package = labelled_package.value_or(chip->addr >= 0 ? static_cast<uint32_t>(chip->addr) : 0);
    for (Sensor& sensor : sensors) {
      double value = 0;
      int rc = sensors_get_value(chip, sensor.input->number, &value);
      if (rc != 0) {
        if (first_failure.empty())
          first_failure = std::string(chip->prefix) + " " + sensor.reading.label + ": " + sensors_strerror(rc);
        continue;
      }
      sensor.reading.package = package;
      sensor.reading.celsius = value;
      readings.push_back(std::move(sensor.reading));
    }
  }
  if (readings.empty()) {
    if (!first_failure.empty()) return unavailable("no coretemp temperature could be read: " + first_failure);
    return unavailable("no coretemp sensors found by libsensors");
  }
  return readings;
}

}  // namespace nk
