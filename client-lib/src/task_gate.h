#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nk::client {

// Where a debugger steers a task program: the daemon's controls (break,
// step, block, prioritise, pause on an event) land here, and every task
// start passes through. With no control in effect a task pays one relaxed
// load of `active_`; everything else is behind the mutex, on the slow
// path, which only a debugging session takes.
//
// OpenMP has no hook to reorder or skip queued tasks: a task that may not
// start holds the worker that was about to run it (admit() waits). A C API
// runtime asks first (select(), mayStart()) and runs something else.
class TaskGate {
 public:
  // Values as in tasks.proto's PauseEvent.
  enum class PauseEvent : uint8_t { kNone = 0, kTaskStart = 1, kTaskEnd = 2, kTaskwait = 3, kBarrier = 4 };

  struct Report {
    uint64_t control_id = 0;  // 0: news (a worker parked or left, a pause hit)
    bool ok = true;
    std::string message;
    bool held = false;
    uint32_t parked_workers = 0;
    uint32_t steps_left = 0;
    uint64_t timestamp_ns = 0;  // CLOCK_MONOTONIC
    uint64_t task = 0;
    PauseEvent paused_on = PauseEvent::kNone;
  };

  // `changed` is called (outside the lock) whenever reports wait to be
  // sent, so the shipper sends them now rather than at its next tick.
  // `function_name` names a task's function key (created records' `b`).
  TaskGate(std::function<void()> changed, std::function<std::string(uint64_t)> function_name);

  [[nodiscard]] bool active() const { return active_.load(std::memory_order_relaxed); }

  // Task starts. admit() returns once `task` may start (OpenMP: the
  // worker waits here).
  void admit(uint64_t task);
  // The C API's questions: whether `task` may start now, and which of
  // `ready` should (highest debugger priority that may start; the
  // runtime's order among equals); nullopt: none may.
  [[nodiscard]] bool mayStart(uint64_t task);
  [[nodiscard]] std::optional<size_t> select(std::span<const uint64_t> ready);
  // Events a pause or a function block may be waiting for.
  void created(uint64_t task, uint64_t function_key);
  void finished(uint64_t task);
  void sync(uint64_t task, PauseEvent event);

  // The daemon's controls; each leaves one report with its id.
  void hold(uint64_t control_id, bool held);
  void step(uint64_t control_id, uint32_t tasks);
  void block(uint64_t control_id, std::span<const uint64_t> tasks, bool blocked);
  // `known` are the function's tasks already created (the daemon knows
  // them); the gate catches the ones created from now on.
  void blockFunction(uint64_t control_id, std::string_view function, bool blocked,
                     std::span<const uint64_t> known = {});
  void priority(uint64_t control_id, uint64_t task, int32_t level);
  void pauseOn(uint64_t control_id, PauseEvent event, bool enabled);
  // A control the gate does not act on itself (thread count, tracer): its
  // outcome, reported like the others.
  void acknowledge(uint64_t control_id, bool ok, std::string message);
  // Lifts everything and lets every parked worker go: no debugger is left
  // (the daemon said so, or the stream to it broke).
  void releaseAll(uint64_t control_id, std::string_view why);

  // The shipper's: reports not yet sent.
  std::vector<Report> takeReports();
  [[nodiscard]] uint32_t parkedWorkers() const;

 private:
  // Both under mutex_.
  bool mayStartLocked(uint64_t task) const;
  bool blockedLocked(uint64_t task) const;
  void report(uint64_t control_id, bool ok, std::string message, uint64_t task = 0,
              PauseEvent paused_on = PauseEvent::kNone);
  void updateActive();
  void pauseHit(uint64_t task, PauseEvent event);
  void notify();
  // Lets go of the lock, then wakes the shipper if reports wait.
  void unlockAndNotify(std::unique_lock<std::mutex>& lock);

  std::function<void()> changed_;
  std::function<std::string(uint64_t)> function_name_;
  std::atomic<bool> active_{false};
  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool held_ = false;
  uint32_t steps_left_ = 0;
  uint32_t parked_ = 0;
  std::unordered_set<uint64_t> blocked_;
  std::unordered_set<std::string> blocked_functions_;
  std::unordered_map<uint64_t, bool> function_blocked_;  // function key -> blocked, cached
  std::unordered_map<uint64_t, int32_t> priorities_;
  uint8_t pauses_ = 0;  // bit per PauseEvent
  std::vector<Report> reports_;
  bool reports_waiting_ = false;
};

}  // namespace nk::client
