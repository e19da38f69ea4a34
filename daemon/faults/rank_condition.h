#pragma once

#include <chrono>
#include <string_view>

#include "faults/prober.h"

namespace nk {

// What a rank is doing, as far as fault finding tells from its status:
// finished (it called MPI_Finalize: never a fault, whatever its process
// does next), ended (its process is gone without MPI_Finalize), stopped
// (SIGSTOP, a tracer: a hang), stalled (its agent's report is older than
// stall_after and nothing says it runs: a hang), starved (the report is
// late, but its process is runnable and its CPU time grew within
// stall_after: the host is busy and the agent's reporting thread or this
// daemon did not get the CPU in time; not a fault) or reporting.
class RankCondition {
 public:
  enum class Kind { kReporting, kStarved, kStalled, kStopped, kEnded, kFinished };

  static Kind of(const RankStatus& rank, std::chrono::milliseconds stall_after);
  static std::string_view name(Kind kind);
};

}  // namespace nk
