#include "energy/temperature_window.h"

#include <cmath>

#include <gtest/gtest.h>

namespace nk {
namespace {

// Eq. 3: std(Temp_c) = sqrt(1/N * sum_t (Temp_c,t - mean)^2).
TEST(TemperatureWindow, Eq3PopulationStdDev) {
  const double t[] = {50, 54, 52, 60, 49};
  TemperatureWindow w;
  double mean = 0;
  for (double x : t) {
    w.add(x);
    mean += x / 5;
  }
  double ss = 0;
  for (double x : t)
    ss += (x - mean) * (x - mean);
  EXPECT_NEAR(w.stdDev(), std::sqrt(ss / 5), 1e-12);
  EXPECT_NEAR(w.mean(), mean, 1e-12);
}

TEST(TemperatureWindow, NanAndOneSampleAreHarmless) {
  TemperatureWindow w;
  EXPECT_EQ(w.stdDev(), 0.0);
  w.add(NAN);
  w.add(70);
  EXPECT_EQ(w.samples(), 1u);
  EXPECT_EQ(w.stdDev(), 0.0);
  w.add(INFINITY);
  w.add(72);
  EXPECT_NEAR(w.stdDev(), 1.0, 1e-12);
  w.reset();
  EXPECT_EQ(w.samples(), 0u);
}

}  // namespace
}  // namespace nk
