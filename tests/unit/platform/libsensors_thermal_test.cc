#include "platform/libsensors_thermal.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

// The build hosts have no coretemp (VMs, containers), so this checks the
// plumbing: init, a read that answers cleanly either way, and cleanup.
TEST(LibsensorsThermal, CreatesAndReadsWithoutCrashing) {
  auto thermal = LibsensorsThermal::create();
  ASSERT_TRUE(thermal.ok()) << thermal.error().message;
  auto readings = (*thermal)->read();
  if (readings.ok()) {
    EXPECT_FALSE(readings->empty());
    for (const TemperatureReading& r : *readings) {
      EXPECT_GT(r.celsius, -50.0) << r.label;
      EXPECT_LT(r.celsius, 150.0) << r.label;
    }
  } else {
    EXPECT_EQ(readings.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(readings.error().message.find("coretemp"), std::string::npos) << readings.error().message;
  }
}

// libsensors is global: two live instances share one init, and the library
// must still work after the last one is gone and a new one is made.
TEST(LibsensorsThermal, InstancesShareTheLibrary) {
  {
    auto a = LibsensorsThermal::create();
    auto b = LibsensorsThermal::create();
    ASSERT_TRUE(a.ok() && b.ok());
    a = Error{};  // drops the first instance while the second lives
    auto readings = (*b)->read();
    (void)readings;
  }
  auto c = LibsensorsThermal::create();
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto readings = (*c)->read();
  (void)readings;
}

}  // namespace
}  // namespace nk
