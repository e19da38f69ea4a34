#pragma once

#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "tasks/task_graph.h"

namespace nk {

// Wire task events (tasks.proto) as the graph takes them. Function names
// point into `batch`, which must outlive the events. Sync and region events
// are not graph events and are left out.
class TaskEventTranslator {
 public:
  static void toGraphEvents(const nodekeeper::v1::TaskEventBatch& batch, std::vector<GraphEvent>& out);
};

}  // namespace nk
