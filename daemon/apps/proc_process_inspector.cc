#include "proc_process_inspector.h"

#include <string>

#include "common/proc_stat.h"

namespace nk {

ProcProcessInspector::ProcProcessInspector(std::filesystem::path root) : root_(std::move(root)) {}

// A zombie's start time would match a pid that is already dead.
std::optional<uint64_t> ProcProcessInspector::startTime(pid_t pid) const {
  auto stat = ProcStat::read(root_, pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X' || stat->state == 'x') return std::nullopt;
  return stat->start_time;
}

bool ProcProcessInspector::hasThread(pid_t pid, pid_t tid) const {
  if (pid <= 0 || tid <= 0) return false;
  std::error_code ec;
  return std::filesystem::is_directory(root_ / std::to_string(pid) / "task" / std::to_string(tid), ec);
}

}  // namespace nk
