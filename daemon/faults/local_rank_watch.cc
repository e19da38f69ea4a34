#include "faults/local_rank_watch.h"

#include <cstdio>

#include "faults/rank_condition.h"
#include "faults/rank_ending.h"
#include "faults/scheduling_delay.h"

namespace nk {

namespace {

SymptomRecord aboutSelf(const std::string& job_id, uid_t uid, const std::string& self, SymptomKind kind,
                        int64_t now_ns) {
  SymptomRecord s;
  s.job_id = job_id;
  s.uid = uid;
  s.kind = kind;
  s.reporter_node = self;
  s.reporter_rank = kDaemonReporter;
  s.suspect_node = self;
  s.timestamp_ns = now_ns;
  return s;
}

}  // namespace

LocalRankWatch::Outcome LocalRankWatch::check(const std::string& job_id, uid_t uid, const std::string& self,
                                              std::span<const RankStatus> ranks, bool thermal_alarm,
                                              double max_temperature_c, int64_t now_ns) {
  Outcome out;
  out.all_finalized = !ranks.empty();
  const std::chrono::milliseconds stall_after = SchedulingDelay::scale(stall_after_, delay_factor_);
  auto endedUnfinalized = [](const RankStatus& rank) {
    return !rank.finalized && (rank.state == ProcessState::kGone || rank.state == ProcessState::kZombie);
  };
  // Crashes first: a crash and a cancellation seen in one check are a crash
  // and the job torn down after it.
  if (!cancelled_)
    for (const RankStatus& rank : ranks)
      if (endedUnfinalized(rank) && !RankEnding::isCancellation(rank.ending_signal)) crashed_ = true;
  if (!cancelled_ && !crashed_)
    for (const RankStatus& rank : ranks)
      if (endedUnfinalized(rank) && RankEnding::isCancellation(rank.ending_signal)) {
        cancelled_ = Cancellation{rank.ending_signal, rank.rank};
        out.cancelled = cancelled_;
        break;
      }
  for (const RankStatus& rank : ranks) {
    Raised& raised = raised_[rank.rank];
    if (!rank.finalized) out.all_finalized = false;
    const bool ended = rank.state == ProcessState::kGone || rank.state == ProcessState::kZombie;
    // A cancelled job's ranks end, stop or go quiet as it goes away.
    if (cancelled_) {
      raised.exited = raised.exited || ended;
      continue;
    }
    if (ended && !rank.finalized && !raised.exited) {
      raised.exited = true;
      SymptomRecord s = aboutSelf(job_id, uid, self, SymptomKind::kRankExited, now_ns);
      s.suspect_ranks = {rank.rank};
      s.operation = rank.current_operation;
      s.detail = "rank " + std::to_string(rank.rank) + "'s process ended without MPI_Finalize";
      out.symptoms.push_back(std::move(s));
    }
    // A rank that called MPI_Finalize is finished, whatever its process does next.
    const bool stopped = RankCondition::of(rank, stall_after) == RankCondition::Kind::kStopped;
    if (stopped && !raised.stopped) {
      SymptomRecord s = aboutSelf(job_id, uid, self, SymptomKind::kHeartbeatLost, now_ns);
      s.suspect_ranks = {rank.rank};
      s.operation = rank.current_operation;
      s.detail = "rank " + std::to_string(rank.rank) + "'s process is stopped";
      out.symptoms.push_back(std::move(s));
    }
    raised.stopped = stopped;
    // A stopped rank is stalled too; it was said once already.
    // A late report from a rank that still runs is a busy host, not a hang.
    const bool stalled = RankCondition::of(rank, stall_after) == RankCondition::Kind::kStalled;
    if (stalled && !raised.stalled) {
      SymptomRecord s = aboutSelf(job_id, uid, self, SymptomKind::kHeartbeatLost, now_ns);
      s.suspect_ranks = {rank.rank};
      s.operation = rank.current_operation;
      s.detail = "rank " + std::to_string(rank.rank) + " has not reported progress for " +
                 std::to_string(rank.report_age->count()) + " ms";
      if (delay_factor_ > 1.0) s.detail += " (stall_after " + SchedulingDelay::describe(stall_after_, delay_factor_) + ")";
      out.symptoms.push_back(std::move(s));
    }
    raised.stalled = stalled;
  }
  if (thermal_alarm && !thermal_raised_) {
    SymptomRecord s = aboutSelf(job_id, uid, self, SymptomKind::kThermalAlarm, now_ns);
    char text[96];
    std::snprintf(text, sizeof text, "the node's sensors read %.1f C, at or above its alarm temperature",
                  max_temperature_c);
    s.detail = text;
    out.symptoms.push_back(std::move(s));
  }
  thermal_raised_ = thermal_alarm;
  return out;
}

}  // namespace nk
