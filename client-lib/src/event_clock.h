#pragma once

#include <cstdint>
#include <ctime>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace nk::client {

// The task events' timestamps. On the event path it reads the CPU's time
// stamp counter when that counter is a clock (about 11 ns against 26 ns for
// clock_gettime idle, and 40 to 90 ns under load where the vDSO's pvclock
// retries), turned into CLOCK_MONOTONIC nanoseconds as each event is
// recorded, with a fit the shipper refreshes as it goes
// (PublishedClockFit). Elsewhere ticks are nanoseconds.
//
// The counter is a clock when the kernel keeps time with it (clocksource
// "tsc"), or when the CPU says it is invariant (constant_tsc: one rate
// whatever the frequency; nonstop_tsc: it runs in deep sleep states) and
// the kernel or hypervisor says it is reliable (tsc_reliable: synchronised
// across CPUs, no watchdog needed), which is what a VM on kvm-clock shows.
// Across CPUs the counters then agree to well under a microsecond (on the
// 2-core VM here, a cache-line ping-pong between the two never saw the
// counter go backwards: each side read a later value than the other wrote,
// 80 ns of transfer apart). What is left is covered where it matters: the
// capture keeps each thread's events in order (a thread that migrates
// never goes back in time, see TaskCapture::push), and the graph takes a task's
// start on one thread before its creation on another (TaskRunTracker).
class EventClock {
 public:
  // Once, before any event: decides between the counter and the clock;
  // `counter_allowed` false keeps to the clock (NODEKEEPER_TASK_CLOCK=
  // monotonic, for a node whose operator distrusts the counter).
  static void init(bool counter_allowed = true);
  // What init() chose.
  static bool readsCounter() { return use_tsc_; }
  // The decision, from the kernel's current clocksource and the CPU flags
  // of /proc/cpuinfo (one "flags" line, words separated by spaces).
  static bool counterIsAClock(std::string_view clocksource, std::string_view cpu_flags);

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

  // A line from ticks to nanoseconds: relative to a first reading, in fixed
  // point. Every event is converted on its app thread as it is recorded,
  // and an integer multiply is a third of the latency of a double's
  // conversions and multiply. 48 bits of fraction keep the double's
  // precision (32 drifted by about 2 us an hour on a 2.4 GHz counter); the
  // product of any run's ticks fits in 128 bits.
  static constexpr int kFractionBits = 48;
  struct Fit {
    uint64_t tick0 = 0, ns0 = 0;
    uint64_t ns_per_tick_fixed = uint64_t{1} << kFractionBits;  // nanoseconds a tick, times 2^48
  };
  static uint64_t toNs(const Fit& fit, uint64_t ticks) {
    if (!use_tsc_) return ticks;
    const auto delta = static_cast<__int128>(static_cast<int64_t>(ticks - fit.tick0));
    return fit.ns0 + static_cast<uint64_t>(static_cast<int64_t>((delta * fit.ns_per_tick_fixed) >> kFractionBits));
  }

  // Ticks to nanoseconds, for one thread (the shipper's): calibrate()
  // refits the line from the first pair of readings to the newest. A
  // counter that went back against the clock (a VM restored from a
  // snapshot on another host) starts the line afresh from the newest pair.
  class Converter {
   public:
    Converter();
    // Refined from `start` on.
    explicit Converter(const Fit& start) : fit_(start) {}
    void calibrate();
    const Fit& fit() const { return fit_; }
    uint64_t toNs(uint64_t ticks) const { return EventClock::toNs(fit_, ticks); }

   private:
    Fit fit_;
  };

 private:
  static bool use_tsc_;
};

}  // namespace nk::client
