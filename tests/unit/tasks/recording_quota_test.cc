#include "tasks/recording_quota.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nk {
namespace {

using Clock = RecordingQuota::Clock;
using Recording = RecordingQuota::Recording;
using namespace std::chrono_literals;

constexpr uint64_t kMiB = 1 << 20;
const Clock::time_point kNow = Clock::time_point(1'800'000'000s);

Recording ended(std::string name, uid_t owner, uint64_t bytes, std::chrono::seconds ago) {
  return {name, owner, bytes, kNow - ago};
}
Recording live(std::string name, uid_t owner, uint64_t bytes) { return {name, owner, bytes, std::nullopt}; }

std::vector<std::string> paths(const std::vector<RecordingQuota::Removal>& removals) {
  std::vector<std::string> out;
  for (const auto& r : removals) out.push_back(r.path.string());
  return out;
}

RecordingQuota quota(uint64_t per_user, uint64_t total, std::chrono::seconds age = 7 * 24h) {
  return RecordingQuota(RecordingLimits{per_user, total, age});
}

TEST(RecordingQuota, NothingGoesWhileEveryoneIsWithinTheLimits) {
  std::vector<Recording> all = {ended("a", 1000, 3 * kMiB, 1h), live("b", 1000, 1 * kMiB),
                                ended("c", 1001, 4 * kMiB, 2h)};
  EXPECT_TRUE(quota(4 * kMiB, 8 * kMiB).sweep(all, kNow).empty());
  auto growth = quota(4 * kMiB, 8 * kMiB).grow(all, 1001, 0);
  EXPECT_TRUE(growth.allowed);
  EXPECT_TRUE(growth.removals.empty());
}

TEST(RecordingQuota, EndedRecordingsPastTheAgeGoWhateverTheirSize) {
  std::vector<Recording> all = {ended("old", 1000, 10, 8 * 24h), ended("young", 1000, 10, 6 * 24h),
                                live("running-for-weeks", 1000, 10)};
  auto removals = quota(kMiB, kMiB).sweep(all, kNow);
  EXPECT_EQ(paths(removals), std::vector<std::string>{"old"});
  EXPECT_EQ(removals[0].reason, "ended more than 7 days ago");
  EXPECT_EQ(removals[0].bytes, 10u);
}

TEST(RecordingQuota, AUserOverTheirQuotaLosesTheirOldestEndedFirstAndNoOneElses) {
  std::vector<Recording> all = {ended("u-new", 1000, 2 * kMiB, 1h), ended("other-oldest", 1001, 2 * kMiB, 9h),
                                ended("u-oldest", 1000, 2 * kMiB, 5h), ended("u-mid", 1000, 2 * kMiB, 3h),
                                live("u-live", 1000, 1 * kMiB)};
  auto removals = quota(4 * kMiB, 100 * kMiB).sweep(all, kNow);
  // 7 MiB for uid 1000: two of its ended ones go, the oldest first; the
  // live one is never picked.
  EXPECT_EQ(paths(removals), (std::vector<std::string>{"u-oldest", "u-mid"}));
  EXPECT_EQ(removals[0].reason, "uid 1000's recordings over their quota of 4 MiB");
}

TEST(RecordingQuota, OverTheTotalTheOldestEndedOfAnyoneGoFirst) {
  std::vector<Recording> all = {ended("b", 1001, 3 * kMiB, 2h), ended("a", 1000, 3 * kMiB, 4h),
                                ended("c", 1002, 3 * kMiB, 1h), live("d", 1003, 3 * kMiB)};
  auto removals = quota(100 * kMiB, 7 * kMiB).sweep(all, kNow);
  EXPECT_EQ(paths(removals), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(removals[1].reason, "all recordings over the total quota of 7 MiB");
}

TEST(RecordingQuota, LiveRecordingsAreNeverRemovedEvenWhenTheyAloneAreOver) {
  std::vector<Recording> all = {live("a", 1000, 9 * kMiB), live("b", 1001, 9 * kMiB)};
  EXPECT_TRUE(quota(kMiB, kMiB, 1s).sweep(all, kNow).empty());
}

TEST(RecordingQuota, GrowingMakesRoomFromTheOwnersOldestEndedRecordings) {
  std::vector<Recording> all = {ended("mine-old", 1000, 2 * kMiB, 5h), ended("mine-new", 1000, 2 * kMiB, 1h),
                                ended("theirs", 1001, 2 * kMiB, 9h), live("growing", 1000, kMiB)};
  auto growth = quota(5 * kMiB, 100 * kMiB).grow(all, 1000, 512 * 1024);
  EXPECT_TRUE(growth.allowed);
  EXPECT_EQ(paths(growth.removals), std::vector<std::string>{"mine-old"});
  // Exactly at the quota is within it.
  auto to_the_byte = quota(5 * kMiB, 100 * kMiB).grow(all, 1000, 0);
  EXPECT_EQ(paths(to_the_byte.removals), std::vector<std::string>{});
}

TEST(RecordingQuota, GrowingUnderTheTotalRemovesOthersOldestOnlyAfterTheOwnersOwn) {
  std::vector<Recording> all = {ended("theirs-oldest", 1001, 2 * kMiB, 9h), ended("mine", 1000, 2 * kMiB, 1h),
                                ended("theirs-newer", 1001, 2 * kMiB, 2h), live("growing", 1000, kMiB)};
  // Per user 3 MiB: "mine" must go; then the total (limit 5 MiB) is at
  // 5 + 1: the oldest of anyone's goes, and no more.
  auto growth = quota(3 * kMiB, 5 * kMiB).grow(all, 1000, kMiB);
  EXPECT_TRUE(growth.allowed);
  EXPECT_EQ(paths(growth.removals), (std::vector<std::string>{"mine", "theirs-oldest"}));
}

TEST(RecordingQuota, ALiveRecordingThatReachesTheQuotaIsRefusedAndNothingIsRemoved) {
  std::vector<Recording> all = {ended("mine-old", 1000, 2 * kMiB, 5h), live("growing", 1000, 4 * kMiB - 10)};
  auto fits = quota(4 * kMiB, 100 * kMiB).grow(all, 1000, 10);
  EXPECT_TRUE(fits.allowed);
  auto refused = quota(4 * kMiB, 100 * kMiB).grow(all, 1000, 11);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.refusal, "uid 1000's live recordings reached their quota of 4 MiB");
  EXPECT_TRUE(refused.removals.empty());
  // The total counts everyone's live recordings.
  std::vector<Recording> crowded = {live("theirs", 1001, 6 * kMiB), live("mine", 1000, kMiB)};
  auto total = quota(4 * kMiB, 7 * kMiB).grow(crowded, 1000, 1);
  EXPECT_FALSE(total.allowed);
  EXPECT_EQ(total.refusal, "live recordings reached the total quota of 7 MiB");
}

TEST(RecordingQuota, ANewRecordingCountsAgainstItsOwner) {
  // A new recording is a live one of zero bytes growing by its header.
  std::vector<Recording> all = {ended("old", 1000, kMiB, 1h), live("new", 1000, 0)};
  auto growth = quota(kMiB, 10 * kMiB).grow(all, 1000, 16);
  EXPECT_TRUE(growth.allowed);
  EXPECT_EQ(paths(growth.removals), std::vector<std::string>{"old"});
}

TEST(RecordingQuota, TheOrderGivenDoesNotMatterEqualTimesGoByPath) {
  std::vector<Recording> one = {ended("z", 1000, kMiB, 1h), ended("a", 1000, kMiB, 1h), ended("m", 1000, kMiB, 2h)};
  std::vector<Recording> other = {one[2], one[0], one[1]};
  EXPECT_EQ(paths(quota(kMiB, 100 * kMiB).sweep(one, kNow)), (std::vector<std::string>{"m", "a"}));
  EXPECT_EQ(paths(quota(kMiB, 100 * kMiB).sweep(other, kNow)), (std::vector<std::string>{"m", "a"}));
}

TEST(RecordingQuota, DescribesBytesForPeople) {
  EXPECT_EQ(RecordingQuota::describeBytes(1), "1 byte");
  EXPECT_EQ(RecordingQuota::describeBytes(1000), "1000 bytes");
  EXPECT_EQ(RecordingQuota::describeBytes(2ull << 30), "2 GiB");
  EXPECT_EQ(RecordingQuota::describeBytes(1536 * 1024), "1.5 MiB");
}

}  // namespace
}  // namespace nk
