#include "energy/ilc_controller.h"

#include <cmath>

#include <gtest/gtest.h>

namespace nk {
namespace {

constexpr double kFmin = 1200000, kFmax = 2600000;  // kHz
constexpr double kDt = 0.05;                          // dT_DVFS = 0.5 s / 10

IlcParams params() {
  IlcParams p;
  p.k1 = 8.0;
  p.k2 = 1.0;
  p.delta_f_khz = 100000.0;
  p.error_band_pct = 2.0;
  p.error_window = 1;
  return p;
}

// Eq. 10 then eq. 8: E = 100 * (P - B) / B; f_t = f_{t-1} - (df / K1) * E.
TEST(IlcController, Eq8OutsideTheBand) {
  IlcParams p = params();
  IlcController c(p);
  c.start(kFmax);
  const double power = 39.0, budget = 30.0;
  double f = c.step(power, budget, 0.0, kDt, kFmin, kFmax);
  double e = 100.0 * (power - budget) / budget;  // 30 %
  EXPECT_DOUBLE_EQ(c.lastErrorPct(), e);
  EXPECT_FALSE(c.lastUsedEq7());
  EXPECT_DOUBLE_EQ(f, kFmax - p.delta_f_khz / p.k1 * e);  // 2.225 GHz
}

// Eq. 9 and 7: k = exp[K2 (W^ / (fmax dt) - 1)]; f_t = f_{t-1} - df k / K1.
TEST(IlcController, Eq7And9InsideTheBand) {
  IlcParams p = params();
  IlcController c(p);
  c.start(2000000);
  const double power = 30.3, budget = 30.0;              // E = 1 %, within 2 %
  const double w_hat = 0.5 * kFmax * 1000.0 * kDt;       // half the cycles fmax could give
  double f = c.step(power, budget, w_hat, kDt, kFmin, kFmax);
  double k = std::exp(p.k2 * (w_hat / (kFmax * 1000.0 * kDt) - 1.0));
  EXPECT_TRUE(c.lastUsedEq7());
  EXPECT_NEAR(c.lastK(), k, 1e-12);
  EXPECT_NEAR(f, 2000000 - p.delta_f_khz * k / p.k1, 1e-6);
}

// Eq. 10 as printed sums every interval since the last reset.
TEST(IlcController, Eq10CumulativeWindow) {
  IlcParams p = params();
  p.error_window = 0;
  IlcController c(p);
  c.start(kFmax);
  const double budget = 30.0;
  c.step(33.0, budget, 0, kDt, kFmin, kFmax);
  EXPECT_DOUBLE_EQ(c.lastErrorPct(), 100.0 * 3.0 / budget);
  c.step(34.0, budget, 0, kDt, kFmin, kFmax);
  EXPECT_DOUBLE_EQ(c.lastErrorPct(), 100.0 * (3.0 + 4.0) / budget);
  c.resetError();
  c.step(31.5, budget, 0, kDt, kFmin, kFmax);
  EXPECT_DOUBLE_EQ(c.lastErrorPct(), 100.0 * 1.5 / budget);
}

// Toy plant P = k f driven in a loop: within a few percent of the budget
// after N = 10 steps, from both sides.
TEST(IlcController, ConvergesOnLinearPlant) {
  const double k_w_per_khz = 16.0 / 2600000.0;  // 16 W at fmax
  for (double budget : {8.0, 10.0, 12.5, 15.0}) {
    for (double f0 : {kFmin, kFmax}) {
      IlcController c(params());
      c.start(f0);
      double f = f0;
      for (int t = 0; t < 10; ++t) {
        double power = k_w_per_khz * f;
        double cycles = f * 1000.0 * kDt;  // fully busy
        f = c.step(power, budget, cycles, kDt, kFmin, kFmax);
      }
      double final_power = k_w_per_khz * f;
      EXPECT_NEAR(final_power, budget, 0.03 * budget) << "budget " << budget << " f0 " << f0;
    }
  }
}

// Why error_window defaults to 1: the printed cumulative sum with eq. 8's
// incremental step is a double integrator and keeps swinging.
TEST(IlcController, CumulativeErrorDoesNotSettle) {
  IlcParams p = params();
  p.error_window = 0;
  p.error_band_pct = 0.0;
  IlcController c(p);
  const double k_w_per_khz = 16.0 / 2600000.0, budget = 12.0;
  double f = kFmax;
  c.start(f);
  double worst_late = 0.0;
  for (int t = 0; t < 40; ++t) {
    f = c.step(k_w_per_khz * f, budget, 0, kDt, kFmin, kFmax);
    if (t >= 30)
      worst_late = std::max(worst_late, std::fabs(k_w_per_khz * f - budget) / budget);
  }
  EXPECT_GT(worst_late, 0.05);
  EXPECT_GE(f, kFmin);
  EXPECT_LE(f, kFmax);
}

TEST(IlcController, BadInputsStayInRange) {
  IlcParams p = params();
  p.k1 = 0.0;  // would divide by zero
  IlcController c(p);
  double f = c.step(NAN, 30.0, NAN, kDt, kFmin, kFmax);
  EXPECT_TRUE(std::isfinite(f));
  f = c.step(1e9, 30.0, 1e30, kDt, kFmin, kFmax);
  EXPECT_EQ(f, kFmin);
  f = c.step(10.0, 0.0, 0, kDt, kFmin, kFmax);  // no budget: hold
  EXPECT_EQ(f, kFmin);
}

}  // namespace
}  // namespace nk
