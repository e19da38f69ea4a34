#pragma once

// In-memory stand-ins for the platform interfaces, so that the node domain
// classes are tested without sysfs. Each write can be made to fail.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "platform/cpu_freq.h"
#include "platform/power_meter.h"
#include "platform/thermal_sensors.h"

namespace nk::test {

class FakeCpuFreq final : public CpuFreq {
 public:
  // `cores` policies with one CPU each, acpi-cpufreq style table 1.2-2.6 GHz.
  explicit FakeCpuFreq(uint32_t cores, bool intel_pstate = false) {
    for (uint32_t i = 0; i < cores; ++i) {
      CpuFreqPolicy p;
      p.id = i;
      p.affected_cpus = {i};
      p.cpuinfo_min_khz = 1200000;
      p.cpuinfo_max_khz = 2600000;
      p.min_khz = 1200000;
      p.max_khz = 2600000;
      p.cur_khz = 1200000;
      if (intel_pstate) {
        p.driver = "intel_pstate";
        p.intel_pstate_active = true;
        p.governor = "powersave";
        p.available_governors = {"performance", "powersave"};
      } else {
        p.driver = "acpi-cpufreq";
        p.governor = "ondemand";
        p.available_governors = {"conservative", "ondemand", "userspace", "powersave", "performance"};
        for (uint64_t f = 1200000; f <= 2600000; f += 100000) p.available_khz.push_back(f);
      }
      policies_[i] = p;
    }
  }

  Result<std::vector<uint32_t>> policyIds() override {
    std::vector<uint32_t> ids;
    for (const auto& [id, p] : policies_) ids.push_back(id);
    return ids;
  }
  Result<CpuFreqPolicy> readPolicy(uint32_t id) override {
    if (!policies_.count(id)) return notFound("no policy");
    return policies_[id];
  }
  Result<uint64_t> readCurrentKhz(uint32_t id) override {
    if (!policies_.count(id)) return notFound("no policy");
    return policies_[id].cur_khz;
  }
  Status setMinKhz(uint32_t id, uint64_t khz) override { return write(id, "min", [&](CpuFreqPolicy& p) { p.min_khz = khz; }); }
  Status setMaxKhz(uint32_t id, uint64_t khz) override { return write(id, "max", [&](CpuFreqPolicy& p) { p.max_khz = khz; }); }
  Status setSpeedKhz(uint32_t id, uint64_t khz) override {
    return write(id, "speed", [&](CpuFreqPolicy& p) {
      p.setspeed_khz = khz;
      p.cur_khz = khz;
    });
  }
  Status setGovernor(uint32_t id, std::string_view governor) override {
    return write(id, "governor", [&](CpuFreqPolicy& p) {
      p.governor = std::string(governor);
      if (governor == "userspace") p.setspeed_khz = p.cur_khz;
      else p.setspeed_khz.reset();
    });
  }

  template <typename F>
  Status write(uint32_t id, const std::string& what, F apply) {
    ++writes;
    if (fail_on.count(what + std::to_string(id))) return unavailable("injected failure writing " + what);
    if (!policies_.count(id)) return notFound("no policy");
    apply(policies_[id]);
    return {};
  }

  std::map<uint32_t, CpuFreqPolicy> policies_;
  std::set<std::string> fail_on;  // e.g. "max3"
  int writes = 0;
};

class FakePowerMeter final : public PowerMeter {
 public:
  explicit FakePowerMeter(uint32_t packages) {
    for (uint32_t i = 0; i < packages; ++i) {
      RaplZone z;
      z.index = i;
      z.name = "package-" + std::to_string(i);
      z.max_energy_range_uj = 1000000;
      z.power_limit_uw = 95000000;
      z.enabled = false;
      zones_.push_back(z);
    }
  }
  Result<std::vector<RaplZone>> readZones() override { return zones_; }
  Result<uint64_t> readEnergyUj(uint32_t zone) override {
    if (zone >= zones_.size()) return notFound("no zone");
    return zones_[zone].energy_uj;
  }
  Status setPowerLimitUw(uint32_t zone, uint64_t uw) override {
    if (fail_limit_on == static_cast<int>(zone)) return unavailable("injected failure");
    zones_.at(zone).power_limit_uw = uw;
    return {};
  }
  Status setEnabled(uint32_t zone, bool enabled) override {
    zones_.at(zone).enabled = enabled;
    return {};
  }
  std::vector<RaplZone> zones_;
  int fail_limit_on = -1;
};

class FakeThermal final : public ThermalSensors {
 public:
  Result<std::vector<TemperatureReading>> read() override { return readings; }
  std::vector<TemperatureReading> readings;
};

}  // namespace nk::test
