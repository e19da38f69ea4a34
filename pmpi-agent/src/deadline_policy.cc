#include "deadline_policy.h"

#include <algorithm>

namespace nk::pmpi {

std::chrono::nanoseconds DeadlinePolicy::deadline(Kind kind) const {
  if (settings_.fixed.count() > 0) return settings_.fixed;
  int64_t longest = 0;
  {
    std::lock_guard lock(mutex_);
    const Recent& r = recent_[static_cast<size_t>(kind)];
    longest = *std::max_element(r.ns.begin(), r.ns.end());
  }
  auto adaptive = std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(longest) * settings_.factor));
  return std::clamp(adaptive, settings_.floor, settings_.ceiling);
}

void DeadlinePolicy::completed(Kind kind, std::chrono::nanoseconds waited) {
  std::lock_guard lock(mutex_);
  Recent& r = recent_[static_cast<size_t>(kind)];
  r.ns[r.next] = waited.count();
  r.next = (r.next + 1) % kWindow;
}

}  // namespace nk::pmpi
