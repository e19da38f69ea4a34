#include "node_simulator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "energy/policy_registry.h"
#include "nas_workload_catalog.h"
#include "pack_and_cap_policy.h"
#include "pack_and_cap_table.h"
#include "reliability_model.h"

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

double fMinRatio() {
  NodeProfile profile = NodeProfile::xeonE5_2630();
  return static_cast<double>(profile.frequencies_khz.front()) / profile.frequencies_khz.back();
}

SimulationResult runModel(const WorkloadModel& w, std::string_view policy_name, NodeSimulator::Options options = {}) {
  PolicyConfig config;
  auto policy = makePolicy(policy_name, config);
  EXPECT_TRUE(policy.ok());
  return NodeSimulator(NodeProfile::xeonE5_2630(), config, options).run(w, **policy);
}

// Bandwidth saturation, blocking, prologues: every term of the model, each
// checked against the catalog's closed form, which is written separately.
TEST(NodeSimulator, NasModelsAtAFixedClockTakeTheirClosedFormTime) {
  for (const char* name : {"cg.B", "dc.B", "is.B", "mg.B", "ep.B"}) {
    const WorkloadModel* w = NasWorkloadCatalog::find(name);
    ASSERT_NE(w, nullptr) << name;
    SimulationResult fast = runModel(*w, "performance");
    EXPECT_TRUE(fast.finished);
    EXPECT_NEAR(fast.time_s, NasWorkloadCatalog::closedFormSeconds(*w, 12, 1.0), 0.002 * fast.time_s) << name;
    SimulationResult slow = runModel(*w, "powersave");
    EXPECT_NEAR(slow.time_s, NasWorkloadCatalog::closedFormSeconds(*w, 12, fMinRatio()), 0.002 * slow.time_s) << name;
  }
}

TEST(NodeSimulator, ClosedFormHandWorked) {
  // W = 12, p = 0.5, m = 0.25, io = 0.25, S = 2, D = 4, f = f_ref / 2:
  // serial 6 (0.5 * 2 + 0.25 + 0.25) = 9; parallel 6 (1 / 4 + 0.25 / 2 + 0.25 / 4) = 2.625.
  WorkloadModel w{"hand", {{"x", 12.0, 0.5, 0.25, 2, 0.25}}, 1, {}};
  EXPECT_DOUBLE_EQ(NasWorkloadCatalog::closedFormSeconds(w, 4, 0.5), 11.625);
}

TEST(NodeSimulator, CatalogHoldsTheSeedsBenchmarks) {
  EXPECT_EQ(NasWorkloadCatalog::all().size(), 19u);
  for (const char* name : {"bt.B", "bt.C", "cg.C", "dc.B", "ep.C", "ft.C", "is.C", "lu.C", "mg.C", "sp.C", "ua.C"})
    EXPECT_NE(NasWorkloadCatalog::find(name), nullptr) << name;
  EXPECT_EQ(NasWorkloadCatalog::find("dc.C"), nullptr);
  // Class C is the larger problem.
  EXPECT_GT(NasWorkloadCatalog::closedFormSeconds(*NasWorkloadCatalog::find("bt.C"), 12, 1.0),
            3 * NasWorkloadCatalog::closedFormSeconds(*NasWorkloadCatalog::find("bt.B"), 12, 1.0));
}

TEST(NodeSimulator, CoreScopeChargesLessThanTheNode) {
  NodeSimulator::Options options;
  SimulationResult cores = runModel(*NasWorkloadCatalog::find("is.B"), "ondemand", options);
  options.budget_scope = BudgetScope::kNode;
  SimulationResult node = runModel(*NasWorkloadCatalog::find("is.B"), "ondemand", options);
  EXPECT_EQ(cores.energy_j, node.energy_j);
  EXPECT_EQ(node.app_energy_j, node.energy_j);
  // Uncore alone is 24 W on this node.
  EXPECT_LT(cores.app_energy_j, cores.energy_j - 20.0 * cores.time_s);
}

TEST(ReliabilityModel, QualificationPointGivesTheQualifiedLifetime) {
  ReliabilityModel model(12, 25.0, 1.35);
  model.add(std::vector<double>(12, ReliabilityModel::kQualificationK - 273.15), std::vector<double>(12, 1.35), 10.0);
  EXPECT_NEAR(model.mttfYears(), ReliabilityModel::kQualifiedYears, 1e-6);
}

TEST(ReliabilityModel, HotterOrHigherVoltageWearsFaster) {
  auto mttf = [](double celsius, double volts) {
    ReliabilityModel m(12, 25.0, 1.35);
    m.add(std::vector<double>(12, celsius), std::vector<double>(12, volts), 1.0);
    return m.mttfYears();
  };
  EXPECT_GT(mttf(55, 1.35), mttf(72, 1.35));
  EXPECT_GT(mttf(72, 1.35), mttf(85, 1.35));
  EXPECT_GT(mttf(60, 0.98), mttf(60, 1.35));
  // One hot core shortens the whole processor's life (series system).
  ReliabilityModel even(2, 25.0, 1.35), uneven(2, 25.0, 1.35);
  even.add({65, 65}, {1.35, 1.35}, 1.0);
  uneven.add({55, 75}, {1.35, 1.35}, 1.0);
  EXPECT_GT(even.mttfYears(), uneven.mttfYears());
}

TEST(PackAndCap, PicksTheFastestSettingWithinTheBudget) {
  PackAndCapTable table;
  table.add({4, 2600000, 45.0, 4.0});
  table.add({8, 1600000, 38.0, 5.0});
  table.add({12, 1200000, 41.0, 6.0});
  table.add({2, 1200000, 9.0, 1.0});
  auto best = table.best(40.0);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->threads, 8u);
  EXPECT_EQ(table.best(5.0)->threads, 2u);  // nothing fits: the most frugal
}

TEST(PackAndCap, TrainedTableKeepsARealRunNearTheBudget) {
  const WorkloadModel& w = *NasWorkloadCatalog::find("is.B");
  PolicyConfig config;
  NodeProfile profile = NodeProfile::xeonE5_2630();
  PackAndCapTable table = PackAndCapTable::train(profile, config, BudgetScope::kAppCores, w, 10.0, 4);
  EXPECT_EQ(table.entries().size(), 12u * 5u);
  PackAndCapPolicy policy(table);
  NodeSimulator::Options options;
  options.budget_w = 30.0;
  SimulationResult r = NodeSimulator(profile, config, options).run(w, policy);
  EXPECT_TRUE(r.finished);
  EXPECT_LT(r.app_energy_j / r.time_s, 30.0 * 1.1);
  EXPECT_LT(r.mean_threads, 12.0);
}

TEST(Efficiency, MemoryBoundProgramSavesEnergyForLittleTime) {
  const WorkloadModel& w = *NasWorkloadCatalog::find("mg.B");
  SimulationResult ours = runModel(w, "efficiency");
  SimulationResult full = runModel(w, "performance");
  EXPECT_LT(ours.energy_j, 0.95 * full.energy_j);
  EXPECT_LT(ours.time_s, 1.04 * full.time_s);
}

}  // namespace
}  // namespace nk::sim
