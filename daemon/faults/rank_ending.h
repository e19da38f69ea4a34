#pragma once

#include <string>

namespace nk {

// How a rank's process ended, as far as fault finding cares. SIGINT,
// SIGTERM and SIGHUP end a job on purpose (Ctrl-C, mpirun aborting the
// job, a scheduler's scancel): a cancellation, not a fault. Every other
// end without MPI_Finalize (SIGSEGV, SIGBUS, SIGABRT, SIGKILL, an exit) is
// a crash.
class RankEnding {
 public:
  static bool isCancellation(int signal);
};

}  // namespace nk
