#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace nk::client {

// Keeps a stream's messages under the rate the daemon holds it to, which
// ends a stream that goes past (its MessageRateLimit: `per_second` on
// average, a burst of one second's worth). The shipper paces itself at
// nine tenths of both, so that messages the socket delivers in a clump
// still arrive within the daemon's count; a lossless program's threads
// then wait for room as they would for a slow daemon.
class MessagePacer {
 public:
  using Clock = std::chrono::steady_clock;

  // The daemon's rate (nullopt: it did not say, so the default it has had).
  explicit MessagePacer(std::optional<uint32_t> daemon_per_second = std::nullopt) { setRate(daemon_per_second); }
  // A new stream, to a daemon with this rate: its count starts afresh.
  void setRate(std::optional<uint32_t> daemon_per_second);

  // One message to send at `now`: how long to wait first (zero: at once).
  // The message is counted as sent at the end of that wait.
  Clock::duration take(Clock::time_point now);
  double perSecond() const { return per_second_; }

  // The daemon's default (StreamHost's messages_per_second).
  static constexpr uint32_t kDefaultPerSecond = 10000;

 private:
  double per_second_ = 0;
  double tokens_ = 0;
  Clock::time_point last_{};
  bool started_ = false;
};

}  // namespace nk::client
