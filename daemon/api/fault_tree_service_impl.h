#pragma once

#include <memory>
#include <string>

#include "api/peer_token.h"
#include "faults/message_log_probe.h"
#include "nodekeeper/v1/faults.grpc.pb.h"

namespace nk {

class AccessPolicy;
class FaultTreeCoordinator;
class JobRegistry;

// FaultTreeService, what other daemons of a job's fault tree ask of this
// one: heartbeats, symptoms TFD sends here, the three probes, faults to
// publish as root, and the progress of this node's ranks. Served on TCP
// (--listen) and on the Unix socket; every call must carry the peer token
// when the daemon has one. Without a token (no --listen), only admins may
// call it on the Unix socket: another local user must not feed the tree
// symptoms or faults.
class FaultTreeServiceImpl final : public nodekeeper::v1::FaultTreeService::Service {
 public:
  // `message_logs`: the PMPI agents' message logs, for the log probe.
  FaultTreeServiceImpl(JobRegistry& jobs, FaultTreeCoordinator& coordinator, const PeerToken& token,
                       const AccessPolicy& access, std::string node_name,
                       std::shared_ptr<const MessageLogProbe> message_logs);

  grpc::Status RankProgress(grpc::ServerContext*, const nodekeeper::v1::RankProgressRequest*,
                            nodekeeper::v1::RankProgressResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const nodekeeper::v1::HeartbeatRequest*,
                         nodekeeper::v1::HeartbeatResponse*) override;
  grpc::Status ForwardSymptom(grpc::ServerContext*, const nodekeeper::v1::Symptom*,
                              nodekeeper::v1::ReportSymptomResponse*) override;
  grpc::Status ResponseProbe(grpc::ServerContext*, const nodekeeper::v1::ProbeRequest*,
                             nodekeeper::v1::ProbeResponse*) override;
  grpc::Status StatusProbe(grpc::ServerContext*, const nodekeeper::v1::ProbeRequest*,
                           nodekeeper::v1::StatusProbeResponse*) override;
  grpc::Status LogProbe(grpc::ServerContext*, const nodekeeper::v1::LogProbeRequest*,
                        nodekeeper::v1::LogProbeResponse*) override;
  grpc::Status PublishFault(grpc::ServerContext*, const nodekeeper::v1::FaultReport*,
                            nodekeeper::v1::PublishFaultResponse*) override;

 private:
  grpc::Status authenticate(const grpc::ServerContext& context) const;
  // Over mutual TLS a peer may speak only for the node its certificate's CN
  // names; without TLS there is nothing to check it against.
  grpc::Status checkSender(const grpc::ServerContext& context, const std::string& node) const;

  JobRegistry& jobs_;
  FaultTreeCoordinator& coordinator_;
  const PeerToken& token_;
  const AccessPolicy& access_;
  std::string node_name_;
  std::shared_ptr<const MessageLogProbe> log_probe_;
};

}  // namespace nk
