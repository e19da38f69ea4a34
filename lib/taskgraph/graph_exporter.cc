#include "taskgraph/graph_exporter.h"

#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nk {

namespace {

// Twelve distinguishable fills (ColorBrewer Set3), cycled over functions.
constexpr std::array<const char*, 12> kFills = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                                "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

const char* borderOf(TaskState state) {
  switch (state) {
    case TaskState::kNotQueued: return "#9e9e9e";
    case TaskState::kQueued: return "#f9a825";
    case TaskState::kRunning: return "#2e7d32";
    case TaskState::kFinished: return "#000000";
  }
  return "#000000";
}

// The inside of a JSON or DOT string: quotes, backslashes and control
// characters escaped.
void escaped(std::ostream& out, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out << buf;
    } else {
      out << c;
    }
  }
}

void quoted(std::ostream& out, std::string_view s) {
  out << '"';
  escaped(out, s);
  out << '"';
}

std::string_view nameOf(const TaskGraph& graph, const TaskGraph::Task& task) {
  std::string_view name = graph.functions()[task.function];
  return name.empty() ? std::string_view("task") : name;
}

bool ran(const TaskGraph::Task& t) { return t.started_ns > 0 && t.finished_ns >= t.started_ns; }

// Microseconds with nanosecond digits, as the trace-event format wants.
void micros(std::ostream& out, int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  out << buf;
}

}  // namespace

void GraphExporter::dot(const TaskGraph& graph, std::ostream& out) {
  out << "digraph tasks {\n  node [shape=box, style=\"filled,rounded\", penwidth=2];\n";
  for (const TaskGraph::Task& t : graph.tasks()) {
    // Two lines: DOT's own line break (\n inside the string), not JSON's \u000a.
    out << "  t" << t.id << " [label=\"";
    escaped(out, nameOf(graph, t));
    out << "\\n#" << t.id << '"';
    out << ", fillcolor=\"" << kFills[t.function % kFills.size()] << "\", color=\"" << borderOf(t.state) << '"';
    if (t.failed) out << ", style=\"filled,rounded,dashed\"";
    out << "];\n";
  }
  // One arrow per pair, labelled with the addresses that order it, a few
  // at most: a pair of blocks sharing a hundred addresses is still one
  // readable arrow.
  constexpr size_t kLabelAddresses = 4;
  char address[24];
  std::vector<TaskGraph::Dependence> dependences;
  for (const TaskGraph::Edge& e : graph.edges()) {
    graph.dependencesOf(e, dependences);
    out << "  t" << e.from << " -> t" << e.to << " [label=\"";
    for (size_t i = 0; i < dependences.size() && i < kLabelAddresses; ++i) {
      std::snprintf(address, sizeof address, "0x%" PRIx64, dependences[i].address);
      out << (i > 0 ? "\\n" : "") << address;
    }
    if (dependences.size() > kLabelAddresses) out << "\\n+" << dependences.size() - kLabelAddresses << " more";
    out << '"';
    if (dependences.size() > 1) out << ", penwidth=2";
    out << "];\n";
  }
  out << "}\n";
}

void GraphExporter::perfettoJson(const TaskGraph& graph, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto next = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (const TaskGraph::Task& t : graph.tasks()) {
    if (!ran(t)) continue;
    next();
    out << "{\"ph\":\"X\",\"cat\":\"task\",\"pid\":1,\"tid\":" << t.thread << ",\"name\":";
    quoted(out, nameOf(graph, t));
    out << ",\"ts\":";
    micros(out, t.started_ns);
    out << ",\"dur\":";
    micros(out, t.finished_ns - t.started_ns);
    out << ",\"args\":{\"task\":" << t.id << ",\"parent\":" << t.parent << "}}";
  }
  // Flow arrows from the end of a predecessor's slice to the start of its
  // successor's ("bp":"e" binds the arrow's head to the enclosing slice),
  // one per pair however many addresses it shares.
  uint64_t flow = 0;
  for (const TaskGraph::Edge& e : graph.edges()) {
    const TaskGraph::Task* from = graph.find(e.from);
    const TaskGraph::Task* to = graph.find(e.to);
    if (!from || !to || !ran(*from) || !ran(*to)) continue;
    ++flow;
    next();
    out << "{\"ph\":\"s\",\"cat\":\"dependence\",\"name\":\"dependence\",\"id\":" << flow << ",\"pid\":1,\"tid\":"
        << from->thread << ",\"ts\":";
    micros(out, from->finished_ns);
    out << "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependence\",\"name\":\"dependence\",\"id\":" << flow
        << ",\"pid\":1,\"tid\":" << to->thread << ",\"ts\":";
    micros(out, to->started_ns);
    out << '}';
  }
  out << "]}\n";
}

}  // namespace nk
