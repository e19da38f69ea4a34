#include "base/units.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(ParseFrequency, AcceptsUnits) {
  EXPECT_EQ(parseFrequencyKhz("1.8GHz").value(), 1800000u);
  EXPECT_EQ(parseFrequencyKhz("1800MHz").value(), 1800000u);
  EXPECT_EQ(parseFrequencyKhz("1800000kHz").value(), 1800000u);
  EXPECT_EQ(parseFrequencyKhz("1800000").value(), 1800000u);
  EXPECT_EQ(parseFrequencyKhz(" 2.6 ghz ").value(), 2600000u);
}

TEST(ParseFrequency, RejectsGarbage) {
  EXPECT_FALSE(parseFrequencyKhz("").ok());
  EXPECT_FALSE(parseFrequencyKhz("fast").ok());
  EXPECT_FALSE(parseFrequencyKhz("1.8THz").ok());
  EXPECT_FALSE(parseFrequencyKhz("-1GHz").ok());
  EXPECT_EQ(parseFrequencyKhz("1.8 furlongs").error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(parseFrequencyKhz("1.8 furlongs").error().message.find("furlongs"), std::string::npos);
}

TEST(ParseCpuList, RangesAndSingles) {
  EXPECT_EQ(parseCpuList("0-3,8,10-11").value(), (std::vector<uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parseCpuList("5").value(), (std::vector<uint32_t>{5}));
  EXPECT_EQ(parseCpuList("3,1,3").value(), (std::vector<uint32_t>{1, 3}));
}

TEST(ParseCpuList, RejectsBadLists) {
  EXPECT_FALSE(parseCpuList("").ok());
  EXPECT_FALSE(parseCpuList("3-1").ok());
  EXPECT_FALSE(parseCpuList("1,,2").ok());
  EXPECT_FALSE(parseCpuList("a-b").ok());
  EXPECT_FALSE(parseCpuList("1-").ok());
}

TEST(FormatCpuList, CompressesRuns) {
  EXPECT_EQ(formatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(formatCpuList({}), "");
}

TEST(ParsePower, Units) {
  EXPECT_DOUBLE_EQ(parsePowerWatts("45W").value(), 45.0);
  EXPECT_DOUBLE_EQ(parsePowerWatts("45000mW").value(), 45.0);
  EXPECT_FALSE(parsePowerWatts("0W").ok());
  EXPECT_FALSE(parsePowerWatts("45 horses").ok());
}

}  // namespace
}  // namespace nk
