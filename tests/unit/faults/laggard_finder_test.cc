#include "faults/laggard_finder.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;

MemberState member(uint32_t rank, uint64_t world, std::chrono::nanoseconds age = 100ms,
                   std::string state = "running", std::string node = "a") {
  MemberState m;
  m.rank = rank;
  m.node = std::move(node);
  m.communicators = {{"world", world}, {"world.2", 1}};
  m.report_age = age;
  m.process_state = std::move(state);
  return m;
}

std::vector<uint32_t> ranksOf(const LaggardFindings& findings) {
  std::vector<uint32_t> out;
  for (const auto& l : findings.laggards) out.push_back(l.rank);
  return out;
}

class LaggardFinderTest : public ::testing::Test {
 protected:
  LaggardFindings find(std::vector<MemberState> states, uint64_t seq = 5, std::string_view comm = "world",
                       uint32_t reporter = 1) {
    return finder_.find({comm, seq, members_, reporter}, states);
  }

  LaggardFinder finder_{600ms};
  std::vector<uint32_t> members_ = {0, 1, 2, 3};
};

TEST_F(LaggardFinderTest, NobodyLagsWhenAllEnteredAndReport) {
  auto findings = find({member(0, 5), member(1, 5), member(2, 6), member(3, 5)});
  EXPECT_TRUE(findings.laggards.empty());
  EXPECT_TRUE(findings.unknown.empty());
}

TEST_F(LaggardFinderTest, ARankBehindInTheSequenceLags) {
  auto findings = find({member(0, 5), member(1, 5), member(2, 5), member(3, 4, 100ms, "running", "b")});
  ASSERT_EQ(ranksOf(findings), (std::vector<uint32_t>{3}));
  EXPECT_EQ(findings.laggards[0].node, "b");
  EXPECT_EQ(findings.laggards[0].reason, "entered 4 of 5 collectives of world");
}

TEST_F(LaggardFinderTest, ACommunicatorARankNeverReportedCountsAsZero) {
  auto findings = find({member(0, 5), member(1, 5), member(2, 5), member(3, 5)}, 1, "world.7");
  EXPECT_EQ(ranksOf(findings), (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(findings.laggards[0].reason, "entered 0 of 1 collectives of world.7");
  // world.2 is at 1 on every rank: its collective 1 has everyone.
  EXPECT_TRUE(find({member(0, 5), member(2, 5), member(3, 5)}, 1, "world.2").laggards.empty());
}

TEST_F(LaggardFinderTest, AStaleRankLagsThoughItEntered) {
  auto findings = find({member(0, 5), member(2, 5, 2500ms), member(3, 5, 600ms)});
  ASSERT_EQ(ranksOf(findings), (std::vector<uint32_t>{2}));
  EXPECT_EQ(findings.laggards[0].reason, "last progress report 2.5 s ago");

  MemberState never = member(3, 5);
  never.report_age.reset();
  findings = find({member(0, 5), member(2, 5), never});
  ASSERT_EQ(ranksOf(findings), (std::vector<uint32_t>{3}));
  EXPECT_EQ(findings.laggards[0].reason, "no progress report yet");
}

TEST_F(LaggardFinderTest, AStoppedZombieOrGoneRankLagsThoughItEntered) {
  auto findings = find({member(0, 5, 100ms, "stopped"), member(2, 5, 100ms, "zombie"), member(3, 5, 100ms, "gone")});
  EXPECT_EQ(ranksOf(findings), (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(findings.laggards[0].reason, "process stopped");
  // A stopped rank that is also behind and silent says all of it.
  findings = find({member(0, 5), member(2, 5), member(3, 4, 3s, "stopped")});
  ASSERT_EQ(ranksOf(findings), (std::vector<uint32_t>{3}));
  EXPECT_EQ(findings.laggards[0].reason,
            "process stopped, entered 4 of 5 collectives of world, last progress report 3.0 s ago");
  // Sleeping in the collective is how a waiting rank looks.
  EXPECT_TRUE(find({member(0, 5, 100ms, "sleeping"), member(2, 5), member(3, 5)}).laggards.empty());
}

TEST_F(LaggardFinderTest, RanksOfAnUnreachableNodeLag) {
  MemberState lost{2, "b", {}, std::nullopt, "unreachable"};
  MemberState lost3{3, "b", {}, std::nullopt, "unreachable"};
  auto findings = find({member(0, 5), lost, lost3});
  EXPECT_EQ(ranksOf(findings), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(findings.laggards[0].node, "b");
  EXPECT_EQ(findings.laggards[0].reason, "its node's daemon did not answer");
}

TEST_F(LaggardFinderTest, TheReporterIsNeverALaggard) {
  auto findings = find({member(0, 5), member(1, 2, 10s, "stopped"), member(2, 5), member(3, 5)});
  EXPECT_TRUE(findings.laggards.empty());
  // Nor unknown.
  findings = find({member(0, 5), member(2, 5), member(3, 5)});
  EXPECT_TRUE(findings.unknown.empty());
}

TEST_F(LaggardFinderTest, MembersNobodyDescribedAreUnknownNotAccused) {
  auto findings = find({member(0, 5), member(7, 1)});
  EXPECT_TRUE(findings.laggards.empty());  // rank 7 is no member
  EXPECT_EQ(findings.unknown, (std::vector<uint32_t>{2, 3}));
}

TEST_F(LaggardFinderTest, EachMemberOnceAndTheFreshestStateCounts) {
  members_ = {3, 0, 3, 2, 0};
  auto findings = find({member(0, 5), member(2, 4, 5s), member(2, 5, 50ms), member(3, 4), member(3, 4, 10ms)});
  ASSERT_EQ(ranksOf(findings), (std::vector<uint32_t>{3}));
  EXPECT_EQ(findings.laggards[0].reason, "entered 4 of 5 collectives of world");
}

}  // namespace
}  // namespace nk
