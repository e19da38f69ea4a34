#include "apps/node_power_cap.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

RaplZone zone(uint32_t index, std::optional<uint64_t> limit_uw, bool enabled) {
  RaplZone z;
  z.index = index;
  z.name = "package-" + std::to_string(index);
  z.power_limit_uw = limit_uw;
  z.enabled = enabled;
  return z;
}

TEST(NodePowerCapTest, SumsEnabledPackageCapsInMilliwatts) {
  EXPECT_EQ(NodePowerCap::sumMw({zone(0, 95000000, true), zone(1, 95000000, true)}), std::optional<uint64_t>(190000));
  EXPECT_EQ(NodePowerCap::sumMw({zone(0, 95000000, true), zone(1, 60000000, false)}), std::optional<uint64_t>(95000));
}

TEST(NodePowerCapTest, NoEnabledLimitIsNoCap) {
  EXPECT_FALSE(NodePowerCap::sumMw({}));
  EXPECT_FALSE(NodePowerCap::sumMw({zone(0, 95000000, false), zone(1, std::nullopt, true)}));
}

}  // namespace
}  // namespace nk
