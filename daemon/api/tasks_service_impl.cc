#include "api/tasks_service_impl.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/peer_identity.h"
#include "api/recording_follower.h"
#include "api/status_mapping.h"
#include "taskgraph/task_event_translator.h"
#include "common/proc_stat.h"
#include "node/access_policy.h"
#include "tasks/session_registry.h"
#include "taskgraph/task_graph_summary.h"

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

constexpr size_t kMaxReady = 64;
constexpr auto kFollowInterval = std::chrono::milliseconds(20);

v1::DebugUpdate refusal(uint64_t command_id, std::string message) {
  v1::DebugUpdate update;
  update.set_command_id(command_id);
  update.mutable_ack()->set_ok(false);
  update.mutable_ack()->set_message(std::move(message));
  return update;
}

// What a Debug stream's writer sends: the hub's updates come from other
// threads (the app's Publish, the grace ticker), and only the stream's own
// writer thread may write to it.
class Outbox {
 public:
  void push(v1::DebugUpdate update) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(update));
    }
    wake_.notify_one();
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    wake_.notify_one();
  }
  // Waits up to `wait` for updates; false once closed and empty.
  bool take(std::deque<v1::DebugUpdate>& out, std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, wait, [&] { return closed_ || !queue_.empty(); });
    out.swap(queue_);
    return !(closed_ && out.empty());
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<v1::DebugUpdate> queue_;
  bool closed_ = false;
};

}  // namespace

TasksServiceImpl::TasksServiceImpl(SessionRegistry& sessions, const AccessPolicy& access, std::chrono::seconds grace)
    : sessions_(sessions),
      access_(access),
      hub_(grace, [this](uint64_t session, v1::DebugStatus* status) { fillCounts(session, status); }) {
  ticker_ = std::thread([this] {
    std::unique_lock lock(ticker_mutex_);
    while (!ticker_wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) hub_.tick();
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

grpc::Status TasksServiceImpl::Publish(grpc::ServerContext* context,
                                       grpc::ServerReaderWriter<v1::TaskControl, v1::TaskEventBatch>* stream) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto session = sessions_.open(peer->pid, peer->uid, commandLine(peer->pid));
  if (!session) return toGrpcStatus(session.error());
  // The hub calls the sink under its lock, so the stream has one writer at
  // a time, whichever frontend's thread sends.
  hub_.appConnected(*session, [stream](const v1::TaskControl& control) { return stream->Write(control); });
  v1::TaskEventBatch batch;
  std::string wire;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  grpc::Status result = grpc::Status::OK;
  while (stream->Read(&batch)) {
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
    if (batch.gate_reports_size() > 0)
      hub_.gateReports(*session, batch.gate_reports());
  }
  // Before the stream goes: once this returns, no write to it is running
  // or can start.
  hub_.appGone(*session);
  sessions_.close(*session);
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

namespace {

// The session, if the caller may watch or steer it.
Result<SessionRegistry::Info> sessionFor(const SessionRegistry& sessions, const AccessPolicy& access,
                                         const PeerCredentials& peer, uint64_t id, std::string_view verb) {
  auto info = sessions.info(id);
  if (!info) return notFound("no task session " + std::to_string(id) + " (see 'nodekeeper tasks')");
  if (info->uid != peer.uid && !access.isAdmin(peer))
    return permissionDenied("task session " + std::to_string(info->id) + " belongs to another user; only its owner or an admin may " +
                            std::string(verb) + " it");
  return *info;
}

}  // namespace

grpc::Status TasksServiceImpl::Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                                     grpc::ServerWriter<v1::TaskEventBatch>* writer) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto info = sessionFor(sessions_, access_, *peer, request->session_id(), "watch");
  if (!info) return toGrpcStatus(info.error());
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

grpc::Status TasksServiceImpl::Debug(grpc::ServerContext* context,
                                     grpc::ServerReaderWriter<v1::DebugUpdate, v1::DebugCommand>* stream) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  v1::DebugCommand first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_attach())
    return toGrpcStatus(invalidArgument("a Debug stream's first command must be attach (with a session id)"));
  auto info = sessionFor(sessions_, access_, *peer, first.attach().session_id(), "debug");
  if (!info) return toGrpcStatus(info.error());
  std::optional<RecordingFollower> follower;
  if (first.attach().events()) {
    auto opened = RecordingFollower::open(sessions_, *info, false);
    if (!opened) return toGrpcStatus(opened.error());
    follower.emplace(std::move(*opened));
  }

  Outbox outbox;
  uint64_t frontend = hub_.attach(
      info->id, [&outbox](const v1::DebugUpdate& update) { outbox.push(update); },
      std::chrono::seconds(first.attach().grace_s()));
  {
    v1::DebugUpdate hello = statusOf(info->id, first.command_id());
    DebugHub::GateState gate = hub_.state(info->id);
    hello.mutable_ack()->set_ok(true);
    hello.mutable_ack()->set_message("attached to task session " + std::to_string(info->id) + " (pid " +
                                     std::to_string(info->pid) + ", " + info->program + "); " +
                                     (gate.app ? "live" : "ended: replay only, no control") + "; " +
                                     std::to_string(gate.frontends) + " frontend(s)");
    hub_.answer(frontend, hello);
  }

  // The writer: the hub's updates as they come, and the recording's new
  // frames every few ms.
  std::thread writer([&] {
    std::deque<v1::DebugUpdate> updates;
    v1::DebugUpdate events_update;
    bool following = follower.has_value();
    while (outbox.take(updates, following ? kFollowInterval : std::chrono::milliseconds(500))) {
      for (const v1::DebugUpdate& update : updates)
        if (!stream->Write(update)) return;
      updates.clear();
      if (!following) continue;
      auto progress = follower->pump([&](const v1::TaskEventBatch& batch) {
        *events_update.mutable_events() = batch;
        return stream->Write(events_update);
      });
      if (!progress) {
        stream->Write(refusal(0, progress.error().message));
        following = false;
      } else if (*progress != RecordingFollower::Progress::kLive) {
        following = false;
      }
    }
  });

  v1::DebugCommand c;
  while (stream->Read(&c)) command(frontend, info->id, *peer, c);
  hub_.detach(frontend);
  outbox.close();
  writer.join();
  return grpc::Status::OK;
}

// Kept by the registry for ended sessions too, whose graphs are freed.
void TasksServiceImpl::fillCounts(uint64_t session, v1::DebugStatus* status) {
  auto info = sessions_.info(session);
  if (!info) return;
  status->set_not_queued(info->by_state[static_cast<size_t>(TaskState::kNotQueued)]);
  status->set_queued(info->by_state[static_cast<size_t>(TaskState::kQueued)]);
  status->set_running(info->by_state[static_cast<size_t>(TaskState::kRunning)]);
  status->set_finished(info->by_state[static_cast<size_t>(TaskState::kFinished)]);
}

v1::DebugUpdate TasksServiceImpl::statusOf(uint64_t session, uint64_t command_id) {
  v1::DebugUpdate update;
  update.set_command_id(command_id);
  update.mutable_ack()->set_ok(true);
  v1::DebugStatus* status = update.mutable_status();
  DebugHub::GateState gate = hub_.state(session);
  sessions_.inspect(session, [&](const TaskGraph& graph) {
    TaskGraphSummary summary = TaskGraphSummary::of(graph, gate.blocked, kMaxReady);
    for (const auto& f : summary.functions) {
      v1::FunctionCount* out = status->add_functions();
      out->set_function(f.function);
      out->set_not_queued(f.by_state[static_cast<size_t>(TaskState::kNotQueued)]);
      out->set_queued(f.by_state[static_cast<size_t>(TaskState::kQueued)]);
      out->set_running(f.by_state[static_cast<size_t>(TaskState::kRunning)]);
      out->set_finished(f.by_state[static_cast<size_t>(TaskState::kFinished)]);
    }
    for (uint64_t t : summary.ready) status->add_ready(t);
  });
  return update;
}

void TasksServiceImpl::command(uint64_t frontend, uint64_t session, const PeerCredentials& peer,
                               const v1::DebugCommand& c) {
  const uint64_t id = c.command_id();
  v1::TaskControl control;
  // A task the command names must be one the daemon has seen, and still
  // able to take the command.
  auto checkTask = [&](uint64_t task, bool must_not_have_started) -> std::string {
    std::string problem;
    sessions_.inspect(session, [&](const TaskGraph& graph) {
      const TaskGraph::Task* t = graph.find(task);
      if (!t || !t->created)
        problem = "task " + std::to_string(task) + ": no such task in session " + std::to_string(session) +
                  " (see 'status')";
      else if (t->state == TaskState::kFinished)
        problem = "task " + std::to_string(task) + " has finished";
      else if (must_not_have_started && t->state == TaskState::kRunning)
        problem = "task " + std::to_string(task) + " is already running";
    });
    return problem;
  };
  switch (c.action_case()) {
    case v1::DebugCommand::kAttach:
      hub_.answer(frontend, refusal(id, "already attached to task session " + std::to_string(session)));
      return;
    case v1::DebugCommand::kStatus: hub_.answer(frontend, statusOf(session, id)); return;
    case v1::DebugCommand::kBreakAll: control.set_hold(true); break;
    case v1::DebugCommand::kContinueAll: control.set_hold(false); break;
    case v1::DebugCommand::kStep:
      if (c.step().tasks() == 0) {
        hub_.answer(frontend, refusal(id, "step: the number of tasks must be at least 1"));
        return;
      }
      control.set_step(c.step().tasks());
      break;
    case v1::DebugCommand::kBlock: {
      if (c.block().task_ids_size() == 0) {
        hub_.answer(frontend, refusal(id, "block: name at least one task"));
        return;
      }
      for (uint64_t task : c.block().task_ids()) {
        // Unblocking a task that has started is harmless; blocking one is not possible.
        std::string problem = checkTask(task, c.block().blocked());
        if (!problem.empty() && c.block().blocked()) {
          hub_.answer(frontend, refusal(id, "block: " + problem + "; nothing changed"));
          return;
        }
      }
      *control.mutable_block() = c.block();
      break;
    }
    case v1::DebugCommand::kBlockFunction: {
      const std::string& name = c.block_function().function();
      if (name.empty()) {
        hub_.answer(frontend, refusal(id, "block function: name the function (as 'status' lists it)"));
        return;
      }
      *control.mutable_block_function() = c.block_function();
      sessions_.inspect(session, [&](const TaskGraph& graph) {
        for (uint64_t task : TaskGraphSummary::notStarted(graph, name)) control.mutable_block_function()->add_task_ids(task);
      });
      break;
    }
    case v1::DebugCommand::kPriority: {
      std::string problem = checkTask(c.priority().task_id(), true);
      if (!problem.empty()) {
        hub_.answer(frontend, refusal(id, "priority: " + problem + "; nothing changed"));
        return;
      }
      *control.mutable_priority() = c.priority();
      break;
    }
    case v1::DebugCommand::kPauseOn:
      if (c.pause_on().event() == v1::PAUSE_EVENT_UNSPECIFIED) {
        hub_.answer(frontend, refusal(id, "pause: name the event (task_start, task_end, taskwait, barrier)"));
        return;
      }
      *control.mutable_pause_on() = c.pause_on();
      break;
    case v1::DebugCommand::kThreads:
      if (c.threads() == 0) {
        hub_.answer(frontend, refusal(id, "threads: the number of threads must be at least 1"));
        return;
      }
      control.set_threads(c.threads());
      break;
    case v1::DebugCommand::kGdb: {
      pid_t tracer = c.gdb().tracer_pid();
      if (tracer <= 0) {
        hub_.answer(frontend, refusal(id, "gdb: give the pid of the gdb that will attach (tracer_pid)"));
        return;
      }
      // Only the caller's own gdb may be let in: a tracer of another user
      // would get at the program's memory.
      std::optional<uid_t> owner = ProcStat::owner("/proc", tracer);
      if (!owner) {
        hub_.answer(frontend, refusal(id, "gdb: no process " + std::to_string(tracer)));
        return;
      }
      if (*owner != peer.uid && !access_.isAdmin(peer)) {
        hub_.answer(frontend, refusal(id, "gdb: process " + std::to_string(tracer) + " is not yours"));
        return;
      }
      control.set_allow_tracer(tracer);
      break;
    }
    case v1::DebugCommand::ACTION_NOT_SET:
      hub_.answer(frontend, refusal(id, "a command with no action"));
      return;
  }
  hub_.send(frontend, id, std::move(control));
}

}  // namespace nk
