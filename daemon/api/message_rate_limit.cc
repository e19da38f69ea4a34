#include "api/message_rate_limit.h"

#include <algorithm>

namespace nk {

void MessageRateLimit::refill(Clock::time_point now) {
  if (started_) {
    const double elapsed_s = std::chrono::duration<double>(now - last_).count();
    if (elapsed_s > 0) tokens_ = std::min<double>(per_second_, tokens_ + elapsed_s * per_second_);
  }
  started_ = true;
  last_ = std::max(last_, now);
}

bool MessageRateLimit::admit(Clock::time_point now) {
  refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

MessageRateLimit::Clock::duration MessageRateLimit::take(Clock::time_point now) {
  refill(now);
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::duration::zero();
  // Rounded up: a read resumed a little early would find the rate still
  // owed and wait once more.
  return std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(-tokens_ / per_second_));
}

}  // namespace nk
