#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nk {

// What /proc says a rank's process is doing, as far as fault finding cares.
enum class ProcessState { kRunning, kSleeping, kStopped, kZombie, kGone };

// "running", "sleeping", "stopped", "zombie", "gone": the words the wire uses.
std::string_view processStateName(ProcessState state);

struct ProcessStatus {
  ProcessState state = ProcessState::kGone;
  uint64_t start_time = 0;  // clock ticks since boot (/proc/<pid>/stat field 22)
  // The CPU time all its threads used (utime + stime); nullopt when unknown.
  std::optional<std::chrono::microseconds> cpu_time;
  pid_t ppid = 0;  // its parent; 0 when unknown
};

// Reads a process's state. Behind an interface so that unit tests use a fake
// instead of /proc.
class ProcessStateReader {
 public:
  virtual ~ProcessStateReader() = default;

  // nullopt when there is no such process.
  virtual std::optional<ProcessStatus> read(pid_t pid) const = 0;

  // The state of the process that had `start_time` when it registered: a pid
  // the kernel has since given to another process is "gone". A start time of
  // 0 (unknown at registration) matches any process.
  ProcessState stateOf(pid_t pid, uint64_t start_time) const;
  // The same, with the rest of what /proc says (its CPU time); a process
  // that is gone has state kGone and no CPU time.
  ProcessStatus statusOf(pid_t pid, uint64_t start_time) const;
};

}  // namespace nk
