#pragma once

#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace nk {

class SessionRegistry;
class AccessPolicy;

// TasksService: an app's Publish stream becomes one session (its pid and
// uid from SO_PEERCRED); ListSessions shows a caller its own sessions, or
// all of them to an admin; Watch replays and follows a session to its owner
// or an admin. Debug comes with the debugging issue.
class TasksServiceImpl final : public nodekeeper::v1::TasksService::Service {
 public:
  TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access);

  grpc::Status Publish(grpc::ServerContext*, grpc::ServerReader<nodekeeper::v1::TaskEventBatch>*,
                       nodekeeper::v1::PublishAck*) override;
  grpc::Status ListSessions(grpc::ServerContext*, const nodekeeper::v1::ListSessionsRequest*,
                            nodekeeper::v1::SessionList*) override;
  // The session's recording from its start (the graph so far), then, with
  // `follow`, what arrives until the session ends or the caller leaves.
  grpc::Status Watch(grpc::ServerContext*, const nodekeeper::v1::WatchRequest*,
                     grpc::ServerWriter<nodekeeper::v1::TaskEventBatch>*) override;

 private:
  SessionRegistry& sessions_;
  const AccessPolicy& access_;
};

}  // namespace nk
