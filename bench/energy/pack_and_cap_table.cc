#include "pack_and_cap_table.h"

#include <algorithm>


namespace nk::sim {

namespace {

// One training setting: D threads, every core at one clock.
class FixedSettingPolicy final : public EnergyPolicy {
 public:
  FixedSettingPolicy(uint32_t threads, uint64_t khz) : threads_(threads), khz_(khz) {}
  std::string_view name() const override { return "fixed-setting"; }
  EnergyDecision stepDct(const EnergySnapshot& s) override { return decide(s); }
  EnergyDecision stepDvfs(const EnergySnapshot& s) override { return decide(s); }

 private:
  EnergyDecision decide(const EnergySnapshot& s) const {
    EnergyDecision d;
    for (const AppSample& app : s.apps) d.apps.push_back({app.id, threads_, 0.0, {}});
    for (const CoreReading& c : s.cores) d.cores.push_back({c.id, khz_, Governor::kUserspace});
    return d;
  }
  uint32_t threads_;
  uint64_t khz_;
};

}  // namespace

PackAndCapTable PackAndCapTable::train(const NodeProfile& profile, const PolicyConfig& config, BudgetScope scope,
                                       const WorkloadModel& workload, double train_s, uint32_t khz_stride) {
  PackAndCapTable table;
  const auto& freqs = profile.frequencies_khz;
  std::vector<uint64_t> settings;
  for (size_t i = 0; i < freqs.size(); i += std::max<uint32_t>(1, khz_stride)) settings.push_back(freqs[i]);
  if (!freqs.empty() && settings.back() != freqs.back()) settings.push_back(freqs.back());
  for (uint32_t d = 1; d <= profile.cores(); ++d)
    for (uint64_t khz : settings) {
      NodeSimulator::Options options;
      options.step_s = 0.02;
      options.max_time_s = train_s;
      options.budget_scope = scope;
      options.window_from_s = train_s / 2;  // the table is of a warm node
      FixedSettingPolicy policy(d, khz);
      SimulationResult r = NodeSimulator(profile, config, options).run(workload, policy);
      double span = r.window_s > 0 ? r.window_s : r.time_s;
      double energy = r.window_s > 0 ? r.window_app_energy_j : r.app_energy_j;
      double work = r.window_s > 0 ? r.window_work_core_s : r.work_done_core_s;
      if (span <= 0) continue;
      table.add({d, khz, energy / span, work / span});
    }
  return table;
}

std::optional<PackAndCapTable::Entry> PackAndCapTable::best(double budget_w) const {
  std::optional<Entry> fastest, frugal;
  for (const Entry& e : entries_) {
    if (e.power_w <= budget_w && (!fastest || e.work_rate > fastest->work_rate)) fastest = e;
    if (!frugal || e.power_w < frugal->power_w) frugal = e;
  }
  return fastest ? fastest : frugal;
}

}  // namespace nk::sim
