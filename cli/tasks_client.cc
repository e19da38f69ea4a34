#include "cli/tasks_client.h"

#include <grpcpp/grpcpp.h>

#include "cli/rpc_call.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;

struct TasksClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::TasksService::Stub> stub;
};

TasksClient::TasksClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::TasksService::NewStub(impl_->channel);
}

TasksClient::~TasksClient() = default;

Result<pb::SessionList> TasksClient::listSessions() {
  return unaryCall(*impl_->stub, &pb::TasksService::Stub::ListSessions, pb::ListSessionsRequest(), "ListSessions",
                   *impl_->channel, socket_path_, timeout_);
}

}  // namespace nk::cli
