#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_graph.h"
#include "wire/task_event_record.h"

namespace nk {

// Wire task events (tasks.proto), structured or packed, as the graph takes
// them and as frontends are sent them. One translator per stream (a Publish
// stream, a recording read from its start): packed batches name a function
// once, and the translator keeps the name for the rest of the stream.
// Sync and region events are not graph events and are left out of those.
class TaskEventTranslator {
 public:
  // Replaces `out`. Function names point into `batch` or into this
  // translator, which must both outlive the events. Returns what is wrong
  // with a packed part (not whole records, an unknown type), or empty; the
  // events before the fault are in `out`.
  std::string toGraphEvents(const nodekeeper::v1::TaskEventBatch& batch, std::vector<GraphEvent>& out);
  // What toGraphEvents would find wrong with `batch`, or empty, without
  // making the events: for a stream that records batches now and builds
  // its graph from them later (half the cost of toGraphEvents).
  std::string check(const nodekeeper::v1::TaskEventBatch& batch);
  // `batch` with its packed events expanded into TaskEvents, in order
  // (replaces `out`); for frontends, which never see the packed form.
  void toStructured(const nodekeeper::v1::TaskEventBatch& batch, nodekeeper::v1::TaskEventBatch& out);
  // Function names not kept, past FunctionNameLimits' bounds for a stream.
  uint64_t namesNotKept() const { return names_not_kept_; }

 private:
  // The part's records, of either packed form, into records_; what is
  // wrong with it, or empty (records_ then holds what came before the fault).
  std::string unpack(const nodekeeper::v1::PackedEvents& packed);
  // Expands finishes that name a resuming task (TaskEventRecord) in records_.
  void resumeAfterFinishes();
  void learnFunctions(const nodekeeper::v1::TaskEventBatch& batch);
  const std::string& functionName(uint64_t key) const;

  std::unordered_map<uint64_t, std::string> functions_;
  size_t name_bytes_ = 0;  // of functions_' names
  uint64_t names_not_kept_ = 0;
  std::vector<wire::TaskEventRecord> records_;  // scratch, reused
};

}  // namespace nk
