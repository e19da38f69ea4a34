#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "api/stream_host.h"
#include "node/access_policy.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "tasks/debug_command_policy.h"
#include "tasks/debug_hub.h"

namespace nk {

class SessionRegistry;

// TasksService: an app's Publish stream becomes one session (its pid and
// uid from SO_PEERCRED) and carries the debugger's controls back to it;
// ListSessions shows a caller its own sessions, or all of them to an admin;
// Watch replays and follows a session, and Debug steers it, for its owner
// or an admin. Which commands are allowed is DebugCommandPolicy's to say.
//
// The three streams use gRPC's callback API (the StreamHost holds them):
// an open stream costs no thread while it waits.
class TasksServiceImpl final
    : public nodekeeper::v1::TasksService::WithCallbackMethod_Publish<nodekeeper::v1::TasksService::WithCallbackMethod_Watch<
          nodekeeper::v1::TasksService::WithCallbackMethod_Debug<nodekeeper::v1::TasksService::Service>>> {
 public:
  // `grace`: how long a break outlives the frontend that held it.
  // `max_message_bytes`: the server's limit on what a client sends, named
  // to publishing libraries with the streams' message rate.
  TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access, StreamHost& streams,
                   uint32_t max_message_bytes, std::chrono::seconds grace = std::chrono::seconds(30));
  ~TasksServiceImpl() override;

  grpc::ServerBidiReactor<nodekeeper::v1::TaskEventBatch, nodekeeper::v1::TaskControl>* Publish(
      grpc::CallbackServerContext*) override;
  grpc::Status ListSessions(grpc::ServerContext*, const nodekeeper::v1::ListSessionsRequest*,
                            nodekeeper::v1::SessionList*) override;
  // The session's recording from its start (the graph so far), then, with
  // `follow`, what arrives until the session ends or the caller leaves.
  grpc::ServerWriteReactor<nodekeeper::v1::TaskEventBatch>* Watch(grpc::CallbackServerContext*,
                                                                  const nodekeeper::v1::WatchRequest*) override;
  grpc::ServerBidiReactor<nodekeeper::v1::DebugCommand, nodekeeper::v1::DebugUpdate>* Debug(
      grpc::CallbackServerContext*) override;

 private:
  DebugCommandPolicy::Caller callerOf(const PeerCredentials& peer) const;

  SessionRegistry& sessions_;
  const AccessPolicy& access_;
  StreamHost& streams_;
  // The Publish stream's limits, as its initial metadata names them.
  const std::string max_message_bytes_;
  const std::string messages_per_second_;
  DebugHub hub_;
  DebugCommandPolicy policy_;
  // Runs the hub's grace periods.
  std::mutex ticker_mutex_;
  std::condition_variable ticker_wake_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace nk
