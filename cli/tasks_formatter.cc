#include "cli/tasks_formatter.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

std::string TasksFormatter::sessionsText(const pb::SessionList& sessions) {
  if (sessions.sessions().empty())
    return "No task sessions (run a program with NODEKEEPER_TASKS=lossless and libnodekeeper as its OMPT tool).\n";
  Table table({{"SESSION", Table::Align::kRight},
               {"PID", Table::Align::kRight},
               {"UID", Table::Align::kRight},
               {"STATE", Table::Align::kLeft},
               {"TASKS", Table::Align::kRight},
               {"EDGES", Table::Align::kRight},
               {"RECORDING", Table::Align::kLeft},
               {"PROGRAM", Table::Align::kLeft}});
  for (const auto& s : sessions.sessions())
    table.addRow({std::to_string(s.session_id()), std::to_string(s.pid()), std::to_string(s.uid()),
                  s.live() ? "live" : "ended", std::to_string(s.tasks()), std::to_string(s.edges()),
                  s.recording().empty() ? "-" : s.recording(), s.program().empty() ? "-" : s.program()});
  // Below the table, so that its columns stay one word each.
  std::string notes;
  for (const auto& s : sessions.sessions()) {
    if (!s.recording_stopped().empty())
      notes += "session " + std::to_string(s.session_id()) + ": recording " + s.recording_stopped() + "\n";
    if (!s.graph_limited().empty())
      notes += "session " + std::to_string(s.session_id()) + ": live graph " + s.graph_limited() + "\n";
  }
  return table.render() + notes;
}

std::string TasksFormatter::sessionsJson(const pb::SessionList& sessions) {
  Json list = Json::array();
  for (const auto& s : sessions.sessions())
    list.push_back({{"session_id", s.session_id()},
                    {"pid", s.pid()},
                    {"uid", s.uid()},
                    {"live", s.live()},
                    {"tasks", s.tasks()},
                    {"edges", s.edges()},
                    {"events", s.events()},
                    {"recording", s.recording()},
                    {"recording_stopped", s.recording_stopped()},
                    {"graph_limited", s.graph_limited()},
                    {"program", s.program()}});
  return Json{{"sessions", list}}.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

const char* const kStateNames[] = {"unspecified", "not_queued", "queued", "running", "finished"};

// Function indices with runs, longest total first (ties by name).
std::vector<uint32_t> byTotalTime(const TaskGraph& graph) {
  std::vector<uint32_t> order;
  const auto& stats = graph.functionStats();
  for (uint32_t i = 0; i < stats.size(); ++i)
    if (stats[i].runs > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (stats[a].total_ns != stats[b].total_ns) return stats[a].total_ns > stats[b].total_ns;
    return graph.functions()[a] < graph.functions()[b];
  });
  return order;
}

std::string micros(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ns) / 1e3);
  return buf;
}

std::string functionLabel(const TaskGraph& graph, uint32_t index) {
  const std::string& name = graph.functions()[index];
  return name.empty() ? "(unknown)" : name;
}

}  // namespace

std::string TasksFormatter::statsText(const std::string& source, const TaskGraph& graph) {
  const auto& counts = graph.countsByState();
  std::string text = source + ": " + std::to_string(graph.tasks().size()) + " tasks (";
  for (int s = 1; s <= 4; ++s) text += std::string(s > 1 ? ", " : "") + kStateNames[s] + " " + std::to_string(counts[s]);
  text += "), " + std::to_string(graph.edges().size()) + " edges (" + std::to_string(graph.dependences()) +
          " dependences)\n";
  auto order = byTotalTime(graph);
  if (order.empty()) return text + "No task has finished yet.\n";
  Table table({{"FUNCTION", Table::Align::kLeft},
               {"RUNS", Table::Align::kRight},
               {"TOTAL_MS", Table::Align::kRight},
               {"MEAN_US", Table::Align::kRight},
               {"MIN_US", Table::Align::kRight},
               {"MAX_US", Table::Align::kRight}});
  char total[32];
  for (uint32_t i : order) {
    const auto& st = graph.functionStats()[i];
    std::snprintf(total, sizeof total, "%.3f", static_cast<double>(st.total_ns) / 1e6);
    table.addRow({functionLabel(graph, i), std::to_string(st.runs), total,
                  micros(st.total_ns / static_cast<int64_t>(st.runs)), micros(st.min_ns), micros(st.max_ns)});
  }
  return text + table.render();
}

std::string TasksFormatter::statsJson(const std::string& source, const TaskGraph& graph) {
  Json states = Json::object();
  for (int s = 1; s <= 4; ++s) states[kStateNames[s]] = graph.countsByState()[s];
  Json functions = Json::array();
  for (uint32_t i : byTotalTime(graph)) {
    const auto& st = graph.functionStats()[i];
    functions.push_back({{"function", graph.functions()[i]},
                         {"runs", st.runs},
                         {"total_ns", st.total_ns},
                         {"mean_ns", st.total_ns / static_cast<int64_t>(st.runs)},
                         {"min_ns", st.min_ns},
                         {"max_ns", st.max_ns}});
  }
  return Json{{"source", source},
              {"tasks", graph.tasks().size()},
              {"edges", graph.edges().size()},
              {"dependences", graph.dependences()},
              {"states", states},
              {"functions", functions}}
             .dump(2, ' ', false, Json::error_handler_t::replace) +
         "\n";
}

}  // namespace nk::cli
