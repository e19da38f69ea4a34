#include "taskgraph/task_graph_summary.h"

#include <unordered_set>

namespace nk {

namespace {

bool started(TaskState state) { return state == TaskState::kRunning || state == TaskState::kFinished; }

}  // namespace

TaskGraphSummary TaskGraphSummary::of(const TaskGraph& graph, const std::set<uint64_t>& blocked, size_t max_ready) {
  TaskGraphSummary summary;
  summary.by_state = graph.countsByState();
  const auto& names = graph.functions();
  summary.functions.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) summary.functions[i].function = names[i];
  for (const TaskGraph::Task& task : graph.tasks())
    if (task.function < summary.functions.size())
      ++summary.functions[task.function].by_state[static_cast<size_t>(task.state)];
  // Index 0 is "unknown": shown only when some task has no name.
  if (!summary.functions.empty() && summary.functions[0].function.empty()) {
    uint64_t unnamed = 0;
    for (uint64_t n : summary.functions[0].by_state) unnamed += n;
    if (unnamed == 0)
      summary.functions.erase(summary.functions.begin());
    else
      summary.functions[0].function = "(unnamed)";
  }
  std::unordered_set<uint64_t> waiting;  // a predecessor has not finished
  for (const TaskGraph::Edge& edge : graph.edges()) {
    const TaskGraph::Task* from = graph.find(edge.from);
    if (!from || from->state != TaskState::kFinished) waiting.insert(edge.to);
  }
  for (const TaskGraph::Task& task : graph.tasks()) {
    if (summary.ready.size() >= max_ready) break;
    if (!task.created || started(task.state) || waiting.count(task.id) || blocked.count(task.id)) continue;
    summary.ready.push_back(task.id);
  }
  return summary;
}

std::vector<uint64_t> TaskGraphSummary::notStarted(const TaskGraph& graph, const std::string& function) {
  std::vector<uint64_t> out;
  const auto& names = graph.functions();
  for (const TaskGraph::Task& task : graph.tasks())
    if (!started(task.state) && task.function < names.size() && names[task.function] == function)
      out.push_back(task.id);
  return out;
}

}  // namespace nk
