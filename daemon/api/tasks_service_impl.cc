#include "api/tasks_service_impl.h"

#include <fstream>
#include <string>
#include <vector>

#include "api/peer_identity.h"
#include "api/status_mapping.h"
#include "node/access_policy.h"
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

// The wire events as the graph needs them; function names point into the
// batch, which outlives the call that applies them.
void toGraphEvents(const v1::TaskEventBatch& batch, std::vector<GraphEvent>& out) {
  out.clear();
  for (const v1::TaskEvent& e : batch.events()) {
    GraphEvent g;
    g.timestamp_ns = e.timestamp_ns();
    switch (e.event_case()) {
      case v1::TaskEvent::kCreated:
        g.type = GraphEvent::Type::kCreated;
        g.task = e.created().task_id();
        g.parent = e.created().parent_id();
        g.function = e.created().function();
        g.priority = e.created().priority();
        break;
      case v1::TaskEvent::kDependency:
        g.type = GraphEvent::Type::kDependence;
        g.from = e.dependency().from_task();
        g.task = e.dependency().to_task();
        g.address = e.dependency().address();
        g.kind = static_cast<uint8_t>(e.dependency().kind());
        break;
      case v1::TaskEvent::kQueued:
        g.type = GraphEvent::Type::kQueued;
        g.task = e.queued().task_id();
        break;
      case v1::TaskEvent::kStarted:
        g.type = GraphEvent::Type::kStarted;
        g.task = e.started().task_id();
        g.thread = static_cast<int32_t>(e.thread());
        break;
      case v1::TaskEvent::kFinished:
        g.type = GraphEvent::Type::kFinished;
        g.task = e.finished().task_id();
        break;
      case v1::TaskEvent::kFailed:
        g.type = GraphEvent::Type::kFailed;
        g.task = e.failed().task_id();
        break;
      default:
        continue;  // sync and region events are recorded, not part of the graph
    }
    out.push_back(g);
  }
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
  uint64_t count = 0;
  grpc::Status result = grpc::Status::OK;
  while (reader->Read(&batch)) {
    batch.set_session_id(*session);
    wire.clear();
    batch.SerializeToString(&wire);
    toGraphEvents(batch, events);
    Status s = sessions_.append(*session, std::as_bytes(std::span(wire.data(), wire.size())), events);
    if (!s) {
      result = toGrpcStatus(s);
      break;
    }
    count += static_cast<uint64_t>(batch.events_size());
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
  }
  return grpc::Status::OK;
}

}  // namespace nk
