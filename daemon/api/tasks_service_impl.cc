#include "api/tasks_service_impl.h"

#include <chrono>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "api/peer_identity.h"
#include "api/status_mapping.h"
#include "api/task_event_translator.h"
#include "node/access_policy.h"
#include "tasks/recording_reader.h"
#include "tasks/session_registry.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

// /proc/<pid>/cmdline with its NULs as spaces; "" once the process is gone.
std::string commandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

}  // namespace

TasksServiceImpl::TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access)
    : sessions_(sessions), access_(access) {}

grpc::Status TasksServiceImpl::Publish(grpc::ServerContext* context, grpc::ServerReader<v1::TaskEventBatch>* reader,
                                       v1::PublishAck* ack) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto session = sessions_.open(peer->pid, peer->uid, commandLine(peer->pid));
  if (!session) return toGrpcStatus(session.error());
  v1::TaskEventBatch batch;
  std::string wire;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  uint64_t count = 0;
  grpc::Status result = grpc::Status::OK;
  while (reader->Read(&batch)) {
    std::string fault = translator.toGraphEvents(batch, events);
    if (!fault.empty()) {
      // Nothing of a bad batch is kept, so the recording replays as the graph is.
      result = toGrpcStatus(invalidArgument("task events from pid " + std::to_string(peer->pid) + ": " + fault));
      break;
    }
    batch.set_session_id(*session);
    wire.clear();
    batch.SerializeToString(&wire);
    Status s = sessions_.append(*session, std::as_bytes(std::span(wire.data(), wire.size())), events);
    if (!s) {
      result = toGrpcStatus(s);
      break;
    }
    count += TaskEventTranslator::eventCount(batch);
  }
  sessions_.close(*session);
  ack->set_events(count);
  return result;
}

grpc::Status TasksServiceImpl::ListSessions(grpc::ServerContext* context, const v1::ListSessionsRequest*,
                                            v1::SessionList* reply) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  std::optional<uid_t> only;
  if (!access_.isAdmin(*peer)) only = peer->uid;
  for (const SessionRegistry::Info& info : sessions_.list(only)) {
    v1::Session* s = reply->add_sessions();
    s->set_session_id(info.id);
    s->set_pid(info.pid);
    s->set_uid(info.uid);
    s->set_program(info.program);
    s->set_tasks(info.tasks);
    s->set_edges(info.edges);
    s->set_events(info.events);
    s->set_live(info.live);
    s->set_recording(info.recording.string());
  }
  return grpc::Status::OK;
}

grpc::Status TasksServiceImpl::Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                                     grpc::ServerWriter<v1::TaskEventBatch>* writer) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto info = sessions_.info(request->session_id());
  if (!info) return toGrpcStatus(notFound("no task session " + std::to_string(request->session_id()) +
                                          " (see 'nodekeeper tasks')"));
  if (info->uid != peer->uid && !access_.isAdmin(*peer))
    return toGrpcStatus(permissionDenied("task session " + std::to_string(info->id) +
                                         " belongs to another user; only its owner or an admin may watch it"));
  auto reader = RecordingReader::open(info->recording);
  if (!reader) return toGrpcStatus(reader.error());
  v1::TaskEventBatch batch, structured;
  TaskEventTranslator translator;
  while (!context->IsCancelled()) {
    // Taken before reading: a session already closed has all its frames on
    // disk, so this pass is the last one.
    bool live = sessions_.info(info->id).value_or(*info).live;
    while (auto payload = reader->next()) {
      if (!batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())))
        return toGrpcStatus(internalError("task session " + std::to_string(info->id) +
                                          ": a recorded batch does not parse"));
      if (!request->packed()) translator.toStructured(batch, structured);
      if (!writer->Write(request->packed() ? batch : structured)) return grpc::Status::OK;  // the watcher left
    }
    if (!reader->stopReason().empty()) {
      // Mid-append is not damage while the session is live.
      if (!(live && reader->resumeAfterTruncation()))
        return toGrpcStatus(dataLoss("task session " + std::to_string(info->id) + ": " + reader->stopReason()));
    }
    if (!request->follow() || !live) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return grpc::Status::OK;
}

}  // namespace nk
