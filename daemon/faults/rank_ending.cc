#include "faults/rank_ending.h"

#include <csignal>

namespace nk {

bool RankEnding::isCancellation(int signal) { return signal == SIGINT || signal == SIGTERM || signal == SIGHUP; }

std::string RankEnding::signalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace nk
