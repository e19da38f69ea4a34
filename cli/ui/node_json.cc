#include "cli/ui/node_json.h"

#include <cmath>
#include <set>

namespace nk::ui {

namespace {

nlohmann::json number(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

double watts(uint64_t milliwatts) { return static_cast<double>(milliwatts) / 1000.0; }

}  // namespace

nlohmann::json NodeJson::telemetry(const nodekeeper::v1::TelemetrySnapshot& snapshot) {
  nlohmann::json cores = nlohmann::json::array();
  for (const auto& c : snapshot.cores())
    cores.push_back({{"id", c.id()},
                     {"package", c.package()},
                     {"cur_khz", c.cur_khz()},
                     {"min_khz", c.min_khz()},
                     {"max_khz", c.max_khz()},
                     {"temperature_c", number(c.temperature_c())},
                     {"utilisation", number(c.utilisation())}});
  nlohmann::json packages = nlohmann::json::array();
  for (const auto& p : snapshot.packages())
    packages.push_back({{"id", p.id()},
                        {"power_w", number(p.power_w())},
                        {"energy_j", number(p.energy_j())},
                        // 0 when the package has no cap, or its cap is off.
                        {"power_limit_w", p.power_limit_enabled() ? number(p.power_limit_w()) : nlohmann::json(0.0)},
                        {"temperature_c", number(p.temperature_c())}});
  return {{"monotonic_ns", snapshot.monotonic_ns()},
          {"cores", std::move(cores)},
          {"packages", std::move(packages)},
          {"node_power_w", number(snapshot.node_power_w())}};
}

nlohmann::json NodeJson::apps(const nodekeeper::v1::AppList& list) {
  nlohmann::json apps = nlohmann::json::array();
  for (const auto& a : list.apps()) {
    // The node cores the daemon placed the app's threads on.
    std::set<int32_t> cores;
    for (const auto& t : a.threads())
      if (t.core() >= 0) cores.insert(t.core());
    apps.push_back({{"pid", a.pid()},
                    {"program", a.name()},
                    {"power_budget_w", watts(a.power_budget_mw())},
                    {"effective_budget_w", watts(a.effective_budget_mw())},
                    {"power_w", watts(a.measured_power_mw())},
                    {"thread_count", a.thread_count()},
                    {"cpus", nlohmann::json(std::vector<int32_t>(cores.begin(), cores.end()))}});
  }
  return {{"apps", std::move(apps)}};
}

}  // namespace nk::ui
