#include "energy/full_width_apps.h"

#include <algorithm>

namespace nk {

void FullWidthApps::fill(const EnergySnapshot& snapshot, EnergyDecision& decision) {
  uint32_t cores = static_cast<uint32_t>(snapshot.cores.size());
  decision.apps.reserve(snapshot.apps.size());
  for (const AppSample& app : snapshot.apps) {
    AppDecision ad;
    ad.id = app.id;
    uint32_t c = app.max_threads ? app.max_threads : cores;
    ad.threads = std::max<uint32_t>(c, 1);
    ad.budget_w = 0.0;
    ad.thread_decisions.reserve(app.thread_samples.size());
    for (const ThreadSample& t : app.thread_samples)
      ad.thread_decisions.push_back({t.tid, -1, 0.0});
    decision.apps.push_back(std::move(ad));
  }
}

}  // namespace nk
