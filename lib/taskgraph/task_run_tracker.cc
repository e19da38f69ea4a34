#include "taskgraph/task_run_tracker.h"

#include <algorithm>

namespace nk {

TaskRunTracker::TaskRunTracker(TaskRunSink& sink, ExportWindow window) : sink_(sink), window_(window) {}

void TaskRunTracker::apply(std::span<const GraphEvent> events) {
  if (events.empty()) return;
  if (!started_) {
    // Threads' batches interleave: the first batch's earliest stamp is the
    // session's start as near as the stream tells it.
    int64_t first = events.front().timestamp_ns;
    for (const GraphEvent& e : events) first = std::min(first, e.timestamp_ns);
    started_ = true;
    last_ns_ = first;
    if (window_.from_ns) from_ns_ = first + *window_.from_ns;
    if (window_.to_ns) to_ns_ = first + *window_.to_ns;
    sink_.sessionStart(first);
  }
  created_in_batch_ = false;
  for (const GraphEvent& e : events) apply(e);
  if (created_in_batch_) releaseReady();
}

void TaskRunTracker::apply(const GraphEvent& e) {
  if (e.task == 0) return;
  last_ns_ = std::max(last_ns_, e.timestamp_ns);
  switch (e.type) {
    case GraphEvent::Type::kCreated: {
      Open& task = openTask(e.task);
      task.parent = e.parent;
      task.function = intern(e.function);
      task.created = true;
      ++counts_.tasks;
      created_in_batch_ = created_in_batch_ || task.held;
      break;
    }
    case GraphEvent::Type::kDependence: depend(e); break;
    case GraphEvent::Type::kQueued: break;
    case GraphEvent::Type::kStarted: start(e); break;
    case GraphEvent::Type::kFinished:
    case GraphEvent::Type::kFailed: finishTask(e); break;
  }
}

TaskRunTracker::Open& TaskRunTracker::openTask(uint64_t id) {
  auto [it, added] = open_.try_emplace(id);
  if (added) counts_.peak_open = std::max<uint64_t>(counts_.peak_open, open_.size());
  return it->second;
}

uint32_t TaskRunTracker::intern(std::string_view function) {
  if (function.empty()) return 0;
  // Tasks mostly come in runs of one function: one compare, no hash.
  if (last_index_ != 0 && function == last_function_) return last_index_;
  auto [it, added] = functions_.try_emplace(std::string(function), static_cast<uint32_t>(functions_.size() + 1));
  if (added) sink_.nameFunction(it->second, function);
  last_function_ = function;
  last_index_ = it->second;
  return last_index_;
}

void TaskRunTracker::depend(const GraphEvent& e) {
  ++counts_.dependences;
  if (e.from == 0 || e.from == e.task) return;
  Open& successor = openTask(e.task);
  if (successor.started) return;  // too late to go with its begin
  successor.dependences.push_back({e.from, e.address, e.kind});
  auto predecessor = open_.find(e.from);
  if (predecessor == open_.end()) return;  // finished (or never seen): no arrow
  std::vector<uint64_t>& out = predecessor->second.successors;
  // A pair's dependences arrive together: one arrow for them.
  if (out.empty() || out.back() != e.task) out.push_back(e.task);
}

void TaskRunTracker::cross(Thread& thread, int64_t ns) {
  if (thread.crossed || ns < from_ns_) return;
  thread.crossed = true;
  // The runs held back, outermost first, as they nest.
  for (uint64_t id : thread.stack) {
    Open& task = open_.at(id);
    if (task.start_ns <= to_ns_) writeBegin(id, task);
  }
}

bool TaskRunTracker::releasable(const GraphEvent& e) const {
  if (e.type != GraphEvent::Type::kStarted) return true;
  auto it = open_.find(e.task);
  return it == open_.end() || it->second.created;
}

void TaskRunTracker::releaseReady() {
  for (;;) {
    Thread* next = nullptr;
    for (auto& [id, thread] : threads_) {
      if (thread.held.empty() || !releasable(thread.held.front())) continue;
      if (!next || thread.held.front().timestamp_ns < next->held.front().timestamp_ns) next = &thread;
    }
    if (!next) return;
    const GraphEvent e = next->held.front();
    next->held.pop_front();
    auto it = open_.find(e.task);
    if (it != open_.end()) it->second.held = false;
    if (e.type == GraphEvent::Type::kStarted) start(e, true);
    else finishTask(e, true);
  }
}

void TaskRunTracker::release(int32_t thread_id, bool force) {
  Thread& thread = threads_[thread_id];
  while (!thread.held.empty()) {
    const GraphEvent e = thread.held.front();
    auto it = open_.find(e.task);
    if (!force && !releasable(e)) return;
    thread.held.pop_front();
    if (it != open_.end()) it->second.held = false;
    if (e.type == GraphEvent::Type::kStarted) start(e, true);
    else finishTask(e, true);
  }
}

void TaskRunTracker::start(const GraphEvent& e, bool released) {
  Open& task = openTask(e.task);
  if (task.started || task.held) return;  // resumed after a taskyield: the same run
  Thread& thread = threads_[e.thread];
  if (!released && (!task.created || !thread.held.empty())) {
    task.held = true;
    task.thread = e.thread;
    thread.held.push_back(e);
    if (thread.held.size() > kMaxHeld) release(e.thread, true);
    return;
  }
  const int64_t ns = std::max(e.timestamp_ns, thread.last_ns);
  thread.last_ns = ns;
  cross(thread, ns);
  task.started = true;
  task.thread = e.thread;
  task.start_ns = ns;
  thread.stack.push_back(e.task);
  if (thread.crossed && ns <= to_ns_) writeBegin(e.task, task);
}

void TaskRunTracker::finishTask(const GraphEvent& e, bool released) {
  auto it = open_.find(e.task);
  if (it == open_.end()) return;  // never started here, or cut already
  if (!released && (it->second.held || (it->second.started && !threads_[it->second.thread].held.empty()))) {
    // Behind its own start, or behind events of its thread that wait.
    Thread& thread = threads_[it->second.thread];
    thread.held.push_back(e);
    if (thread.held.size() > kMaxHeld) release(it->second.thread, true);
    return;
  }
  if (!it->second.started) {
    open_.erase(it);  // ended without running: no run
    return;
  }
  Thread& thread = threads_[it->second.thread];
  const int64_t ns = std::max({e.timestamp_ns, thread.last_ns, it->second.start_ns});
  thread.last_ns = ns;
  cross(thread, ns);
  auto at = std::find(thread.stack.rbegin(), thread.stack.rend(), e.task);
  if (at == thread.stack.rend()) {  // cannot happen: an open started task is on its stack
    open_.erase(it);
    return;
  }
  // The runs it encloses cannot outlive it on this thread.
  while (thread.stack.back() != e.task) {
    const uint64_t inner = thread.stack.back();
    thread.stack.pop_back();
    auto cut = open_.find(inner);
    writeEnd(inner, cut->second, {.end_ns = ns, .cut = true});
    open_.erase(cut);
  }
  thread.stack.pop_back();
  it = open_.find(e.task);
  writeEnd(e.task, it->second, {.end_ns = ns, .failed = e.type == GraphEvent::Type::kFailed});
  open_.erase(it);
}

void TaskRunTracker::finish() {
  for (auto& [id, thread] : threads_) release(id, true);
  for (auto& [id, thread] : threads_) {
    const int64_t ns = std::max(last_ns_, thread.last_ns);
    cross(thread, ns);
    while (!thread.stack.empty()) {
      const uint64_t task = thread.stack.back();
      thread.stack.pop_back();
      auto it = open_.find(task);
      writeEnd(task, it->second, {.end_ns = ns, .unfinished = true});
      open_.erase(it);
    }
  }
}

TaskRunSink::Run TaskRunTracker::runOf(uint64_t id, const Open& task) const {
  return {.task = id, .parent = task.parent, .function = task.function, .thread = task.thread,
          .start_ns = task.start_ns};
}

void TaskRunTracker::writeBegin(uint64_t id, Open& task) {
  task.written = true;
  ++counts_.runs;
  sink_.begin(runOf(id, task), task.dependences, task.flows_in);
  std::vector<TaskRunSink::Dependence>().swap(task.dependences);
  std::vector<uint64_t>().swap(task.flows_in);
}

void TaskRunTracker::writeEnd(uint64_t id, Open& task, TaskRunSink::End end) {
  if (!task.written) return;
  flows_out_.clear();
  for (uint64_t successor : task.successors) {
    auto it = open_.find(successor);
    // An arrow only to a successor that has yet to begin: one that began
    // already (reordered, lossy data) would have it point backwards.
    if (it == open_.end() || it->second.started) continue;
    it->second.flows_in.push_back(++next_flow_);
    flows_out_.push_back(next_flow_);
    ++counts_.flows;
  }
  sink_.end(runOf(id, task), end, flows_out_);
}

}  // namespace nk
