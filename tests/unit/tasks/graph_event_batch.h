#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_graph.h"
#include "wire/task_event_record.h"

namespace nk::test {

// Graph events as the structured TaskEvents a Publish stream brings, for
// tests that feed a SessionRegistry what its graph should then hold.
inline nodekeeper::v1::TaskEventBatch batchOf(std::span<const GraphEvent> events) {
  nodekeeper::v1::TaskEventBatch batch;
  for (const GraphEvent& g : events) {
    nodekeeper::v1::TaskEvent* e = batch.add_events();
    e->set_timestamp_ns(g.timestamp_ns);
    switch (g.type) {
      case GraphEvent::Type::kCreated: {
        auto* c = e->mutable_created();
        c->set_task_id(g.task);
        c->set_parent_id(g.parent);
        c->set_function(std::string(g.function));
        c->set_priority(g.priority);
        break;
      }
      case GraphEvent::Type::kDependence: {
        auto* d = e->mutable_dependency();
        d->set_from_task(g.from);
        d->set_to_task(g.task);
        d->set_address(g.address);
        d->set_kind(static_cast<nodekeeper::v1::DependenceKind>(g.kind));
        break;
      }
      case GraphEvent::Type::kQueued: e->mutable_queued()->set_task_id(g.task); break;
      case GraphEvent::Type::kStarted:
        e->mutable_started()->set_task_id(g.task);
        e->set_thread(static_cast<uint32_t>(g.thread));
        break;
      case GraphEvent::Type::kFinished: e->mutable_finished()->set_task_id(g.task); break;
      case GraphEvent::Type::kFailed: e->mutable_failed()->set_task_id(g.task); break;
    }
  }
  return batch;
}

// `count` creations as a client's library packs them, each of a function
// key of its own, first_key on, named "f<key>" (padded with dots to
// `name_bytes`) in the same batch.
inline nodekeeper::v1::TaskEventBatch namesAndCreations(uint64_t first_key, size_t count, size_t name_bytes) {
  nodekeeper::v1::TaskEventBatch batch;
  std::vector<wire::TaskEventRecord> records;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t key = first_key + i;
    nodekeeper::v1::FunctionName* f = batch.add_functions();
    f->set_key(key);
    std::string name = "f" + std::to_string(key);
    name.resize(std::max(name.size(), name_bytes), '.');
    f->set_name(name);
    wire::TaskEventRecord r{};
    r.type = wire::TaskEventType::kCreated;
    r.timestamp_ns = static_cast<uint64_t>(i + 1);
    r.task_id = key;
    r.b = key;
    records.push_back(r);
  }
  nodekeeper::v1::PackedEvents* packed = batch.add_packed();
  packed->set_records(std::string(reinterpret_cast<const char*>(records.data()), records.size() * sizeof(records[0])));
  return batch;
}

}  // namespace nk::test
