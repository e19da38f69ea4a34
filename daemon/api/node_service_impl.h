#pragma once

#include <string>

#include "api/stream_host.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace nk {

class NodeController;
class AccessPolicy;

// NodeService: translates requests to NodeController calls. Telemetry
// streams are callback-API streams held by the StreamHost.
class NodeServiceImpl final
    : public nodekeeper::v1::NodeService::WithCallbackMethod_StreamTelemetry<nodekeeper::v1::NodeService::Service> {
 public:
  struct Info {
    std::string hostname;
    bool emulated = false;
    std::string profile;
  };
  NodeServiceImpl(NodeController& node, const AccessPolicy& access, StreamHost& streams, Info info);

  grpc::Status GetTopology(grpc::ServerContext*, const nodekeeper::v1::GetTopologyRequest*,
                           nodekeeper::v1::Topology*) override;
  grpc::Status GetTelemetry(grpc::ServerContext*, const nodekeeper::v1::GetTelemetryRequest*,
                            nodekeeper::v1::TelemetrySnapshot*) override;
  grpc::ServerWriteReactor<nodekeeper::v1::TelemetrySnapshot>* StreamTelemetry(
      grpc::CallbackServerContext*, const nodekeeper::v1::StreamTelemetryRequest*) override;
  grpc::Status GetFrequencyPolicies(grpc::ServerContext*, const nodekeeper::v1::GetFrequencyPoliciesRequest*,
                                    nodekeeper::v1::FrequencyPolicies*) override;
  grpc::Status SetFrequencyLimits(grpc::ServerContext*, const nodekeeper::v1::SetFrequencyLimitsRequest*,
                                  nodekeeper::v1::FrequencyPolicies*) override;
  grpc::Status SetGovernor(grpc::ServerContext*, const nodekeeper::v1::SetGovernorRequest*,
                           nodekeeper::v1::FrequencyPolicies*) override;
  grpc::Status SetPowerCap(grpc::ServerContext*, const nodekeeper::v1::SetPowerCapRequest*,
                           nodekeeper::v1::PowerCaps*) override;
  grpc::Status GetPowerCaps(grpc::ServerContext*, const nodekeeper::v1::GetPowerCapsRequest*,
                            nodekeeper::v1::PowerCaps*) override;
  grpc::Status GetPolicy(grpc::ServerContext*, const nodekeeper::v1::GetPolicyRequest*,
                         nodekeeper::v1::NodePolicy*) override;
  grpc::Status SetPolicy(grpc::ServerContext*, const nodekeeper::v1::SetPolicyRequest*,
                         nodekeeper::v1::NodePolicy*) override;
  grpc::Status WhoAmI(grpc::ServerContext*, const nodekeeper::v1::WhoAmIRequest*,
                      nodekeeper::v1::Identity*) override;

 private:
  // OK when the caller is an admin; PERMISSION_DENIED naming `action` else.
  grpc::Status requireAdmin(grpc::ServerContext* context, const char* action) const;
  grpc::Status fillPolicies(nodekeeper::v1::FrequencyPolicies* response, const std::string& message);
  grpc::Status fillPowerCaps(nodekeeper::v1::PowerCaps* response, const std::string& message);

  NodeController& node_;
  const AccessPolicy& access_;
  StreamHost& streams_;
  Info info_;
};

}  // namespace nk
