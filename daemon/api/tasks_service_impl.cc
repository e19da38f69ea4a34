#include "api/tasks_service_impl.h"

#include <chrono>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "api/peer_identity.h"
#include "api/recording_follower.h"
#include "api/status_mapping.h"
#include "common/proc_stat.h"
#include "node/access_policy.h"
#include "taskgraph/task_event_translator.h"
#include "tasks/outbox.h"
#include "tasks/session_registry.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

constexpr auto kFollowInterval = std::chrono::milliseconds(20);
// How long a Debug stream's writer waits for an update when it follows no
// recording.
constexpr auto kIdleWait = std::chrono::milliseconds(500);

using DebugStream = grpc::ServerReaderWriter<v1::DebugUpdate, v1::DebugCommand>;

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
}

// A session whose recording was never started or has been removed has
// nothing to replay.
Status checkRecorded(const SessionRegistry::Info& info) {
  if (!info.recording.empty()) return {};
  return failedPrecondition("task session " + std::to_string(info.id) + " has no recording: " +
                            info.recording_stopped);
}

// A Debug stream's one writer: the hub's updates as they come, and the
// recording's new frames every few ms, until the outbox closes or the
// frontend goes.
void writeUpdates(DebugStream& stream, Outbox& outbox, std::optional<RecordingFollower>& follower) {
  std::deque<v1::DebugUpdate> updates;
  v1::DebugUpdate events_update;
  bool following = follower.has_value();
  while (outbox.take(updates, following ? kFollowInterval : kIdleWait)) {
    for (const v1::DebugUpdate& update : updates)
      if (!stream.Write(update)) return;
    updates.clear();
    if (!following) continue;
    auto progress = follower->pump([&](const v1::TaskEventBatch& batch) {
      *events_update.mutable_events() = batch;
      return stream.Write(events_update);
    });
    if (!progress) {
      stream.Write(DebugCommandPolicy::refusal(0, progress.error().message));
      following = false;
    } else if (*progress != RecordingFollower::Progress::kLive) {
      following = false;
    }
  }
}

}  // namespace

TasksServiceImpl::TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access, std::chrono::seconds grace)
    : sessions_(sessions),
      access_(access),
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

grpc::Status TasksServiceImpl::Publish(grpc::ServerContext* context,
                                       grpc::ServerReaderWriter<v1::TaskControl, v1::TaskEventBatch>* stream) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto session = sessions_.open(peer->pid, peer->uid, ProcStat::commandLine(peer->pid));
  if (!session) return toGrpcStatus(session.error());
  // The hub calls the sink under its lock, so the stream has one writer at
  // a time, whichever frontend's thread sends.
  hub_.appConnected(*session, [stream](const v1::TaskControl& control) { return stream->Write(control); });
  grpc::Status result = receiveBatches(*session, peer->pid, stream);
  // Before the stream goes: once this returns, no write to it is running
  // or can start.
  hub_.appGone(*session);
  sessions_.close(*session);
  return result;
}

grpc::Status TasksServiceImpl::receiveBatches(uint64_t session, pid_t pid,
                                              grpc::ServerReaderWriter<v1::TaskControl, v1::TaskEventBatch>* stream) {
  v1::TaskEventBatch batch;
  std::string wire;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  while (stream->Read(&batch)) {
    std::string fault = translator.toGraphEvents(batch, events);
    // Nothing of a bad batch is kept, so the recording replays as the graph is.
    if (!fault.empty()) return toGrpcStatus(invalidArgument("task events from pid " + std::to_string(pid) + ": " + fault));
    batch.set_session_id(session);
    wire.clear();
    batch.SerializeToString(&wire);
    Status appended = sessions_.append(session, std::as_bytes(std::span(wire.data(), wire.size())), events);
    if (!appended) return toGrpcStatus(appended);
    if (batch.gate_reports_size() > 0) hub_.gateReports(session, batch.gate_reports());
  }
  return grpc::Status::OK;
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

grpc::Status TasksServiceImpl::Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                                     grpc::ServerWriter<v1::TaskEventBatch>* writer) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto info = policy_.sessionFor(callerOf(*peer), request->session_id(), "watch");
  if (!info) return toGrpcStatus(info.error());
  if (Status recorded = checkRecorded(*info); !recorded) return toGrpcStatus(recorded);
  auto follower = RecordingFollower::open(sessions_, *info, request->packed());
  if (!follower) return toGrpcStatus(follower.error());
  while (!context->IsCancelled()) {
    auto progress = follower->pump([&](const v1::TaskEventBatch& batch) { return writer->Write(batch); });
    if (!progress) return toGrpcStatus(progress.error());
    if (*progress == RecordingFollower::Progress::kLeft) return grpc::Status::OK;  // the watcher left
    if (!request->follow() || *progress == RecordingFollower::Progress::kEnded) break;
    std::this_thread::sleep_for(kFollowInterval);
  }
  return grpc::Status::OK;
}

grpc::Status TasksServiceImpl::Debug(grpc::ServerContext* context, DebugStream* stream) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  v1::DebugCommand first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_attach())
    return toGrpcStatus(invalidArgument("a Debug stream's first command must be attach (with a session id)"));
  const DebugCommandPolicy::Caller caller = callerOf(*peer);
  auto info = policy_.sessionFor(caller, first.attach().session_id(), "debug");
  if (!info) return toGrpcStatus(info.error());
  std::optional<RecordingFollower> follower;
  if (first.attach().events()) {
    if (Status recorded = checkRecorded(*info); !recorded) return toGrpcStatus(recorded);
    auto opened = RecordingFollower::open(sessions_, *info, false);
    if (!opened) return toGrpcStatus(opened.error());
    follower.emplace(std::move(*opened));
  }

  Outbox outbox;
  uint64_t frontend = hub_.attach(
      info->id, [&outbox](const v1::DebugUpdate& update) { outbox.push(update); },
      std::chrono::seconds(first.attach().grace_s()));
  policy_.greet(frontend, *info, first.command_id());
  std::thread writer([&] { writeUpdates(*stream, outbox, follower); });
  v1::DebugCommand command;
  while (stream->Read(&command)) policy_.handle(frontend, info->id, caller, command);
  hub_.detach(frontend);
  outbox.close();
  writer.join();
  return grpc::Status::OK;
}

}  // namespace nk
