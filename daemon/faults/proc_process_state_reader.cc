#include "faults/proc_process_state_reader.h"

#include "common/proc_stat.h"

namespace nk {

ProcProcessStateReader::ProcProcessStateReader(std::filesystem::path root) : root_(std::move(root)) {}

ProcessState ProcProcessStateReader::fromLetter(char letter) {
  switch (letter) {
    case 'R': return ProcessState::kRunning;
    case 'T':
    case 't': return ProcessState::kStopped;
    case 'Z':
    case 'X':
    case 'x': return ProcessState::kZombie;
    default: return ProcessState::kSleeping;
  }
}

std::optional<ProcessStatus> ProcProcessStateReader::read(pid_t pid) const {
  auto stat = ProcStat::read(root_, pid);
  if (!stat) return std::nullopt;
  ProcessStatus status;
  status.state = fromLetter(stat->state);
  if (stat->start_time) status.start_time = *stat->start_time;
  return status;
}

}  // namespace nk
