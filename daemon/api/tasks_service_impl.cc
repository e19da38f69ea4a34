#include "api/tasks_service_impl.h"

#include <chrono>
#include <optional>
#include <string>

#include "api/debug_stream.h"
#include "api/peer_identity.h"
#include "api/publish_stream.h"
#include "api/recording_follower.h"
#include "api/recording_watch_stream.h"
#include "api/refused_stream.h"
#include "api/status_mapping.h"
#include "common/proc_stat.h"
#include "node/access_policy.h"
#include "tasks/session_registry.h"
#include "wire/compact_events.h"
#include "wire/publish_limits.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

void toProto(const SessionRegistry::Info& info, v1::Session* out) {
  out->set_session_id(info.id);
  out->set_pid(info.pid);
  out->set_uid(info.uid);
  out->set_program(info.program);
  out->set_tasks(info.tasks);
  out->set_edges(info.edges);
  out->set_events(info.events);
  out->set_live(info.live);
  out->set_recording(info.recording.string());
  out->set_recording_stopped(info.recording_stopped);
  out->set_graph_limited(info.graph_limited);
}


}  // namespace

TasksServiceImpl::TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access, StreamHost& streams,
                                   uint32_t max_message_bytes, std::chrono::seconds grace)
    : sessions_(sessions),
      access_(access),
      streams_(streams),
      max_message_bytes_(std::to_string(max_message_bytes)),
      messages_per_second_(std::to_string(streams.settings().messages_per_second)),
      hub_(grace, DebugCommandPolicy::taskCounts(sessions)),
      policy_(sessions, hub_) {
  ticker_ = std::thread([this] {
    std::unique_lock lock(ticker_mutex_);
    while (!ticker_wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) {
      hub_.tick();
      sessions_.sweepIfDue();
    }
  });
}

TasksServiceImpl::~TasksServiceImpl() {
  {
    std::lock_guard lock(ticker_mutex_);
    stopping_ = true;
  }
  ticker_wake_.notify_all();
  ticker_.join();
}

DebugCommandPolicy::Caller TasksServiceImpl::callerOf(const PeerCredentials& peer) const {
  return {peer.uid, access_.isAdmin(peer)};
}

grpc::ServerBidiReactor<v1::TaskEventBatch, v1::TaskControl>* TasksServiceImpl::Publish(
    grpc::CallbackServerContext* context) {
  using Refused = RefusedStream<grpc::ServerBidiReactor<v1::TaskEventBatch, v1::TaskControl>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  auto slot = streams_.admit(*peer, "Tasks.Publish");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto session = sessions_.open(peer->pid, peer->uid, ProcStat::commandLine(peer->pid));
  if (!session) return Refused::make(streams_, toGrpcStatus(session.error()));
  // Sent at once (PublishStream::begin): the library ships the interleaved
  // form, which every daemon reads, until it has heard this; and keeps its
  // messages within these limits, past which the stream would end.
  context->AddInitialMetadata(std::string(wire::CompactEvents::kFormsMetadataKey),
                              std::string(wire::CompactEvents::kFormsRead));
  context->AddInitialMetadata(std::string(wire::PublishLimits::kMaxMessageBytesKey), max_message_bytes_);
  context->AddInitialMetadata(std::string(wire::PublishLimits::kMessagesPerSecondKey), messages_per_second_);
  auto* stream = streams_.adopt(std::make_unique<PublishStream>(streams_, std::move(*slot), sessions_, hub_, *session));
  stream->begin();
  return stream;
}

grpc::Status TasksServiceImpl::ListSessions(grpc::ServerContext* context, const v1::ListSessionsRequest*,
                                            v1::SessionList* reply) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  std::optional<uid_t> only;
  if (!access_.isAdmin(*peer)) only = peer->uid;
  for (const SessionRegistry::Info& info : sessions_.list(only)) toProto(info, reply->add_sessions());
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::TaskEventBatch>* TasksServiceImpl::Watch(grpc::CallbackServerContext* context,
                                                                       const v1::WatchRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::TaskEventBatch>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  auto info = policy_.sessionFor(callerOf(*peer), request->session_id(), "watch");
  if (!info) return Refused::make(streams_, toGrpcStatus(info.error()));
  if (Status recorded = RecordingFollower::checkRecorded(*info); !recorded) return Refused::make(streams_, toGrpcStatus(recorded));
  auto slot = streams_.admit(*peer, "Tasks.Watch");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto follower = RecordingFollower::open(sessions_, *info, request->packed());
  if (!follower) return Refused::make(streams_, toGrpcStatus(follower.error()));
  auto* stream = streams_.adopt(
      std::make_unique<RecordingWatchStream>(streams_, std::move(*slot), std::move(*follower), request->follow()));
  stream->begin();
  return stream;
}

grpc::ServerBidiReactor<v1::DebugCommand, v1::DebugUpdate>* TasksServiceImpl::Debug(
    grpc::CallbackServerContext* context) {
  using Refused = RefusedStream<grpc::ServerBidiReactor<v1::DebugCommand, v1::DebugUpdate>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  auto slot = streams_.admit(*peer, "Tasks.Debug");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto* stream = streams_.adopt(
      std::make_unique<DebugStream>(streams_, std::move(*slot), sessions_, hub_, policy_, callerOf(*peer)));
  stream->begin();
  return stream;
}

}  // namespace nk
