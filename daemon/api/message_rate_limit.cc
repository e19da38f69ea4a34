#include "api/message_rate_limit.h"

#include <algorithm>

namespace nk {

bool MessageRateLimit::admit(Clock::time_point now) {
  if (started_) {
    const double elapsed_s = std::chrono::duration<double>(now - last_).count();
    if (elapsed_s > 0) tokens_ = std::min<double>(per_second_, tokens_ + elapsed_s * per_second_);
  }
  started_ = true;
  last_ = std::max(last_, now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace nk
