#include "taskgraph/task_graph.h"

#include <algorithm>
#include <bit>

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
      addDependence(e);
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

namespace {

uint64_t pairHash(uint64_t from, uint64_t to) {
  uint64_t h = (from ^ (to * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

}  // namespace

void TaskGraph::addDependence(const GraphEvent& e) {
  taskFor(e.from);
  Task& successor = taskFor(e.task);  // deque references survive push_back
  uint32_t found = findPair(e.from, successor, e.task);
  if (found != kNone) {
    if (more_.size() >= kNoMore) {
      ++rejected_;
      return;
    }
    Edge& edge = edges_[found];
    more_.push_back({e.address, edge.more, e.kind});
    edge.more = static_cast<uint32_t>(more_.size() - 1);
    ++dependences_;
    return;
  }
  if (edges_.size() >= kNone) {
    ++rejected_;
    return;
  }
  const uint32_t position = positionOf(e.task);
  if (position != run_successor_) {
    sealRun();
    if (successor.pairs_at == kNoPairs) {
      successor.pairs_at = kInRun;
      run_successor_ = position;
      run_begin_ = edges_.size();
    }
  }
  edges_.push_back({e.from, e.task, e.address, kNoMore, e.kind});
  ++dependences_;
  const uint32_t added = static_cast<uint32_t>(edges_.size() - 1);
  if (index_everything_ || successor.pairs_at == kIndexed) {
    index(added);
  } else if (successor.pairs_at == kInRun && edges_.size() - run_begin_ > kMaxRun) {
    // A successor of many predecessors (a writer after many readers):
    // scanning its run for each one would be quadratic.
    for (size_t i = run_begin_; i < edges_.size(); ++i) index(static_cast<uint32_t>(i));
    successor.pairs_at = kIndexed;
    run_successor_ = kNone;
  }
}

// The run at the end is over: its successor's pairs stay where they are,
// to be found by a scan if it ever gets more.
void TaskGraph::sealRun() {
  if (run_successor_ == kNone) return;
  Task& previous = tasks_[run_successor_];
  if (previous.pairs_at == kInRun) previous.pairs_at = kInOldRun;
  run_successor_ = kNone;
}

uint32_t TaskGraph::findPair(uint64_t from, Task& successor, uint64_t successor_id) {
  if (index_everything_) return findIndexed(from, successor_id);
  switch (successor.pairs_at) {
    case kNoPairs: return kNone;
    case kInRun:
      for (size_t i = run_begin_; i < edges_.size(); ++i)
        if (edges_[i].from == from) return static_cast<uint32_t>(i);
      return kNone;
    case kInOldRun: {
      // Its run was interrupted (another thread's batch came in between):
      // find the run from the end, index it, and the successor is indexed
      // from now on, wherever its next pairs land.
      const size_t allowance = edges_.size() + (size_t{1} << 16);
      size_t i = edges_.size();
      while (i > 0 && edges_[i - 1].to != successor_id && scanned_ < allowance) {
        --i;
        ++scanned_;
      }
      if (i == 0 || edges_[i - 1].to != successor_id) {
        indexEverything();
        return findIndexed(from, successor_id);
      }
      for (; i > 0 && edges_[i - 1].to == successor_id; --i) index(static_cast<uint32_t>(i - 1));
      successor.pairs_at = kIndexed;
      return findIndexed(from, successor_id);
    }
    case kIndexed: return findIndexed(from, successor_id);
  }
  return kNone;
}

uint32_t TaskGraph::findIndexed(uint64_t from, uint64_t to) const {
  if (pair_slots_.empty()) return kNone;
  const size_t mask = pair_slots_.size() - 1;
  for (size_t slot = pairHash(from, to) & mask;; slot = (slot + 1) & mask) {
    const uint32_t edge = pair_slots_[slot];
    if (edge == kNone) return kNone;
    if (edges_[edge].from == from && edges_[edge].to == to) return edge;
  }
}

void TaskGraph::index(uint32_t edge) {
  if ((indexed_pairs_ + 1) * 2 > pair_slots_.size()) {
    std::vector<uint32_t> old = std::move(pair_slots_);
    pair_slots_.assign(std::max<size_t>(1024, old.size() * 2), kNone);
    indexed_pairs_ = 0;
    for (uint32_t e : old)
      if (e != kNone) index(e);
  }
  const size_t mask = pair_slots_.size() - 1;
  size_t slot = pairHash(edges_[edge].from, edges_[edge].to) & mask;
  while (pair_slots_[slot] != kNone) slot = (slot + 1) & mask;
  pair_slots_[slot] = edge;
  ++indexed_pairs_;
}

// Finding interrupted runs has cost a pass over all edges: from now on
// every pair is indexed, and no run is scanned again.
void TaskGraph::indexEverything() {
  pair_slots_.clear();
  indexed_pairs_ = 0;
  pair_slots_.assign(std::max<size_t>(1024, std::bit_ceil(edges_.size() * 2 + 2)), kNone);
  for (size_t i = 0; i < edges_.size(); ++i) index(static_cast<uint32_t>(i));
  index_everything_ = true;
  run_successor_ = kNone;
}

void TaskGraph::dependencesOf(const Edge& edge, std::vector<Dependence>& out) const {
  out.clear();
  out.push_back({edge.address, edge.kind});
  for (uint32_t m = edge.more; m != kNoMore; m = more_[m].previous) out.push_back({more_[m].address, more_[m].kind});
  // The side store links each to the one before: newest first.
  std::reverse(out.begin() + 1, out.end());
}

size_t TaskGraph::dependenceCount(const Edge& edge) const {
  size_t n = 1;
  for (uint32_t m = edge.more; m != kNoMore; m = more_[m].previous) ++n;
  return n;
}

size_t TaskGraph::approximateBytes() const {
  // An unordered_map node holds the pair and a next pointer (libstdc++
  // caches no hash for integer keys); the bucket array one pointer each.
  size_t index_bytes = index_.size() * (sizeof(std::pair<const uint64_t, uint32_t>) + sizeof(void*)) +
                       index_.bucket_count() * sizeof(void*);
  for (const auto& table : dense_) index_bytes += table.capacity() * sizeof(uint32_t);
  size_t names = 0;
  for (const std::string& f : functions_) names += sizeof(std::string) + f.capacity();
  return tasks_.size() * sizeof(Task) + edges_.size() * sizeof(Edge) + more_.size() * sizeof(MoreDependence) +
         pair_slots_.capacity() * sizeof(uint32_t) + index_bytes + names * 2 +
         stats_.capacity() * sizeof(FunctionStats);
}

}  // namespace nk
