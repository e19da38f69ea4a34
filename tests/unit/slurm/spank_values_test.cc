#include "spank_values.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string budgetError(const char* text) {
  uint64_t mw = 0;
  char why[128] = "";
  if (nk_spank_parse_budget(text, &mw, why, sizeof why) == 0) return "ok " + std::to_string(mw);
  return why;
}

TEST(SpankValues, BudgetsInWattsOrMilliwatts) {
  EXPECT_EQ(budgetError("40W"), "ok 40000");
  EXPECT_EQ(budgetError("40"), "ok 40000");
  EXPECT_EQ(budgetError("12.5W"), "ok 12500");
  EXPECT_EQ(budgetError("40000mW"), "ok 40000");
}

TEST(SpankValues, BadBudgetsSayWhy) {
  EXPECT_NE(budgetError("abc").find("not a power"), std::string::npos);
  EXPECT_NE(budgetError("").find("empty"), std::string::npos);
  EXPECT_NE(budgetError("40kW").find("unit"), std::string::npos);
  EXPECT_NE(budgetError("40 W").find("unit"), std::string::npos);
  EXPECT_NE(budgetError("-5W").find("positive"), std::string::npos);
  EXPECT_NE(budgetError("0").find("positive"), std::string::npos);
  EXPECT_NE(budgetError("nan").find("not a power"), std::string::npos);
  EXPECT_NE(budgetError("1e9W").find("range"), std::string::npos);
}

TEST(SpankValues, PoliciesAndTaskModes) {
  EXPECT_TRUE(nk_spank_valid_policy("thermal-aware"));
  EXPECT_FALSE(nk_spank_valid_policy(""));
  EXPECT_FALSE(nk_spank_valid_policy("a b"));
  EXPECT_FALSE(nk_spank_valid_policy(std::string(65, 'a').c_str()));
  EXPECT_TRUE(nk_spank_valid_tasks("lossless"));
  EXPECT_TRUE(nk_spank_valid_tasks("lossy"));
  EXPECT_FALSE(nk_spank_valid_tasks("all"));
}

TEST(SpankValues, TheAdminCommentKeepsOtherItemsAndOneEnergyPerNode) {
  char out[128];
  ASSERT_EQ(nk_spank_admin_comment("", "n1", 1234.56, out, sizeof out), 0);
  EXPECT_STREQ(out, "nodekeeper_energy_j:n1=1234.6");
  ASSERT_EQ(nk_spank_admin_comment("site=x,nodekeeper_energy_j:n1=1.0,nodekeeper_energy_j:n2=5.0,y", "n1", 2, out,
                                   sizeof out),
            0);
  EXPECT_STREQ(out, "site=x,nodekeeper_energy_j:n2=5.0,y,nodekeeper_energy_j:n1=2.0");
  EXPECT_EQ(nk_spank_admin_comment(std::string(200, 'x').c_str(), "n1", 2, out, sizeof out), -1);
  EXPECT_EQ(nk_spank_admin_comment("", "a,b", 2, out, sizeof out), -1);
  EXPECT_EQ(nk_spank_admin_comment("", "", 2, out, sizeof out), -1);
}

TEST(SpankValues, EnergyFromTheCliJson) {
  EXPECT_DOUBLE_EQ(nk_spank_energy_from_json("{\"job_id\":\"7\",\"energy_j\":12.5,\"x\":1}"), 12.5);
  EXPECT_DOUBLE_EQ(nk_spank_energy_from_json("{\"energy_j\":0}"), 0);
  EXPECT_LT(nk_spank_energy_from_json("{\"job_id\":\"7\"}"), 0);
}

}  // namespace
