#pragma once

#include <ostream>

#include "taskgraph/task_graph.h"

namespace nk {

// A session's graph in formats other tools read: Graphviz DOT (as
// Temanejo's Figure 2 draws it: fill colour by function, border by state, one
// arrow per task pair, labelled by the addresses it shares) and the
// Chrome/Perfetto trace-event JSON (one slice per task run on its thread's
// track, a flow arrow per pair of tasks that ran). Both stream: a million-task graph is never held twice.
class GraphExporter {
 public:
  static void dot(const TaskGraph& graph, std::ostream& out);
  static void perfettoJson(const TaskGraph& graph, std::ostream& out);
};

}  // namespace nk
