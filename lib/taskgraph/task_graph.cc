#include "taskgraph/task_graph.h"

#include <algorithm>
#include <bit>

#include "taskgraph/function_name_limits.h"

namespace nk {

TaskGraph::TaskGraph() {
  functions_.emplace_back("");  // index 0: unknown
  stats_.emplace_back();
}

TaskGraph::TaskGraph(size_t max_tasks) : TaskGraph() {
  max_tasks_ = max_tasks;
  if (max_tasks_ != 0) next_compaction_ = std::max<size_t>(max_tasks_, 4);
  if (max_tasks_ != 0) max_held_ = max_tasks_ > SIZE_MAX / kMaxHeldPerWindow ? SIZE_MAX : max_tasks_ * kMaxHeldPerWindow;
}

namespace {

constexpr uint64_t serialOf(uint64_t id, int serial_bits) { return id & ((uint64_t{1} << serial_bits) - 1); }

}  // namespace

uint32_t TaskGraph::positionOf(uint64_t id) const {
  uint64_t slot = id >> kSerialBits, serial = serialOf(id, kSerialBits);
  if (slot < dense_.size()) {
    const Slot& s = dense_[slot];
    // Unsigned: a serial below the base wraps past the table's end.
    const uint64_t at = serial - s.base;
    if (at < s.positions.size() && s.positions[at] != kNone) return s.positions[at] - task_base_;
  }
  if (index_.empty()) return kNone;
  auto it = index_.find(id);
  return it == index_.end() ? kNone : it->second - task_base_;
}

void TaskGraph::remember(uint64_t id, uint32_t position) {
  uint64_t slot = id >> kSerialBits, serial = serialOf(id, kSerialBits);
  if (slot < kMaxSlots) {
    if (slot >= dense_.size()) dense_.resize(slot + 1);
    Slot& s = dense_[slot];
    std::vector<uint32_t>& table = s.positions;
    if (serial >= s.base && serial - s.base < table.size() + kMaxGap) {
      const uint64_t at = serial - s.base;
      const size_t growth = at < table.size() ? 0 : static_cast<size_t>(at + 1 - table.size());
      // A gap stays in a table only while the tables cost no more per task
      // held than hashing. Ids are the client's to choose: each one kMaxGap
      // past the last made every task cost 256 KB of table (20,000 tasks,
      // 8.5 GB of a root daemon).
      if (growth == 0 || table_entries_ + growth <= kTableEntriesPerTask * (tasks_.size() + 1) + kTableEntriesSlack) {
        if (growth != 0) {
          table.resize(at + 1, kNone);
          table_entries_ += growth;
        }
        table[at] = position + task_base_;
        return;
      }
    }
  }
  index_.emplace(id, position + task_base_);
}

bool TaskGraph::wasDropped(uint64_t id) const {
  return tasks_dropped_ != 0 && positionOf(id) == kNone && droppedIfNotHeld(id);
}

bool TaskGraph::droppedIfNotHeld(uint64_t id) const {
  const uint64_t slot = id >> kSerialBits;
  if (slot >= dense_.size()) return false;
  const Slot& s = dense_[slot];
  return s.ordered && serialOf(id, kSerialBits) < s.dropped_below;
}

TaskGraph::Task* TaskGraph::liveTaskFor(uint64_t id) {
  const uint32_t position = positionOf(id);
  if (position != kNone) return &tasks_[position];
  if (tasks_dropped_ != 0 && droppedIfNotHeld(id)) {
    ++late_events_;
    return nullptr;
  }
  return newTask(id);
}

// A creation below the slot's latest means its ids are not made in order:
// "below the highest dropped" no longer says "dropped" there.
void TaskGraph::noteCreated(uint64_t id) {
  const uint64_t slot = id >> kSerialBits, serial = serialOf(id, kSerialBits);
  if (slot >= kMaxSlots) return;
  if (slot >= dense_.size()) dense_.resize(slot + 1);
  Slot& s = dense_[slot];
  if (serial > s.last_created)
    s.last_created = serial;
  else if (positionOf(id) == kNone)
    s.ordered = false;
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

TaskGraph::Task* TaskGraph::taskFor(uint64_t id) {
  const uint32_t position = positionOf(id);
  if (position != kNone) return &tasks_[position];
  return newTask(id);
}

TaskGraph::Task* TaskGraph::newTask(uint64_t id) {
  // Full of unfinished tasks, which the window never drops: the client's
  // to make, so held only up to a bound.
  if (max_held_ != 0 && tasks_.size() >= max_held_) return nullptr;
  remember(id, static_cast<uint32_t>(tasks_.size()));
  Task task;
  task.id = id;
  tasks_.push_back(task);
  ++by_state_[static_cast<size_t>(TaskState::kNotQueued)];
  return &tasks_.back();
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
  std::string cut;
  function = FunctionNameLimits::fit(function, cut);
  auto it = function_index_.find(function);
  if (it != function_index_.end()) return it->second;
  // Past the bound every new name counts under one entry (FunctionNameLimits).
  if (functions_.size() > FunctionNameLimits::kMaxNames) {
    ++functions_not_kept_;
    if (other_functions_ == 0) other_functions_ = addFunction(kOtherFunctions);
    return other_functions_;
  }
  return addFunction(function);
}

uint32_t TaskGraph::addFunction(std::string_view function) {
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
  if (tasks_.size() >= next_compaction_) compact();
  switch (e.type) {
    case GraphEvent::Type::kCreated: {
      if (max_tasks_ != 0) noteCreated(e.task);
      Task* held = taskFor(e.task);
      if (!held) {
        ++tasks_not_held_;
        break;
      }
      Task& t = *held;
      // Finished before its creation arrived: counted now it has a function.
      const bool finished_placeholder = !t.created && t.state == TaskState::kFinished;
      t.created = true;
      t.parent = e.parent;
      t.function = intern(e.function);
      if (finished_placeholder) ++stats_[t.function].finished;
      t.priority = e.priority;
      t.created_ns = e.timestamp_ns;
      break;
    }
    case GraphEvent::Type::kDependence:
      addDependence(e);
      break;
    case GraphEvent::Type::kQueued:
      if (Task* t = liveTaskFor(e.task)) moveTo(*t, TaskState::kQueued);
      break;
    case GraphEvent::Type::kStarted: {
      Task* live = liveTaskFor(e.task);
      if (!live) break;
      Task& t = *live;
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
      Task* live = liveTaskFor(e.task);
      if (!live) break;
      Task& t = *live;
      bool was_finished = t.state == TaskState::kFinished;
      t.failed = t.failed || e.type == GraphEvent::Type::kFailed;
      t.finished_ns = e.timestamp_ns;
      moveTo(t, TaskState::kFinished);
      if (!was_finished && t.created) ++stats_[t.function].finished;
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
  uint32_t position = positionOf(e.task);
  if (position == kNone && tasks_dropped_ != 0 && droppedIfNotHeld(e.task)) {
    ++late_events_;  // nothing left to order
    return;
  }
  // A dropped predecessor has finished: the edge needs no placeholder.
  if (positionOf(e.from) == kNone && !(tasks_dropped_ != 0 && droppedIfNotHeld(e.from))) newTask(e.from);
  if (position == kNone) position = positionOf(e.task);  // the predecessor may be the task itself
  Task* held = position != kNone ? &tasks_[position] : newTask(e.task);  // deque references survive push_back
  if (!held) {  // a successor not held has no edges either
    ++dependences_not_held_;
    return;
  }
  Task& successor = *held;
  if (position == kNone) position = static_cast<uint32_t>(tasks_.size() - 1);
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
      const size_t allowance = totalEdges() + (size_t{1} << 16);
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

// Drops the oldest finished tasks down to 3/4 of the window, and the edges
// into them. Only the region they were in is rewritten: the tasks it still
// holds (a tree's unfinished ancestors) move to its end, in order, and the
// region's front is popped; the tasks past it keep their ordinals, so the
// id tables need no rewrite and a compaction costs what it drops, not the
// window.
void TaskGraph::compact() {
  const uint64_t progress = totalTasks() + dependences_;
  if (progress < progress_floor_) {
    // The last compaction read more than the graph has grown since: wait.
    next_compaction_ = std::min(tasks_.size() + std::max<size_t>(1, max_tasks_ / 16), heldBound());
    return;
  }
  if (task_base_ > (uint32_t{1} << 31)) renumber();
  const uint64_t dropped_before = tasks_dropped_;
  const size_t old_held = compactTasks();
  if (tasks_dropped_ != dropped_before) {
    compactSlots();
    compactEdges(old_held);
    ++generation_;
  }
  const size_t held = tasks_.size();
  // At the bound on held tasks, every event looks (tasks created there are
  // not held); the floor keeps the reading to O(1) per event, whatever
  // the graph holds.
  next_compaction_ = std::min(std::max(max_tasks_, held + std::max({size_t{1}, max_tasks_ / 4, held / 4})), heldBound());
  progress_floor_ = progress + (edges_.size() + more_.size() + held) / 4;
}

// Ordinals stay below kNone: once in two billion tasks, every one is
// rewritten.
void TaskGraph::renumber() {
  for (Slot& s : dense_)
    for (uint32_t& p : s.positions)
      if (p != kNone) p -= task_base_;
  for (auto& [id, p] : index_) p -= task_base_;
  compaction_reads_ += index_.size();
  for (const Slot& s : dense_) compaction_reads_ += s.positions.size();
  task_base_ = 0;
}

void TaskGraph::setOrdinal(uint64_t id, uint32_t ordinal) {
  const uint64_t slot = id >> kSerialBits, serial = serialOf(id, kSerialBits);
  if (slot < dense_.size()) {
    Slot& s = dense_[slot];
    const uint64_t at = serial - s.base;
    if (at < s.positions.size() && s.positions[at] != kNone) {
      s.positions[at] = ordinal;
      return;
    }
  }
  index_[id] = ordinal;
}

size_t TaskGraph::compactTasks() {
  const size_t n = tasks_.size();
  const size_t keep = max_tasks_ - max_tasks_ / 4;
  const size_t to_drop = n > keep ? n - keep : 0;
  auto goes = [](const Task& t) { return t.created && t.state == TaskState::kFinished; };
  // The oldest finished go; the region ends after the last of them, and
  // every finished task before that goes too.
  size_t region = 0, dropped = 0, scanned = 0;
  for (size_t i = 0; i < n && dropped < to_drop; ++i, scanned = i) {
    const Task& t = tasks_[i];
    if (!goes(t)) continue;
    const uint64_t slot = t.id >> kSerialBits, serial = serialOf(t.id, kSerialBits);
    Slot* s = slot < dense_.size() ? &dense_[slot] : nullptr;
    const uint32_t ordinal = static_cast<uint32_t>(i) + task_base_;
    if (s && serial - s->base < s->positions.size() && s->positions[serial - s->base] == ordinal)
      s->positions[serial - s->base] = kNone;
    else
      index_.erase(t.id);
    if (s) s->dropped_below = std::max(s->dropped_below, serial + 1);
    ++dropped;
    region = i + 1;
  }
  compaction_reads_ += scanned;  // all of them when none could go
  if (dropped == 0) return 0;
  tasks_dropped_ += dropped;
  const uint32_t old_run = run_successor_;
  uint32_t moved_run = kNone;
  size_t write = region;
  for (size_t i = region; i-- > 0;) {
    if (goes(tasks_[i])) continue;
    --write;
    if (write != i) {
      const Task t = tasks_[i];
      tasks_[write] = t;
      setOrdinal(t.id, static_cast<uint32_t>(write) + task_base_);
    }
    if (i == old_run) moved_run = static_cast<uint32_t>(write);
  }
  tasks_.erase(tasks_.begin(), tasks_.begin() + static_cast<std::ptrdiff_t>(dropped));
  task_base_ += static_cast<uint32_t>(dropped);
  if (old_run == kNone) run_successor_ = kNone;
  else if (old_run >= region) run_successor_ = static_cast<uint32_t>(old_run - dropped);
  else run_successor_ = moved_run == kNone ? kNone : static_cast<uint32_t>(moved_run - dropped);
  if (index_.bucket_count() > 4 * index_.size() + 64) index_.rehash(0);
  return region - dropped;
}

// Each table keeps the part of its serials where it is cheaper than
// hashing: a tree's root, held long after its slot's other early tasks
// were dropped, moves to index_ instead of pinning the table's start.
void TaskGraph::compactSlots() {
  constexpr int64_t kTableBytes = sizeof(uint32_t), kHashed = kHashedBytes;
  for (size_t slot = 0; slot < dense_.size(); ++slot) {
    Slot& s = dense_[slot];
    std::vector<uint32_t>& table = s.positions;
    compaction_reads_ += table.size();
    int64_t gain = 0, best_gain = 0;
    size_t cut = 0;
    for (size_t i = 0; i < table.size(); ++i) {
      gain += table[i] == kNone ? kTableBytes : kTableBytes - kHashed;
      if (gain > best_gain) {
        best_gain = gain;
        cut = i + 1;
      }
    }
    if (cut == 0) continue;
    for (size_t i = 0; i < cut; ++i)
      if (table[i] != kNone) index_.emplace((uint64_t{slot} << kSerialBits) | (s.base + i), table[i]);
    table.erase(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(cut));
    table_entries_ -= cut;
    if (table.capacity() > 2 * table.size() + 4096) table.shrink_to_fit();
    s.base += cut;
  }
}

// The edges into dropped tasks go, looked for from the front (edges come
// in about the order of their successors) up to the first edge into a task
// younger than the dropped region: one that arrived late, behind it, goes
// at a later compaction. The region's edges into held tasks move to its
// end, in order.
void TaskGraph::compactEdges(size_t old_held) {
  const size_t n = edges_.size();
  size_t region = 0, dropped = 0, scanned = 0;
  for (; scanned < n; ++scanned) {
    const uint32_t successor = positionOf(edges_[scanned].to);
    if (successor == kNone) {
      ++dropped;
      region = scanned + 1;
    } else if (successor >= old_held) {
      break;
    }
  }
  compaction_reads_ += scanned;
  if (dropped == 0) return;
  if (run_begin_ < region) sealRun();
  size_t write = region;
  for (size_t i = region; i-- > 0;) {
    if (positionOf(edges_[i].to) == kNone) continue;
    --write;
    if (write != i) edges_[write] = edges_[i];
  }
  edges_.erase(edges_.begin(), edges_.begin() + static_cast<std::ptrdiff_t>(dropped));
  edges_dropped_ += dropped;
  if (run_begin_ >= region) run_begin_ -= dropped;

  if (!more_.empty()) {
    // Each held edge marks its dependences; links point to older entries,
    // already moved when a newer one is.
    compaction_reads_ += edges_.size() + more_.size();
    std::vector<uint32_t> more_position(more_.size(), kNone);
    for (const Edge& e : edges_)
      for (uint32_t m = e.more; m != kNoMore; m = more_[m].previous) more_position[m] = 0;
    uint32_t more_kept = 0;
    for (size_t m = 0; m < more_.size(); ++m) {
      if (more_position[m] == kNone) continue;
      MoreDependence d = more_[m];
      if (d.previous != kNoMore) d.previous = more_position[d.previous];
      more_position[m] = more_kept;
      more_[more_kept++] = d;
    }
    for (Edge& e : edges_)
      if (e.more != kNoMore) e.more = more_position[e.more];
    more_.resize(more_kept);
  }

  if (!pair_slots_.empty()) {
    compaction_reads_ += edges_.size();
    std::vector<uint32_t> to_index;
    for (size_t i = 0; i < edges_.size(); ++i) {
      const uint32_t successor = positionOf(edges_[i].to);
      if (successor != kNone && (index_everything_ || tasks_[successor].pairs_at == kIndexed))
        to_index.push_back(static_cast<uint32_t>(i));
    }
    pair_slots_ = std::vector<uint32_t>();  // not `= {}`, which keeps the capacity
    indexed_pairs_ = 0;
    if (!to_index.empty()) {
      pair_slots_.assign(std::max<size_t>(1024, std::bit_ceil(to_index.size() * 2 + 2)), kNone);
      for (uint32_t edge : to_index) index(edge);
    }
  }
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
  index_bytes += dense_.capacity() * sizeof(Slot);
  for (const Slot& s : dense_) index_bytes += s.positions.capacity() * sizeof(uint32_t);
  size_t names = 0;
  for (const std::string& f : functions_) names += sizeof(std::string) + f.capacity();
  return tasks_.size() * sizeof(Task) + edges_.size() * sizeof(Edge) + more_.size() * sizeof(MoreDependence) +
         pair_slots_.capacity() * sizeof(uint32_t) + index_bytes + names * 2 +
         stats_.capacity() * sizeof(FunctionStats);
}

}  // namespace nk
