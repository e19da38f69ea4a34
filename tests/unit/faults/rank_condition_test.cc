#include "faults/rank_condition.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Kind = RankCondition::Kind;

RankStatus status(ProcessState state, std::optional<std::chrono::milliseconds> report_age,
                  std::optional<std::chrono::milliseconds> cpu_grew_ago = std::nullopt, bool finalized = false) {
  RankStatus s;
  s.state = state;
  s.report_age = report_age;
  s.cpu_grew_ago = cpu_grew_ago;
  if (cpu_grew_ago) s.cpu_time = 5s;
  s.finalized = finalized;
  return s;
}

TEST(RankConditionTest, AFreshReportIsReporting) {
  EXPECT_EQ(RankCondition::of(status(ProcessState::kSleeping, 100ms), 2s), Kind::kReporting);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, 2000ms), 2s), Kind::kReporting);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, std::nullopt), 2s), Kind::kReporting);
}

TEST(RankConditionTest, ALateReportFromARunnableRankWhoseCpuTimeGrewIsStarved) {
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, 2001ms, 0ms), 2s), Kind::kStarved);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, 9000ms, 2000ms), 2s), Kind::kStarved);
}

TEST(RankConditionTest, ALateReportWithoutCpuTimeGrowingOrFromASleeperIsStalled) {
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, 9000ms, 2001ms), 2s), Kind::kStalled);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kRunning, 9000ms, std::nullopt), 2s), Kind::kStalled);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kSleeping, 9000ms, 10ms), 2s), Kind::kStalled);
}

TEST(RankConditionTest, StoppedIsAHangWhateverItsCpuTimeDid) {
  EXPECT_EQ(RankCondition::of(status(ProcessState::kStopped, 9000ms, 0ms), 2s), Kind::kStopped);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kStopped, 10ms), 2s), Kind::kStopped);
}

TEST(RankConditionTest, FinalizedIsFinishedWhateverItsProcessDoes) {
  for (ProcessState state : {ProcessState::kRunning, ProcessState::kSleeping, ProcessState::kStopped,
                             ProcessState::kZombie, ProcessState::kGone})
    EXPECT_EQ(RankCondition::of(status(state, 60000ms, std::nullopt, true), 2s), Kind::kFinished);
}

TEST(RankConditionTest, GoneOrZombieWithoutFinalizeEnded) {
  EXPECT_EQ(RankCondition::of(status(ProcessState::kGone, 9000ms), 2s), Kind::kEnded);
  EXPECT_EQ(RankCondition::of(status(ProcessState::kZombie, 10ms), 2s), Kind::kEnded);
  EXPECT_EQ(RankCondition::name(Kind::kStarved), "starved");
  EXPECT_EQ(RankCondition::name(Kind::kStalled), "stalled");
}

}  // namespace
}  // namespace nk
