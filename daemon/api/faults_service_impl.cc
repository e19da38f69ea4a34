#include "api/faults_service_impl.h"

#include <algorithm>
#include <filesystem>
#include <grpcpp/grpcpp.h>
#include <unordered_map>

#include "api/fault_wire.h"
#include "api/grpc_peer_network.h"
#include "api/peer_identity.h"
#include "api/status_mapping.h"
#include "common/proc_stat.h"
#include "faults/fault_report_log.h"
#include "faults/fault_tree_coordinator.h"
#include "faults/job_registry.h"
#include "faults/laggard_finder.h"
#include "faults/symptom_record.h"
#include "faults/symptom_store.h"
#include "node/access_policy.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

constexpr size_t kMaxTextBytes = 256;
constexpr size_t kMaxDetailBytes = 4096;
// Laggards named in a symptom's detail; the rest are counted.
constexpr size_t kLaggardsInDetail = 8;
// How often a following WatchSymptoms looks whether its caller left.
constexpr std::chrono::milliseconds kWatchWakeup{250};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string singleQuoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// "unix:///run/x.sock" and "unix:/run/./x.sock" are "unix:/run/x.sock":
// endpoints are compared to tell this daemon from the others.
std::string normalEndpoint(std::string_view endpoint) {
  std::string_view path;
  if (endpoint.rfind("unix://", 0) == 0) path = endpoint.substr(7);
  else if (endpoint.rfind("unix:", 0) == 0) path = endpoint.substr(5);
  else return std::string(endpoint);
  return "unix:" + std::filesystem::path(path).lexically_normal().string();
}

std::vector<CommProgressRecord> fromProto(const google::protobuf::RepeatedPtrField<v1::CommProgress>& comms) {
  std::vector<CommProgressRecord> out;
  out.reserve(comms.size());
  for (const auto& c : comms) out.push_back({c.communicator(), c.collectives_entered()});
  return out;
}

Status checkText(const std::string& text, const char* field, size_t limit) {
  if (text.size() > limit)
    return invalidArgument(std::string(field) + " is longer than " + std::to_string(limit) + " bytes");
  return {};
}

Status checkRanks(const google::protobuf::RepeatedField<uint32_t>& ranks, const char* field, uint32_t size,
                  std::string_view job_id) {
  for (int i = 0; i < ranks.size(); ++i)
    if (ranks[i] >= size)
      return invalidArgument(std::string(field) + "[" + std::to_string(i) + "] is rank " + std::to_string(ranks[i]) +
                             ", but job " + singleQuoted(job_id) + " has size " + std::to_string(size));
  return {};
}

// The job's node for each rank: the node list, then ranks registered here.
std::unordered_map<uint32_t, std::string> nodeOfRanks(const JobRecord& job) {
  std::unordered_map<uint32_t, std::string> nodes;
  for (const auto& n : job.nodes)
    for (uint32_t r : n.ranks) nodes.emplace(r, n.node);
  for (const auto& r : job.ranks) nodes.emplace(r.rank, r.node);
  return nodes;
}

// One node, or several comma-joined, in the order of the ranks.
std::string joinNodes(const std::vector<std::string>& nodes) {
  std::vector<std::string> distinct;
  for (const auto& n : nodes)
    if (!n.empty() && std::find(distinct.begin(), distinct.end(), n) == distinct.end()) distinct.push_back(n);
  std::string out;
  for (const auto& n : distinct) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

FaultsServiceImpl::FaultsServiceImpl(JobRegistry& jobs, SymptomStore& symptoms, const AccessPolicy& access,
                                     std::string own_endpoint, GrpcPeerNetwork& network,
                                     FaultTreeCoordinator& coordinator, FaultReportLog& reports, Options options)
    : jobs_(jobs),
      symptoms_(symptoms),
      access_(access),
      own_endpoint_(normalEndpoint(own_endpoint)),
      network_(network),
      coordinator_(coordinator),
      reports_(reports),
      options_(std::move(options)) {}

void FaultsServiceImpl::warn(const std::string& message) const {
  if (options_.log_warning) options_.log_warning(message);
}

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
  registration.now_ns = nowNs();
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
  if (Status s = jobs_.setNodes(request->job_id(), std::move(nodes), nowNs()); !s) return toGrpcStatus(s);
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
    u.now_ns = nowNs();
    u.finalized = request->finalized();
    return u;
  };
  Status recorded = jobs_.recordProgress(update(), peer->pid);
  if (!recorded && recorded.error().code == ErrorCode::kPermissionDenied) {
    PeerIdentity::addGroups(*peer);
    if (access_.isAdmin(*peer)) recorded = jobs_.recordProgress(update(), std::nullopt);
  }
  return toGrpcStatus(recorded);
}

std::vector<MemberState> FaultsServiceImpl::gatherStates(const JobRecord& job, const std::set<uint32_t>& members) {
  const int64_t now = nowNs();
  std::vector<MemberState> states;
  std::set<uint32_t> known;
  // Ranks registered here said how this daemon is reached: those endpoints
  // are this daemon, whatever spelling its own socket path has.
  std::set<std::string> own = {own_endpoint_};
  if (!options_.peer_endpoint.empty()) own.insert(options_.peer_endpoint);
  for (const RankRecord& rank : job.ranks) {
    if (!rank.endpoint.empty()) own.insert(normalEndpoint(rank.endpoint));
    MemberState state;
    state.rank = rank.rank;
    state.node = rank.node;
    state.communicators = rank.communicators;
    if (rank.last_report_ns > 0) state.report_age = std::chrono::nanoseconds(now - rank.last_report_ns);
    state.process_state = std::string(processStateName(jobs_.stateOf(rank)));
    states.push_back(std::move(state));
    known.insert(rank.rank);
  }

  struct PeerCall {
    const JobNodeRecord* node = nullptr;
    std::unique_ptr<v1::FaultTreeService::Stub> stub;
    grpc::ClientContext context;
    v1::RankProgressResponse reply;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::RankProgressResponse>> reader;
  };
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<PeerCall>> calls;
  v1::RankProgressRequest request;
  request.set_job_id(job.job_id);
  const auto deadline = std::chrono::system_clock::now() + options_.peer_timeout;
  for (const JobNodeRecord& node : job.nodes) {
    if (own.count(normalEndpoint(node.endpoint))) continue;
    bool wanted = std::any_of(node.ranks.begin(), node.ranks.end(),
                              [&](uint32_t r) { return members.count(r) && !known.count(r); });
    if (!wanted) continue;
    auto call = std::make_unique<PeerCall>();
    call->node = &node;
    call->stub = v1::FaultTreeService::NewStub(network_.channelTo(node.endpoint));
    call->context.set_deadline(deadline);
    network_.token().attach(call->context);
    // A daemon still connecting gets the whole deadline; one that is down
    // costs no more than that, and all nodes are asked at once.
    call->context.set_wait_for_ready(true);
    call->reader = call->stub->AsyncRankProgress(&call->context, request, &queue);
    call->reader->Finish(&call->reply, &call->status, call.get());
    calls.push_back(std::move(call));
  }
  for (size_t done = 0; done < calls.size(); ++done) {
    void* tag = nullptr;
    bool ok = false;
    if (!queue.Next(&tag, &ok)) break;
  }
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }

  for (const auto& call : calls) {
    const JobNodeRecord& node = *call->node;
    if (!call->status.ok()) {
      warn("job " + job.job_id + ": the daemon of node " + node.node + " at " + node.endpoint +
           " did not answer RankProgress: " + call->status.error_message() + "; its ranks count as unreachable");
      for (uint32_t r : node.ranks)
        if (members.count(r) && !known.count(r)) states.push_back({r, node.node, {}, std::nullopt, "unreachable"});
      continue;
    }
    const int64_t remote_now = call->reply.now_ns() != 0 ? call->reply.now_ns() : now;
    for (const v1::RankState& rs : call->reply.ranks()) {
      if (!members.count(rs.rank()) || known.count(rs.rank())) continue;
      MemberState state;
      state.rank = rs.rank();
      state.node = rs.node().empty() ? node.node : rs.node();
      state.communicators = fromProto(rs.communicators());
      if (rs.last_report_ns() > 0)
        state.report_age = std::chrono::nanoseconds(std::max<int64_t>(0, remote_now - rs.last_report_ns()));
      state.process_state = rs.process_state();
      states.push_back(std::move(state));
    }
  }
  return states;
}

void FaultsServiceImpl::findLaggards(const JobRecord& job, SymptomRecord& symptom) {
  std::set<uint32_t> members(symptom.communicator_members.begin(), symptom.communicator_members.end());
  members.erase(symptom.reporter_rank);
  std::vector<MemberState> states = gatherStates(job, members);
  // An agent sends its heartbeats from the thread that also reports its
  // symptoms, and a report may wait up to peer_timeout here: that much more
  // silence is no sign of a stuck rank.
  LaggardFinder finder(options_.heartbeat_period * options_.stale_periods + options_.peer_timeout);
  CollectiveTimeout timeout{symptom.communicator, symptom.collective_seq, symptom.communicator_members,
                            symptom.reporter_rank};
  LaggardFindings findings = finder.find(timeout, states);

  auto node_of = nodeOfRanks(job);
  std::vector<std::string> nodes;
  std::string named;
  symptom.suspect_ranks.clear();
  for (size_t i = 0; i < findings.laggards.size(); ++i) {
    Laggard& l = findings.laggards[i];
    if (l.node.empty()) {
      auto it = node_of.find(l.rank);
      if (it != node_of.end()) l.node = it->second;
    }
    symptom.suspect_ranks.push_back(l.rank);
    nodes.push_back(l.node);
    if (i < kLaggardsInDetail)
      named += (named.empty() ? "" : "; ") + std::to_string(l.rank) + "@" + (l.node.empty() ? "?" : l.node) + " " +
               l.reason;
  }
  if (findings.laggards.size() > kLaggardsInDetail)
    named += "; and " + std::to_string(findings.laggards.size() - kLaggardsInDetail) + " more";
  symptom.suspect_node = joinNodes(nodes);
  std::string verdict = findings.laggards.empty() ? "every member known has entered collective " +
                                                        std::to_string(symptom.collective_seq) + " of " +
                                                        symptom.communicator + " and reports progress"
                                                  : "not arrived: " + named;
  if (!findings.unknown.empty())
    verdict += std::string("; no daemon reported rank") + (findings.unknown.size() > 1 ? "s " : " ") +
               formatRankList(findings.unknown) +
               (job.nodes.empty() ? " (this daemon has no node list for the job: SetJobNodes)" : "");
  symptom.detail += (symptom.detail.empty() ? "" : "; ") + verdict;
}

grpc::Status FaultsServiceImpl::ReportSymptom(grpc::ServerContext* context, const v1::Symptom* request,
                                              v1::ReportSymptomResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  if (request->job_id().empty()) return toGrpcStatus(invalidArgument("job_id is empty"));
  if (!isKnownSymptomKind(request->kind()))
    return toGrpcStatus(invalidArgument("kind " + std::to_string(request->kind()) +
                                        " is not a symptom kind (RESPONSE_TIMEOUT, MPI_ERROR, ...)"));
  for (Status s : {checkText(request->reporter_node(), "reporter_node", kMaxTextBytes),
                   checkText(request->suspect_node(), "suspect_node", kMaxTextBytes),
                   checkText(request->operation(), "operation", kMaxTextBytes),
                   checkText(request->communicator(), "communicator", kMaxTextBytes),
                   checkText(request->detail(), "detail", kMaxDetailBytes)})
    if (!s) return toGrpcStatus(s);
  if (!access_.isAdmin(*peer)) {
    if (Status s = jobs_.checkCaller(request->job_id(), request->reporter_rank(), peer->pid); !s)
      return toGrpcStatus(s);
  }
  auto job = jobs_.job(request->job_id());
  if (!job)
    return toGrpcStatus(notFound("no job " + singleQuoted(request->job_id()) +
                                 " is registered at this daemon (its ranks call RegisterRank first)"));
  if (request->reporter_rank() >= job->size)
    return toGrpcStatus(invalidArgument("reporter_rank " + std::to_string(request->reporter_rank()) +
                                        " is not below the size " + std::to_string(job->size) + " of job " +
                                        singleQuoted(job->job_id)));
  for (Status s : {checkRanks(request->suspect_ranks(), "suspect_ranks", job->size, job->job_id),
                   checkRanks(request->communicator_members(), "communicator_members", job->size, job->job_id)})
    if (!s) return toGrpcStatus(s);
  // A suspect the job's node list does not know could never be localised.
  if (!request->suspect_node().empty() && !job->nodes.empty()) {
    std::string_view named = request->suspect_node();
    while (!named.empty()) {
      size_t comma = named.find(',');
      std::string_view node = named.substr(0, comma);
      const bool known = node.empty() || std::any_of(job->nodes.begin(), job->nodes.end(),
                                                     [&](const JobNodeRecord& n) { return n.node == node; });
      if (!known)
        return toGrpcStatus(invalidArgument("suspect_node " + singleQuoted(node) + " is not a node of job " +
                                            singleQuoted(job->job_id) + " (its nodes: " +
                                            joinNodes([&] {
                                              std::vector<std::string> names;
                                              for (const auto& n : job->nodes) names.push_back(n.node);
                                              return names;
                                            }()) +
                                            ")"));
      named = comma == std::string_view::npos ? std::string_view() : named.substr(comma + 1);
    }
  }

  SymptomRecord symptom;
  symptom.job_id = request->job_id();
  symptom.uid = job->uid;
  symptom.kind = static_cast<SymptomKind>(request->kind());
  symptom.reporter_node = request->reporter_node();
  symptom.reporter_rank = request->reporter_rank();
  symptom.suspect_node = request->suspect_node();
  symptom.suspect_ranks.assign(request->suspect_ranks().begin(), request->suspect_ranks().end());
  symptom.operation = request->operation();
  symptom.error_code = request->error_code();
  symptom.timestamp_ns = request->timestamp_ns() != 0 ? request->timestamp_ns() : nowNs();
  symptom.detail = request->detail();
  symptom.communicator = request->communicator();
  symptom.collective_seq = request->collective_seq();
  symptom.communicator_members.assign(request->communicator_members().begin(),
                                      request->communicator_members().end());
  symptom.waited_s = request->waited_s();
  if (symptom.reporter_node.empty()) {
    auto node_of = nodeOfRanks(*job);
    if (auto it = node_of.find(symptom.reporter_rank); it != node_of.end()) symptom.reporter_node = it->second;
  }

  const bool in_collective = symptom.kind == SymptomKind::kResponseTimeout && !symptom.communicator.empty() &&
                             symptom.collective_seq > 0 && !symptom.communicator_members.empty();
  if (in_collective) {
    findLaggards(*job, symptom);
  } else if (symptom.suspect_node.empty() && !symptom.suspect_ranks.empty()) {
    // Point to point: the agent knows the peer; only its node is looked up.
    auto node_of = nodeOfRanks(*job);
    std::vector<std::string> nodes;
    for (uint32_t r : symptom.suspect_ranks)
      if (auto it = node_of.find(r); it != node_of.end()) nodes.push_back(it->second);
    symptom.suspect_node = joinNodes(nodes);
  }
  symptom.symptom_id = symptoms_.append(symptom);
  if (options_.on_symptom) options_.on_symptom(symptom);
  // TFD: to the suspect's fault localisation node. A symptom that names no
  // node (a collective where everyone arrived) has nothing to localise.
  if (!symptom.suspect_node.empty()) coordinator_.detect(symptom);
  return grpc::Status::OK;
}

grpc::Status FaultsServiceImpl::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest*, v1::JobList* reply) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  std::optional<uid_t> only;
  if (!access_.isAdmin(*peer)) only = peer->uid;
  for (const JobRecord& job : jobs_.list(only)) {
    v1::Job* out = reply->add_jobs();
    out->set_job_id(job.job_id);
    out->set_size(job.size);
    out->set_uid(job.uid);
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

grpc::Status FaultsServiceImpl::WatchSymptoms(grpc::ServerContext* context, const v1::WatchSymptomsRequest* request,
                                              grpc::ServerWriter<v1::Symptom>* writer) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  SymptomStore::Filter filter;
  if (!request->job_id().empty()) filter.job_id = request->job_id();
  if (!access_.isAdmin(*peer)) {
    filter.uid = peer->uid;
    if (filter.job_id) {
      auto job = jobs_.job(*filter.job_id);
      if (job && job->uid != peer->uid)
        return toGrpcStatus(permissionDenied("job " + singleQuoted(*filter.job_id) + " belongs to uid " +
                                             std::to_string(job->uid) + "; only its owner or an admin may watch its "
                                             "symptoms (you are uid " + std::to_string(peer->uid) + ")"));
    }
  }
  uint64_t after = 0;
  v1::Symptom message;
  while (!context->IsCancelled()) {
    SymptomStore::Batch batch = symptoms_.since(after, filter, 256);
    for (const SymptomRecord& s : batch.symptoms) {
      message.Clear();
      FaultWire::toProto(s, &message);
      if (!writer->Write(message)) return grpc::Status::OK;  // the watcher left
    }
    after = batch.last_id;
    if (!batch.symptoms.empty()) continue;  // there may be more
    if (!request->follow()) break;
    symptoms_.waitForNewer(after, std::chrono::steady_clock::now() + kWatchWakeup);
  }
  return grpc::Status::OK;
}

grpc::Status FaultsServiceImpl::WatchFaults(grpc::ServerContext* context, const v1::WatchFaultsRequest* request,
                                            grpc::ServerWriter<v1::FaultReport>* writer) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  FaultReportLog::Filter filter;
  if (!request->job_id().empty()) filter.job_id = request->job_id();
  if (!access_.isAdmin(*peer)) filter.uid = peer->uid;
  uint64_t after = 0;
  v1::FaultReport message;
  while (!context->IsCancelled()) {
    FaultReportLog::Batch batch = reports_.since(after, filter, 256);
    for (const FaultRecord& f : batch.faults) {
      message.Clear();
      FaultWire::toProto(f, &message);
      if (!writer->Write(message)) return grpc::Status::OK;
    }
    const bool more = batch.last_id != after;
    after = batch.last_id;
    if (more) continue;
    if (!request->follow()) break;
    reports_.waitForNewer(after, std::chrono::steady_clock::now() + kWatchWakeup);
  }
  return grpc::Status::OK;
}

grpc::Status FaultsServiceImpl::PeerInfo(grpc::ServerContext*, const v1::PeerInfoRequest*,
                                         v1::PeerInfoResponse* reply) {
  reply->set_node(options_.node_name);
  reply->set_endpoint(options_.peer_endpoint);
  return grpc::Status::OK;
}

}  // namespace nk
