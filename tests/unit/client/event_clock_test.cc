#include "event_clock.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nk::client
