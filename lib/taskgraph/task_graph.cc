#include "taskgraph/task_graph.h"

#include <algorithm>

namespace nk {

TaskGraph::TaskGraph() {
  functions_.emplace_back("");  // index 0: unknown
  stats_.emplace_back();
}

uint32_t TaskGraph::positionOf(uint64_t id) const {
  uint64_t slot = id >> kSerialBits, serial = id & ((uint64_t{1} << kSerialBits) - 1);
  if (slot < dense_.size() && serial < dense_[slot].size() && dense_[slot][serial] != kNone)
    return dense_[slot][serial];
  if (index_.empty()) return kNone;
  auto it = index_.find(id);
  return it == index_.end() ? kNone : it->second;
}

void TaskGraph::remember(uint64_t id, uint32_t position) {
  uint64_t slot = id >> kSerialBits, serial = id & ((uint64_t{1} << kSerialBits) - 1);
  if (slot < kMaxSlots) {
    if (slot >= dense_.size()) dense_.resize(slot + 1);
    std::vector<uint32_t>& table = dense_[slot];
    if (serial < table.size() + kMaxGap) {
      if (serial >= table.size()) table.resize(serial + 1, kNone);
      table[serial] = position;
      return;
    }
  }
  index_.emplace(id, position);
}

std::optional<uint32_t> TaskGraph::indexOf(uint64_t id) const {
  const uint32_t position = positionOf(id);
  if (position == kNone) return std::nullopt;
  return position;
}

const TaskGraph::Task* TaskGraph::find(uint64_t id) const {
  uint32_t position = positionOf(id);
  return position == kNone ? nullptr : &tasks_[position];
}

TaskGraph::Task& TaskGraph::taskFor(uint64_t id) {
  uint32_t position = positionOf(id);
  if (position != kNone) return tasks_[position];
  position = static_cast<uint32_t>(tasks_.size());
  remember(id, position);
  Task task;
  task.id = id;
  tasks_.push_back(task);
  ++by_state_[static_cast<size_t>(TaskState::kNotQueued)];
  return tasks_.back();
}

uint32_t TaskGraph::intern(std::string_view function) {
  if (function.empty()) return 0;
  // Most creations name the function of the one before: one compare
  // instead of a hash and a lookup.
  if (last_index_ != 0 && function == functions_[last_index_]) return last_index_;
  last_index_ = internSlow(function);
  return last_index_;
}

uint32_t TaskGraph::internSlow(std::string_view function) {
  auto it = function_index_.find(function);
  if (it != function_index_.end()) return it->second;
  uint32_t index = static_cast<uint32_t>(functions_.size());
  functions_.emplace_back(function);
  function_index_.emplace(functions_.back(), index);
  stats_.emplace_back();
  return index;
}

// States only move forward: a late "queued" must not undo "running".
void TaskGraph::moveTo(Task& task, TaskState state) {
  if (static_cast<uint8_t>(state) <= static_cast<uint8_t>(task.state)) return;
  --by_state_[static_cast<size_t>(task.state)];
  ++by_state_[static_cast<size_t>(state)];
  task.state = state;
}

void TaskGraph::apply(const GraphEvent& e) {
  if (e.task == 0 || (e.type == GraphEvent::Type::kDependence && e.from == 0)) {
    ++rejected_;
    return;
  }
  switch (e.type) {
    case GraphEvent::Type::kCreated: {
      Task& t = taskFor(e.task);
      t.created = true;
      t.parent = e.parent;
      t.function = intern(e.function);
      t.priority = e.priority;
      t.created_ns = e.timestamp_ns;
      break;
    }
    case GraphEvent::Type::kDependence:
      taskFor(e.from);
      taskFor(e.task);
      edges_.push_back({e.from, e.task, e.address, e.kind});
      break;
    case GraphEvent::Type::kQueued:
      moveTo(taskFor(e.task), TaskState::kQueued);
      break;
    case GraphEvent::Type::kStarted: {
      Task& t = taskFor(e.task);
      // A task resumed after a taskyield starts again: its run began at the
      // first start.
      if (t.started_ns == 0) {
        t.started_ns = e.timestamp_ns;
        t.thread = e.thread;
      }
      moveTo(t, TaskState::kRunning);
      break;
    }
    case GraphEvent::Type::kFailed:
    case GraphEvent::Type::kFinished: {
      Task& t = taskFor(e.task);
      bool was_finished = t.state == TaskState::kFinished;
      t.failed = t.failed || e.type == GraphEvent::Type::kFailed;
      t.finished_ns = e.timestamp_ns;
      moveTo(t, TaskState::kFinished);
      if (!was_finished && t.started_ns > 0 && t.finished_ns >= t.started_ns) {
        FunctionStats& s = stats_[t.function];
        int64_t ns = t.finished_ns - t.started_ns;
        s.min_ns = s.runs ? std::min(s.min_ns, ns) : ns;
        s.max_ns = s.runs ? std::max(s.max_ns, ns) : ns;
        s.total_ns += ns;
        ++s.runs;
      }
      break;
    }
  }
}

size_t TaskGraph::approximateBytes() const {
  // An unordered_map node holds the pair and a next pointer (libstdc++
  // caches no hash for integer keys); the bucket array one pointer each.
  size_t index_bytes = index_.size() * (sizeof(std::pair<const uint64_t, uint32_t>) + sizeof(void*)) +
                       index_.bucket_count() * sizeof(void*);
  for (const auto& table : dense_) index_bytes += table.capacity() * sizeof(uint32_t);
  size_t names = 0;
  for (const std::string& f : functions_) names += sizeof(std::string) + f.capacity();
  return tasks_.size() * sizeof(Task) + edges_.size() * sizeof(Edge) + index_bytes + names * 2 +
         stats_.capacity() * sizeof(FunctionStats);
}

}  // namespace nk
