#include "comm_registry.h"

#include <gtest/gtest.h>

namespace nk::pmpi {
namespace {

TEST(CommRegistry, ChildIdsAgreeAcrossMembersAndNameColours) {
  // Two ranks see the same creations in the same order: the same ids.
  CommRegistry a, b;
  a.add(100, "world", {0, 1, 2, 3});
  b.add(555, "world", {0, 1, 2, 3});  // another process, another handle
  EXPECT_EQ(a.childId(100, std::nullopt), "world.1");
  EXPECT_EQ(b.childId(555, std::nullopt), "world.1");
  EXPECT_EQ(a.childId(100, 2), "world.2c2");
  EXPECT_EQ(b.childId(555, 0), "world.2c0");  // same split, other colour
  a.add(101, "world.2c2", {2, 3});
  EXPECT_EQ(a.childId(101, std::nullopt), "world.2c2.1");
  EXPECT_EQ(a.childId(999, std::nullopt), "unknown.0");
}

TEST(CommRegistry, WorldRanksAndCollectiveCounts) {
  CommRegistry r;
  r.add(7, "world.1c1", {1, 3});
  EXPECT_EQ(r.worldRank(7, 0), 1u);
  EXPECT_EQ(r.worldRank(7, 1), 3u);
  EXPECT_FALSE(r.worldRank(7, 2));
  EXPECT_FALSE(r.worldRank(7, -1));
  EXPECT_FALSE(r.worldRank(8, 0));
  EXPECT_EQ(r.enterCollective(7), 1u);
  EXPECT_EQ(r.enterCollective(7), 2u);
  EXPECT_EQ(r.enterCollective(8), 0u);
  auto progress = r.progress();
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].first, "world.1c1");
  EXPECT_EQ(progress[0].second, 2u);
  r.remove(7);
  EXPECT_FALSE(r.find(7));
  EXPECT_TRUE(r.progress().empty());
}

}  // namespace
}  // namespace nk::pmpi
