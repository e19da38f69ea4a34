#include "power_budget_parser.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace nk::client {
namespace {

TEST(PowerBudgetParser, AcceptsMilliwatts) {
  uint64_t mw = 0;
  EXPECT_EQ(PowerBudgetParser::parse("12000", &mw, nullptr), 0);
  EXPECT_EQ(mw, 12000u);
  EXPECT_EQ(PowerBudgetParser::parse(" 500mW\n", &mw, nullptr), 0);
  EXPECT_EQ(mw, 500u);
  EXPECT_EQ(PowerBudgetParser::parse("18446744073709551615", &mw, nullptr), 0);
  EXPECT_EQ(mw, 18446744073709551615u);
}

TEST(PowerBudgetParser, RejectsBadValuesWithAReason) {
  for (const char* bad : {"", "  ", "0", "-5", "+5", "12.5", "12W", "abc", "18446744073709551616", "1 2"}) {
    uint64_t mw = 42;
    std::string error;
    EXPECT_EQ(PowerBudgetParser::parse(bad, &mw, &error), -EINVAL) << bad;
    EXPECT_EQ(mw, 42u) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace nk::client
