#pragma once

#include <atomic>
#include <cstdint>

#include "event_clock.h"

namespace nk::client {

// The shipper's newest tick-to-ns fit, for the app's threads, which turn
// each event's ticks into nanoseconds as they record it. One writer (the
// shipper, every few milliseconds), any number of readers, none of which
// may wait: a sequence lock. A reader that overlaps a write reads again;
// the fields are atomics so that the overlap is no data race.
class PublishedClockFit {
 public:
  PublishedClockFit() { publish(EventClock::Fit{}); }
  explicit PublishedClockFit(const EventClock::Fit& fit) { publish(fit); }
  PublishedClockFit(const PublishedClockFit&) = delete;
  PublishedClockFit& operator=(const PublishedClockFit&) = delete;

  // The one writer.
  void publish(const EventClock::Fit& fit) {
    const uint64_t sequence = sequence_.load(std::memory_order_relaxed);
    sequence_.store(sequence + 1, std::memory_order_relaxed);  // odd: a write is under way
    std::atomic_thread_fence(std::memory_order_release);
    tick0_.store(fit.tick0, std::memory_order_relaxed);
    ns0_.store(fit.ns0, std::memory_order_relaxed);
    ns_per_tick_fixed_.store(fit.ns_per_tick_fixed, std::memory_order_relaxed);
    sequence_.store(sequence + 2, std::memory_order_release);
  }

  // Any thread; `version`, when given, is the version read (see version()).
  EventClock::Fit read(uint64_t* version = nullptr) const {
    while (true) {
      const uint64_t before = sequence_.load(std::memory_order_acquire);
      EventClock::Fit fit{tick0_.load(std::memory_order_relaxed), ns0_.load(std::memory_order_relaxed),
                          ns_per_tick_fixed_.load(std::memory_order_relaxed)};
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((before & 1) == 0 && sequence_.load(std::memory_order_relaxed) == before) {
        if (version) *version = before;
        return fit;
      }
    }
  }
  // Changes with every publish(): a thread that keeps a copy of the fit
  // reads it again only when this moved, one load an event.
  uint64_t version() const { return sequence_.load(std::memory_order_relaxed); }

 private:
  // A line of its own: every event reads it, the shipper writes it rarely.
  alignas(64) std::atomic<uint64_t> sequence_{0};
  std::atomic<uint64_t> tick0_{0}, ns0_{0}, ns_per_tick_fixed_{0};
};

}  // namespace nk::client
