#include "energy/workload_predictor.h"

#include <cmath>

#include <gtest/gtest.h>

namespace nk {
namespace {

// Eq. 6: W^_t = omega * W_{t-1} + sum_{i=1}^{E} (1 - omega)^i * W_{t-i}.
TEST(WorkloadPredictor, Eq6AsPrinted) {
  const double omega = 0.5;
  WorkloadPredictor p(omega, 4);
  const double w[] = {100, 200, 300, 400, 500};  // W_{t-5} .. W_{t-1}
  for (double x : w)
    p.observe(x);
  double q = 1.0 - omega;
  double expected = omega * 500 + q * 500 + q * q * 400 + q * q * q * 300 + q * q * q * q * 200;
  EXPECT_DOUBLE_EQ(p.predict(), expected);
}

TEST(WorkloadPredictor, Eq6OtherOmegaAndWindow) {
  const double omega = 0.3;
  WorkloadPredictor p(omega, 2);
  p.observe(7e8);
  p.observe(9e8);
  p.observe(4e8);
  double q = 1.0 - omega;
  EXPECT_NEAR(p.predict(), omega * 4e8 + q * 4e8 + q * q * 9e8, 1e-3);
}

TEST(WorkloadPredictor, FewerSamplesThanWindowAndNormalised) {
  const double omega = 0.5;
  WorkloadPredictor p(omega, 4, true);
  p.observe(1000);
  p.observe(3000);
  double q = 1.0 - omega;
  double raw = omega * 3000 + q * 3000 + q * q * 1000;
  EXPECT_DOUBLE_EQ(p.predict(), raw / (omega + q + q * q));
  // A constant workload is predicted exactly once normalised.
  WorkloadPredictor c(0.4, 3, true);
  for (int i = 0; i < 6; ++i)
    c.observe(5e8);
  EXPECT_NEAR(c.predict(), 5e8, 1e-3);
}

TEST(WorkloadPredictor, BadSamplesCountAsZero) {
  WorkloadPredictor p(0.5, 4);
  EXPECT_EQ(p.predict(), 0.0);
  p.observe(NAN);
  p.observe(-5.0);
  EXPECT_EQ(p.predict(), 0.0);
  WorkloadPredictor bad_omega(NAN, 0);
  bad_omega.observe(10.0);
  EXPECT_TRUE(std::isfinite(bad_omega.predict()));
}

}  // namespace
}  // namespace nk
