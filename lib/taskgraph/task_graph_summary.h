#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "taskgraph/task_graph.h"

namespace nk {

// What a debugger shows of a live graph: tasks by state, per function, and
// the tasks ready to run (not started, every predecessor finished, not
// blocked by the debugger), oldest first.
class TaskGraphSummary {
 public:
  struct FunctionCounts {
    std::string function;
    std::array<uint64_t, 5> by_state{};  // indexed by TaskState's value
  };

  static TaskGraphSummary of(const TaskGraph& graph, const std::set<uint64_t>& blocked, size_t max_ready);

  std::array<uint64_t, 5> by_state{};
  std::vector<FunctionCounts> functions;  // in the order the graph met them
  std::vector<uint64_t> ready;
  // Tasks of `function` that have not started (what "block function" holds
  // back among the tasks the daemon already knows).
  static std::vector<uint64_t> notStarted(const TaskGraph& graph, const std::string& function);
};

}  // namespace nk
