#include "event_clock.h"

#include <fstream>
#include <string>

namespace nk::client {

bool EventClock::use_tsc_ = false;

void EventClock::init() {
#if defined(__x86_64__)
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  use_tsc_ = source >> name && name == "tsc";
#endif
}

namespace {

// A tick and a nanosecond reading taken as close together as the two reads
// allow: the nanoseconds are the midpoint of two around the tick.
void readPair(uint64_t* tick, uint64_t* ns) {
  uint64_t before = EventClock::monotonicNs();
  *tick = EventClock::ticks();
  uint64_t after = EventClock::monotonicNs();
  *ns = before + (after - before) / 2;
}

}  // namespace

// The fit's error at any moment is about the skew of one pair of readings
// (tens of ns), however short the baseline: an event converted early is
// also close to the baseline's start.
EventClock::Converter::Converter() { readPair(&tick0_, &ns0_); }

void EventClock::Converter::calibrate() {
  if (!use_tsc_) return;
  uint64_t tick = 0, ns = 0;
  readPair(&tick, &ns);
  if (tick > tick0_ + 1000 && ns > ns0_) ns_per_tick_ = static_cast<double>(ns - ns0_) / static_cast<double>(tick - tick0_);
}

}  // namespace nk::client
