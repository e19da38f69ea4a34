#include "api/fault_tree_service_impl.h"

#include <grpcpp/grpcpp.h>

#include "api/fault_wire.h"
#include "api/peer_identity.h"
#include "api/status_mapping.h"
#include "base/clock.h"
#include "faults/fault_tree_coordinator.h"
#include "faults/job_registry.h"
#include "node/access_policy.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

constexpr size_t kMaxTextBytes = 4096;

grpc::Status invalid(std::string message) { return toGrpcStatus(invalidArgument(std::move(message))); }

}  // namespace

FaultTreeServiceImpl::FaultTreeServiceImpl(JobRegistry& jobs, FaultTreeCoordinator& coordinator,
                                           const PeerToken& token, const AccessPolicy& access,
                                           std::string node_name, std::shared_ptr<const MessageLogProbe> message_logs)
    : jobs_(jobs),
      coordinator_(coordinator),
      token_(token),
      access_(access),
      node_name_(std::move(node_name)),
      log_probe_(std::move(message_logs)) {}

grpc::Status FaultTreeServiceImpl::authenticate(const grpc::ServerContext& context) const {
  if (token_.configured()) return token_.check(context);
  // The TCP listener over mutual TLS: the handshake checked the caller's
  // certificate against the site's CA before this call was read.
  if (context.auth_context() && context.auth_context()->IsPeerAuthenticated()) return grpc::Status::OK;
  auto peer = PeerIdentity::fromContext(context);
  if (!peer) return toGrpcStatus(peer.error());
  if (!access_.isAdmin(*peer))
    return toGrpcStatus(permissionDenied(
        "the fault tree service takes only daemons: without a peer token (--peer-token) only an admin may call it "
        "(you are uid " + std::to_string(peer->uid) + ")"));
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::checkSender(const grpc::ServerContext& context, const std::string& node) const {
  auto auth = context.auth_context();
  if (!auth || !auth->IsPeerAuthenticated())
    return grpc::Status::OK;  // not over TLS: the token or the caller's uid decided
  // The peer's identity property is its subjectAltName (the addresses it is
  // reached at); the node it is is its CN.
  std::vector<grpc::string_ref> names = auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  for (const grpc::string_ref& name : names)
    if (std::string_view(name.data(), name.size()) == node) return grpc::Status::OK;
  std::string named = names.empty() ? std::string("no node") : "node '" + std::string(names[0].data(), names[0].size()) + "'";
  return toGrpcStatus(permissionDenied("a peer whose certificate names " + named + " may not speak for node '" + node +
                                       "'"));
}

// Progress is no secret among the job's daemons; the token keeps others out.
grpc::Status FaultTreeServiceImpl::RankProgress(grpc::ServerContext* context, const v1::RankProgressRequest* request,
                                                v1::RankProgressResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  if (request->job_id().empty()) return invalid("job_id is empty");
  auto job = jobs_.job(request->job_id());
  reply->set_now_ns(wallClockNs());
  if (!job) return grpc::Status::OK;  // no rank of it here (yet, or any more)
  for (const RankRecord& rank : job->ranks) {
    v1::RankState* out = reply->add_ranks();
    out->set_rank(rank.rank);
    out->set_node(rank.node);
    out->set_pid(rank.pid);
    for (const auto& c : rank.communicators) {
      v1::CommProgress* comm = out->add_communicators();
      comm->set_communicator(c.communicator);
      comm->set_collectives_entered(c.collectives_entered);
    }
    out->set_current_operation(rank.current_operation);
    out->set_last_report_ns(rank.last_report_ns);
    out->set_process_state(std::string(processStateName(jobs_.stateOf(rank))));
    out->set_finalized(rank.finalized);
  }
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                             v1::HeartbeatResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  if (request->job_id().empty() || request->node().empty()) return invalid("job_id and node must be set");
  // Over TLS only the node itself may say it is alive (or leaving).
  if (grpc::Status s = checkSender(*context, request->node()); !s.ok()) return s;
  // A heartbeat for a job this node has no tree of (it restarted, or its
  // ranks have not registered yet) is answered all the same: this daemon
  // is alive, which is what the sender asks.
  // An older sender says 0: no factor.
  const double sender_factor = request->sender_delay_factor() >= 1.0 ? request->sender_delay_factor() : 1.0;
  reply->set_known_job(coordinator_.heartbeat(request->job_id(), request->node(), request->leaving(), sender_factor));
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::ForwardSymptom(grpc::ServerContext* context, const v1::Symptom* request,
                                                  v1::ReportSymptomResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  if (request->job_id().empty()) return invalid("job_id is empty");
  if (!isKnownSymptomKind(request->kind()) || request->kind() == v1::SYMPTOM_KIND_UNSPECIFIED)
    return invalid("kind " + std::to_string(request->kind()) + " is not a symptom kind");
  if (request->detail().size() > kMaxTextBytes || request->suspect_node().size() > kMaxTextBytes)
    return invalid("detail or suspect_node is longer than " + std::to_string(kMaxTextBytes) + " bytes");
  std::string self = coordinator_.selfIn(request->job_id());
  if (self.empty())
    return toGrpcStatus(notFound("node " + node_name_ + " has no fault tree for job '" + request->job_id() +
                                 "' (no node list for it, or it ended here)"));
  if (!coordinator_.inTree(request->job_id(), request->suspect_node()))
    return toGrpcStatus(notFound("suspect node '" + request->suspect_node() + "' is not a node of job '" +
                                 request->job_id() + "'"));
  reply->set_accepted(coordinator_.receive(FaultWire::fromProto(*request)));
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::ResponseProbe(grpc::ServerContext* context, const v1::ProbeRequest*,
                                                 v1::ProbeResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  reply->set_alive(true);
  reply->set_node(node_name_);
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::StatusProbe(grpc::ServerContext* context, const v1::ProbeRequest* request,
                                               v1::StatusProbeResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  FaultWire::toProto(coordinator_.localStatus(request->job_id()), reply);
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::LogProbe(grpc::ServerContext* context, const v1::LogProbeRequest* request,
                                            v1::LogProbeResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  Result<LogFindings> findings = log_probe_->probe(request->job_id(), request->from_ns(), request->to_ns());
  if (!findings) return toGrpcStatus(findings.error());
  for (const std::string& entry : findings->entries) reply->add_entries(entry);
  reply->set_pending(static_cast<uint32_t>(findings->pending));
  return grpc::Status::OK;
}

grpc::Status FaultTreeServiceImpl::PublishFault(grpc::ServerContext* context, const v1::FaultReport* request,
                                                v1::PublishFaultResponse* reply) {
  if (grpc::Status s = authenticate(*context); !s.ok()) return s;
  if (request->job_id().empty() || request->node().empty()) return invalid("job_id and node must be set");
  if (request->kind() <= v1::FAULT_KIND_UNSPECIFIED || request->kind() > v1::FAULT_KIND_OVERHEATING)
    return invalid("kind " + std::to_string(request->kind()) + " is not a fault kind");
  reply->set_new_fault(coordinator_.publish(FaultWire::fromProto(*request)).has_value());
  return grpc::Status::OK;
}

}  // namespace nk
