#include "pmix_values.h"

#include <gtest/gtest.h>

namespace nk::pmpi {
namespace {

TEST(PmixValues, PeerRecordRoundTrips) {
  PmixValues::PeerRecord r{"754057217", 3, "node-a", "unix:/run/nodekeeper/nodekeeperd.sock"};
  auto back = PmixValues::decode(PmixValues::encode(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->job, r.job);
  EXPECT_EQ(back->world_rank, 3u);
  EXPECT_EQ(back->node, r.node);
  EXPECT_EQ(back->endpoint, r.endpoint);
}

TEST(PmixValues, EmptyEndpointIsKept) {
  auto back = PmixValues::decode(PmixValues::encode({"j", 0, "n", ""}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->endpoint, "");
}

TEST(PmixValues, MalformedRecordsAreRefused) {
  for (const char* text : {"", "nk1", "nk2\nj\n0\nn\ne", "nk1\nj\n0\nn", "nk1\nj\n0\nn\ne\nextra", "nk1\n\n0\nn\ne",
                           "nk1\nj\n\nn\ne", "nk1\nj\n-1\nn\ne", "nk1\nj\n1x\nn\ne", "nk1\nj\n99999999999\nn\ne",
                           "nk1\nj\n0\n\ne"})
    EXPECT_FALSE(PmixValues::decode(text)) << text;
}

TEST(PmixValues, OverlongFieldsAreRefused) {
  std::string huge(PmixValues::kMaxField + 1, 'x');
  EXPECT_FALSE(PmixValues::decode("nk1\n" + huge + "\n0\nn\ne"));
  EXPECT_FALSE(PmixValues::decode("nk1\nj\n0\nn\n" + huge));
  // The writer sends such a field empty, which the reader refuses.
  EXPECT_FALSE(PmixValues::decode(PmixValues::encode({huge, 0, "n", "e"})));
  EXPECT_FALSE(PmixValues::decode(PmixValues::encode({"j\nk", 0, "n", "e"})));
}

TEST(PmixValues, RankLists) {
  EXPECT_EQ(PmixValues::parseRankList("0,1", 16), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(PmixValues::parseRankList("7", 16), (std::vector<uint32_t>{7}));
  EXPECT_EQ(PmixValues::parseRankList("", 16), (std::vector<uint32_t>{}));
  for (const char* bad : {",", "0,", ",1", "0,,1", "a", "0, 1", "-1", "4294967296"})
    EXPECT_FALSE(PmixValues::parseRankList(bad, 16)) << bad;
  EXPECT_FALSE(PmixValues::parseRankList("0,1,2", 2));
  EXPECT_TRUE(PmixValues::parseRankList("0,1", 2));
}

}  // namespace
}  // namespace nk::pmpi
