#include "cli/apps_client.h"

#include <grpcpp/grpcpp.h>

#include "cli/rpc_call.h"
#include "nodekeeper/v1/apps.grpc.pb.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

}  // namespace

struct AppsClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::AppsService::Stub> stub;
};

AppsClient::AppsClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::AppsService::NewStub(impl_->channel);
}

AppsClient::~AppsClient() = default;

Result<pb::AppList> AppsClient::listApps(bool ended) {
  pb::ListAppsRequest request;
  request.set_ended(ended);
  return unaryCall(*impl_->stub, &pb::AppsService::Stub::ListApps, request, "ListApps",
                   *impl_->channel, socket_path_, timeout_);
}

Result<pb::App> AppsClient::setPowerBudget(const pb::SetPowerBudgetRequest& request) {
  return unaryCall(*impl_->stub, &pb::AppsService::Stub::SetPowerBudget, request, "SetPowerBudget", *impl_->channel,
                   socket_path_, timeout_);
}

Result<pb::App> AppsClient::setAppPolicy(const pb::SetAppPolicyRequest& request) {
  return unaryCall(*impl_->stub, &pb::AppsService::Stub::SetAppPolicy, request, "SetAppPolicy", *impl_->channel,
                   socket_path_, timeout_);
}

}  // namespace nk::cli
