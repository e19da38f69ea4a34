#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>

namespace nk {

// A thread's scheduler times since it started, from
// /proc/<pid>/task/<tid>/schedstat (first two fields, in nanoseconds).
struct SchedstatTimes {
  uint64_t run_ns = 0;   // on a CPU
  uint64_t wait_ns = 0;  // runnable, waiting in a run queue
};

// Reads schedstat under a proc root (tests give a fake tree). Works for any
// thread the daemon may read, without perf permissions.
class ThreadSchedstat {
 public:
  explicit ThreadSchedstat(std::filesystem::path proc_root = "/proc");
  // nullopt when the thread is gone or the kernel has no schedstats.
  std::optional<SchedstatTimes> read(pid_t pid, pid_t tid) const;

 private:
  std::filesystem::path proc_root_;
};

}  // namespace nk
