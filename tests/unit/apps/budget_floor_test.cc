#include "apps/budget_floor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace nk {
namespace {

TEST(BudgetFloorTest, DctsFloorIsTwoThreadsOrFewerWhenTheAppHasFewer) {
  EXPECT_EQ(BudgetFloor::floorThreads(12), 2u);
  EXPECT_EQ(BudgetFloor::floorThreads(2), 2u);
  EXPECT_EQ(BudgetFloor::floorThreads(1), 1u);
  EXPECT_EQ(BudgetFloor::floorThreads(0), 1u);
}

TEST(BudgetFloorTest, TheFloorIsTheModelsPowerAtTheFloorThreads) {
  std::vector<uint32_t> asked;
  BudgetFloor floor([&](uint32_t busy) -> std::optional<double> {
    asked.push_back(busy);
    return 20.0 + 3.25 * busy;  // an uncore and idle cores, then a busy core's share
  });
  EXPECT_EQ(floor.floorMw(12), std::optional<uint64_t>(26500));
  EXPECT_EQ(floor.floorMw(1), std::optional<uint64_t>(23250));
  EXPECT_EQ(asked, (std::vector<uint32_t>{2, 1}));
}

TEST(BudgetFloorTest, NoModelOrNoAnswerMeansNoFloor) {
  EXPECT_EQ(BudgetFloor().floorMw(12), std::nullopt);
  EXPECT_EQ(BudgetFloor([](uint32_t) { return std::optional<double>(); }).floorMw(12), std::nullopt);
  EXPECT_EQ(BudgetFloor([](uint32_t) { return std::optional<double>(std::nan("")); }).floorMw(12), std::nullopt);
  EXPECT_EQ(BudgetFloor([](uint32_t) { return std::optional<double>(-1.0); }).floorMw(12), std::nullopt);
}

TEST(BudgetFloorTest, AWarningOnlyForABudgetUnderAKnownFloor) {
  std::string warning = BudgetFloor::warning(5000, 26500);
  EXPECT_NE(warning.find("5.0 W"), std::string::npos) << warning;
  EXPECT_NE(warning.find("26.5 W"), std::string::npos) << warning;
  EXPECT_NE(warning.find("cannot be met"), std::string::npos) << warning;
  EXPECT_EQ(BudgetFloor::warning(26500, 26500), "");
  EXPECT_EQ(BudgetFloor::warning(30000, 26500), "");
  EXPECT_EQ(BudgetFloor::warning(5000, 0), "");  // floor unknown
  EXPECT_EQ(BudgetFloor::warning(0, 26500), "");  // no budget
}

}  // namespace
}  // namespace nk
