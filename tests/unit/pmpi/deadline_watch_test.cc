#include "deadline_watch.h"

#include <gtest/gtest.h>

#include <set>

namespace nk::pmpi {
namespace {

TEST(DeadlineWatchTest, ACallIsDueAtItsDeadlineThenAfterTwiceAsLong) {
  DeadlineWatch<int> watch;
  auto slot = watch.enter(7, 1000, 100);
  ASSERT_TRUE(slot);
  EXPECT_TRUE(watch.due(1099).empty());
  auto first = watch.due(1100);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].first, 7);
  EXPECT_EQ(first[0].second, 100);
  EXPECT_TRUE(watch.due(1299).empty());  // next at 1100 + 2 * 100
  EXPECT_EQ(watch.due(1300).size(), 1u);
  EXPECT_TRUE(watch.due(1699).empty());  // then + 4 * 100
  EXPECT_EQ(watch.due(1700).size(), 1u);
  EXPECT_EQ(watch.leave(*slot, 1750), 750);
  EXPECT_TRUE(watch.due(100000).empty());  // it returned: never due again
}

TEST(DeadlineWatchTest, CallsAreWatchedEachOnItsOwnAndSlotsAreReused) {
  DeadlineWatch<int> watch;
  auto a = watch.enter(1, 0, 100), b = watch.enter(2, 50, 100);
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  auto due = watch.due(120);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].first, 1);
  watch.leave(*a, 130);
  due = watch.due(150);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].first, 2);
  watch.leave(*b, 160);
  std::set<size_t> slots;
  for (size_t i = 0; i < DeadlineWatch<int>::kSlots; ++i) {
    auto s = watch.enter(static_cast<int>(i), 0, 10);
    ASSERT_TRUE(s) << i;
    slots.insert(*s);
  }
  EXPECT_EQ(slots.size(), DeadlineWatch<int>::kSlots);
  EXPECT_FALSE(watch.enter(99, 0, 10));  // full: that call goes unwatched
  watch.leave(*slots.begin(), 5);
  EXPECT_TRUE(watch.enter(100, 0, 10));
}

}  // namespace
}  // namespace nk::pmpi
