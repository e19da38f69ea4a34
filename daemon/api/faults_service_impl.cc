#include "api/faults_service_impl.h"

#include <grpcpp/grpcpp.h>

#include "api/fault_wire.h"
#include "api/grpc_peer_network.h"
#include "api/log_follow_stream.h"
#include "api/peer_identity.h"
#include "api/refused_stream.h"
#include "api/status_mapping.h"
#include "base/clock.h"
#include "base/single_quoted.h"
#include "common/proc_stat.h"
#include "faults/fault_report_log.h"
#include "faults/fault_tree_coordinator.h"
#include "faults/job_registry.h"
#include "faults/symptom_record.h"
#include "faults/symptom_store.h"
#include "node/access_policy.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

v1::JobEnd toWire(JobEnd end) {
  switch (end) {
    case JobEnd::kRunning: return v1::JOB_END_RUNNING;
    case JobEnd::kCompleted: return v1::JOB_END_COMPLETED;
    case JobEnd::kFailed: return v1::JOB_END_FAILED;
    case JobEnd::kCancelled: return v1::JOB_END_CANCELLED;
    case JobEnd::kAborted: return v1::JOB_END_ABORTED;
    case JobEnd::kUnknown: return v1::JOB_END_UNKNOWN;
  }
  return v1::JOB_END_UNKNOWN;
}

// Entries a watch stream takes from its log at a time.
constexpr size_t kWatchBatch = 256;


std::vector<CommProgressRecord> fromProto(const google::protobuf::RepeatedPtrField<v1::CommProgress>& comms) {
  std::vector<CommProgressRecord> out;
  out.reserve(comms.size());
  for (const auto& c : comms) out.push_back({c.communicator(), c.collectives_entered()});
  return out;
}

SymptomIntake::Options intakeOptions(const FaultsServiceImpl::Options& options, std::string own_endpoint) {
  SymptomIntake::Options intake;
  intake.peer_timeout = options.peer_timeout;
  intake.heartbeat_period = options.heartbeat_period;
  intake.stale_periods = options.stale_periods;
  intake.own_endpoint = std::move(own_endpoint);
  intake.peer_endpoint = options.peer_endpoint;
  intake.log_warning = options.log_warning;
  return intake;
}

}  // namespace

FaultsServiceImpl::FaultsServiceImpl(JobRegistry& jobs, SymptomStore& symptoms, const AccessPolicy& access,
                                     std::string own_endpoint, GrpcPeerNetwork& network,
                                     FaultTreeCoordinator& coordinator, FaultReportLog& reports, StreamHost& streams,
                                     Options options)
    : jobs_(jobs),
      symptoms_(symptoms),
      access_(access),
      network_(network),
      coordinator_(coordinator),
      reports_(reports),
      streams_(streams),
      options_(std::move(options)),
      intake_(jobs_, network_, intakeOptions(options_, std::move(own_endpoint))) {}

grpc::Status FaultsServiceImpl::RegisterRank(grpc::ServerContext* context, const v1::RegisterRankRequest* request,
                                             v1::RegisterRankResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  const bool admin = access_.isAdmin(*peer);
  uid_t uid = peer->uid;
  if (request->pid() != peer->pid) {
    if (!admin)
      return toGrpcStatus(permissionDenied("pid " + std::to_string(request->pid()) + " is not yours (you are pid " +
                                           std::to_string(peer->pid) +
                                           "): a rank registers itself; only an admin may register another process"));
    // The uid of a rank an admin registers on its behalf.
    auto owner = ProcStat::owner("/proc", request->pid());
    if (!owner)
      return toGrpcStatus(invalidArgument("pid " + std::to_string(request->pid()) + " is not a running process"));
    uid = *owner;
  }
  RankRegistration registration;
  registration.job_id = request->job_id();
  registration.rank = request->rank();
  registration.size = request->size();
  registration.node = request->node();
  registration.pid = request->pid();
  registration.uid = uid;
  registration.endpoint = request->endpoint();
  registration.now_ns = wallClockNs();
  return toGrpcStatus(jobs_.registerRank(std::move(registration), admin));
}

grpc::Status FaultsServiceImpl::SetJobNodes(grpc::ServerContext* context, const v1::SetJobNodesRequest* request,
                                            v1::SetJobNodesResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  if (!access_.isAdmin(*peer)) {
    if (Status s = jobs_.checkCaller(request->job_id(), std::nullopt, peer->pid); !s) return toGrpcStatus(s);
  }
  std::vector<JobNodeRecord> nodes;
  nodes.reserve(request->nodes_size());
  for (const auto& n : request->nodes())
    nodes.push_back({n.node(), n.endpoint(), std::vector<uint32_t>(n.ranks().begin(), n.ranks().end())});
  if (Status s = jobs_.setNodes(request->job_id(), std::move(nodes), wallClockNs(), request->source()); !s)
    return toGrpcStatus(s);
  for (const auto& n : request->nodes()) network_.setEndpoint(n.node(), n.endpoint());
  coordinator_.jobNodesChanged(request->job_id());
  return grpc::Status::OK;
}

// Every rank calls this every heartbeat period: the caller's pid comes from
// SO_PEERCRED alone, and its groups (a /proc read) only when the pid is not
// the rank's and it might be an admin.
grpc::Status FaultsServiceImpl::ReportProgress(grpc::ServerContext* context, const v1::ProgressReport* request,
                                               v1::ReportProgressResponse*) {
  auto peer = PeerIdentity::withoutGroups(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto update = [&] {
    ProgressUpdate u;
    u.job_id = request->job_id();
    u.rank = request->rank();
    u.communicators = fromProto(request->communicators());
    u.current_operation = request->current_operation();
    u.now_ns = wallClockNs();
    u.finalized = request->finalized();
    u.ending_signal = request->ending_signal();
    return u;
  };
  Status recorded = jobs_.recordProgress(update(), peer->pid);
  if (!recorded && recorded.error().code == ErrorCode::kPermissionDenied) {
    PeerIdentity::addGroups(*peer);
    if (access_.isAdmin(*peer)) recorded = jobs_.recordProgress(update(), std::nullopt);
  }
  return toGrpcStatus(recorded);
}

grpc::Status FaultsServiceImpl::ReportSymptom(grpc::ServerContext* context, const v1::Symptom* request,
                                              v1::ReportSymptomResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  std::optional<pid_t> caller;
  if (!access_.isAdmin(*peer)) caller = peer->pid;
  Result<SymptomRecord> symptom = intake_.take(FaultWire::fromProto(*request), caller, wallClockNs());
  if (!symptom) return toGrpcStatus(symptom.error());
  symptom->symptom_id = symptoms_.append(*symptom);
  if (options_.on_symptom) options_.on_symptom(*symptom);
  // TFD: to the suspect's fault localisation node. A symptom that names no
  // node (a collective where everyone arrived) has nothing to localise.
  if (!symptom->suspect_node.empty()) coordinator_.detect(*symptom);
  return grpc::Status::OK;
}

grpc::Status FaultsServiceImpl::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                                         v1::JobList* reply) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  std::optional<uid_t> only;
  if (!access_.isAdmin(*peer)) only = peer->uid;
  for (const JobRecord& job : jobs_.list(only)) {
    if (!request->job_id().empty() && job.job_id != request->job_id()) continue;
    v1::Job* out = reply->add_jobs();
    out->set_job_id(job.job_id);
    out->set_size(job.size);
    out->set_uid(job.uid);
    out->set_cancelled_by_signal(job.cancelled_by_signal);
    out->set_program(job.program);
    out->set_start_ns(job.created_ns);
    out->set_end_ns(job.end_ns);
    out->set_end(toWire(job.end));
    out->set_end_detail(job.end_detail);
    out->set_energy_j(job.energy_j);
    out->set_source(job.source);
    out->set_nodes_from(job.nodes_from);
    v1::JobSettings* settings = out->mutable_settings();
    settings->set_power_budget_mw(job.settings.power_budget_mw);
    settings->set_policy(job.settings.policy);
    settings->set_tasks(job.settings.tasks);
    settings->set_debug(job.settings.debug);
    for (const JobNodeRecord& n : job.nodes) {
      v1::JobNode* node = out->add_nodes();
      node->set_node(n.node);
      node->set_endpoint(n.endpoint);
      for (uint32_t r : n.ranks) node->add_ranks(r);
    }
    for (const RankRecord& r : job.ranks) {
      v1::JobRank* rank = out->add_ranks();
      rank->set_rank(r.rank);
      rank->set_node(r.node);
      rank->set_pid(r.pid);
      rank->set_last_report_ns(r.last_report_ns);
      rank->set_process_state(std::string(processStateName(jobs_.stateOf(r))));
    }
  }
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::Symptom>* FaultsServiceImpl::WatchSymptoms(grpc::CallbackServerContext* context,
                                                                        const v1::WatchSymptomsRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::Symptom>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  SymptomStore::Filter filter;
  if (!request->job_id().empty()) filter.job_id = request->job_id();
  if (!access_.isAdmin(*peer)) {
    filter.uid = peer->uid;
    if (filter.job_id) {
      auto job = jobs_.job(*filter.job_id);
      if (job && job->uid != peer->uid)
        return Refused::make(
            streams_, toGrpcStatus(permissionDenied("job " + singleQuoted(*filter.job_id) + " belongs to uid " +
                                                    std::to_string(job->uid) +
                                                    "; only its owner or an admin may watch its "
                                                    "symptoms (you are uid " +
                                                    std::to_string(peer->uid) + ")")));
    }
  }
  auto slot = streams_.admit(*peer, "Faults.WatchSymptoms");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto fetch = [this, filter](uint64_t after, std::deque<v1::Symptom>& out) {
    // Asked every pump period by every waiting watch: nothing new is the
    // common answer, and the cheap one.
    if (symptoms_.lastId() <= after) return after;
    SymptomStore::Batch batch = symptoms_.since(after, filter, kWatchBatch);
    for (const SymptomRecord& s : batch.symptoms) FaultWire::toProto(s, &out.emplace_back());
    return std::max(after, batch.last_id);
  };
  auto* stream = streams_.adopt(
      std::make_unique<LogFollowStream<v1::Symptom>>(streams_, std::move(*slot), std::move(fetch), request->follow()));
  stream->begin();
  return stream;
}

grpc::ServerWriteReactor<v1::FaultReport>* FaultsServiceImpl::WatchFaults(grpc::CallbackServerContext* context,
                                                                         const v1::WatchFaultsRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::FaultReport>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  FaultReportLog::Filter filter;
  if (!request->job_id().empty()) filter.job_id = request->job_id();
  if (!access_.isAdmin(*peer)) filter.uid = peer->uid;
  auto slot = streams_.admit(*peer, "Faults.WatchFaults");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto fetch = [this, filter](uint64_t after, std::deque<v1::FaultReport>& out) {
    if (reports_.lastId() <= after) return after;
    FaultReportLog::Batch batch = reports_.since(after, filter, kWatchBatch);
    for (const FaultRecord& f : batch.faults) FaultWire::toProto(f, &out.emplace_back());
    return std::max(after, batch.last_id);
  };
  auto* stream = streams_.adopt(std::make_unique<LogFollowStream<v1::FaultReport>>(
      streams_, std::move(*slot), std::move(fetch), request->follow()));
  stream->begin();
  return stream;
}

grpc::Status FaultsServiceImpl::PeerInfo(grpc::ServerContext*, const v1::PeerInfoRequest*,
                                         v1::PeerInfoResponse* reply) {
  reply->set_node(options_.node_name);
  reply->set_endpoint(options_.peer_endpoint);
  return grpc::Status::OK;
}

}  // namespace nk
