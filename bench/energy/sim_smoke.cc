// Runs one synthetic two-phase program under every policy and prints a
// table: the simulator's first smoke test, before the NAS models exist.
#include <cstdio>

#include "energy/policy_registry.h"
#include "node_simulator.h"

int main() {
  using namespace nk;
  sim::WorkloadModel workload;
  workload.name = "two-phase";
  workload.phases = {{"compute", 24.0, 0.98, 0.1}, {"memory", 12.0, 0.95, 0.7}};
  workload.repeat = 5;
  std::printf("%-14s %8s %10s %8s %8s %8s %8s\n", "policy", "time s", "energy J", "avg C", "peak C", "std C", "over");
  for (std::string_view name : PolicyRegistry::names()) {
    PolicyConfig config;
    auto policy = makePolicy(name, config);
    if (!policy) continue;
    sim::NodeSimulator::Options options;
    options.budget_w = 70.0;
    sim::NodeSimulator simulator(NodeProfile::xeonE5_2630(), config, options);
    auto r = simulator.run(workload, **policy);
    std::printf("%-14.*s %8.1f %10.0f %8.1f %8.1f %8.2f %7.1f%%\n", static_cast<int>(name.size()), name.data(), r.time_s,
                r.energy_j, r.avg_temp_c, r.peak_temp_c, r.temp_std_c, 100 * r.over_budget_frac);
  }
  return 0;
}
