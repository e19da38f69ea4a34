#include "tasks/session_registry.h"

#include <system_error>

namespace nk {

Result<uint64_t> SessionRegistry::open(pid_t pid, uid_t uid, std::string program) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return internalError("cannot create the recordings directory " + dir_.string() + ": " + ec.message());
  std::lock_guard lock(mutex_);
  uint64_t id = next_id_++;
  auto session = std::make_unique<Session>();
  session->info = {id, pid, uid, std::move(program), 0, 0, 0, true, {}};
  // The pid in the name tells recordings apart across daemon restarts,
  // when session ids start again at 1.
  session->info.recording = dir_ / ("session-" + std::to_string(id) + "-pid" + std::to_string(pid) + ".nkrec");
  if (std::filesystem::exists(session->info.recording))
    std::filesystem::rename(session->info.recording, session->info.recording.string() + ".old", ec);
  auto writer = RecordingWriter::create(session->info.recording);
  if (!writer) return writer.error();
  session->recording.emplace(std::move(*writer));
  sessions_.emplace(id, std::move(session));
  return id;
}

SessionRegistry::Session* SessionRegistry::find(uint64_t id) const {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

Status SessionRegistry::append(uint64_t id, std::span<const std::byte> recorded_batch,
                               std::span<const GraphEvent> events) {
  Session* s = find(id);
  if (!s) return notFound("no task session " + std::to_string(id));
  std::lock_guard lock(s->mutex);
  if (s->recording) {
    if (Status st = s->recording->append(recorded_batch); !st) return st;
  }
  for (const GraphEvent& e : events) s->graph.apply(e);
  s->info.events += events.size();
  return {};
}

void SessionRegistry::close(uint64_t id) {
  Session* s = find(id);
  if (!s) return;
  std::lock_guard lock(s->mutex);
  if (s->recording) (void)s->recording->flush();
  s->recording.reset();
  s->info.live = false;
  // Frontends read an ended session from its recording: its graph would
  // only hold memory (a daemon outlives many programs).
  s->info.tasks = s->graph.tasks().size();
  s->info.edges = s->graph.edges().size();
  s->info.by_state = s->graph.countsByState();
  s->graph = TaskGraph();
}

SessionRegistry::Info SessionRegistry::snapshot(Session& s) {
  std::lock_guard lock(s.mutex);
  Info info = s.info;
  if (info.live) {
    info.tasks = s.graph.tasks().size();
    info.edges = s.graph.edges().size();
    info.by_state = s.graph.countsByState();
  }
  return info;
}

std::vector<SessionRegistry::Info> SessionRegistry::list(std::optional<uid_t> only_uid) const {
  std::vector<Session*> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, s] : sessions_) all.push_back(s.get());
  }
  std::vector<Info> out;
  for (Session* s : all) {
    Info info = snapshot(*s);
    if (!only_uid || info.uid == *only_uid) out.push_back(std::move(info));
  }
  return out;
}

std::optional<SessionRegistry::Info> SessionRegistry::info(uint64_t id) const {
  Session* s = find(id);
  if (!s) return std::nullopt;
  return snapshot(*s);
}

bool SessionRegistry::inspect(uint64_t id, const std::function<void(const TaskGraph&)>& look) const {
  Session* s = find(id);
  if (!s) return false;
  std::lock_guard lock(s->mutex);
  look(s->graph);
  return true;
}

}  // namespace nk
