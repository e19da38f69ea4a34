#include "tasks/session_registry.h"

#include <set>
#include <system_error>

#include "taskgraph/recording_format.h"

namespace nk {

SessionRegistry::SessionRegistry(std::filesystem::path recordings_dir, Options options)
    : dir_(std::move(recordings_dir)),
      options_(std::move(options)),
      store_(dir_, RecordingStore::Options{.limits = options_.limits,
                                           .clock = options_.clock,
                                           .sweep_interval = options_.sweep_interval,
                                           .warn = options_.log_warning}) {
  // Ids go on from the last run's, so that names do not collide.
  next_id_ = store_.highestSessionId() + 1;
}

SessionRegistry::SessionRegistry(std::filesystem::path recordings_dir)
    : SessionRegistry(std::move(recordings_dir), Options{}) {}

Result<uint64_t> SessionRegistry::open(pid_t pid, uid_t uid, std::string program) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return internalError("cannot create the recordings directory " + dir_.string() + ": " + ec.message());
  RecordingStore::Removals removed = store_.sweep();
  auto session = std::make_unique<Session>();
  uint64_t id = 0;
  std::filesystem::path recording;
  {
    std::lock_guard lock(mutex_);
    // A name taken by a file the store does not count (left by hand) is
    // skipped, never replaced.
    do {
      id = next_id_++;
      recording = dir_ / RecordingStore::fileName(id, pid, uid);
    } while (std::filesystem::exists(std::filesystem::symlink_status(recording, ec)));
  }
  session->info = {id, pid, uid, std::move(program), 0, 0, 0, true, {}, {}, {}};
  session->graph = TaskGraph(options_.graph_max_tasks);
  auto admitted = store_.admit(recording, uid, kRecordingFileHeaderSize);
  removed.insert(removed.end(), admitted.removed.begin(), admitted.removed.end());
  if (admitted.allowed) {
    auto writer = RecordingWriter::create(recording);
    if (!writer) {
      store_.discard(recording);
      recordingsRemoved(removed);
      return writer.error();
    }
    session->recording.emplace(std::move(*writer));
    session->info.recording = recording;
  } else {
    session->info.recording_stopped = "not recorded: " + admitted.refusal;
    options_.log_warning("task session " + std::to_string(id) + " (pid " + std::to_string(pid) + ", uid " +
                         std::to_string(uid) + ") is not recorded: " + admitted.refusal +
                         "; its program runs on unrecorded");
  }
  {
    std::lock_guard lock(mutex_);
    if (!session->info.recording.empty()) by_recording_[recording.string()] = id;
    sessions_.emplace(id, std::move(session));
  }
  recordingsRemoved(removed);
  return id;
}

SessionRegistry::Session* SessionRegistry::find(uint64_t id) const {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

void SessionRegistry::stopRecording(Session& s, const std::string& reason) {
  // What was recorded stays readable: whole frames, made durable.
  (void)s.recording->flush();
  s.recording.reset();
  s.info.recording_stopped = "stopped: " + reason;
  options_.log_warning("task session " + std::to_string(s.info.id) + " (pid " + std::to_string(s.info.pid) +
                       ", uid " + std::to_string(s.info.uid) + ") stopped recording: " + reason +
                       "; its program runs on unrecorded");
}

Status SessionRegistry::append(uint64_t id, std::span<const std::byte> recorded_batch,
                               std::span<const GraphEvent> events) {
  Session* s = find(id);
  if (!s) return notFound("no task session " + std::to_string(id));
  RecordingStore::Removals removed;
  Status result;
  {
    std::lock_guard lock(s->mutex);
    if (s->recording) {
      // Charged what it takes on disk, compressed.
      auto staged = s->recording->stage(recorded_batch);
      if (!staged) {
        result = staged.error();
      } else {
        auto growth = store_.grow(s->info.recording, *staged);
        removed = std::move(growth.removed);
        if (!growth.allowed) {
          stopRecording(*s, growth.refusal);
        } else if (Status appended = s->recording->appendStaged(); !appended) {
          store_.resize(s->info.recording, s->recording->size());
          result = appended;
        }
      }
    }
    if (result) {
      for (const GraphEvent& e : events) s->graph.apply(e);
      s->info.events += events.size();
    }
  }
  recordingsRemoved(removed);
  return result;
}

void SessionRegistry::close(uint64_t id) {
  Session* s = find(id);
  if (!s) return;
  {
    std::lock_guard lock(s->mutex);
    if (s->recording) (void)s->recording->flush();
    s->recording.reset();
    if (!s->info.recording.empty()) store_.end(s->info.recording);
    s->info.live = false;
    // Frontends read an ended session from its recording: its graph would
    // only hold memory (a daemon outlives many programs).
    s->info.tasks = s->graph.totalTasks();
    s->info.edges = s->graph.totalEdges();
    s->info.by_state = s->graph.countsByState();
    s->graph = TaskGraph();
  }
  recordingsRemoved(store_.sweep());
}

void SessionRegistry::sweep() { recordingsRemoved(store_.sweep()); }

void SessionRegistry::sweepIfDue() { recordingsRemoved(store_.sweepIfDue()); }

void SessionRegistry::recordingsRemoved(const RecordingStore::Removals& removed) {
  if (removed.empty()) return;
  uint64_t bytes = 0;
  std::set<std::string> reasons;
  for (const RecordingQuota::Removal& removal : removed) {
    bytes += removal.bytes;
    reasons.insert(removal.reason);
    Session* s = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = by_recording_.find(removal.path.string());
      if (it == by_recording_.end()) continue;  // an earlier run's
      s = sessions_.at(it->second).get();
      by_recording_.erase(it);
    }
    std::lock_guard lock(s->mutex);
    s->info.recording.clear();
    s->info.recording_stopped = "removed: " + removal.reason;
  }
  std::string why;
  for (const std::string& reason : reasons) why += (why.empty() ? "" : "; ") + reason;
  options_.log_info("removed " + std::to_string(removed.size()) + " ended task recording" +
                    (removed.size() == 1 ? "" : "s") + " (" + RecordingQuota::describeBytes(bytes) + ") from " +
                    dir_.string() + ": " + why);
}

SessionRegistry::Info SessionRegistry::snapshot(Session& s) {
  std::lock_guard lock(s.mutex);
  Info info = s.info;
  if (info.live) {
    info.tasks = s.graph.totalTasks();
    info.edges = s.graph.totalEdges();
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
