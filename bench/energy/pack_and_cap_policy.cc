#include "pack_and_cap_policy.h"

#include <algorithm>

namespace nk::sim {

EnergyDecision PackAndCapPolicy::decide(const EnergySnapshot& snapshot) const {
  EnergyDecision decision;
  decision.reason = "pack-and-cap";
  uint64_t khz = 0;
  for (const AppSample& app : snapshot.apps) {
    uint32_t cap = app.max_threads ? app.max_threads : static_cast<uint32_t>(snapshot.cores.size());
    auto best = app.budget_w > 0.0 ? table_.best(app.budget_w) : std::nullopt;
    AppDecision ad;
    ad.id = app.id;
    ad.budget_w = app.budget_w;
    ad.threads = best ? std::clamp<uint32_t>(best->threads, 1, cap) : cap;
    if (best) khz = best->khz;
    // Packing: thread i on core i, so that the team takes the fewest cores.
    for (size_t i = 0; i < app.thread_samples.size() && i < snapshot.cores.size(); ++i) {
      ad.thread_decisions.push_back({app.thread_samples[i].tid, static_cast<int32_t>(snapshot.cores[i].id), 0.0});
    }
    decision.apps.push_back(std::move(ad));
  }
  for (size_t i = 0; i < snapshot.cores.size(); ++i)
    decision.cores.push_back({snapshot.cores[i].id, khz, khz ? Governor::kUserspace : Governor::kUnchanged});
  return decision;
}

EnergyDecision PackAndCapPolicy::stepDct(const EnergySnapshot& snapshot) { return decide(snapshot); }
EnergyDecision PackAndCapPolicy::stepDvfs(const EnergySnapshot& snapshot) { return decide(snapshot); }

}  // namespace nk::sim
