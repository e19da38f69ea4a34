#include "faults/rank_condition.h"

namespace nk {

RankCondition::Kind RankCondition::of(const RankStatus& rank, std::chrono::milliseconds stall_after) {
  if (rank.finalized) return Kind::kFinished;
  if (rank.state == ProcessState::kGone || rank.state == ProcessState::kZombie) return Kind::kEnded;
  if (rank.state == ProcessState::kStopped) return Kind::kStopped;
  if (!rank.report_age || *rank.report_age <= stall_after) return Kind::kReporting;
  // Runnable is the state letter R: waiting for a CPU or on one.
  const bool runs = rank.state == ProcessState::kRunning && rank.cpu_grew_ago && *rank.cpu_grew_ago <= stall_after;
  return runs ? Kind::kStarved : Kind::kStalled;
}

std::string_view RankCondition::name(Kind kind) {
  switch (kind) {
    case Kind::kReporting: return "reporting";
    case Kind::kStarved: return "starved";
    case Kind::kStalled: return "stalled";
    case Kind::kStopped: return "stopped";
    case Kind::kEnded: return "ended";
    case Kind::kFinished: return "finished";
  }
  return "reporting";
}

}  // namespace nk
