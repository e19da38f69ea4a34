#include "api/task_event_translator.h"

namespace v1 = nodekeeper::v1;

namespace nk {

void TaskEventTranslator::toGraphEvents(const v1::TaskEventBatch& batch, std::vector<GraphEvent>& out) {
  out.clear();
  for (const v1::TaskEvent& e : batch.events()) {
    GraphEvent g;
    g.timestamp_ns = e.timestamp_ns();
    switch (e.event_case()) {
      case v1::TaskEvent::kCreated:
        g.type = GraphEvent::Type::kCreated;
        g.task = e.created().task_id();
        g.parent = e.created().parent_id();
        g.function = e.created().function();
        g.priority = e.created().priority();
        break;
      case v1::TaskEvent::kDependency:
        g.type = GraphEvent::Type::kDependence;
        g.from = e.dependency().from_task();
        g.task = e.dependency().to_task();
        g.address = e.dependency().address();
        g.kind = static_cast<uint8_t>(e.dependency().kind());
        break;
      case v1::TaskEvent::kQueued:
        g.type = GraphEvent::Type::kQueued;
        g.task = e.queued().task_id();
        break;
      case v1::TaskEvent::kStarted:
        g.type = GraphEvent::Type::kStarted;
        g.task = e.started().task_id();
        g.thread = static_cast<int32_t>(e.thread());
        break;
      case v1::TaskEvent::kFinished:
        g.type = GraphEvent::Type::kFinished;
        g.task = e.finished().task_id();
        break;
      case v1::TaskEvent::kFailed:
        g.type = GraphEvent::Type::kFailed;
        g.task = e.failed().task_id();
        break;
      default:
        continue;
    }
    out.push_back(g);
  }
}

}  // namespace nk
