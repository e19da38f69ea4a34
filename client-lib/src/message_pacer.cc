#include "message_pacer.h"

#include <algorithm>

namespace nk::client {

namespace {
constexpr double kShare = 0.9;
}  // namespace

void MessagePacer::setRate(std::optional<uint32_t> daemon_per_second) {
  per_second_ = kShare * static_cast<double>(std::max<uint32_t>(1, daemon_per_second.value_or(kDefaultPerSecond)));
  // Not a whole second's burst: the daemon counts from its first message,
  // this side a little later, and its bucket starts full.
  tokens_ = per_second_;
  started_ = false;
}

MessagePacer::Clock::duration MessagePacer::take(Clock::time_point now) {
  if (started_ && now > last_) {
    const double elapsed_s = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(per_second_, tokens_ + elapsed_s * per_second_);
  }
  started_ = true;
  last_ = std::max(last_, now);
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::duration::zero();
  // In debt: the message goes once the bucket has refilled to zero, and
  // the refill up to then is spent on it.
  const auto wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-tokens_ / per_second_));
  last_ += wait;
  tokens_ = 0;
  return wait;
}

}  // namespace nk::client
