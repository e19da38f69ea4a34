#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

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
class TasksServiceImpl final : public nodekeeper::v1::TasksService::Service {
 public:
  // `grace`: how long a break outlives the frontend that held it.
  TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access,
                   std::chrono::seconds grace = std::chrono::seconds(30));
  ~TasksServiceImpl() override;

  grpc::Status Publish(grpc::ServerContext*,
                       grpc::ServerReaderWriter<nodekeeper::v1::TaskControl, nodekeeper::v1::TaskEventBatch>*) override;
  grpc::Status ListSessions(grpc::ServerContext*, const nodekeeper::v1::ListSessionsRequest*,
                            nodekeeper::v1::SessionList*) override;
  // The session's recording from its start (the graph so far), then, with
  // `follow`, what arrives until the session ends or the caller leaves.
  grpc::Status Watch(grpc::ServerContext*, const nodekeeper::v1::WatchRequest*,
                     grpc::ServerWriter<nodekeeper::v1::TaskEventBatch>*) override;
  grpc::Status Debug(grpc::ServerContext*,
                     grpc::ServerReaderWriter<nodekeeper::v1::DebugUpdate, nodekeeper::v1::DebugCommand>*) override;

 private:
  // The app's batches, recorded and applied to the session's graph, until
  // its stream ends (OK) or a batch is refused.
  grpc::Status receiveBatches(uint64_t session, pid_t pid,
                              grpc::ServerReaderWriter<nodekeeper::v1::TaskControl, nodekeeper::v1::TaskEventBatch>* stream);
  DebugCommandPolicy::Caller callerOf(const PeerCredentials& peer) const;

  SessionRegistry& sessions_;
  const AccessPolicy& access_;
  DebugHub hub_;
  DebugCommandPolicy policy_;
  // Runs the hub's grace periods.
  std::mutex ticker_mutex_;
  std::condition_variable ticker_wake_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace nk
