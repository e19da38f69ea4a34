#include "app_load_accounting.h"

#include <algorithm>
#include <cmath>

namespace nk {

std::optional<ThreadActivity> AppLoadAccounting::observe(const ThreadReading& reading, double now_s) {
  auto it = last_.find(reading.tid);
  if (it == last_.end()) {
    last_.emplace(reading.tid, Last{reading, now_s});
    return std::nullopt;
  }
  Last previous = it->second;
  it->second = Last{reading, now_s};
  double dt = now_s - previous.time_s;
  if (!(dt > 0.0) || reading.run_ns < previous.reading.run_ns || reading.wait_ns < previous.reading.wait_ns)
    return std::nullopt;
  ThreadActivity activity;
  double run_s = static_cast<double>(reading.run_ns - previous.reading.run_ns) * 1e-9;
  double wait_s = static_cast<double>(reading.wait_ns - previous.reading.wait_ns) * 1e-9;
  activity.cpu_s = run_s;
  activity.interval_s = dt;
  activity.busy = std::clamp((run_s + wait_s) / dt, 0.0, 1.0);
  if (reading.cycles && previous.reading.cycles && *reading.cycles >= *previous.reading.cycles)
    activity.cycles = static_cast<double>(*reading.cycles - *previous.reading.cycles);
  return activity;
}

void AppLoadAccounting::forgetExcept(std::span<const pid_t> live_tids) {
  std::erase_if(last_, [&](const auto& entry) {
    return std::find(live_tids.begin(), live_tids.end(), entry.first) == live_tids.end();
  });
}

std::vector<double> AppLoadAccounting::apportionPower(double node_power_w, std::span<const double> app_busy) {
  std::vector<double> shares(app_busy.size(), 0.0);
  if (app_busy.empty() || !std::isfinite(node_power_w) || node_power_w <= 0.0) return shares;
  double total = 0.0;
  for (double busy : app_busy) total += std::max(0.0, busy);
  for (size_t i = 0; i < app_busy.size(); ++i)
    shares[i] = total > 0.0 ? node_power_w * std::max(0.0, app_busy[i]) / total
                            : node_power_w / static_cast<double>(app_busy.size());
  return shares;
}

}  // namespace nk
