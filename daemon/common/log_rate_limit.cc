#include "log_rate_limit.h"

namespace nk {

LogRateLimit::Decision LogRateLimit::admit(int64_t now_ns) {
  Decision decision;
  if (!started_ || now_ns - window_start_ns_ >= window_.count() || now_ns < window_start_ns_) {
    started_ = true;
    window_start_ns_ = now_ns;
    logged_ = 0;
    decision.held_back = held_back_;
    held_back_ = 0;
  }
  if (logged_ < max_lines_) {
    ++logged_;
    decision.log = true;
  } else {
    ++held_back_;
  }
  return decision;
}

}  // namespace nk
