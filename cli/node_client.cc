#include "cli/node_client.h"

#include <atomic>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "cli/interrupt_watcher.h"
#include "cli/rpc_call.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

}  // namespace

struct NodeClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::NodeService::Stub> stub;

  template <typename Request, typename Reply>
  Result<Reply> call(grpc::Status (pb::NodeService::Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
                     const Request& request, const char* name, const std::string& socket_path,
                     std::chrono::milliseconds timeout) {
    return unaryCall(*stub, method, request, name, *channel, socket_path, timeout);
  }
};

NodeClient::NodeClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::NodeService::NewStub(impl_->channel);
}

NodeClient::~NodeClient() = default;

Result<pb::Topology> NodeClient::getTopology() {
  return impl_->call(&pb::NodeService::Stub::GetTopology, pb::GetTopologyRequest(), "GetTopology", socket_path_,
                     timeout_);
}

Result<pb::TelemetrySnapshot> NodeClient::getTelemetry(bool fresh) {
  pb::GetTelemetryRequest request;
  request.set_fresh(fresh);
  return impl_->call(&pb::NodeService::Stub::GetTelemetry, request, "GetTelemetry", socket_path_, timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::getFrequencyPolicies() {
  return impl_->call(&pb::NodeService::Stub::GetFrequencyPolicies, pb::GetFrequencyPoliciesRequest(),
                     "GetFrequencyPolicies", socket_path_, timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::setFrequencyLimits(const pb::SetFrequencyLimitsRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetFrequencyLimits, request, "SetFrequencyLimits", socket_path_,
                     timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::setGovernor(const pb::SetGovernorRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetGovernor, request, "SetGovernor", socket_path_, timeout_);
}

Result<pb::PowerCaps> NodeClient::getPowerCaps() {
  return impl_->call(&pb::NodeService::Stub::GetPowerCaps, pb::GetPowerCapsRequest(), "GetPowerCaps", socket_path_,
                     timeout_);
}

Result<pb::PowerCaps> NodeClient::setPowerCap(const pb::SetPowerCapRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetPowerCap, request, "SetPowerCap", socket_path_, timeout_);
}

Result<pb::NodePolicy> NodeClient::getPolicy() {
  return impl_->call(&pb::NodeService::Stub::GetPolicy, pb::GetPolicyRequest(), "GetPolicy", socket_path_, timeout_);
}

Result<pb::NodePolicy> NodeClient::setPolicy(const pb::SetPolicyRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetPolicy, request, "SetPolicy", socket_path_, timeout_);
}

Result<pb::Identity> NodeClient::whoAmI() {
  return impl_->call(&pb::NodeService::Stub::WhoAmI, pb::WhoAmIRequest(), "WhoAmI", socket_path_, timeout_);
}

Status NodeClient::streamTelemetry(uint32_t interval_ms,
                                   const std::function<bool(const pb::TelemetrySnapshot&)>& on_snapshot,
                                   const InterruptWatcher* interrupts) {
  using Clock = std::chrono::steady_clock;
  // No overall deadline: the stream runs until stopped. Liveness is checked
  // per snapshot instead, by the monitor below.
  grpc::ClientContext context;
  pb::StreamTelemetryRequest request;
  request.set_interval_ms(interval_ms);
  auto reader = impl_->stub->StreamTelemetry(&context, request);

  const auto stall_limit = std::chrono::milliseconds(interval_ms) + timeout_;
  std::atomic<bool> done{false};
  std::atomic<bool> interrupted{false};
  std::atomic<bool> stalled{false};
  std::atomic<Clock::rep> last_activity{Clock::now().time_since_epoch().count()};

  std::thread monitor([&] {
    while (!done.load()) {
      bool signalled = interrupts != nullptr ? interrupts->wait(std::chrono::milliseconds(100))
                                             : (std::this_thread::sleep_for(std::chrono::milliseconds(100)), false);
      if (done.load()) return;
      if (signalled) {
        interrupted.store(true);
        context.TryCancel();
        return;
      }
      auto last = Clock::time_point(Clock::duration(last_activity.load()));
      if (Clock::now() - last > stall_limit) {
        stalled.store(true);
        context.TryCancel();
        return;
      }
    }
  });

  pb::TelemetrySnapshot snapshot;
  bool stopped = false;
  while (reader->Read(&snapshot)) {
    last_activity.store(Clock::now().time_since_epoch().count());
    if (!on_snapshot(snapshot)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  // After a cancel the reads end at once; Finish wants them drained.
  while (reader->Read(&snapshot)) {
  }
  done.store(true);
  monitor.join();
  grpc::Status status = reader->Finish();

  if (stopped || interrupted.load()) return {};
  if (stalled.load())
    return unavailable("no telemetry from nodekeeperd at " + socket_path_ + " for " + secondsText(stall_limit));
  if (status.ok()) return {};
  return describeRpcFailure(status, *impl_->channel, socket_path_, timeout_, "StreamTelemetry");
}

}  // namespace nk::cli
