#pragma once

#include <chrono>

namespace nk::client {

// Reconnect delays: doubling from `initial` up to `max`.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max);

  std::chrono::milliseconds next();
  void reset();

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds current_;
};

}  // namespace nk::client
