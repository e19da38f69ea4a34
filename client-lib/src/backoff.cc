#include "backoff.h"

#include <algorithm>

namespace nk::client {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
    : initial_(initial), max_(std::max(initial, max)), current_(initial) {}

// The delay before the next attempt; each call doubles the following one.
std::chrono::milliseconds Backoff::next() {
  auto delay = current_;
  current_ = std::min(current_ * 2, max_);
  return delay;
}

// After a successful connection.
void Backoff::reset() { current_ = initial_; }

}  // namespace nk::client
