#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace nk {

// What the apps registry needs to know about processes: whether one is alive
// (and is still the same process) and whether a thread belongs to it. Behind
// an interface so that unit tests use a fake instead of /proc.
class ProcessInspector {
 public:
  virtual ~ProcessInspector() = default;

  // The process's start time (clock ticks since boot, /proc/<pid>/stat field
  // 22); nullopt when there is no such process or it is a zombie. Comparing
  // start times tells a reused pid from the registered process.
  virtual std::optional<uint64_t> startTime(pid_t pid) const = 0;
  // True when `tid` is a thread of `pid` (/proc/<pid>/task/<tid> exists).
  virtual bool hasThread(pid_t pid, pid_t tid) const = 0;
};

}  // namespace nk
