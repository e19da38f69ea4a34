#include "energy/policy_registry.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(PolicyRegistry, MakesEveryListedPolicy) {
  ASSERT_EQ(PolicyRegistry::names().size(), 5u);
  for (std::string_view name : PolicyRegistry::names()) {
    auto p = makePolicy(name, PolicyConfig{});
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->name(), name);
  }
}

TEST(PolicyRegistry, UnknownNameListsTheAvailableOnes) {
  auto p = makePolicy("turbo");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  const std::string& m = p.error().message;
  EXPECT_NE(m.find("turbo"), std::string::npos);
  for (std::string_view name : PolicyRegistry::names())
    EXPECT_NE(m.find(name), std::string::npos) << m;
}

TEST(PolicyRegistry, RejectsBadIntervals) {
  PolicyConfig cfg;
  cfg.dct_interval_s = 0.0;
  EXPECT_FALSE(makePolicy("thermal-aware", cfg).ok());
  cfg = PolicyConfig{};
  cfg.dvfs_per_dct = 0;
  EXPECT_FALSE(makePolicy("ondemand", cfg).ok());
  PolicyConfig defaults;
  EXPECT_DOUBLE_EQ(defaults.dct_interval_s, 0.5);
  EXPECT_EQ(defaults.dvfs_per_dct, 10u);
  EXPECT_DOUBLE_EQ(defaults.dvfsIntervalS(), 0.05);
}

}  // namespace
}  // namespace nk
