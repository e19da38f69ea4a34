#include "cli/ui/graph_delta.h"

#include <cstdio>

namespace nk::ui {

namespace {

std::string hexAddress(uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

// One `graph` event's data.
nlohmann::json event(nlohmann::json tasks, nlohmann::json edges) {
  return {{"tasks", std::move(tasks)}, {"edges", std::move(edges)}};
}

}  // namespace

const char* GraphDelta::stateName(TaskState state) {
  switch (state) {
    case TaskState::kNotQueued: return "not_queued";
    case TaskState::kQueued: return "queued";
    case TaskState::kRunning: return "running";
    case TaskState::kFinished: return "finished";
  }
  return "not_queued";
}

const char* GraphDelta::kindName(uint8_t kind) {
  switch (kind) {
    case 1: return "in";
    case 2: return "out";
    case 3: return "inout";
    case 4: return "mutexinoutset";
    case 5: return "inoutset";
    case 6: return "depobj";
  }
  return "unknown";
}

TaskState GraphDelta::stateOf(const TaskGraph& graph, const TaskGraph::Task& task) const {
  if (task.state != TaskState::kNotQueued || !task.created) return task.state;
  auto found = predecessors_.find(task.id);
  if (found != predecessors_.end())
    for (uint64_t id : found->second) {
      const TaskGraph::Task* predecessor = graph.find(id);
      if (predecessor && predecessor->state != TaskState::kFinished) return TaskState::kNotQueued;
    }
  return TaskState::kQueued;
}

nlohmann::json GraphDelta::taskJson(const TaskGraph& graph, const TaskGraph::Task& task) const {
  const auto& functions = graph.functions();
  return {{"id", task.id},
          {"parent", task.parent},
          {"function", task.function < functions.size() ? functions[task.function] : std::string()},
          {"state", stateName(stateOf(graph, task))},
          {"thread", task.thread < 0 ? 0 : task.thread},
          {"created_ns", task.created_ns},
          {"start_ns", task.started_ns},
          {"end_ns", task.finished_ns}};
}

nlohmann::json GraphDelta::edgeJson(const TaskGraph& graph, const TaskGraph::Edge& edge) {
  std::vector<TaskGraph::Dependence> dependences;
  graph.dependencesOf(edge, dependences);
  nlohmann::json deps = nlohmann::json::array();
  for (const auto& d : dependences) deps.push_back({{"address", hexAddress(d.address)}, {"kind", kindName(d.kind)}});
  return {{"from", edge.from}, {"to", edge.to}, {"deps", std::move(deps)}};
}

void GraphDelta::note(const TaskGraph& graph, std::span<const GraphEvent> events) {
  const auto& edges = graph.edges();
  auto touch = [this](uint64_t id) {
    if (id != 0 && touched_tasks_.insert(id).second) tasks_.push_back(id);
  };
  for (; edges_indexed_ < edges.size(); ++edges_indexed_) {
    const TaskGraph::Edge& edge = edges[edges_indexed_];
    edge_at_[{edge.from, edge.to}] = edges_indexed_;
    predecessors_[edge.to].push_back(edge.from);
    successors_[edge.from].push_back(edge.to);
    if (touched_edges_.insert(edges_indexed_).second) edges_.push_back(edges_indexed_);
  }
  for (const GraphEvent& e : events) {
    touch(e.task);
    if (e.type == GraphEvent::Type::kFinished || e.type == GraphEvent::Type::kFailed) {
      // Its successors may be queued now.
      auto found = successors_.find(e.task);
      if (found != successors_.end())
        for (uint64_t successor : found->second) touch(successor);
    }
    if (e.type != GraphEvent::Type::kDependence) continue;
    // A placeholder made for a predecessor named first is a task too.
    touch(e.from);
    auto found = edge_at_.find({e.from, e.task});
    if (found != edge_at_.end() && touched_edges_.insert(found->second).second) edges_.push_back(found->second);
  }
}

std::vector<nlohmann::json> GraphDelta::take(const TaskGraph& graph) {
  std::vector<nlohmann::json> out;
  nlohmann::json tasks = nlohmann::json::array();
  for (uint64_t id : tasks_) {
    const TaskGraph::Task* task = graph.find(id);
    if (!task) continue;
    tasks.push_back(taskJson(graph, *task));
    if (tasks.size() == kMaxTasksPerEvent) out.push_back(event(std::exchange(tasks, nlohmann::json::array()), nlohmann::json::array()));
  }
  nlohmann::json edges = nlohmann::json::array();
  for (size_t at : edges_)
    if (at < graph.edges().size()) edges.push_back(edgeJson(graph, graph.edges()[at]));
  // Edges go with the last tasks: their ends are then all known to the page.
  if (!tasks.empty() || !edges.empty() || out.empty()) out.push_back(event(std::move(tasks), std::move(edges)));
  tasks_.clear();
  touched_tasks_.clear();
  edges_.clear();
  touched_edges_.clear();
  return out;
}

std::vector<nlohmann::json> GraphDelta::everything(const TaskGraph& graph) const {
  std::vector<nlohmann::json> out;
  nlohmann::json tasks = nlohmann::json::array();
  for (const TaskGraph::Task& task : graph.tasks()) {
    tasks.push_back(taskJson(graph, task));
    if (tasks.size() == kMaxTasksPerEvent) out.push_back(event(std::exchange(tasks, nlohmann::json::array()), nlohmann::json::array()));
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const TaskGraph::Edge& edge : graph.edges()) edges.push_back(edgeJson(graph, edge));
  if (!tasks.empty() || !edges.empty() || out.empty()) out.push_back(event(std::move(tasks), std::move(edges)));
  return out;
}

}  // namespace nk::ui
