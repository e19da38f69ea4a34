#include "platform/energy_counter.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(EnergyCounter, NoPowerFromASingleRead) {
  EnergyCounter counter(1000);
  counter.update(400, 0);
  EXPECT_EQ(counter.watts(), std::nullopt);
  EXPECT_DOUBLE_EQ(counter.joules(), 0.0);
  EXPECT_EQ(counter.wraps(), 0u);
}

TEST(EnergyCounter, PowerIsEnergyOverTime) {
  EnergyCounter counter(1'000'000'000);
  counter.update(10'000'000, 0);
  counter.update(60'000'000, 2 * kSecond);  // 50 J in 2 s
  ASSERT_TRUE(counter.watts().has_value());
  EXPECT_DOUBLE_EQ(*counter.watts(), 25.0);
  EXPECT_DOUBLE_EQ(counter.joules(), 50.0);
  counter.update(60'500'000, 2 * kSecond + kSecond / 10);  // 0.5 J in 0.1 s
  EXPECT_NEAR(*counter.watts(), 5.0, 1e-9);
  EXPECT_DOUBLE_EQ(counter.joules(), 50.5);
}

TEST(EnergyCounter, PowerAcrossAWrap) {
  const uint64_t range = 262'143'328'850;  // a common max_energy_range_uj
  EnergyCounter counter(range);
  counter.update(range - 30'000'000, 0);
  counter.update(70'000'000, kSecond);  // 30 J to the top, 70 J after: 100 J
  EXPECT_EQ(counter.wraps(), 1u);
  ASSERT_TRUE(counter.watts().has_value());
  EXPECT_DOUBLE_EQ(*counter.watts(), 100.0);
  EXPECT_DOUBLE_EQ(counter.joules(), 100.0);
}

TEST(EnergyCounter, SeveralWrapsAccumulate) {
  // A small range makes every other read a wrap.
  EnergyCounter counter(10'000'000);  // 10 J
  int64_t t = 0;
  counter.update(0, t);
  uint64_t raw = 0;
  double expected_j = 0;
  for (int i = 0; i < 9; ++i) {
    raw = (raw + 6'000'000) % 10'000'000;  // +6 J per step, wrapping every ~1.7 steps
    t += kSecond / 2;
    counter.update(raw, t);
    expected_j += 6.0;
    ASSERT_TRUE(counter.watts().has_value());
    EXPECT_NEAR(*counter.watts(), 12.0, 1e-9) << "step " << i;
  }
  EXPECT_NEAR(counter.joules(), expected_j, 1e-9);
  // 0 6 2 8 4 0 6 2 8 4: down-steps at 6->2, 8->4, 4->0, 6->2, 8->4.
  EXPECT_EQ(counter.wraps(), 5u);
}

TEST(EnergyCounter, ReadsWithoutElapsedTimeKeepTheLastPower) {
  EnergyCounter counter(1'000'000'000);
  counter.update(0, kSecond);
  counter.update(20'000'000, 2 * kSecond);
  EXPECT_DOUBLE_EQ(*counter.watts(), 20.0);
  counter.update(30'000'000, 2 * kSecond);  // dt == 0
  EXPECT_DOUBLE_EQ(*counter.watts(), 20.0);
  EXPECT_DOUBLE_EQ(counter.joules(), 30.0);
  counter.update(31'000'000, kSecond);  // clock went back
  EXPECT_DOUBLE_EQ(*counter.watts(), 20.0);
  // The next interval is measured from the last read, not the old one.
  counter.update(41'000'000, 2 * kSecond);
  EXPECT_DOUBLE_EQ(*counter.watts(), 10.0);
  EXPECT_DOUBLE_EQ(counter.joules(), 41.0);
}

TEST(EnergyCounter, ReadAboveTheRangeDoesNotUnderflow) {
  EnergyCounter counter(1000);
  counter.update(5000, 0);  // above the advertised range
  counter.update(100, kSecond);
  EXPECT_EQ(counter.wraps(), 1u);
  EXPECT_NEAR(counter.joules(), 100e-6, 1e-15);
}

}  // namespace
}  // namespace nk
