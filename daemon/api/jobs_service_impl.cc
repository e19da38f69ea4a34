#include "api/jobs_service_impl.h"

#include <grpcpp/grpcpp.h>

#include "api/peer_identity.h"
#include "api/status_mapping.h"
#include "base/clock.h"
#include "faults/job_registry.h"
#include "node/access_policy.h"

namespace nk {

namespace v1 = nodekeeper::v1;

namespace {

constexpr size_t kMaxDetailBytes = 256;

// Only root and the admin group speak for a scheduler.
grpc::Status requireAdmin(grpc::ServerContext& context, const AccessPolicy& access, const char* method) {
  auto peer = PeerIdentity::fromContext(context);
  if (!peer) return toGrpcStatus(peer.error());
  if (!access.isAdmin(*peer))
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        std::string(method) + " is for the scheduler's plugin: it needs root or the admin group (you are uid " +
                            std::to_string(peer->uid) + ")");
  return grpc::Status::OK;
}

std::optional<JobEnd> fromWire(v1::JobEnd end) {
  switch (end) {
    case v1::JOB_END_COMPLETED: return JobEnd::kCompleted;
    case v1::JOB_END_FAILED: return JobEnd::kFailed;
    case v1::JOB_END_CANCELLED: return JobEnd::kCancelled;
    case v1::JOB_END_ABORTED: return JobEnd::kAborted;
    case v1::JOB_END_UNKNOWN: return JobEnd::kUnknown;
    default: return std::nullopt;
  }
}

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

}  // namespace

JobsServiceImpl::JobsServiceImpl(JobRegistry& jobs, const AccessPolicy& access) : jobs_(jobs), access_(access) {}

grpc::Status JobsServiceImpl::reply(const std::string& job_id, v1::Job* out) const {
  std::optional<JobRecord> job = jobs_.job(job_id);
  if (!job) return grpc::Status(grpc::StatusCode::NOT_FOUND, "job '" + job_id + "' is no longer known here");
  out->set_job_id(job->job_id);
  out->set_uid(job->uid);
  out->set_size(job->size);
  out->set_program(job->program);
  out->set_start_ns(job->created_ns);
  out->set_end_ns(job->end_ns);
  out->set_end(toWire(job->end));
  out->set_end_detail(job->end_detail);
  out->set_energy_j(job->energy_j);
  out->set_source(job->source);
  out->set_nodes_from(job->nodes_from);
  out->mutable_settings()->set_power_budget_mw(job->settings.power_budget_mw);
  out->mutable_settings()->set_policy(job->settings.policy);
  out->mutable_settings()->set_tasks(job->settings.tasks);
  out->mutable_settings()->set_debug(job->settings.debug);
  for (const JobNodeRecord& n : job->nodes) {
    v1::JobNode* node = out->add_nodes();
    node->set_node(n.node);
    node->set_endpoint(n.endpoint);
  }
  return grpc::Status::OK;
}

grpc::Status JobsServiceImpl::BeginJob(grpc::ServerContext* context, const v1::BeginJobRequest* request, v1::Job* out) {
  if (grpc::Status s = requireAdmin(*context, access_, "BeginJob"); !s.ok()) return s;
  if (request->peer_port() > 65535)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "peer_port " + std::to_string(request->peer_port()) + " is not a TCP port");
  if (static_cast<size_t>(request->nodes_size()) > JobRegistry::kMaxJobNodes)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "nodes lists " + std::to_string(request->nodes_size()) + " nodes; at most " +
                            std::to_string(JobRegistry::kMaxJobNodes) + " are taken");
  JobBeginning b;
  b.job_id = request->job_id();
  b.uid = request->uid();
  for (const std::string& name : request->nodes()) {
    JobNodeRecord node;
    node.node = name;
    if (request->peer_port() != 0) node.endpoint = name + ":" + std::to_string(request->peer_port());
    b.nodes.push_back(std::move(node));
  }
  b.settings.power_budget_mw = request->settings().power_budget_mw();
  b.settings.policy = request->settings().policy();
  b.settings.tasks = request->settings().tasks();
  b.settings.debug = request->settings().debug();
  b.program = request->program();
  b.step_pid = request->step_pid();
  b.now_ns = wallClockNs();
  if (Status s = jobs_.beginJob(std::move(b)); !s) return toGrpcStatus(s);
  return reply(request->job_id(), out);
}

grpc::Status JobsServiceImpl::AttachProcess(grpc::ServerContext* context, const v1::AttachProcessRequest* request,
                                            v1::AttachProcessResponse*) {
  if (grpc::Status s = requireAdmin(*context, access_, "AttachProcess"); !s.ok()) return s;
  return toGrpcStatus(jobs_.attachProcess(request->job_id(), request->pid(), wallClockNs()));
}

grpc::Status JobsServiceImpl::EndJob(grpc::ServerContext* context, const v1::EndJobRequest* request, v1::Job* out) {
  if (grpc::Status s = requireAdmin(*context, access_, "EndJob"); !s.ok()) return s;
  std::optional<JobEnd> end = fromWire(request->end());
  if (!end)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "end must be completed, failed, cancelled, aborted or unknown (not running)");
  if (request->detail().size() > kMaxDetailBytes)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "detail is longer than " + std::to_string(kMaxDetailBytes) + " bytes");
  if (!jobs_.job(request->job_id()))
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job '" + request->job_id().substr(0, 256) +
                                                         "' is known here (BeginJob first)");
  // An end told already (by the ranks, PMIx) stays: the first to know tells it.
  jobs_.markEnded(request->job_id(), *end, request->detail(), wallClockNs());
  return reply(request->job_id(), out);
}

}  // namespace nk
