#include "faults/cancellation_check.h"

#include "faults/scheduling_delay.h"

namespace nk {

void CancellationCheck::seen(const LocalRankWatch::Cancellation& cancellation, int64_t now_ns) {
  if (pending_ || confirmed_ || overruled_) return;
  if (!crashed_on_.empty()) {
    overruled_ = cancellation;
    return;
  }
  pending_ = cancellation;
  seen_ns_ = now_ns;
}

bool CancellationCheck::crashNews(const std::string& node) {
  if (!crashed_on_.empty()) return false;
  crashed_on_ = node.empty() ? std::string("another node") : node;
  // Too late once confirmed: the job was listed cancelled already.
  if (pending_) {
    overruled_ = pending_;
    pending_.reset();
  }
  return true;
}

std::optional<LocalRankWatch::Cancellation> CancellationCheck::confirmed(int64_t now_ns, double grace_factor) {
  if (!pending_) return std::nullopt;
  const int64_t grace_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(SchedulingDelay::scale(grace_, grace_factor)).count();
  if (now_ns - seen_ns_ < grace_ns) return std::nullopt;
  auto cancellation = pending_;
  pending_.reset();
  confirmed_ = true;
  return cancellation;
}

}  // namespace nk
