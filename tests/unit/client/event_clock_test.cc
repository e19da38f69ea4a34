#include "event_clock.h"
#include "published_clock_fit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <cstdint>
#include <cstdlib>

namespace nk::client {
namespace {

constexpr const char* kKvmFlags =
    "fpu vme de pse tsc msr pae mce cx8 apic sep constant_tsc arch_perfmon rep_good nopl xtopology "
    "tsc_reliable nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid tsc_deadline_timer";

TEST(EventClock, TheKernelsTscClocksourceIsEnough) {
  EXPECT_TRUE(EventClock::counterIsAClock("tsc", ""));
  EXPECT_TRUE(EventClock::counterIsAClock("tsc", "fpu vme"));
}

// A VM on kvm-clock whose CPU says its counter is invariant and reliable.
TEST(EventClock, AnInvariantReliableCounterIsAClockUnderKvmClock) {
  EXPECT_TRUE(EventClock::counterIsAClock("kvm-clock", kKvmFlags));
  EXPECT_TRUE(EventClock::counterIsAClock("hpet", "constant_tsc nonstop_tsc tsc_reliable"));
}

TEST(EventClock, ACounterMissingAnyOfTheThreePromisesIsNot) {
  EXPECT_FALSE(EventClock::counterIsAClock("kvm-clock", ""));
  EXPECT_FALSE(EventClock::counterIsAClock("hpet", "constant_tsc nonstop_tsc"));          // not synchronised
  EXPECT_FALSE(EventClock::counterIsAClock("hpet", "constant_tsc tsc_reliable"));         // stops in sleep
  EXPECT_FALSE(EventClock::counterIsAClock("hpet", "nonstop_tsc tsc_reliable"));          // rate varies
  // Whole words only.
  EXPECT_FALSE(EventClock::counterIsAClock("hpet", "constant_tsc_x nonstop_tsc tsc_reliable"));
  EXPECT_FALSE(EventClock::counterIsAClock("hpet", "constant_tsc nonstop_tsc xtsc_reliable"));
}

// Whatever init() chose on this machine, converted ticks are CLOCK_MONOTONIC
// nanoseconds and never go back for one reader. The bound is no timing
// claim: it only catches a wrong unit (ticks as ns would be 2 to 4 times
// off after a second of uptime).
// Asked to keep to the clock, ticks are CLOCK_MONOTONIC nanoseconds.
TEST(EventClock, MonotonicWhenTheCounterIsNotAllowed) {
  EventClock::init(false);
  EXPECT_FALSE(EventClock::readsCounter());
  const uint64_t before = EventClock::monotonicNs();
  const uint64_t tick = EventClock::ticks();
  const uint64_t after = EventClock::monotonicNs();
  EXPECT_LE(before, tick);
  EXPECT_LE(tick, after);
  EventClock::init();
}

TEST(EventClock, ConvertedTicksAreMonotonicNanoseconds) {
  EventClock::init();
  EventClock::Converter converter;
  uint64_t last = 0;
  for (int round = 0; round < 50; ++round) {
    volatile uint64_t spin = 0;
    for (int i = 0; i < 100000; ++i) spin = spin + 1;
    converter.calibrate();
    const uint64_t before = EventClock::monotonicNs();
    const uint64_t ns = converter.toNs(EventClock::ticks());
    const uint64_t after = EventClock::monotonicNs();
    EXPECT_GE(ns + 1000000, before) << round;
    EXPECT_LE(ns, after + 1000000) << round;
    EXPECT_GE(ns + 1000, last) << round;
    last = ns;
  }
}

// The app's threads read the shipper's fit while it publishes a new one:
// every fit read is one that was published whole, never fields of two.
TEST(PublishedClockFit, ReadersSeeOnlyWholeFits) {
  PublishedClockFit published(EventClock::Fit{1, 1, 1});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t i = 2; i < 200000; ++i) published.publish(EventClock::Fit{i, i, i});
    done = true;
  });
  uint64_t torn = 0, reads = 0, last = 0, backwards = 0;
  while (!done.load()) {
    uint64_t version = 0;
    const EventClock::Fit fit = published.read(&version);
    torn += fit.tick0 != fit.ns0 || fit.ns0 != fit.ns_per_tick_fixed;
    backwards += fit.tick0 < last;
    last = fit.tick0;
    ++reads;
  }
  writer.join();
  EXPECT_EQ(torn, 0u) << "of " << reads << " reads";
  EXPECT_EQ(backwards, 0u);
  uint64_t version = 0;
  EXPECT_EQ(published.read(&version).tick0, 199999u);
  EXPECT_EQ(version, published.version());
  published.publish(EventClock::Fit{7, 7, 7});
  EXPECT_NE(version, published.version()) << "a thread's copy would not be renewed";
}

}  // namespace
}  // namespace nk::client
