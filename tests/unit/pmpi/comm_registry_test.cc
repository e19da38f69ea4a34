#include "comm_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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


TEST(CommRegistry, CommunicatorsMadeByTheirMembersAreNamedByTheirMembers) {
  // MPI_Comm_create_group: only the members call it, so the parent's count
  // must not move (the others would then disagree on later children).
  CommRegistry a, c;
  a.add(100, "world", {0, 1, 2, 3});
  c.add(300, "world", {0, 1, 2, 3});  // rank 1, not a member of {0, 2}
  const std::vector<uint32_t> evens = {0, 2};
  EXPECT_EQ(a.memberChildId(100, evens), "world.g[0,2].1");
  EXPECT_EQ(a.memberChildId(100, evens), "world.g[0,2].2");  // the same group again
  EXPECT_EQ(a.memberChildId(100, std::vector<uint32_t>{0, 1, 2}), "world.g[0-2].1");
  EXPECT_EQ(a.childId(100, std::nullopt), "world.1");
  EXPECT_EQ(c.childId(300, std::nullopt), "world.1");
  // Long member lists become a hash, the same on every member.
  std::vector<uint32_t> strided;
  for (uint32_t r = 0; r < 200; r += 3) strided.push_back(r);
  std::string id = a.memberChildId(100, strided);
  EXPECT_LT(id.size(), 60u) << id;
  EXPECT_EQ(c.memberChildId(300, strided), id);
}

TEST(CommRegistry, AnIntercommunicatorHasOneIdOnBothSidesAndMapsRemotePeers) {
  CommRegistry even_side, odd_side;
  const std::vector<uint32_t> evens = {0, 2}, odds = {1, 3};
  std::string id = even_side.interId(evens, odds);
  EXPECT_EQ(id, "inter[0,2|1,3].1");
  EXPECT_EQ(odd_side.interId(odds, evens), id);  // the group with the lowest rank first on both
  EXPECT_EQ(odd_side.interId(odds, evens), "inter[0,2|1,3].2");

  even_side.add(50, id, evens, odds);
  auto info = even_side.find(50);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->isInter());
  // Point to point on an intercommunicator names the remote group's ranks.
  EXPECT_EQ(even_side.worldRank(50, 0), 1u);
  EXPECT_EQ(even_side.worldRank(50, 1), 3u);
  EXPECT_FALSE(even_side.worldRank(50, 2));
  // A collective on it waits for both groups.
  EXPECT_EQ(info->allWorldRanks(), (std::vector<uint32_t>{0, 2, 1, 3}));
  // A merge is made by every member of both groups: counted on the parent.
  EXPECT_EQ(even_side.childId(50, std::nullopt), "inter[0,2|1,3].1.1");
}

TEST(CommRegistry, UnmappedRanksAreNotGivenAsWorldRanks) {
  CommRegistry r;
  r.add(9, "inter[0|?].1", {0}, {CommRegistry::kUnmapped});
  EXPECT_FALSE(r.worldRank(9, 0));
  EXPECT_EQ(CommRegistry::rankList(std::vector<uint32_t>{0, 1, 2, 5, 7, 8, CommRegistry::kUnmapped}), "0-2,5,7-8,?");
  EXPECT_EQ(CommRegistry::rankList(std::vector<uint32_t>{}), "");
}

}  // namespace
}  // namespace nk::pmpi
