#pragma once

#include <string>

#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_graph.h"

namespace nk::cli {

// Renders TasksService replies ("tasks", "tasks stats") as a table or JSON. Pure.
class TasksFormatter {
 public:
  static std::string sessionsText(const nodekeeper::v1::SessionList& sessions);
  static std::string sessionsJson(const nodekeeper::v1::SessionList& sessions);
  // "tasks stats": tasks by state, then run times per function, longest
  // total first.
  // `source`: "session 3", or a recording's path.
  static std::string statsText(const std::string& source, const TaskGraph& graph);
  static std::string statsJson(const std::string& source, const TaskGraph& graph);
};

}  // namespace nk::cli
