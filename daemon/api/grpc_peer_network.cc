#include "api/grpc_peer_network.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <thread>

#include "api/fault_wire.h"
#include "api/status_mapping.h"
#include "faults/scheduling_delay.h"
#include "nodekeeper/v1/faults.grpc.pb.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

// Endpoints come from what ranks send: the cache is bounded.
constexpr size_t kMaxChannels = 4096;

PeerNetwork::Delivery deliveryOf(const grpc::Status& status) {
  if (status.ok()) return PeerNetwork::Delivery::kAccepted;
  // An answer that refuses (bad token, unknown job) is still an answer: the
  // node is alive, it just will not take this.
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
      return PeerNetwork::Delivery::kUnreachable;
    default:
      return PeerNetwork::Delivery::kOverloaded;
  }
}

}  // namespace

std::chrono::milliseconds GrpcPeerNetwork::scaled(std::chrono::milliseconds deadline) const {
  return options_.delay_factor ? SchedulingDelay::scale(deadline, options_.delay_factor()) : deadline;
}

void GrpcPeerNetwork::setEndpoint(const std::string& node, const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  endpoints_[node] = endpoint;
}

std::string GrpcPeerNetwork::endpointOf(std::string_view node) const {
  std::lock_guard lock(mutex_);
  auto it = endpoints_.find(node);
  return it == endpoints_.end() ? std::string() : it->second;
}

std::shared_ptr<grpc::Channel> GrpcPeerNetwork::channelTo(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  auto it = channels_.find(endpoint);
  if (it != channels_.end()) return it->second;
  if (channels_.size() >= kMaxChannels) channels_.clear();
  grpc::ChannelArguments args;
  // A daemon that restarts should be reached at the next heartbeat, not
  // after gRPC's default backoff of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  auto credentials =
      options_.transport ? options_.transport->channelCredentials(endpoint) : grpc::InsecureChannelCredentials();
  auto channel = grpc::CreateCustomChannel(endpoint, credentials, args);
  channels_.emplace(endpoint, channel);
  return channel;
}

namespace {

template <typename Call>
grpc::Status callPeer(GrpcPeerNetwork& network, std::string_view node, std::chrono::milliseconds deadline, Call call) {
  std::string endpoint = network.endpointOf(node);
  if (endpoint.empty())
    return toGrpcStatus(unavailable("no endpoint known for node " + std::string(node)));
  auto stub = v1::FaultTreeService::NewStub(network.channelTo(endpoint));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  network.token().attach(context);
  return call(*stub, context);
}

PeerProgress progressOf(const v1::RankProgressResponse& reply) {
  PeerProgress progress;
  progress.now_ns = reply.now_ns();
  progress.ranks.reserve(reply.ranks_size());
  for (const v1::RankState& rs : reply.ranks()) {
    PeerRankProgress rank;
    rank.rank = rs.rank();
    rank.node = rs.node();
    rank.communicators.reserve(rs.communicators_size());
    for (const auto& c : rs.communicators()) rank.communicators.push_back({c.communicator(), c.collectives_entered()});
    rank.last_report_ns = rs.last_report_ns();
    rank.process_state = rs.process_state();
    progress.ranks.push_back(std::move(rank));
  }
  return progress;
}

}  // namespace

std::vector<Result<PeerProgress>> GrpcPeerNetwork::rankProgress(std::string_view job_id,
                                                                std::span<const JobNodeRecord> nodes,
                                                                std::chrono::milliseconds deadline) {
  struct Call {
    std::unique_ptr<v1::FaultTreeService::Stub> stub;
    grpc::ClientContext context;
    v1::RankProgressResponse reply;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::RankProgressResponse>> reader;
  };
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<Call>> calls;
  calls.reserve(nodes.size());
  size_t started = 0;
  v1::RankProgressRequest request;
  request.set_job_id(std::string(job_id));
  const auto until = std::chrono::system_clock::now() + deadline;
  for (const JobNodeRecord& node : nodes) {
    auto call = std::make_unique<Call>();
    const std::string endpoint = node.endpoint.empty() ? endpointOf(node.node) : node.endpoint;
    if (endpoint.empty()) {
      call->status = toGrpcStatus(unavailable("no endpoint known for node " + node.node));
      calls.push_back(std::move(call));
      continue;
    }
    call->stub = v1::FaultTreeService::NewStub(channelTo(endpoint));
    call->context.set_deadline(until);
    token_.attach(call->context);
    // A daemon still connecting gets the whole deadline; one that is down
    // costs no more than that, and all nodes are asked at once.
    call->context.set_wait_for_ready(true);
    call->reader = call->stub->AsyncRankProgress(&call->context, request, &queue);
    call->reader->Finish(&call->reply, &call->status, call.get());
    calls.push_back(std::move(call));
    ++started;
  }
  for (size_t done = 0; done < started; ++done) {
    void* tag = nullptr;
    bool ok = false;
    if (!queue.Next(&tag, &ok)) break;
  }
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }

  std::vector<Result<PeerProgress>> answers;
  answers.reserve(calls.size());
  for (const auto& call : calls) {
    if (call->status.ok()) answers.emplace_back(progressOf(call->reply));
    else answers.emplace_back(fromGrpcStatus(call->status));
  }
  return answers;
}

PeerNetwork::Delivery GrpcPeerNetwork::forwardSymptom(std::string_view node, const SymptomRecord& symptom) {
  v1::Symptom request;
  FaultWire::toProto(symptom, &request);
  v1::ReportSymptomResponse reply;
  grpc::Status status = callPeer(*this, node, scaled(options_.message_deadline), [&](auto& stub, auto& context) {
    return stub.ForwardSymptom(&context, request, &reply);
  });
  if (status.ok() && !reply.accepted()) return Delivery::kOverloaded;
  return deliveryOf(status);
}

PeerNetwork::Delivery GrpcPeerNetwork::publishFault(std::string_view node, const FaultRecord& fault) {
  v1::FaultReport request;
  FaultWire::toProto(fault, &request);
  v1::PublishFaultResponse reply;
  grpc::Status status = callPeer(*this, node, scaled(options_.message_deadline), [&](auto& stub, auto& context) {
    return stub.PublishFault(&context, request, &reply);
  });
  return deliveryOf(status);
}

PeerNetwork::Delivery GrpcPeerNetwork::heartbeat(std::string_view node, std::string_view job_id,
                                                 std::string_view from, bool leaving) {
  v1::HeartbeatRequest request;
  request.set_job_id(std::string(job_id));
  request.set_node(std::string(from));
  request.set_leaving(leaving);
  const auto& sender_factor = options_.sender_delay_factor ? options_.sender_delay_factor : options_.delay_factor;
  request.set_sender_delay_factor(sender_factor ? std::max(1.0, sender_factor()) : 1.0);
  v1::HeartbeatResponse reply;
  grpc::Status status = callPeer(*this, node, scaled(options_.heartbeat_deadline), [&](auto& stub, auto& context) {
    return stub.Heartbeat(&context, request, &reply);
  });
  return deliveryOf(status);
}

ResponseFindings GrpcPeerNetwork::responseProbe(std::string_view node, size_t attempts) {
  ResponseFindings findings;
  v1::ProbeRequest request;
  request.set_node(std::string(node));
  const std::chrono::milliseconds deadline = scaled(options_.probe_deadline);
  for (size_t i = 0; i < attempts; ++i) {
    ++findings.attempts;
    v1::ProbeResponse reply;
    auto start = std::chrono::steady_clock::now();
    grpc::Status status = callPeer(*this, node, deadline, [&](auto& stub, auto& context) {
      return stub.ResponseProbe(&context, request, &reply);
    });
    auto rtt = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    if (deliveryOf(status) == Delivery::kUnreachable) {
      // A refused connection comes back at once: wait a little before the
      // next attempt, so that a daemon restarting is not judged in 1 ms.
      // Grown with the deadline: a peer starved for a moment fails its
      // connection's handshake, and gRPC then fails calls at once until its
      // reconnect backoff ends; attempts close together all fell inside one
      // backoff and made a live node down (CI, a host loaded far past 4x).
      const auto spacing = deadline / 4;
      if (i + 1 < attempts && rtt < spacing) std::this_thread::sleep_for(spacing - rtt);
      continue;
    }
    ++findings.answered;
    if (findings.best_rtt.count() == 0 || rtt < findings.best_rtt) findings.best_rtt = rtt;
  }
  return findings;
}

StatusFindings GrpcPeerNetwork::statusProbe(std::string_view job_id, std::string_view node) {
  v1::ProbeRequest request;
  request.set_job_id(std::string(job_id));
  request.set_node(std::string(node));
  v1::StatusProbeResponse reply;
  grpc::Status status = callPeer(*this, node, scaled(options_.probe_deadline), [&](auto& stub, auto& context) {
    return stub.StatusProbe(&context, request, &reply);
  });
  if (!status.ok()) return {};
  return FaultWire::fromProto(reply);
}

LogFindings GrpcPeerNetwork::logProbe(std::string_view job_id, std::string_view node, int64_t from_ns,
                                      int64_t to_ns) {
  v1::LogProbeRequest request;
  request.set_job_id(std::string(job_id));
  request.set_node(std::string(node));
  request.set_from_ns(from_ns);
  request.set_to_ns(to_ns);
  v1::LogProbeResponse reply;
  grpc::Status status = callPeer(*this, node, scaled(options_.probe_deadline), [&](auto& stub, auto& context) {
    return stub.LogProbe(&context, request, &reply);
  });
  LogFindings findings;
  if (!status.ok()) return findings;
  findings.answered = true;
  findings.entries.assign(reply.entries().begin(), reply.entries().end());
  findings.pending = reply.pending();
  return findings;
}

}  // namespace nk
