#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>

#include "api/pumped_stream.h"
#include "api/recording_follower.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "tasks/debug_command_policy.h"

namespace nk {

class DebugHub;
class SessionRegistry;

// Tasks.Debug: a frontend steering one session. Its first command attaches
// (and may ask for the session's events); every later one goes to the
// policy. It is sent the hub's updates as they come and, when it asked for
// them, the recording's frames as they are recorded. When the frontend
// closes its side, what is queued is still sent, then the stream ends.
class DebugStream final
    : public PumpedStream<grpc::ServerBidiReactor<nodekeeper::v1::DebugCommand, nodekeeper::v1::DebugUpdate>,
                          nodekeeper::v1::DebugUpdate> {
 public:
  DebugStream(StreamHost& host, StreamHost::Slot slot, SessionRegistry& sessions, DebugHub& hub,
              DebugCommandPolicy& policy, DebugCommandPolicy::Caller caller);

  // Reads the attach command.
  void begin();
  void OnReadDone(bool ok) override;

 private:
  Step next(nodekeeper::v1::DebugUpdate& out, grpc::Status& status) override;
  void ended() override;
  // The first command: the session to steer, checked; the stream starts.
  Status attach();
  void leave();
  void queueUpdate(const nodekeeper::v1::DebugUpdate& update);

  SessionRegistry& sessions_;
  DebugHub& hub_;
  DebugCommandPolicy& policy_;
  const DebugCommandPolicy::Caller caller_;
  nodekeeper::v1::DebugCommand command_;
  bool attached_ = false;  // read side only
  uint64_t session_ = 0;
  uint64_t frontend_ = 0;
  std::atomic<bool> detached_{false};
  // The writer's: set before the stream starts, then used by next() only.
  std::optional<RecordingFollower> follower_;

  std::mutex updates_mutex_;
  std::deque<nodekeeper::v1::DebugUpdate> updates_;
  bool closing_ = false;  // the frontend closed its side: send what is queued, then end
};

}  // namespace nk
