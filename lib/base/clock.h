#pragma once

#include <chrono>
#include <cstdint>

namespace nk {

// Wall-clock time in nanoseconds since the epoch: the time base of symptoms,
// faults and heartbeats, which several daemons compare with each other (a
// monotonic clock would not mean the same on two nodes).
inline int64_t wallClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace nk
