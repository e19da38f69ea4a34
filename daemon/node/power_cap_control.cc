#include "power_cap_control.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "saved_controls.h"

namespace nk {

namespace {
// Far above any package's TDP; guards against unit mistakes (mW for W).
constexpr double kMaxCapW = 5000;

std::string watts(double w) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f W", w);
  return buffer;
}
}  // namespace

PowerCapControl::PowerCapControl(PowerMeter& meter, SavedControls& saved) : meter_(meter), saved_(saved) {}

std::string PowerCapControl::controlKey(uint32_t zone, std::string_view file) {
  return SavedControls::makeKey("rapl", zone, file);
}

Result<std::vector<RaplZone>> PowerCapControl::zones() { return meter_.readZones(); }

Result<std::vector<RaplZone>> PowerCapControl::zonesFor(const std::vector<uint32_t>& packages) {
  auto all = meter_.readZones();
  if (!all) return all.error();
  if (all->empty()) return unavailable("this node exposes no RAPL power zones");
  if (packages.empty()) return all;
  std::vector<RaplZone> chosen;
  for (uint32_t package : packages) {
    auto it = std::find_if(all->begin(), all->end(), [&](const RaplZone& z) { return z.index == package; });
    if (it == all->end())
      return notFound("package " + std::to_string(package) + " has no RAPL zone (this node has " +
                      std::to_string(all->size()) + " packages)");
    chosen.push_back(*it);
  }
  return chosen;
}

Status PowerCapControl::saveOriginals(const RaplZone& zone) {
  if (zone.power_limit_uw) {
    if (Status s = saved_.remember(controlKey(zone.index, "constraint_0_power_limit_uw"), std::to_string(*zone.power_limit_uw)); !s)
      return s;
  }
  return saved_.remember(controlKey(zone.index, "enabled"), zone.enabled ? "1" : "0");
}

Result<std::string> PowerCapControl::setCap(const std::vector<uint32_t>& packages, double limit_w) {
  if (!(limit_w > 0) || !std::isfinite(limit_w))
    return invalidArgument("power cap must be a positive number of watts");
  if (limit_w > kMaxCapW)
    return invalidArgument("power cap " + watts(limit_w) + " is above " + watts(kMaxCapW) + "; did you mean mW?");
  auto chosen = zonesFor(packages);
  if (!chosen) return chosen.error();
  auto limit_uw = static_cast<uint64_t>(std::llround(limit_w * 1e6));
  // Every package is checked before anything is saved or written: a cap
  // refused on one package is applied to none.
  for (const auto& zone : *chosen) {
    if (!zone.power_limit_uw)
      return unavailable("package " + std::to_string(zone.index) + " (" + zone.name + ") has no power limit control");
    if (zone.max_power_uw && limit_uw > *zone.max_power_uw)
      return invalidArgument("power cap " + watts(limit_w) + " is above package " + std::to_string(zone.index) +
                             "'s maximum of " + watts(static_cast<double>(*zone.max_power_uw) / 1e6) +
                             " (constraint_0_max_power_uw)");
  }
  for (const auto& zone : *chosen) {
    if (Status s = saveOriginals(zone); !s) return s.error();
  }
  std::vector<const RaplZone*> done;
  for (const auto& zone : *chosen) {
    Status s = meter_.setPowerLimitUw(zone.index, limit_uw);
    if (s) s = meter_.setEnabled(zone.index, true);
    if (!s) {
      for (const RaplZone* previous : done) {
        (void)meter_.setPowerLimitUw(previous->index, *previous->power_limit_uw);
        (void)meter_.setEnabled(previous->index, previous->enabled);
      }
      return s.error();
    }
    done.push_back(&zone);
  }
  std::string which;
  for (const auto& zone : *chosen) which += (which.empty() ? "" : ",") + std::to_string(zone.index);
  return "power cap " + watts(limit_w) + " on package" + (chosen->size() > 1 ? "s " : " ") + which;
}

Result<std::string> PowerCapControl::disable(const std::vector<uint32_t>& packages) {
  auto chosen = zonesFor(packages);
  if (!chosen) return chosen.error();
  for (const auto& zone : *chosen) {
    if (Status s = saveOriginals(zone); !s) return s.error();
  }
  for (const auto& zone : *chosen) {
    if (Status s = meter_.setEnabled(zone.index, false); !s) return s.error();
  }
  return "power cap disabled on " + std::to_string(chosen->size()) + " package(s)";
}

Status PowerCapControl::restore(const std::vector<SavedControls::Entry>& originals) {
  Status first_error;
  for (const auto& [key, value] : originals) {
    auto control = SavedControls::splitKey(key);
    if (!control || control->domain != "rapl") continue;
    uint32_t zone = control->id;
    const std::string& file = control->file;
    Status s;
    if (file == "enabled") {
      s = meter_.setEnabled(zone, value == "1");
    } else if (file == "constraint_0_power_limit_uw") {
      uint64_t uw = 0;
      auto [p, e] = std::from_chars(value.data(), value.data() + value.size(), uw);
      s = (e == std::errc()) ? meter_.setPowerLimitUw(zone, uw) : Status(invalidArgument("bad saved value " + value));
    }
    if (!s && first_error.ok()) first_error = s;
  }
  return first_error;
}

}  // namespace nk
