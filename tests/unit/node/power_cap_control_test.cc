#include "node/power_cap_control.h"

#include <gtest/gtest.h>

#include "fake_platform.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

TEST(PowerCapControl, SetsAndRestores) {
  test::TempDir dir("cap");
  auto file = dir / "saved-a.json";
  auto saved = SavedControls::open(file);
  ASSERT_TRUE(saved.ok());
  test::FakePowerMeter meter(2);
  PowerCapControl control(meter, *saved);
  auto result = control.setCap({1}, 40.5);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(meter.zones_[1].power_limit_uw, 40500000u);
  EXPECT_TRUE(meter.zones_[1].enabled);
  EXPECT_EQ(meter.zones_[0].power_limit_uw, 95000000u);
  ASSERT_TRUE(control.restore(saved->entries()).ok());
  EXPECT_EQ(meter.zones_[1].power_limit_uw, 95000000u);
  EXPECT_FALSE(meter.zones_[1].enabled);
  (void)saved->clear();
}

TEST(PowerCapControl, RejectsBadInput) {
  test::TempDir dir("cap");
  auto file = dir / "saved-b.json";
  auto saved = SavedControls::open(file);
  ASSERT_TRUE(saved.ok());
  test::FakePowerMeter meter(2);
  PowerCapControl control(meter, *saved);
  EXPECT_EQ(control.setCap({}, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(control.setCap({}, -3).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(control.setCap({}, 45000).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(control.setCap({7}, 40).error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(saved->entries().empty());
  EXPECT_EQ(meter.zones_[0].power_limit_uw, 95000000u);
}

// constraint_0_max_power_uw is the package's ceiling: above it on any
// package chosen, nothing is saved or written on any.
TEST(PowerCapControl, ACapAboveThePackagesMaximumIsRefused) {
  test::TempDir dir("cap");
  auto saved = SavedControls::open(dir / "saved-max.json");
  ASSERT_TRUE(saved.ok());
  test::FakePowerMeter meter(2);
  meter.zones_[0].max_power_uw = 130000000;
  meter.zones_[1].max_power_uw = 95000000;
  PowerCapControl control(meter, *saved);
  auto above = control.setCap({}, 120);
  ASSERT_FALSE(above.ok());
  EXPECT_EQ(above.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(above.error().message,
            "power cap 120.0 W is above package 1's maximum of 95.0 W (constraint_0_max_power_uw)");
  EXPECT_TRUE(saved->entries().empty());
  EXPECT_EQ(meter.zones_[0].power_limit_uw, 95000000u);
  EXPECT_FALSE(meter.zones_[0].enabled);
  EXPECT_TRUE(control.setCap({0}, 120).ok());
  EXPECT_TRUE(control.setCap({1}, 95).ok());
  (void)saved->clear();
}

TEST(PowerCapControl, FailureHalfwayRollsBack) {
  test::TempDir dir("cap");
  auto file = dir / "saved-c.json";
  auto saved = SavedControls::open(file);
  ASSERT_TRUE(saved.ok());
  test::FakePowerMeter meter(2);
  meter.fail_limit_on = 1;
  PowerCapControl control(meter, *saved);
  ASSERT_FALSE(control.setCap({}, 50).ok());
  EXPECT_EQ(meter.zones_[0].power_limit_uw, 95000000u);
  EXPECT_FALSE(meter.zones_[0].enabled);
  (void)saved->clear();
}

}  // namespace
}  // namespace nk
