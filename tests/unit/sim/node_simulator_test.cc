#include "node_simulator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "energy/policy_registry.h"

namespace nk::sim {
namespace {

WorkloadModel twoPhases() {
  WorkloadModel w;
  w.name = "two-phase";
  w.phases = {{"compute", 6.0, 0.9, 0.1}, {"memory", 3.0, 1.0, 0.6}};
  w.repeat = 2;
  return w;
}

// Amdahl at one frequency for every core: the serial part at the phase's
// rate on one core, the parallel part on C cores.
double closedFormS(const WorkloadModel& w, uint32_t c, double f_ratio /* f / f_ref */) {
  double t = 0.0;
  for (const auto& ph : w.phases) {
    double rate = 1.0 / ((1.0 - ph.memory_boundness) / f_ratio + ph.memory_boundness);
    double serial = 1.0 - ph.parallel_fraction;
    t += ph.work_core_s * (serial + (1.0 - serial) / c) / rate;
  }
  return t * w.repeat;
}

SimulationResult runWith(std::string_view policy_name, NodeSimulator::Options options = {}) {
  PolicyConfig config;
  auto policy = makePolicy(policy_name, config);
  EXPECT_TRUE(policy.ok());
  NodeSimulator simulator(NodeProfile::xeonE5_2630(), config, options);
  return simulator.run(twoPhases(), **policy);
}

TEST(NodeSimulator, FixedFrequencyPoliciesReproduceTheClosedFormRuntime) {
  NodeProfile profile = NodeProfile::xeonE5_2630();
  double f_min_ratio = static_cast<double>(profile.frequencies_khz.front()) / profile.frequencies_khz.back();
  EXPECT_NEAR(runWith("performance").time_s, closedFormS(twoPhases(), 12, 1.0), 0.01);
  EXPECT_NEAR(runWith("powersave").time_s, closedFormS(twoPhases(), 12, f_min_ratio), 0.01);
}

TEST(NodeSimulator, EnergyIsTheIntegralOfPower) {
  double integral = 0.0;
  NodeSimulator::Options options;
  options.on_step = [&](double, double step_s, double power_w) { integral += power_w * step_s; };
  SimulationResult r = runWith("ondemand", options);
  ASSERT_GT(r.energy_j, 0.0);
  // Power is sampled at the end of each step; within a step it moves only
  // with temperature (leakage), so the rectangle sum is close.
  EXPECT_NEAR(integral, r.energy_j, 0.01 * r.energy_j);
}

TEST(NodeSimulator, SameInputSameOutput) {
  NodeSimulator::Options options;
  options.budget_w = 60.0;
  SimulationResult a = runWith("thermal-aware", options);
  SimulationResult b = runWith("thermal-aware", options);
  EXPECT_EQ(a.time_s, b.time_s);
  EXPECT_EQ(a.energy_j, b.energy_j);
  EXPECT_EQ(a.temp_std_c, b.temp_std_c);
  EXPECT_EQ(a.over_budget_frac, b.over_budget_frac);
}

TEST(NodeSimulator, BudgetSlowsTheProgramAndSavesPower) {
  NodeSimulator::Options options;
  options.budget_w = 60.0;
  SimulationResult capped = runWith("thermal-aware", options);
  SimulationResult free_run = runWith("performance");
  EXPECT_GT(capped.time_s, free_run.time_s);
  EXPECT_LT(capped.energy_j / capped.time_s, free_run.energy_j / free_run.time_s);
}

}  // namespace
}  // namespace nk::sim
