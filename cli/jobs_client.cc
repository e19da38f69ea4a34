#include "cli/jobs_client.h"

#include <grpcpp/grpcpp.h>

#include "cli/rpc_call.h"
#include "nodekeeper/v1/jobs.grpc.pb.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;

struct JobsClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::JobsService::Stub> stub;
};

JobsClient::JobsClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::JobsService::NewStub(impl_->channel);
}

JobsClient::~JobsClient() = default;

Result<pb::Job> JobsClient::beginJob(const pb::BeginJobRequest& request) {
  return unaryCall(*impl_->stub, &pb::JobsService::Stub::BeginJob, request, "BeginJob", *impl_->channel, socket_path_,
                   timeout_);
}

Status JobsClient::attachProcess(const pb::AttachProcessRequest& request) {
  auto reply = unaryCall(*impl_->stub, &pb::JobsService::Stub::AttachProcess, request, "AttachProcess",
                         *impl_->channel, socket_path_, timeout_);
  if (!reply) return reply.error();
  return {};
}

Result<pb::Job> JobsClient::endJob(const pb::EndJobRequest& request) {
  return unaryCall(*impl_->stub, &pb::JobsService::Stub::EndJob, request, "EndJob", *impl_->channel, socket_path_,
                   timeout_);
}

}  // namespace nk::cli
