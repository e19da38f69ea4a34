#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "taskgraph/task_graph.h"

namespace nk {

// Which tasks of a live graph may run now, as a debugger shows it
// (Temanejo's Figure 1): a task that is created, not started and whose
// every predecessor has finished is queued, whatever the runtime reported
// (OMPT has no "queued" event); one still waiting on a predecessor is not
// queued.
//
// Kept up to date incrementally, since `status` runs often and a graph may
// hold millions of tasks: each refresh reads only the tasks and edges the
// graph gained since the last one (both only grow between the graph's
// compactions), the tasks that had not finished then, and the edges whose
// successor had not started and whose predecessor had not finished. A
// finished task is never looked at again (the graph counts finished tasks
// per function itself). When a windowed graph drops finished tasks
// (its generation changes), the refresh reads what it holds again, once;
// a predecessor it no longer holds has finished. Works through
// TaskGraph's public view (tasks(), edges(), find()), one refresh at a
// time, under the graph's lock.
class TaskReadiness {
 public:
  struct Counts {
    uint64_t not_queued = 0, queued = 0, running = 0, finished = 0;
  };
  // What the debugger has blocked: task ids, and per function index of the
  // graph whether the function is blocked (missing: not blocked).
  struct Blocked {
    const std::set<uint64_t>* tasks = nullptr;
    std::vector<bool> functions;
  };
  struct View {
    Counts total;
    std::vector<Counts> by_function;  // indexed like TaskGraph::functions()
    // Queued and not blocked, oldest first: the first `max_ready`, and how
    // many in all.
    std::vector<uint64_t> ready;
    uint64_t ready_total = 0;
    // Blocked tasks (by id or function) that have not started, per
    // function index: what holds the workers parked at the gate.
    std::vector<uint64_t> blocked_waiting;
    // Distinct workers seen running a task of the graph (as far as the
    // daemon has seen it, the team).
    uint32_t workers = 0;
    // The latest start of any task (0: none has started).
    int64_t last_start_ns = 0;
  };
  // What the last refresh read, so tests can tell it stayed incremental.
  struct Work {
    uint64_t new_tasks = 0, new_edges = 0, live_tasks = 0, pending_edges = 0;
  };

  View refresh(const TaskGraph& graph, const Blocked& blocked, size_t max_ready);
  const Work& lastWork() const { return work_; }

 private:
  void reset();
  void resync();
  void readNewTasks(const TaskGraph& graph);
  void readNewEdges(const TaskGraph& graph);
  void dropSatisfied(const TaskGraph& graph);
  void sawStart(const TaskGraph::Task& task);

  size_t tasks_seen_ = 0, edges_seen_ = 0;
  uint64_t generation_ = 0;  // the graph's, when last read
  // Tasks not finished (or not created) when last looked at, oldest first.
  std::vector<uint64_t> live_;
  // Successor -> predecessors that had not finished when last looked at;
  // only for successors that had not started.
  std::unordered_map<uint64_t, std::vector<uint64_t>> waiting_;
  std::unordered_set<int32_t> workers_;
  int64_t last_start_ns_ = 0;
  Work work_;
};

}  // namespace nk
