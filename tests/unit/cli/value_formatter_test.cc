#include "cli/value_formatter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace nk::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ValueFormatter, Frequencies) {
  EXPECT_EQ(ValueFormatter::frequency(2600000), "2.60 GHz");
  EXPECT_EQ(ValueFormatter::frequency(0), "-");
  EXPECT_EQ(ValueFormatter::frequencyRange(1200000, 2600000), "1.20-2.60 GHz");
}

TEST(ValueFormatter, TemperatureHasOneDecimalAndDashForNaN) {
  EXPECT_EQ(ValueFormatter::temperature(54.26), "54.3 °C");
  EXPECT_EQ(ValueFormatter::temperature(kNaN), "-");
}

TEST(ValueFormatter, Utilisation) {
  EXPECT_EQ(ValueFormatter::utilisation(0.374), "37 %");
  EXPECT_EQ(ValueFormatter::utilisation(1.0), "100 %");
  EXPECT_EQ(ValueFormatter::utilisation(kNaN), "-");
}

TEST(ValueFormatter, PowerAndEnergy) {
  EXPECT_EQ(ValueFormatter::power(45.24), "45.2 W");
  EXPECT_EQ(ValueFormatter::power(kNaN), "-");
  EXPECT_EQ(ValueFormatter::energy(512.34), "512.3 J");
  EXPECT_EQ(ValueFormatter::energy(12345.0), "12.35 kJ");
  EXPECT_EQ(ValueFormatter::powerLimit(80, true), "80.0 W (enabled)");
  EXPECT_EQ(ValueFormatter::powerLimit(80, false), "80.0 W (disabled)");
  EXPECT_EQ(ValueFormatter::powerLimit(0, false), "none");
}

TEST(ValueFormatter, Timestamp) {
  EXPECT_EQ(ValueFormatter::timestamp(0), "-");
  EXPECT_EQ(ValueFormatter::timestamp(1700000000LL * 1000000000LL).size(), 19u);
}

}  // namespace
}  // namespace nk::cli
