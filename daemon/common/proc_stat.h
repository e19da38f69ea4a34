#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace nk {

// The fields of /proc/<pid>/stat the daemon uses, for the apps registry and
// the faults service alike.
struct ProcStat {
  char state = '?';                     // field 3: R, S, D, T, Z, ...
  std::optional<pid_t> ppid;            // field 4
  std::optional<uint64_t> start_time;   // field 22, in clock ticks since boot
  std::optional<uint64_t> cpu_ticks;    // fields 14 + 15 (utime + stime), all its threads, in clock ticks

  // procfs mounted at `root`; nothing when the process (or its stat) is gone.
  static std::optional<ProcStat> read(const std::filesystem::path& root, pid_t pid);
  // The uid a process runs as (the owner of its /proc directory); nothing
  // once it is gone.
  static std::optional<uid_t> owner(const std::filesystem::path& root, pid_t pid);
  // The process's command line (/proc/<pid>/cmdline) with its arguments
  // joined by spaces; "" once the process is gone. Without `root`, the
  // node's own procfs.
  static std::string commandLine(const std::filesystem::path& root, pid_t pid);
  static std::string commandLine(pid_t pid);
};

}  // namespace nk
