#include "faults/local_rank_watch.h"

#include <gtest/gtest.h>

#include <csignal>
#include <vector>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;

RankStatus rank(uint32_t r, ProcessState state = ProcessState::kSleeping, bool finalized = false,
                std::optional<std::chrono::milliseconds> report_age = 100ms, std::string op = "MPI_Allreduce") {
  RankStatus s;
  s.rank = r;
  s.state = state;
  s.finalized = finalized;
  s.report_age = report_age;
  s.current_operation = std::move(op);
  return s;
}

class LocalRankWatchTest : public ::testing::Test {
 protected:
  LocalRankWatch::Outcome check(const std::vector<RankStatus>& ranks, bool thermal = false, double temp = 60) {
    now_ns += 200 * kMs;
    return watch.check("job1", 1000, "n5", ranks, thermal, temp, now_ns);
  }
  LocalRankWatch watch{2000ms};
  int64_t now_ns = kT0;
};

TEST_F(LocalRankWatchTest, HealthyRanksRaiseNothing) {
  for (int i = 0; i < 5; ++i) {
    auto out = check({rank(0), rank(1, ProcessState::kRunning)});
    EXPECT_TRUE(out.symptoms.empty());
    EXPECT_FALSE(out.all_finalized);
  }
}

TEST_F(LocalRankWatchTest, ExitedWithoutFinalizeIsRaisedOnce) {
  EXPECT_TRUE(check({rank(0), rank(1)}).symptoms.empty());
  auto out = check({rank(0), rank(1, ProcessState::kGone, false, 100ms, "MPI_Send")});
  ASSERT_EQ(out.symptoms.size(), 1u);
  const SymptomRecord& s = out.symptoms[0];
  EXPECT_EQ(s.kind, SymptomKind::kRankExited);
  EXPECT_EQ(s.job_id, "job1");
  EXPECT_EQ(s.uid, 1000u);
  EXPECT_EQ(s.reporter_node, "n5");
  EXPECT_EQ(s.suspect_node, "n5");
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);  // the daemon saw it, not one of the job's ranks
  EXPECT_EQ(s.suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.operation, "MPI_Send");
  EXPECT_EQ(s.timestamp_ns, now_ns);
  EXPECT_EQ(s.detail, "rank 1's process ended without MPI_Finalize");
  EXPECT_FALSE(out.all_finalized);
  // Still gone: nothing new; nor is a gone rank ever called stalled.
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(check({rank(0), rank(1, ProcessState::kGone, false, 60000ms)}).symptoms.empty());
}

TEST_F(LocalRankWatchTest, ZombieWithoutFinalizeCountsAsExited) {
  auto out = check({rank(2, ProcessState::kZombie)});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kRankExited);
  EXPECT_EQ(out.symptoms[0].suspect_ranks, (std::vector<uint32_t>{2}));
  // Reaped later: the same exit, not a second one.
  EXPECT_TRUE(check({rank(2, ProcessState::kGone)}).symptoms.empty());
}

TEST_F(LocalRankWatchTest, FinalizedRanksThatAreGoneRaiseNothingAndLeave) {
  auto first = check({rank(0, ProcessState::kGone, true), rank(1)});
  EXPECT_TRUE(first.symptoms.empty());
  EXPECT_FALSE(first.all_finalized);
  // Finalized but still running (tearing down), the other gone: all finalized.
  auto out = check({rank(0, ProcessState::kGone, true, 60000ms), rank(1, ProcessState::kRunning, true, 60000ms)});
  EXPECT_TRUE(out.symptoms.empty());  // a finalized rank does not report progress: not stalled
  EXPECT_TRUE(out.all_finalized);
  auto zombie = check({rank(0, ProcessState::kZombie, true), rank(1, ProcessState::kGone, true)});
  EXPECT_TRUE(zombie.symptoms.empty());
  EXPECT_TRUE(zombie.all_finalized);
}

TEST_F(LocalRankWatchTest, NoRanksIsNotAllFinalized) {
  auto out = check({});
  EXPECT_TRUE(out.symptoms.empty());
  EXPECT_FALSE(out.all_finalized);
}

TEST_F(LocalRankWatchTest, StoppedIsRaisedOncePerEpisode) {
  auto out = check({rank(0), rank(3, ProcessState::kStopped, false, 100ms, "MPI_Barrier")});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(out.symptoms[0].reporter_rank, kDaemonReporter);
  EXPECT_EQ(out.symptoms[0].suspect_ranks, (std::vector<uint32_t>{3}));
  EXPECT_EQ(out.symptoms[0].suspect_node, "n5");
  EXPECT_EQ(out.symptoms[0].operation, "MPI_Barrier");
  EXPECT_EQ(out.symptoms[0].detail, "rank 3's process is stopped");
  // Stopped for long, its reports age: still the one episode, and not also "stalled".
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(check({rank(0), rank(3, ProcessState::kStopped, false, 5000ms)}).symptoms.empty());
  // It resumes (and reports again): nothing.
  EXPECT_TRUE(check({rank(0), rank(3, ProcessState::kRunning, false, 50ms)}).symptoms.empty());
  // Stopped again: a new episode.
  auto again = check({rank(0), rank(3, ProcessState::kStopped)});
  ASSERT_EQ(again.symptoms.size(), 1u);
  EXPECT_EQ(again.symptoms[0].kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(again.symptoms[0].detail, "rank 3's process is stopped");
  EXPECT_EQ(again.symptoms[0].timestamp_ns, now_ns);
}

TEST_F(LocalRankWatchTest, StalledAfterStallAfterOncePerEpisode) {
  EXPECT_TRUE(check({rank(4, ProcessState::kRunning, false, 1999ms)}).symptoms.empty());
  EXPECT_TRUE(check({rank(4, ProcessState::kRunning, false, 2000ms)}).symptoms.empty());  // not more than
  auto out = check({rank(4, ProcessState::kRunning, false, 2001ms, "MPI_Wait")});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(out.symptoms[0].suspect_ranks, (std::vector<uint32_t>{4}));
  EXPECT_EQ(out.symptoms[0].operation, "MPI_Wait");
  EXPECT_EQ(out.symptoms[0].detail, "rank 4 has not reported progress for 2001 ms");
  EXPECT_TRUE(check({rank(4, ProcessState::kSleeping, false, 2201ms)}).symptoms.empty());
  EXPECT_TRUE(check({rank(4, ProcessState::kSleeping, false, 2401ms)}).symptoms.empty());
  // It reports again, then stalls again: a new episode.
  EXPECT_TRUE(check({rank(4, ProcessState::kSleeping, false, 10ms)}).symptoms.empty());
  auto again = check({rank(4, ProcessState::kSleeping, false, 3000ms)});
  ASSERT_EQ(again.symptoms.size(), 1u);
  EXPECT_EQ(again.symptoms[0].detail, "rank 4 has not reported progress for 3000 ms");
}

// The false node_down of a busy host: the agent's reporting thread did not
// get the CPU, but the rank runs. Starved, not stalled; stopped stays a hang.
TEST_F(LocalRankWatchTest, ALateReportFromARankThatRunsIsStarvationNotAStall) {
  RankStatus starved = rank(4, ProcessState::kRunning, false, 5000ms);
  starved.cpu_time = 12s;
  starved.cpu_grew_ago = 200ms;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(check({starved}).symptoms.empty());
  // Its CPU time stops growing: stalled now.
  starved.cpu_grew_ago = 2500ms;
  auto out = check({starved});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kHeartbeatLost);
  // Stopped with CPU time that grew a moment ago: a hang all the same.
  RankStatus stopped = rank(5, ProcessState::kStopped, false, 5000ms);
  stopped.cpu_grew_ago = 0ms;
  auto stop = check({stopped});
  ASSERT_EQ(stop.symptoms.size(), 1u);
  EXPECT_EQ(stop.symptoms[0].detail, "rank 5's process is stopped");
  // Finished: late, stopped or gone, never a fault.
  EXPECT_TRUE(check({rank(6, ProcessState::kStopped, true, 9000ms), rank(7, ProcessState::kGone, true)}).symptoms.empty());
}

// On a busy host stall_after grows by the scheduling delay's factor, and
// the symptom says by how much.
TEST_F(LocalRankWatchTest, StallAfterGrowsWithTheDelayFactorAndTheDetailSaysSo) {
  watch.setDelayFactor(2.5);
  EXPECT_TRUE(check({rank(4, ProcessState::kRunning, false, 4999ms)}).symptoms.empty());
  auto out = check({rank(4, ProcessState::kRunning, false, 5001ms)});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].detail,
            "rank 4 has not reported progress for 5001 ms (stall_after 2000 ms x2.5 for this host's scheduling "
            "delay = 5000 ms)");
}

TEST_F(LocalRankWatchTest, NoReportYetIsNotStalled) {
  EXPECT_TRUE(check({rank(0, ProcessState::kRunning, false, std::nullopt)}).symptoms.empty());
}

TEST_F(LocalRankWatchTest, StallAfterCanChange) {
  EXPECT_TRUE(check({rank(0, ProcessState::kRunning, false, 1500ms)}).symptoms.empty());
  watch.setStallAfter(1000ms);
  auto out = check({rank(0, ProcessState::kRunning, false, 1500ms)});
  ASSERT_EQ(out.symptoms.size(), 1u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kHeartbeatLost);
}

TEST_F(LocalRankWatchTest, SeveralRanksEachRaiseTheirOwn) {
  auto out = check({rank(0, ProcessState::kGone), rank(1, ProcessState::kStopped),
                    rank(2, ProcessState::kRunning, false, 9000ms), rank(3)});
  ASSERT_EQ(out.symptoms.size(), 3u);
  EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kRankExited);
  EXPECT_EQ(out.symptoms[0].suspect_ranks, (std::vector<uint32_t>{0}));
  EXPECT_EQ(out.symptoms[1].kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(out.symptoms[1].suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(out.symptoms[2].kind, SymptomKind::kHeartbeatLost);
  EXPECT_EQ(out.symptoms[2].suspect_ranks, (std::vector<uint32_t>{2}));
  for (const SymptomRecord& s : out.symptoms) EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_TRUE(check({rank(0, ProcessState::kGone), rank(1, ProcessState::kStopped),
                     rank(2, ProcessState::kRunning, false, 9200ms), rank(3)})
                  .symptoms.empty());
}

TEST_F(LocalRankWatchTest, ThermalAlarmOncePerEpisode) {
  auto out = check({rank(0)}, true, 91.5);
  ASSERT_EQ(out.symptoms.size(), 1u);
  const SymptomRecord& s = out.symptoms[0];
  EXPECT_EQ(s.kind, SymptomKind::kThermalAlarm);
  EXPECT_EQ(s.suspect_node, "n5");
  EXPECT_EQ(s.reporter_node, "n5");
  EXPECT_TRUE(s.suspect_ranks.empty());
  EXPECT_EQ(s.reporter_rank, kDaemonReporter);
  EXPECT_EQ(s.detail, "the node's sensors read 91.5 C, at or above its alarm temperature");
  EXPECT_TRUE(check({rank(0)}, true, 93).symptoms.empty());
  EXPECT_TRUE(check({rank(0)}, true, 92).symptoms.empty());
  EXPECT_TRUE(check({rank(0)}, false, 70).symptoms.empty());  // cooled down
  auto again = check({rank(0)}, true, 95);
  ASSERT_EQ(again.symptoms.size(), 1u);
  EXPECT_EQ(again.symptoms[0].kind, SymptomKind::kThermalAlarm);
  // Without ranks too: the node's temperature is watched all the same.
  LocalRankWatch other(2000ms);
  auto bare = other.check("job1", 1000, "n6", {}, true, 90, now_ns);
  ASSERT_EQ(bare.symptoms.size(), 1u);
  EXPECT_EQ(bare.symptoms[0].suspect_node, "n6");
}

// Cancelled jobs (Ctrl-C, mpirun aborting, scancel): which endings cancel,
// said once, and what follows a cancellation or a crash.
RankStatus endedBy(uint32_t r, int signal, ProcessState state = ProcessState::kGone) {
  RankStatus s = rank(r, state);
  s.ending_signal = signal;
  return s;
}

TEST_F(LocalRankWatchTest, SigintSigtermAndSighupEndTheJobAsCancelledOnceWithoutASymptom) {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    LocalRankWatch fresh{2000ms};
    auto first = fresh.check("job1", 1000, "n5", std::vector<RankStatus>{rank(0), endedBy(1, signal)}, false, 60, kT0);
    EXPECT_TRUE(first.symptoms.empty()) << signal;
    ASSERT_TRUE(first.cancelled.has_value()) << signal;
    EXPECT_EQ(first.cancelled->signal, signal);
    EXPECT_EQ(first.cancelled->rank, 1u);
    EXPECT_TRUE(fresh.cancelled());
    // The other rank's end that follows (mpirun's SIGKILL, or an exit with
    // no report at all) is the job going away: no symptom, no second event.
    auto after = fresh.check("job1", 1000, "n5", std::vector<RankStatus>{rank(0, ProcessState::kGone), endedBy(1, signal)},
                             false, 60, kT0 + 200 * kMs);
    EXPECT_TRUE(after.symptoms.empty()) << signal;
    EXPECT_FALSE(after.cancelled.has_value()) << signal;
  }
}

TEST_F(LocalRankWatchTest, ARankThatSaidItEndsButRunsOnIsNotCancelledYet) {
  // Its program's handler may go on (or call MPI_Finalize): only its end counts.
  auto out = check({rank(0), endedBy(1, SIGTERM, ProcessState::kRunning)});
  EXPECT_FALSE(out.cancelled.has_value());
  EXPECT_FALSE(watch.cancelled());
  EXPECT_TRUE(check({rank(0), rank(1)}).symptoms.empty());
  // It ran on and later crashed: a crash.
  auto crash = check({rank(0), rank(1, ProcessState::kGone)});
  ASSERT_EQ(crash.symptoms.size(), 1u);
  EXPECT_EQ(crash.symptoms[0].kind, SymptomKind::kRankExited);
  EXPECT_FALSE(crash.cancelled.has_value());
}

TEST_F(LocalRankWatchTest, CrashingSignalsAndSigkillStayCrashes) {
  // SIGSEGV, SIGBUS, SIGABRT, SIGKILL: the agent says nothing of them (0);
  // a value that is not a cancelling signal is a crash too.
  for (int signal : {0, SIGSEGV, SIGBUS, SIGABRT, SIGKILL}) {
    LocalRankWatch fresh{2000ms};
    auto out = fresh.check("job1", 1000, "n5", std::vector<RankStatus>{rank(0), endedBy(1, signal)}, false, 60, kT0);
    ASSERT_EQ(out.symptoms.size(), 1u) << signal;
    EXPECT_EQ(out.symptoms[0].kind, SymptomKind::kRankExited);
    EXPECT_FALSE(out.cancelled.has_value()) << signal;
  }
}

TEST_F(LocalRankWatchTest, RanksTornDownAfterACrashDoNotMakeItACancellation) {
  auto crash = check({rank(0), rank(1, ProcessState::kGone), rank(2)});
  ASSERT_EQ(crash.symptoms.size(), 1u);
  // mpirun ends the rest with SIGTERM: still the crash's job, not cancelled.
  auto teardown = check({endedBy(0, SIGTERM), rank(1, ProcessState::kGone), endedBy(2, SIGTERM)});
  EXPECT_FALSE(teardown.cancelled.has_value());
  EXPECT_FALSE(watch.cancelled());
}

TEST_F(LocalRankWatchTest, ACrashAndACancellationSeenInOneCheckAreACrash) {
  auto out = check({endedBy(0, SIGTERM), rank(1, ProcessState::kGone, false, 100ms, "MPI_Recv")});
  EXPECT_FALSE(out.cancelled.has_value());
  ASSERT_FALSE(out.symptoms.empty());
  bool rank1_raised = false;
  for (const SymptomRecord& s : out.symptoms)
    if (s.kind == SymptomKind::kRankExited && s.suspect_ranks == std::vector<uint32_t>{1}) rank1_raised = true;
  EXPECT_TRUE(rank1_raised);
}

TEST_F(LocalRankWatchTest, ACancelledJobsStoppedOrQuietRanksRaiseNothing) {
  ASSERT_TRUE(check({endedBy(0, SIGINT), rank(1)}).cancelled.has_value());
  EXPECT_TRUE(check({endedBy(0, SIGINT), rank(1, ProcessState::kStopped)}).symptoms.empty());
  EXPECT_TRUE(check({endedBy(0, SIGINT), rank(1, ProcessState::kSleeping, false, 60000ms)}).symptoms.empty());
}

}  // namespace
}  // namespace nk
