#pragma once

#include <chrono>
#include <cstdint>

namespace nk {

// Messages a client may send on one stream: `per_second` on average, with a
// burst of one second's worth (an app that flushes after a pause is not
// punished for it). Not thread-safe: a stream reads one message at a time.
class MessageRateLimit {
 public:
  using Clock = std::chrono::steady_clock;

  explicit MessageRateLimit(uint32_t per_second) : per_second_(per_second), tokens_(per_second) {}

  // Whether one more message arriving at `now` is within the rate.
  bool admit(Clock::time_point now);
  uint32_t perSecond() const { return per_second_; }

 private:
  const uint32_t per_second_;
  double tokens_;
  Clock::time_point last_{};
  bool started_ = false;
};

}  // namespace nk
