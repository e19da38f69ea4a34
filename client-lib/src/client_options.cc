#include "client_options.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <optional>

#include "power_budget_parser.h"

namespace nk::client {

namespace {

constexpr std::chrono::milliseconds kMinStallLimit{100};
constexpr std::chrono::milliseconds kMaxStallLimit{86400 * 1000};

// "10", "2.5", "0.25": whole milliseconds, by hand (strtod would follow the
// program's locale). Nothing for anything else.
std::optional<std::chrono::milliseconds> parseSeconds(const char* text) {
  uint64_t whole = 0, millis = 0;
  const char* p = text;
  while (*p >= '0' && *p <= '9' && whole < 1000000) whole = whole * 10 + static_cast<uint64_t>(*p++ - '0');
  bool digits = p != text;
  if (*p == '.') {
    ++p;
    for (uint64_t scale = 100; *p >= '0' && *p <= '9'; ++p, scale /= 10) {
      millis += scale * static_cast<uint64_t>(*p - '0');
      digits = true;
    }
  }
  if (!digits || *p != '\0') return std::nullopt;
  return std::chrono::milliseconds(whole * 1000 + millis);
}

}  // namespace

// NODEKEEPER_SOCKET: the daemon's socket. NODEKEEPER_POWER_BUDGET_MW: the
// budget of an unmodified program (a bad value is reported and ignored).
// NODEKEEPER_TASKS=lossless|lossy|off: stream task events to the daemon
// (lossless: a thread waits while its buffer is full; lossy: the event is
// dropped and counted); unset, OpenMP tasks are not captured but the task C
// API and AYU_event start lossless. NODEKEEPER_TASK_BUFFER: events per thread buffer.
// NODEKEEPER_TASK_CLOCK=auto|monotonic: timestamps from the CPU's time stamp
// counter where it is a clock (auto), or always from CLOCK_MONOTONIC.
// NODEKEEPER_TASKS_STALL_S: seconds (0.1 to 86400, default 10) without the
// daemon taking any task event before lossless mode drops them.
// NK_DEBUG=1: debug lines on stderr. NK_TEST_FORCE_THREADS=3,2: TEST HOOK,
// acts as if the daemon had sent D=3 after the first parallel region, D=2
// after the second, and so on (without a daemon); for tests only.
ClientOptions ClientOptions::fromEnvironment(const char* (*getenv)(const char*)) {
  ClientOptions options;
  if (const char* socket = getenv("NODEKEEPER_SOCKET"); socket && *socket) options.socket_path = socket;
  if (const char* budget = getenv("NODEKEEPER_POWER_BUDGET_MW"); budget) {
    std::string error;
    uint64_t mw = 0;
    if (PowerBudgetParser::parse(budget, &mw, &error) == 0)
      options.power_budget_mw = mw;
    else
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_POWER_BUDGET_MW=\"" + std::string(budget) + "\": " +
                                 error);
  }
  // OMP_NUM_THREADS=8 or 8,4 (nested levels): the outer level is the most
  // threads the program wants.
  if (const char* threads = getenv("OMP_NUM_THREADS"); threads && *threads) {
    uint32_t value = 0;
    const char* p = threads;
    while (*p >= '0' && *p <= '9' && value < 100000) value = value * 10 + static_cast<uint32_t>(*p++ - '0');
    if (p != threads && (*p == '\0' || *p == ',')) options.max_threads = value;
  }
  if (const char* tasks = getenv("NODEKEEPER_TASKS"); tasks && *tasks) {
    std::string mode = tasks;
    options.task_events_explicit = true;
    if (mode == "lossless" || mode == "1" || mode == "on")
      options.task_events = TaskEventMode::kLossless;
    else if (mode == "lossy")
      options.task_events = TaskEventMode::kLossy;
    else if (mode != "off" && mode != "0") {
      options.task_events_explicit = false;  // ignored: as if unset
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_TASKS=\"" + mode +
                                 "\": expected lossless, lossy or off");
    }
  }
  if (const char* buffer = getenv("NODEKEEPER_TASK_BUFFER"); buffer && *buffer) {
    char* end = nullptr;
    unsigned long long events = std::strtoull(buffer, &end, 10);
    if (end != buffer && *end == '\0' && events >= 64 && events <= (1u << 24))
      options.task_buffer_events = static_cast<uint32_t>(events);
    else
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_TASK_BUFFER=\"" + std::string(buffer) +
                                 "\": expected a count of events from 64 to 16777216");
  }
  if (const char* clock = getenv("NODEKEEPER_TASK_CLOCK"); clock && *clock) {
    const std::string_view which = clock;
    if (which == "monotonic")
      options.task_clock_counter = false;
    else if (which != "auto")
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_TASK_CLOCK=\"" + std::string(which) +
                                 "\": expected auto or monotonic");
  }
  if (const char* stall = getenv("NODEKEEPER_TASKS_STALL_S"); stall && *stall) {
    if (auto limit = parseSeconds(stall); limit && *limit >= kMinStallLimit && *limit <= kMaxStallLimit)
      options.task_stall_limit = *limit;
    else
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_TASKS_STALL_S=\"" + std::string(stall) +
                                 "\": expected seconds from 0.1 to 86400");
  }
  if (const char* hold = getenv("NODEKEEPER_BREAK_AT_START"); hold && *hold && std::string(hold) != "0")
    options.break_at_start = true;
  if (const char* debug = getenv("NK_DEBUG"); debug && *debug && std::string(debug) != "0") options.debug = true;
  if (const char* forced = getenv("NK_TEST_FORCE_THREADS"); forced && *forced) {
    uint32_t value = 0;
    bool digits = false;
    for (const char* p = forced;; ++p) {
      if (*p >= '0' && *p <= '9' && value < 100000) {
        value = value * 10 + static_cast<uint32_t>(*p - '0');
        digits = true;
      } else if (*p == ',' || *p == '\0') {
        if (digits && value > 0) options.forced_thread_counts.push_back(value);
        value = 0;
        digits = false;
        if (*p == '\0') break;
      } else {
        options.warnings.push_back("nodekeeper: ignoring NK_TEST_FORCE_THREADS=\"" + std::string(forced) +
                                   "\": expected counts like 3,2");
        options.forced_thread_counts.clear();
        break;
      }
    }
  }
  return options;
}

uint32_t ClientOptions::taskBufferEvents(unsigned cpus, size_t threads_before) const {
  if (task_buffer_events != 0) return task_buffer_events;
  const size_t sharers = std::max<size_t>({cpus, threads_before + 1, 1});
  const auto share = static_cast<uint32_t>(kSharedTaskBufferEvents / sharers);
  return std::max(std::bit_floor(share), kMinTaskBufferEvents);
}

}  // namespace nk::client
