#include "hwmon_thermal.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "sysfs_file.h"

namespace nk {

namespace {

struct Chip {
  std::optional<uint32_t> labelled_package;  // from "Package id P"
  std::optional<uint32_t> device_index;      // from coretemp.N
  std::vector<TemperatureReading> readings;
  std::vector<std::filesystem::path> inputs;  // parallel to readings
  uint32_t package = 0;
};

struct Input {
  uint32_t index = 0;  // K in tempK_label
  std::filesystem::path label;
  std::filesystem::path input;
};

// Kernels before 3.x kept `name` under device/; both layouts still exist.
std::optional<std::string> chipName(const std::filesystem::path& dir) {
  if (auto name = SysfsFile::readText(dir / "name")) return *name;
  if (auto name = SysfsFile::readText(dir / "device" / "name")) return *name;
  return std::nullopt;
}

std::optional<uint32_t> coretempIndex(const std::filesystem::path& path) {
  return SysfsFile::indexAfterPrefix(path.filename().native(), "coretemp.");
}

// The platform device is coretemp.N with N the package on every x86 kernel.
// It shows through hwmonN/device on a real host, and through the resolved
// path class/hwmon/hwmonN -> devices/platform/coretemp.N/hwmon/hwmonN when
// there is no device link (the emulated tree).
std::optional<uint32_t> deviceIndex(const std::filesystem::path& dir) {
  std::error_code ec;
  auto device = std::filesystem::canonical(dir / "device", ec);
  if (!ec) {
    if (auto index = coretempIndex(device)) return index;
  }
  auto resolved = std::filesystem::canonical(dir, ec);
  if (!ec) return coretempIndex(resolved.parent_path().parent_path());
  return std::nullopt;
}

std::vector<Input> listInputs(const std::filesystem::path& dir) {
  constexpr std::string_view kSuffix = "_label";
  std::vector<Input> inputs;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string filename = it->path().filename().native();
    std::string_view name = filename;
    if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) continue;
    std::string_view stem = name.substr(0, name.size() - kSuffix.size());
    auto index = SysfsFile::indexAfterPrefix(stem, "temp");
    if (!index) continue;
    inputs.push_back({*index, it->path(), dir / (std::string(stem) + "_input")});
  }
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.index < b.index; });
  return inputs;
}

}  // namespace

HwmonThermal::HwmonThermal(std::filesystem::path root) : hwmon_dir_(root / "sys/class/hwmon") {}

namespace {
constexpr unsigned kRediscoverEveryReads = 100;
}

Result<std::vector<TemperatureReading>> HwmonThermal::read() {
  if (known_.empty() || ++reads_since_discovery_ >= kRediscoverEveryReads) return discover();
  std::vector<TemperatureReading> readings;
  readings.reserve(known_.size());
  for (KnownInput& known : known_) {
    auto millidegrees = known.input.readInt64();
    if (!millidegrees) return discover();
    readings.push_back(known.reading);
    readings.back().celsius = static_cast<double>(*millidegrees) / 1000.0;
  }
  return readings;
}

// An unreadable sensor must not hide the others (coretemp returns EIO for a
// core whose reading is invalid), so failures are only collected, and become
// the answer only when nothing at all could be read.
Result<std::vector<TemperatureReading>> HwmonThermal::discover() {
  known_.clear();
  reads_since_discovery_ = 0;
  auto entries = SysfsFile::listIndexed(hwmon_dir_, "hwmon");
  if (!entries) return entries.error();

  std::vector<Chip> chips;
  std::vector<std::string> failures;
  for (const auto& entry : *entries) {
    auto name = chipName(entry.path);
    if (!name || *name != "coretemp") continue;
    Chip chip;
    chip.device_index = deviceIndex(entry.path);
    for (const Input& input : listInputs(entry.path)) {
      auto label = SysfsFile::readText(input.label);
      if (!label) {
        failures.push_back(label.error().message);
        continue;
      }
      TemperatureReading reading;
      if (auto package = SysfsFile::indexAfterPrefix(*label, "Package id ")) {
        reading.kind = TemperatureReading::Kind::kPackage;
        if (!chip.labelled_package) chip.labelled_package = *package;
      } else if (auto core = SysfsFile::indexAfterPrefix(*label, "Core ")) {
        reading.kind = TemperatureReading::Kind::kCore;
        reading.core_id = *core;
      } else {
        continue;
      }
      auto millidegrees = SysfsFile::readInt64(input.input);
      if (!millidegrees) {
        failures.push_back(millidegrees.error().message);
        continue;
      }
      reading.celsius = static_cast<double>(*millidegrees) / 1000.0;
      reading.label = std::move(*label);
      chip.readings.push_back(std::move(reading));
      chip.inputs.push_back(input.input);
    }
    chip.package = chip.labelled_package.value_or(chip.device_index.value_or(static_cast<uint32_t>(chips.size())));
    chips.push_back(std::move(chip));
  }

  if (chips.empty())
    return unavailable(hwmon_dir_.string() + ": no coretemp chip (is the coretemp driver loaded?)");

  std::stable_sort(chips.begin(), chips.end(), [](const Chip& a, const Chip& b) { return a.package < b.package; });
  std::vector<TemperatureReading> readings;
  for (Chip& chip : chips) {
    for (size_t i = 0; i < chip.readings.size(); ++i) {
      chip.readings[i].package = chip.package;
      readings.push_back(chip.readings[i]);
      if (failures.empty()) known_.push_back({chip.readings[i], HeldSysfsFile(chip.inputs[i])});
    }
  }
  if (readings.empty()) {
    if (failures.empty())
      return unavailable(hwmon_dir_.string() + ": coretemp chips have no \"Core N\" or \"Package id N\" sensors");
    std::string message = "no coretemp temperature could be read: " + failures.front();
    if (failures.size() > 1) message += " (and " + std::to_string(failures.size() - 1) + " more)";
    return unavailable(std::move(message));
  }
  return readings;
}

}  // namespace nk
