#include "faults/proc_process_state_reader.h"

#include <unistd.h>

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
  if (stat->ppid) status.ppid = *stat->ppid;
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (stat->cpu_ticks && ticks_per_second > 0)
    status.cpu_time = std::chrono::microseconds(static_cast<int64_t>(*stat->cpu_ticks * 1000000 / ticks_per_second));
  return status;
}

}  // namespace nk
