#include "task_gate.h"

#include <time.h>

#include <utility>

namespace nk::client {

namespace {

uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint8_t bit(TaskGate::PauseEvent event) { return static_cast<uint8_t>(1u << static_cast<unsigned>(event)); }

const char* pauseName(TaskGate::PauseEvent event) {
  switch (event) {
    case TaskGate::PauseEvent::kTaskStart: return "task start";
    case TaskGate::PauseEvent::kTaskEnd: return "task end";
    case TaskGate::PauseEvent::kTaskwait: return "taskwait";
    case TaskGate::PauseEvent::kBarrier: return "barrier";
    case TaskGate::PauseEvent::kNone: break;
  }
  return "nothing";
}

}  // namespace

TaskGate::TaskGate(std::function<void()> changed, std::function<std::string(uint64_t)> function_name)
    : changed_(std::move(changed)), function_name_(std::move(function_name)) {}

bool TaskGate::blockedLocked(uint64_t task) const { return blocked_.count(task) != 0; }

bool TaskGate::mayStartLocked(uint64_t task) const {
  return !blockedLocked(task) && (!held_ || steps_left_ > 0);
}

void TaskGate::report(uint64_t control_id, bool ok, std::string message, uint64_t task, PauseEvent paused_on) {
  reports_.push_back(Report{control_id, ok, std::move(message), held_, parked_, steps_left_, monotonicNs(), task,
                            paused_on});
  reports_waiting_ = true;
}

void TaskGate::updateActive() {
  bool active = held_ || steps_left_ > 0 || !blocked_.empty() || !blocked_functions_.empty() || pauses_ != 0 ||
                !priorities_.empty();
  active_.store(active, std::memory_order_relaxed);
}

// Outside the lock: the shipper's wake-up takes its own.
void TaskGate::notify() {
  if (changed_) changed_();
}

void TaskGate::unlockAndNotify(std::unique_lock<std::mutex>& lock) {
  bool waiting = reports_waiting_;
  lock.unlock();
  if (waiting) notify();
}

void TaskGate::pauseHit(uint64_t task, PauseEvent event) {
  held_ = true;
  steps_left_ = 0;
  report(0, true, std::string("paused on ") + pauseName(event) + ": no task will start", task, event);
}

void TaskGate::admit(uint64_t task) {
  std::unique_lock lock(mutex_);
  bool parked = false;
  while (!mayStartLocked(task)) {
    if (!parked) {
      parked = true;
      ++parked_;
      report(0, true, "worker parked before task " + std::to_string(task), task);
      unlockAndNotify(lock);
      lock.lock();
      continue;  // re-check: a control may have come in meanwhile
    }
    released_.wait(lock);
  }
  if (parked) --parked_;
  bool stepped = held_ && steps_left_ > 0;
  if (stepped && --steps_left_ == 0) report(0, true, "step done: task " + std::to_string(task) + " was the last");
  priorities_.erase(task);
  if (pauses_ & bit(PauseEvent::kTaskStart)) pauseHit(task, PauseEvent::kTaskStart);
  updateActive();
  unlockAndNotify(lock);
}

bool TaskGate::mayStart(uint64_t task) {
  if (!active()) return true;
  std::lock_guard lock(mutex_);
  return mayStartLocked(task);
}

std::optional<size_t> TaskGate::select(std::span<const uint64_t> ready) {
  if (ready.empty()) return std::nullopt;
  if (!active()) return 0;
  std::lock_guard lock(mutex_);
  std::optional<size_t> best;
  int32_t best_level = 0;
  for (size_t i = 0; i < ready.size(); ++i) {
    if (!mayStartLocked(ready[i])) continue;
    auto found = priorities_.find(ready[i]);
    int32_t level = found == priorities_.end() ? 0 : found->second;
    if (!best || level > best_level) {
      best = i;
      best_level = level;
    }
  }
  return best;
}

void TaskGate::created(uint64_t task, uint64_t function_key) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  if (blocked_functions_.empty()) return;
  auto cached = function_blocked_.find(function_key);
  if (cached == function_blocked_.end()) {
    std::string name = function_name_ ? function_name_(function_key) : std::string();
    cached = function_blocked_.emplace(function_key, blocked_functions_.count(name) != 0).first;
  }
  if (cached->second) blocked_.insert(task);
}

void TaskGate::finished(uint64_t task) {
  if (!active()) return;
  std::unique_lock lock(mutex_);
  blocked_.erase(task);
  priorities_.erase(task);
  if (pauses_ & bit(PauseEvent::kTaskEnd)) pauseHit(task, PauseEvent::kTaskEnd);
  updateActive();
  unlockAndNotify(lock);
}

void TaskGate::sync(uint64_t task, PauseEvent event) {
  if (!active()) return;
  std::unique_lock lock(mutex_);
  if (!(pauses_ & bit(event))) return;
  pauseHit(task, event);
  updateActive();
  unlockAndNotify(lock);
}

void TaskGate::hold(uint64_t control_id, bool held) {
  {
    std::lock_guard lock(mutex_);
    held_ = held;
    steps_left_ = 0;
    updateActive();
    report(control_id, true, held ? "break: no task will start" : "continue: tasks may start");
  }
  if (!held) released_.notify_all();
  notify();
}

void TaskGate::step(uint64_t control_id, uint32_t tasks) {
  {
    std::lock_guard lock(mutex_);
    if (tasks == 0) {
      report(control_id, false, "step: the number of tasks must be at least 1");
    } else {
      held_ = true;
      steps_left_ = tasks;
      updateActive();
      report(control_id, true, "step " + std::to_string(tasks) + ": that many tasks may start, then break");
    }
  }
  released_.notify_all();
  notify();
}

void TaskGate::block(uint64_t control_id, std::span<const uint64_t> tasks, bool blocked) {
  {
    std::lock_guard lock(mutex_);
    for (uint64_t task : tasks) {
      if (blocked)
        blocked_.insert(task);
      else
        blocked_.erase(task);
    }
    updateActive();
    report(control_id, true,
           std::string(blocked ? "blocked " : "unblocked ") + std::to_string(tasks.size()) + " task(s)");
  }
  if (!blocked) released_.notify_all();
  notify();
}

void TaskGate::blockFunction(uint64_t control_id, std::string_view function, bool blocked,
                             std::span<const uint64_t> known) {
  {
    std::lock_guard lock(mutex_);
    for (uint64_t task : known) {
      if (blocked)
        blocked_.insert(task);
      else
        blocked_.erase(task);
    }
    if (blocked)
      blocked_functions_.emplace(function);
    else
      blocked_functions_.erase(std::string(function));
    function_blocked_.clear();  // names changed: decide each key again
    updateActive();
    report(control_id, true,
           std::string(blocked ? "blocked " : "unblocked ") + std::to_string(known.size()) + " task(s) of " +
               std::string(function) + (blocked ? ", and its tasks created from now on" : ", and its new tasks"));
  }
  if (!blocked) released_.notify_all();
  notify();
}

void TaskGate::priority(uint64_t control_id, uint64_t task, int32_t level) {
  {
    std::lock_guard lock(mutex_);
    if (level == 0)
      priorities_.erase(task);
    else
      priorities_[task] = level;
    updateActive();
    report(control_id, true, "task " + std::to_string(task) + " priority " + std::to_string(level));
  }
  notify();
}

void TaskGate::pauseOn(uint64_t control_id, PauseEvent event, bool enabled) {
  {
    std::lock_guard lock(mutex_);
    if (event == PauseEvent::kNone) {
      report(control_id, false, "pause: no such event");
    } else {
      if (enabled)
        pauses_ = static_cast<uint8_t>(pauses_ | bit(event));
      else
        pauses_ = static_cast<uint8_t>(pauses_ & ~bit(event));
      updateActive();
      report(control_id, true, std::string(enabled ? "will pause on " : "no longer pausing on ") + pauseName(event));
    }
  }
  notify();
}

void TaskGate::acknowledge(uint64_t control_id, bool ok, std::string message) {
  {
    std::lock_guard lock(mutex_);
    report(control_id, ok, std::move(message));
  }
  notify();
}

void TaskGate::releaseAll(uint64_t control_id, std::string_view why) {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
    steps_left_ = 0;
    blocked_.clear();
    blocked_functions_.clear();
    function_blocked_.clear();
    priorities_.clear();
    pauses_ = 0;
    updateActive();
    report(control_id, true, "released: " + std::string(why));
  }
  released_.notify_all();
  notify();
}

std::vector<TaskGate::Report> TaskGate::takeReports() {
  std::lock_guard lock(mutex_);
  reports_waiting_ = false;
  return std::exchange(reports_, {});
}

uint32_t TaskGate::parkedWorkers() const {
  std::lock_guard lock(mutex_);
  return parked_;
}

}  // namespace nk::client
