#include "faults/cpu_progress_tracker.h"

#include <algorithm>

namespace nk {

std::optional<std::chrono::milliseconds> CpuProgressTracker::look(const std::string& job_id, uint32_t rank, pid_t pid,
                                                                  std::optional<std::chrono::microseconds> cpu_time,
                                                                  int64_t now_ns) {
  if (!cpu_time) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto [it, fresh] = seen_.try_emplace({job_id, rank});
  Seen& seen = it->second;
  if (fresh || seen.pid != pid) {
    seen = Seen{pid, *cpu_time, 0};
    return std::nullopt;
  }
  if (*cpu_time > seen.cpu_time) {
    seen.cpu_time = *cpu_time;
    seen.grew_ns = std::max(seen.grew_ns, now_ns);
  }
  if (seen.grew_ns == 0) return std::nullopt;
  return std::chrono::milliseconds(std::max<int64_t>(0, now_ns - seen.grew_ns) / 1000000);
}

void CpuProgressTracker::forget(const std::string& job_id) {
  std::lock_guard lock(mutex_);
  std::erase_if(seen_, [&](const auto& entry) { return entry.first.first == job_id; });
}

size_t CpuProgressTracker::size() const {
  std::lock_guard lock(mutex_);
  return seen_.size();
}

}  // namespace nk
