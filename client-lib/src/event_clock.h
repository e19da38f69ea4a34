#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace nk::client {

// The task events' timestamps. On the event path it reads the CPU's time
// stamp counter when the kernel itself keeps time with it (clocksource
// "tsc": invariant and synchronised across CPUs), which costs a third of
// clock_gettime; the shipper turns ticks into CLOCK_MONOTONIC nanoseconds
// with a fit it refreshes as it goes. Elsewhere ticks are nanoseconds.
class EventClock {
 public:
  // Once, before any event: decides between the counter and the clock.
  static void init();

  static uint64_t ticks() {
#if defined(__x86_64__)
    if (use_tsc_) return __rdtsc();
#endif
    return monotonicNs();
  }

  static uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
  }

  // Ticks to nanoseconds, for one thread (the shipper's): calibrate()
  // refits the line from the first pair of readings to the newest.
  class Converter {
   public:
    Converter();
    void calibrate();
    uint64_t toNs(uint64_t ticks) const {
      if (!use_tsc_) return ticks;
      // Relative to the first reading, so the product fits in a double's
      // precision for the life of any run.
      double delta = static_cast<double>(static_cast<int64_t>(ticks - tick0_)) * ns_per_tick_;
      return ns0_ + static_cast<uint64_t>(static_cast<int64_t>(delta));
    }

   private:
    uint64_t tick0_ = 0, ns0_ = 0;
    double ns_per_tick_ = 1.0;
  };

 private:
  static bool use_tsc_;
};

}  // namespace nk::client
