#include "event_clock.h"

#include <cmath>
#include <fstream>
#include <string>

namespace nk::client {

bool EventClock::use_tsc_ = false;

namespace {

bool hasWord(std::string_view words, std::string_view word) {
  while (!words.empty()) {
    const size_t end = words.find_first_of(" \t");
    if (words.substr(0, end) == word) return true;
    if (end == std::string_view::npos) break;
    words.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace

bool EventClock::counterIsAClock(std::string_view clocksource, std::string_view cpu_flags) {
  if (clocksource == "tsc") return true;
  return hasWord(cpu_flags, "constant_tsc") && hasWord(cpu_flags, "nonstop_tsc") &&
         hasWord(cpu_flags, "tsc_reliable");
}

void EventClock::init(bool counter_allowed) {
  use_tsc_ = false;
#if defined(__x86_64__)
  if (!counter_allowed) return;
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string clocksource;
  source >> clocksource;
  // Every CPU has its own block; the first one's flags are the machine's.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    if (size_t colon = line.find(':'); colon != std::string::npos) flags = line.substr(colon + 1);
    break;
  }
  use_tsc_ = counterIsAClock(clocksource, flags);
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
EventClock::Converter::Converter() { readPair(&fit_.tick0, &fit_.ns0); }

void EventClock::Converter::calibrate() {
  if (!use_tsc_) return;
  uint64_t tick = 0, ns = 0;
  readPair(&tick, &ns);
  if (tick < fit_.tick0) {
    fit_.tick0 = tick;
    fit_.ns0 = ns;
    return;
  }
  if (tick > fit_.tick0 + 1000 && ns > fit_.ns0) {
    const double ns_per_tick = static_cast<double>(ns - fit_.ns0) / static_cast<double>(tick - fit_.tick0);
    // Under 2^15 ns a tick (a counter slower than 31 kHz is no time stamp
    // counter), so with 48 bits of fraction it fits llround's 63.
    fit_.ns_per_tick_fixed = static_cast<uint64_t>(std::llround(std::ldexp(ns_per_tick, kFractionBits)));
  }
}

}  // namespace nk::client
