#pragma once

#include <chrono>
#include <cstdint>

namespace nk {

// At most `max_lines` lines per `window` from one source, so that whoever
// can make the source log (a stranger knocking on the peer port, each
// failed TLS handshake a gRPC error line) cannot flood the daemon's log.
// What was held back is counted and said once the next window opens. Not
// thread-safe: the caller holds its own lock.
class LogRateLimit {
 public:
  LogRateLimit(uint32_t max_lines, std::chrono::nanoseconds window) : max_lines_(max_lines), window_(window) {}

  struct Decision {
    bool log = false;
    // Lines held back in the windows before this one, to be said first
    // (0: nothing to say).
    uint64_t held_back = 0;
  };
  Decision admit(int64_t now_ns);

 private:
  const uint32_t max_lines_;
  const std::chrono::nanoseconds window_;
  int64_t window_start_ns_ = 0;
  bool started_ = false;
  uint32_t logged_ = 0;
  uint64_t held_back_ = 0;
};

}  // namespace nk
