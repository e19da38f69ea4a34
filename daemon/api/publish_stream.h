#pragma once

#include <sys/types.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "api/pumped_stream.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/task_event_translator.h"

namespace nk {

class DebugHub;
class SessionRegistry;

// Tasks.Publish: one app's session. Each batch is checked and recorded
// before the next is read, so a recorder that falls behind slows the app's
// stream (lossless mode waits on it) rather than queueing without bound;
// the graph is built from the recorded batches behind it (SessionRegistry).
// The debugger's controls go back on the same stream as the hub hands them
// over.
class PublishStream final
    : public PumpedStream<grpc::ServerBidiReactor<nodekeeper::v1::TaskEventBatch, nodekeeper::v1::TaskControl>,
                          nodekeeper::v1::TaskControl> {
 public:
  PublishStream(StreamHost& host, StreamHost::Slot slot, SessionRegistry& sessions, DebugHub& hub, uint64_t session);

  // Connects the session to the hub and reads the first batch.
  void begin();
  void OnReadDone(bool ok) override;

 private:
  Step next(nodekeeper::v1::TaskControl& out, grpc::Status& status) override;
  void ended() override;
  bool queueControl(const nodekeeper::v1::TaskControl& control);
  // Records the batch just read; the status that ends the stream if it is refused.
  Status take();

  SessionRegistry& sessions_;
  DebugHub& hub_;
  const uint64_t session_;
  std::mutex controls_mutex_;
  std::deque<nodekeeper::v1::TaskControl> controls_;
  nodekeeper::v1::TaskEventBatch batch_;
  TaskEventTranslator checker_;
};

}  // namespace nk
