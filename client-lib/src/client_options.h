#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nk::client {

// Task events (NODEKEEPER_TASKS): off unless asked for, so that a program
// that only wants a power budget pays nothing for them. A program that calls
// the task C API or AYU_event has asked for them, unless the variable says
// off: hence task_events_explicit.
enum class TaskEventMode { kOff, kLossless, kLossy };

// The library's settings, from the environment.
struct ClientOptions {
  std::string socket_path = "/run/nodekeeper/nodekeeperd.sock";
  uint64_t power_budget_mw = 0;
  uint32_t max_threads = 0;  // from OMP_NUM_THREADS; 0: unknown
  bool debug = false;
  TaskEventMode task_events = TaskEventMode::kOff;
  bool task_events_explicit = false;  // NODEKEEPER_TASKS held a valid mode, "off" included
  uint32_t task_buffer_events = 0;  // per thread (NODEKEEPER_TASK_BUFFER); 0: taskBufferEvents' own
  // Task events' timestamps from the CPU's counter where it is a clock
  // (EventClock); false: always clock_gettime (NODEKEEPER_TASK_CLOCK=monotonic).
  bool task_clock_counter = true;
  // Lossless task events are dropped only once the daemon has taken none
  // for this long (NODEKEEPER_TASKS_STALL_S): a slow daemon is waited for.
  std::chrono::milliseconds task_stall_limit{10000};
  // NODEKEEPER_BREAK_AT_START=1 (nodekeeper debug --break-at-start): no task
  // starts until a debugger says so; released if no daemon answers.
  bool break_at_start = false;
  std::vector<uint32_t> forced_thread_counts;  // test hook NK_TEST_FORCE_THREADS
  std::vector<std::string> warnings;           // one stderr line each

  [[nodiscard]] static ClientOptions fromEnvironment(const char* (*getenv)(const char*));
  // Events in a thread's buffer, for a program that may run on `cpus` CPUs
  // and has `threads_before` buffers already: NODEKEEPER_TASK_BUFFER's, or
  // else a share of kSharedTaskBufferEvents among max(cpus, threads so far)
  // (a power of two, rounded down), never under kMinTaskBufferEvents. A
  // buffer must outlast the moments the shipper or the daemon is off its
  // core (a scheduler's slice of several ms on a busy node): with few CPUs
  // the threads fill theirs faster than they are emptied, and a deeper one
  // rides that out (UTS on 2 cores, lossless, depth 42: 4.57 s at 256 Ki
  // events a thread against 6.64 s at 64 Ki). Sharing by threads so far
  // bounds the memory: at most about 2 x 24 MiB over 64 Ki a thread, however
  // many threads come.
  [[nodiscard]] uint32_t taskBufferEvents(unsigned cpus, size_t threads_before) const;
  static constexpr uint32_t kSharedTaskBufferEvents = 512 * 1024;  // 24 MiB of records
  static constexpr uint32_t kMinTaskBufferEvents = 64 * 1024;
  // Run for task events and nothing else: the daemon registers the program
  // but leaves it unmanaged until a budget or a policy applies to it.
  [[nodiscard]] bool tracingOnly() const { return task_events != TaskEventMode::kOff && power_budget_mw == 0; }
};

}  // namespace nk::client
