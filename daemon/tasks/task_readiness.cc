#include "tasks/task_readiness.h"

#include <algorithm>

namespace nk {

namespace {

bool started(TaskState state) { return state == TaskState::kRunning || state == TaskState::kFinished; }

// A hostile app may name any thread: the set stays small regardless.
constexpr size_t kMaxWorkers = 1 << 16;

}  // namespace

void TaskReadiness::reset() {
  resync();
  workers_.clear();
  last_start_ns_ = 0;
  generation_ = 0;
}

// Positions moved (the graph dropped finished tasks): read what it holds
// again. Finished tasks are counted by the graph itself, and the workers
// and the last start seen stay true of the dropped tasks.
void TaskReadiness::resync() {
  tasks_seen_ = edges_seen_ = 0;
  live_.clear();
  waiting_.clear();
}

void TaskReadiness::sawStart(const TaskGraph::Task& task) {
  if (task.thread >= 0 && workers_.size() < kMaxWorkers) workers_.insert(task.thread);
  last_start_ns_ = std::max(last_start_ns_, task.started_ns);
}

void TaskReadiness::readNewTasks(const TaskGraph& graph) {
  const auto& tasks = graph.tasks();
  work_.new_tasks = tasks.size() - tasks_seen_;
  for (size_t i = tasks_seen_; i < tasks.size(); ++i) {
    const TaskGraph::Task& t = tasks[i];
    if (t.created && t.state == TaskState::kFinished) {
      sawStart(t);
    } else {
      live_.push_back(t.id);
    }
  }
  tasks_seen_ = tasks.size();
}

// An edge matters only while its successor has not started and its
// predecessor has not finished; the others are never kept. A predecessor
// the graph no longer holds was dropped, finished.
void TaskReadiness::readNewEdges(const TaskGraph& graph) {
  const auto& edges = graph.edges();
  work_.new_edges = edges.size() - edges_seen_;
  for (size_t i = edges_seen_; i < edges.size(); ++i) {
    const TaskGraph::Edge& e = edges[i];
    const TaskGraph::Task* to = graph.find(e.to);
    if (!to || started(to->state)) continue;
    const TaskGraph::Task* from = graph.find(e.from);
    if (!from || from->state == TaskState::kFinished) continue;
    waiting_[e.to].push_back(e.from);
  }
  edges_seen_ = edges.size();
}

void TaskReadiness::dropSatisfied(const TaskGraph& graph) {
  uint64_t pending = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const TaskGraph::Task* to = graph.find(it->first);
    if (!to || started(to->state)) {
      it = waiting_.erase(it);
      continue;
    }
    std::vector<uint64_t>& from = it->second;
    std::erase_if(from, [&](uint64_t id) {
      const TaskGraph::Task* t = graph.find(id);
      return !t || t->state == TaskState::kFinished;
    });
    if (from.empty()) {
      it = waiting_.erase(it);
    } else {
      pending += from.size();
      ++it;
    }
  }
  work_.pending_edges = pending;
}

TaskReadiness::View TaskReadiness::refresh(const TaskGraph& graph, const Blocked& blocked, size_t max_ready) {
  // Both only grow between the graph's compactions; an older generation,
  // or shorter within one, means another graph (or one freed): start over.
  if (graph.generation() < generation_ ||
      (graph.generation() == generation_ &&
       (graph.tasks().size() < tasks_seen_ || graph.edges().size() < edges_seen_)))
    reset();
  else if (graph.generation() != generation_)
    resync();
  generation_ = graph.generation();
  readNewTasks(graph);
  readNewEdges(graph);
  dropSatisfied(graph);
  work_.live_tasks = live_.size();

  View view;
  const size_t functions = graph.functions().size();
  view.by_function.resize(functions);
  view.blocked_waiting.assign(functions, 0);
  auto function_blocked = [&](uint32_t f) { return f < blocked.functions.size() && blocked.functions[f]; };
  auto task_blocked = [&](uint64_t id) { return blocked.tasks && blocked.tasks->count(id) != 0; };

  size_t kept = 0;
  for (uint64_t id : live_) {
    const TaskGraph::Task* t = graph.find(id);
    if (!t) continue;  // the graph let go of it
    const uint32_t f = t->function < functions ? t->function : 0;
    Counts& counts = view.by_function[f];
    if (t->state == TaskState::kFinished) {
      sawStart(*t);
      if (t->created) continue;  // the graph counts it, for good
      ++counts.finished;
    } else if (t->state == TaskState::kRunning) {
      sawStart(*t);
      ++counts.running;
    } else {
      const bool held = task_blocked(id) || function_blocked(f);
      if (held) ++view.blocked_waiting[f];
      if (t->created && !waiting_.contains(id)) {
        ++counts.queued;
        if (!held) {
          ++view.ready_total;
          if (view.ready.size() < max_ready) view.ready.push_back(id);
        }
      } else {
        ++counts.not_queued;
      }
    }
    live_[kept++] = id;
  }
  live_.resize(kept);

  const auto& stats = graph.functionStats();
  for (size_t f = 0; f < functions; ++f) {
    if (f < stats.size()) view.by_function[f].finished += stats[f].finished;
    const Counts& c = view.by_function[f];
    view.total.not_queued += c.not_queued;
    view.total.queued += c.queued;
    view.total.running += c.running;
    view.total.finished += c.finished;
  }
  view.workers = static_cast<uint32_t>(workers_.size());
  view.last_start_ns = last_start_ns_;
  return view;
}

}  // namespace nk
