#pragma once

#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace nk {

class SessionRegistry;
class AccessPolicy;

// TasksService: an app's Publish stream becomes one session (its pid and
// uid from SO_PEERCRED); ListSessions shows a caller its own sessions, or
// all of them to an admin. Watch and Debug come with the later issues.
class TasksServiceImpl final : public nodekeeper::v1::TasksService::Service {
 public:
  TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access);

  grpc::Status Publish(grpc::ServerContext*, grpc::ServerReader<nodekeeper::v1::TaskEventBatch>*,
                       nodekeeper::v1::PublishAck*) override;
  grpc::Status ListSessions(grpc::ServerContext*, const nodekeeper::v1::ListSessionsRequest*,
                            nodekeeper::v1::SessionList*) override;

 private:
  SessionRegistry& sessions_;
  const AccessPolicy& access_;
};

}  // namespace nk
