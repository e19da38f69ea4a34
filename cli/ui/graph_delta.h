#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "taskgraph/task_graph.h"

namespace nk::ui {

// The `graph` events of a session's SSE stream: what a batch of events
// changed in the session's TaskGraph (new tasks, tasks whose state moved,
// new pairs, pairs with one more address), collected between two flushes
// and sent as each task's and pair's whole current state, so the page
// just replaces what it had. The graph must be unlimited (no window):
// edge positions are kept across batches.
// A task's state is DebugStatus's: OMPT reports no "queued", so a created
// task that has not started is sent as queued once every predecessor has
// finished (one the graph does not hold counts as finished, as the daemon
// counts it), and a task's finish touches its successors.
class GraphDelta {
 public:
  // At most this many tasks per event, so that one event of a big
  // session's history never has to be parsed in one go.
  static constexpr size_t kMaxTasksPerEvent = 5000;

  // After `graph` has applied `events`: notes what they touched.
  void note(const TaskGraph& graph, std::span<const GraphEvent> events);
  bool empty() const { return tasks_.empty() && edges_.empty(); }
  // The touched tasks and pairs as `graph` events' data, then forgets them.
  std::vector<nlohmann::json> take(const TaskGraph& graph);

  // Everything `graph` holds, for a subscriber's first events.
  std::vector<nlohmann::json> everything(const TaskGraph& graph) const;
  nlohmann::json taskJson(const TaskGraph& graph, const TaskGraph::Task& task) const;
  // DebugStatus's state of a task (see above).
  TaskState stateOf(const TaskGraph& graph, const TaskGraph::Task& task) const;
  static nlohmann::json edgeJson(const TaskGraph& graph, const TaskGraph::Edge& edge);
  static const char* stateName(TaskState state);
  static const char* kindName(uint8_t kind);

 private:
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
      return std::hash<uint64_t>{}(p.first * 0x9e3779b97f4a7c15ULL ^ p.second);
    }
  };

  std::vector<uint64_t> tasks_;  // ids, in the order first touched
  std::unordered_set<uint64_t> touched_tasks_;
  std::vector<size_t> edges_;    // positions in graph.edges()
  std::unordered_set<size_t> touched_edges_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, size_t, PairHash> edge_at_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> predecessors_, successors_;
  size_t edges_indexed_ = 0;
};

}  // namespace nk::ui
