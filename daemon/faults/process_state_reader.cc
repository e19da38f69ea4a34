#include "faults/process_state_reader.h"

namespace nk {

std::string_view processStateName(ProcessState state) {
  switch (state) {
    case ProcessState::kRunning: return "running";
    case ProcessState::kSleeping: return "sleeping";
    case ProcessState::kStopped: return "stopped";
    case ProcessState::kZombie: return "zombie";
    case ProcessState::kGone: return "gone";
  }
  return "gone";
}

ProcessState ProcessStateReader::stateOf(pid_t pid, uint64_t start_time) const {
  return statusOf(pid, start_time).state;
}

ProcessStatus ProcessStateReader::statusOf(pid_t pid, uint64_t start_time) const {
  auto status = read(pid);
  if (!status) return {};
  if (start_time != 0 && status->start_time != 0 && status->start_time != start_time) return {};
  return *status;
}

}  // namespace nk
