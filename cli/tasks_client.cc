#include "cli/tasks_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

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

Status TasksClient::watch(uint64_t session, const std::function<bool(const pb::TaskEventBatch&)>& on_batch) {
  auto deadline = std::max(std::chrono::milliseconds(60000), timeout_ * 12);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  pb::WatchRequest request;
  request.set_session_id(session);
  request.set_follow(false);
  auto reader = impl_->stub->Watch(&context, request);
  pb::TaskEventBatch batch;
  bool stopped = false;
  while (!stopped && reader->Read(&batch)) stopped = !on_batch(batch);
  if (stopped) context.TryCancel();
  grpc::Status status = reader->Finish();
  if (!status.ok() && !stopped) return describeRpcFailure(status, *impl_->channel, socket_path_, deadline, "Watch");
  return {};
}

}  // namespace nk::cli
