#include "platform/emulated/physics_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace nk {
namespace {

struct SteadyState {
  double core_c;
  double heatsink_c;
  double core_w;
  double package_w;
};

// The steady state of one package whose cores all run at the same f and u:
// neighbour terms vanish, and with linear leakage P = a + b (T - T_ref), so
//   T_hs = T_amb + R_hs (n P + P_uncore),  T = T_hs + R_c P
// is linear in T and solved here by hand, independently of the model.
SteadyState closedForm(const NodeProfile& p, double volts, uint64_t khz, double u) {
  const double n = p.cores_per_package;
  const double a = p.capacitance_f * volts * volts * (static_cast<double>(khz) * 1e3) * u + volts * p.leakage_current_a;
  const double b = volts * p.leakage_current_a_per_c;
  const double r_c = p.core_to_heatsink_k_per_w;
  const double r_hs = p.heatsink_to_ambient_k_per_w;
  // T = T_amb + R_hs P_unc + (n R_hs + R_c) (a + b (T - T_ref))
  const double k = n * r_hs + r_c;
  const double t = (p.ambient_c + r_hs * p.uncore_power_w + k * (a - b * p.leakage_ref_c)) / (1 - k * b);
  const double power = a + b * (t - p.leakage_ref_c);
  const double t_hs = p.ambient_c + r_hs * (n * power + p.uncore_power_w);
  return {t, t_hs, power, n * power + p.uncore_power_w};
}

void setAll(PhysicsModel& model, uint64_t khz, double u) {
  for (uint32_t core = 0; core < model.profile().cores(); ++core) {
    model.setFrequencyKhz(core, khz);
    model.setUtilisation(core, u);
  }
}

TEST(PhysicsModel, StartsAtAmbient) {
  PhysicsModel model(NodeProfile::xeonE5_2630());
  for (uint32_t core = 0; core < 12; ++core) EXPECT_DOUBLE_EQ(model.coreTemperatureC(core), 25.0);
  EXPECT_DOUBLE_EQ(model.heatsinkTemperatureC(1), 25.0);
  EXPECT_DOUBLE_EQ(model.packageEnergyJ(0), 0.0);
}

TEST(PhysicsModel, VoltageIsLinearInFrequency) {
  PhysicsModel model(NodeProfile::xeonE5_2630());
  EXPECT_DOUBLE_EQ(model.voltageAt(1200000), 0.98);
  EXPECT_DOUBLE_EQ(model.voltageAt(2600000), 1.35);
  EXPECT_NEAR(model.voltageAt(1900000), 0.98 + 0.5 * 0.37, 1e-12);
  EXPECT_NEAR(model.voltageAt(1500000), 0.98 + 0.37 * 3.0 / 14.0, 1e-12);
  EXPECT_DOUBLE_EQ(model.voltageAt(800000), 0.98);   // clamped below the table
  EXPECT_DOUBLE_EQ(model.voltageAt(3000000), 1.35);  // and above
}

TEST(PhysicsModel, PowerFollowsTheFormula) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel model(p);
  model.setFrequencyKhz(3, 2000000);
  model.setUtilisation(3, 0.5);
  model.setCoreTemperatureC(3, 61.0);
  const double v = 0.98 + 0.37 * 8.0 / 14.0;
  const double expected = p.capacitance_f * v * v * 2.0e9 * 0.5 + v * (p.leakage_current_a + p.leakage_current_a_per_c * 11.0);
  EXPECT_NEAR(model.corePowerW(3), expected, 1e-12);

  // Package 0: core 3 as above, the other five idle at 1.2 GHz and 25 C.
  const double idle = 0.98 * (p.leakage_current_a + p.leakage_current_a_per_c * (25.0 - 50.0));
  EXPECT_NEAR(model.packagePowerW(0), expected + 5 * idle + p.uncore_power_w, 1e-12);
}

TEST(PhysicsModel, LeakageNeverGoesNegative) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel model(p);
  model.setCoreTemperatureC(0, -100.0);  // I0 + I1 (T - T_ref) < 0 here
  model.setUtilisation(0, 1.0);
  EXPECT_NEAR(model.corePowerW(0), p.capacitance_f * 0.98 * 0.98 * 1.2e9, 1e-12);
  model.setUtilisation(0, 0.0);
  EXPECT_DOUBLE_EQ(model.corePowerW(0), 0.0);
}

TEST(PhysicsModel, UtilisationIsClamped) {
  PhysicsModel model(NodeProfile::xeonE5_2630());
  model.setUtilisation(0, 1.0);
  double full = model.corePowerW(0);
  model.setUtilisation(0, 7.0);
  EXPECT_DOUBLE_EQ(model.corePowerW(0), full);
  model.setUtilisation(0, std::nan(""));
  model.setUtilisation(1, 0.0);
  EXPECT_DOUBLE_EQ(model.corePowerW(0), model.corePowerW(1));
}

struct Load {
  uint64_t khz;
  double utilisation;
};

class PhysicsSteadyState : public ::testing::TestWithParam<Load> {};

TEST_P(PhysicsSteadyState, MatchesTheClosedForm) {
  const Load load = GetParam();
  for (const NodeProfile& p : {NodeProfile::xeonE5_2630(), [] {
         // A second geometry: one package of four, different constants.
         NodeProfile q = NodeProfile::xeonE5_2630();
         q.packages = 1;
         q.cores_per_package = 4;
         q.uncore_power_w = 3;
         q.heatsink_to_ambient_k_per_w = 0.8;
         q.core_to_heatsink_k_per_w = 2.2;
         q.leakage_current_a_per_c = 0.05;
         return q;
       }()}) {
    PhysicsModel model(p);
    setAll(model, load.khz, load.utilisation);
    for (int i = 0; i < 2000; ++i) model.step(1.0);
    const SteadyState want = closedForm(p, model.voltageAt(load.khz), load.khz, load.utilisation);
    for (uint32_t core = 0; core < p.cores(); ++core) {
      EXPECT_NEAR(model.coreTemperatureC(core), want.core_c, 0.01) << "core " << core << " of " << p.cores();
      EXPECT_NEAR(model.corePowerW(core), want.core_w, 1e-3);
    }
    for (uint32_t package = 0; package < p.packages; ++package) {
      EXPECT_NEAR(model.heatsinkTemperatureC(package), want.heatsink_c, 0.01);
      EXPECT_NEAR(model.packagePowerW(package), want.package_w, 1e-2);
      EXPECT_NEAR(model.packageTemperatureC(package), want.core_c, 0.01);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Loads, PhysicsSteadyState,
                         ::testing::Values(Load{2600000, 1.0}, Load{1200000, 0.02}, Load{1900000, 0.5},
                                           Load{2200000, 0.0}));

TEST(PhysicsModel, DefaultProfileLandsOnItsCalibrationTargets) {
  // The targets the profile's comments promise (profiles/xeon-e5-2630.toml).
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel loaded(p);
  setAll(loaded, 2600000, 1.0);
  PhysicsModel idle(p);
  setAll(idle, 1200000, p.idle_utilisation);
  for (int i = 0; i < 600; ++i) {
    loaded.step(1.0);
    idle.step(1.0);
  }
  EXPECT_GT(loaded.packagePowerW(0), 80.0);
  EXPECT_LT(loaded.packagePowerW(0), 95.0);
  EXPECT_GT(loaded.coreTemperatureC(0), 65.0);
  EXPECT_LT(loaded.coreTemperatureC(0), 80.0);
  EXPECT_GT(idle.packagePowerW(0), 15.0);
  EXPECT_LT(idle.packagePowerW(0), 25.0);
}

TEST(PhysicsModel, EnergyIsTheIntegralOfPower) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  p.leakage_current_a_per_c = 0;  // power independent of temperature: constant
  PhysicsModel model(p);
  setAll(model, 2300000, 0.7);
  const double watts = model.packagePowerW(1);
  double t = 0;
  for (double dt : {0.02, 0.5, 3.0, 0.001, 10.0, 0.37}) {
    model.step(dt);
    t += dt;
  }
  EXPECT_DOUBLE_EQ(model.packagePowerW(1), watts);
  EXPECT_NEAR(model.packageEnergyJ(1), watts * t, 1e-9 * watts * t);
  EXPECT_NEAR(model.elapsedS(), t, 1e-12);
  EXPECT_NEAR(model.packageEnergyJ(0), model.packageEnergyJ(1), 1e-9);
}

TEST(PhysicsModel, IgnoresNonPositiveSteps) {
  PhysicsModel model(NodeProfile::xeonE5_2630());
  setAll(model, 2600000, 1.0);
  model.step(0);
  model.step(-1);
  model.step(std::nan(""));
  EXPECT_DOUBLE_EQ(model.packageEnergyJ(0), 0.0);
  EXPECT_DOUBLE_EQ(model.elapsedS(), 0.0);
}

TEST(PhysicsModel, HigherFrequencyDrawsMoreAndRunsHotter) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  double last_power = 0, last_temp = 0;
  for (uint64_t khz : {1200000, 1600000, 2000000, 2600000}) {
    PhysicsModel model(p);
    setAll(model, khz, 1.0);
    for (int i = 0; i < 300; ++i) model.step(1.0);
    EXPECT_GT(model.packagePowerW(0), last_power) << khz;
    EXPECT_GT(model.coreTemperatureC(0), last_temp) << khz;
    last_power = model.packagePowerW(0);
    last_temp = model.coreTemperatureC(0);
  }
}

TEST(PhysicsModel, LargeStepIsStableAndAgreesWithSmallSteps) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel one(p), many(p);
  setAll(one, 2600000, 1.0);
  setAll(many, 2600000, 1.0);
  one.step(100.0);
  for (int i = 0; i < 5000; ++i) many.step(0.02);
  for (uint32_t core = 0; core < 12; ++core) {
    ASSERT_TRUE(std::isfinite(one.coreTemperatureC(core)));
    EXPECT_NEAR(one.coreTemperatureC(core), many.coreTemperatureC(core), 0.2);
  }
  EXPECT_NEAR(one.packageEnergyJ(0), many.packageEnergyJ(0), 0.005 * many.packageEnergyJ(0));
  EXPECT_LE(one.maxSubStepS(), 0.2 * p.core_heat_capacity_j_per_k * p.core_to_heatsink_k_per_w);
}

TEST(PhysicsModel, AHotCoreHeatsItsNeighbours) {
  NodeProfile coupled = NodeProfile::xeonE5_2630();
  coupled.leakage_current_a = 0;
  coupled.leakage_current_a_per_c = 0;
  NodeProfile isolated = coupled;
  isolated.core_to_neighbour_k_per_w = 1e4;
  auto run = [](const NodeProfile& p) {
    PhysicsModel model(p);
    setAll(model, 1200000, 0.0);
    model.setFrequencyKhz(2, 2600000);  // package 0: only core 2 works
    model.setUtilisation(2, 1.0);
    for (int i = 0; i < 600; ++i) model.step(1.0);
    return model;
  };
  PhysicsModel a = run(coupled);
  PhysicsModel b = run(isolated);
  // Heat spreads along the row: the nearer a core, the warmer.
  EXPECT_GT(a.coreTemperatureC(2), a.coreTemperatureC(1));
  EXPECT_GT(a.coreTemperatureC(1), a.coreTemperatureC(0));
  EXPECT_GT(a.coreTemperatureC(3), a.coreTemperatureC(4));
  EXPECT_GT(a.coreTemperatureC(4), a.coreTemperatureC(5));
  EXPECT_GT(a.coreTemperatureC(1) - a.coreTemperatureC(5), 1.0);
  // Without the lateral path, idle cores only see the shared heatsink.
  EXPECT_LT(std::abs(b.coreTemperatureC(1) - b.coreTemperatureC(5)), 0.01);
  EXPECT_GT(b.coreTemperatureC(2), a.coreTemperatureC(2));  // the neighbours took some heat
  // Package 1 idles and gets nothing from package 0.
  EXPECT_NEAR(a.coreTemperatureC(8), coupled.ambient_c + coupled.heatsink_to_ambient_k_per_w * coupled.uncore_power_w,
              0.01);
}

TEST(PhysicsModel, CoolsBackToAmbientWithoutPower) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel model(p);
  setAll(model, 2600000, 1.0);
  for (int i = 0; i < 300; ++i) model.step(1.0);
  ASSERT_GT(model.coreTemperatureC(0), 60.0);

  p.leakage_current_a = 0;
  p.leakage_current_a_per_c = 0;
  p.uncore_power_w = 0;
  PhysicsModel cold(p);
  for (uint32_t core = 0; core < 12; ++core) cold.setCoreTemperatureC(core, model.coreTemperatureC(core));
  for (uint32_t package = 0; package < 2; ++package)
    cold.setHeatsinkTemperatureC(package, model.heatsinkTemperatureC(package));
  setAll(cold, 1200000, 0.0);
  double previous = cold.coreTemperatureC(0);
  for (int i = 0; i < 2000; ++i) {
    cold.step(1.0);
    EXPECT_LE(cold.coreTemperatureC(0), previous + 1e-9);  // monotonic: no overshoot
    previous = cold.coreTemperatureC(0);
  }
  for (uint32_t core = 0; core < 12; ++core) EXPECT_NEAR(cold.coreTemperatureC(core), 25.0, 0.01);
  EXPECT_NEAR(cold.heatsinkTemperatureC(0), 25.0, 0.01);
  EXPECT_DOUBLE_EQ(cold.packageEnergyJ(0), 0.0);
}

TEST(PhysicsModel, CoreTimeConstantIsAboutASecondAndHeatsinkTensOfSeconds) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  PhysicsModel model(p);
  setAll(model, 2600000, 1.0);
  model.step(3.0);
  // After 3 s the core has made its own jump over the heatsink...
  const double core_rise = model.coreTemperatureC(0) - model.heatsinkTemperatureC(0);
  EXPECT_GT(core_rise, 12.0);
  // ...while the heatsink has barely started.
  EXPECT_LT(model.heatsinkTemperatureC(0) - p.ambient_c, 5.0);
  model.step(120.0);
  EXPECT_GT(model.heatsinkTemperatureC(0) - p.ambient_c, 20.0);
}

}  // namespace
}  // namespace nk
