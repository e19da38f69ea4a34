#include "deadline_policy.h"

#include <gtest/gtest.h>

namespace nk::pmpi {
namespace {

using namespace std::chrono_literals;
using Kind = DeadlinePolicy::Kind;

TEST(DeadlinePolicy, AdaptsToTheLongestRecentCompletionWithinFloorAndCeiling) {
  DeadlinePolicy p({0ns, 2s, 60s, 10.0});
  EXPECT_EQ(p.deadline(Kind::kCollective), 2s);  // nothing seen: the floor
  p.completed(Kind::kCollective, 1s);
  EXPECT_EQ(p.deadline(Kind::kCollective), 10s);
  EXPECT_EQ(p.deadline(Kind::kPointToPoint), 2s);  // per kind
  p.completed(Kind::kCollective, 30s);
  EXPECT_EQ(p.deadline(Kind::kCollective), 60s);  // the ceiling
  // The long one leaves the window after 64 newer completions.
  for (int i = 0; i < 64; ++i) p.completed(Kind::kCollective, 1ms);
  EXPECT_EQ(p.deadline(Kind::kCollective), 2s);
}

TEST(DeadlinePolicy, AFixedDeadlineIgnoresHistory) {
  DeadlinePolicy p({1500ms, 2s, 60s, 10.0});
  p.completed(Kind::kWait, 30s);
  EXPECT_EQ(p.deadline(Kind::kWait), 1500ms);
}

}  // namespace
}  // namespace nk::pmpi
