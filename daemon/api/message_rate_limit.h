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
  // One more message read at `now`, which counts whatever the rate: how long
  // to wait before reading the next, zero within the rate. A reader that
  // waits as told reads no faster than the rate, after the same burst as
  // admit() allows, and refuses nothing: a daemon that was stalled and then
  // finds a clump of messages in its socket slows their sender instead of
  // taking it for one that floods.
  Clock::duration take(Clock::time_point now);
  uint32_t perSecond() const { return per_second_; }

 private:
  void refill(Clock::time_point now);

  const uint32_t per_second_;
  double tokens_;  // below zero after take() past the rate: what the wait pays back
  Clock::time_point last_{};
  bool started_ = false;
};

}  // namespace nk
