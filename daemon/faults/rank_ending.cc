#include "faults/rank_ending.h"

#include <csignal>

namespace nk {

bool RankEnding::isCancellation(int signal) { return signal == SIGINT || signal == SIGTERM || signal == SIGHUP; }

}  // namespace nk
