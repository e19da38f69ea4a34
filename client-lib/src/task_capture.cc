#include "task_capture.h"

#include <thread>
#include <utility>

namespace nk::client {

namespace {

EventRing::StallPolicy watching(EventRing::StallPolicy stall, const std::atomic<uint64_t>* progress) {
  stall.progress = progress;
  return stall;
}

// A line from a baseline of some milliseconds: one from a few microseconds
// (the shipper's first pass) was off by a few tenths of a percent, and the
// app's first events take their times from it.
EventClock::Fit firstFit() {
  EventClock::Converter converter;
  if (EventClock::readsCounter()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    converter.calibrate();
  }
  return converter.fit();
}

}  // namespace

TaskCapture::TaskCapture(size_t ring_capacity, EventRing::Mode mode, EventRing::StallPolicy stall)
    : TaskCapture([ring_capacity](size_t) { return ring_capacity; }, mode, std::move(stall)) {}

TaskCapture::TaskCapture(RingSizing ring_capacity, EventRing::Mode mode, EventRing::StallPolicy stall)
    : capacity_(std::move(ring_capacity)),
      mode_(mode),
      stall_(watching(std::move(stall), &deliveries_)),
      clock_fit_(firstFit()) {}

std::vector<uint64_t> TaskCapture::takeToldFunctions() {
  std::lock_guard lock(told_mutex_);
  return std::exchange(told_functions_, {});
}

uint64_t TaskCapture::dropped() const {
  uint64_t total = 0;
  for (const auto& t : threads()) total += t->ring.dropped();
  return total;
}

uint64_t TaskCapture::uncaptured() const {
  uint64_t total = 0;
  for (const auto& t : threads()) total += t->uncaptured.load(std::memory_order_relaxed);
  return total;
}

uint64_t TaskCapture::stalls() const {
  uint64_t total = 0;
  for (const auto& t : threads()) total += t->ring.stalls();
  return total;
}

std::chrono::nanoseconds TaskCapture::waited() const {
  std::chrono::nanoseconds total{0};
  for (const auto& t : threads()) total += t->ring.waited();
  return total;
}

std::shared_ptr<TaskCapture::ThreadEvents> TaskCapture::attachThread() {
  std::lock_guard lock(mutex_);
  auto events = std::make_shared<ThreadEvents>(static_cast<uint32_t>(threads_.size() + 1), capacity_(threads_.size()),
                                               mode_, stall_);
  threads_.push_back(events);
  return events;
}

std::vector<std::shared_ptr<TaskCapture::ThreadEvents>> TaskCapture::threads() const {
  std::lock_guard lock(mutex_);
  return threads_;
}

uint64_t TaskCapture::registerFunction(std::string_view name) {
  std::lock_guard lock(functions_mutex_);
  auto [it, inserted] = function_ids_.try_emplace(std::string(name), 0);
  if (!inserted) return it->second;
  it->second = kFunctionBit | ++next_function_;
  function_names_.emplace(it->second, it->first);
  return it->second;
}

uint64_t TaskCapture::registerRuntimeFunction(uint64_t runtime_id, std::string_view name) {
  uint64_t id = runtimeFunctionId(runtime_id);
  std::lock_guard lock(functions_mutex_);
  function_names_[id] = std::string(name);
  return id;
}

bool TaskCapture::functionName(uint64_t id, std::string* name) const {
  std::lock_guard lock(functions_mutex_);
  auto it = function_names_.find(id);
  if (it == function_names_.end()) return false;
  *name = it->second;
  return true;
}

uint64_t TaskCapture::created(ThreadEvents& t, uint64_t parent, uint64_t function, int32_t priority, uint64_t now_ns) {
  uint64_t id = newId(t, false);
  tellFunction(t, function);
  push(t, TaskEventType::kCreated, now_ns, id, parent, function, static_cast<uint64_t>(static_cast<int64_t>(priority)));
  return id;
}

void TaskCapture::createdWithId(ThreadEvents& t, uint64_t task, uint64_t parent, uint64_t function, int32_t priority,
                                uint64_t now_ns) {
  tellFunction(t, function);
  push(t, TaskEventType::kCreated, now_ns, task, parent, function, static_cast<uint64_t>(static_cast<int64_t>(priority)));
}

void TaskCapture::edge(ThreadEvents& t, uint64_t from, uint64_t to, uint64_t address, DependenceKind kind,
                       uint64_t now_ns) {
  push(t, TaskEventType::kDependence, now_ns, to, from, address, static_cast<uint64_t>(kind));
}

void TaskCapture::queued(ThreadEvents& t, uint64_t task, uint64_t now_ns) {
  push(t, TaskEventType::kQueued, now_ns, task);
}

void TaskCapture::dependences(ThreadEvents& t, uint64_t parent, uint64_t task, std::span<const Dependence> deps,
                              uint64_t now_ns) {
  t.edges.clear();
  if (parent != t.tracked_parent || !t.tracker) {
    t.tracker = &t.trackers[parent];
    t.tracked_parent = parent;
  }
  t.tracker->declare(task, deps, t.edges);
  for (const DependenceEdge& e : t.edges)
    push(t, TaskEventType::kDependence, now_ns, e.to, e.from, e.address, static_cast<uint64_t>(e.kind));
}

void TaskCapture::started(ThreadEvents& t, uint64_t task, uint32_t thread_num, uint64_t now_ns) {
  push(t, TaskEventType::kStarted, now_ns, task, thread_num);
}

void TaskCapture::finished(ThreadEvents& t, uint64_t task, bool failed, uint64_t now_ns) {
  push(t, failed ? TaskEventType::kFailed : TaskEventType::kFinished, now_ns, task);
  dropTracker(t, task);
}

void TaskCapture::finishedThenStarted(ThreadEvents& t, uint64_t task, bool failed, uint64_t next,
                                      uint32_t thread_num, uint64_t now_ns) {
  push(t, failed ? TaskEventType::kFailed : TaskEventType::kFinished, now_ns, task, next, 0, thread_num);
  dropTracker(t, task);
}

void TaskCapture::sync(ThreadEvents& t, uint64_t task, uint64_t kind, bool end, uint64_t now_ns) {
  push(t, TaskEventType::kSync, now_ns, task, kind, end ? 1 : 0);
}

}  // namespace nk::client
