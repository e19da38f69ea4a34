#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "taskgraph/recording_writer.h"
#include "tasks/recording_store.h"
#include "taskgraph/task_graph.h"

namespace nk {

// The task sessions the daemon holds: one per publishing app, each with its
// live graph and its append-only recording under the recordings
// directory. Sessions stay listed (not live) after their app has gone, so
// a frontend can still look at the graph through the recording, which
// stays on disk; the ended session's graph is freed.
//
// Recordings are kept within their quota (RecordingStore): a session whose
// user reaches it stops recording while its graph stays live and its
// program runs on; ended recordings are removed, oldest first, at each
// open and close and every sweep_interval, and their sessions say so.
class SessionRegistry {
 public:
  struct Options {
    RecordingLimits limits;
    std::function<RecordingStore::Clock::time_point()> clock = [] { return RecordingStore::Clock::now(); };
    std::chrono::seconds sweep_interval = std::chrono::minutes(1);
    std::function<void(const std::string&)> log_info = [](const std::string&) {};
    std::function<void(const std::string&)> log_warning = [](const std::string&) {};
    // Tasks each live graph keeps in memory (TaskGraph's window); 0: all.
    size_t graph_max_tasks = 0;
  };

  struct Info {
    uint64_t id = 0;
    pid_t pid = -1;
    uid_t uid = 0;
    std::string program;
    uint64_t tasks = 0;  // ever, those the graph dropped included
    uint64_t edges = 0;
    uint64_t events = 0;
    bool live = false;
    std::filesystem::path recording;  // empty once removed, or when never started
    // Why the recording stopped while the program ran on, or why it is
    // gone; empty while it records, and after it recorded to the end.
    std::string recording_stopped;
    std::array<uint64_t, 5> by_state{};  // tasks per TaskState value (kept when the graph is freed)
  };

  // Takes account of the recordings an earlier run left in the directory.
  SessionRegistry(std::filesystem::path recordings_dir, Options options);
  explicit SessionRegistry(std::filesystem::path recordings_dir);

  // A new session and its recording file.
  Result<uint64_t> open(pid_t pid, uid_t uid, std::string program);
  // One batch: recorded as one frame (the wire bytes, so a recording
  // replays exactly what arrived), then applied to the graph.
  Status append(uint64_t session, std::span<const std::byte> recorded_batch, std::span<const GraphEvent> events);
  // The app's stream ended: flush the recording, keep the graph.
  void close(uint64_t session);

  // All sessions, or those of one user.
  std::vector<Info> list(std::optional<uid_t> only_uid = std::nullopt) const;
  std::optional<Info> info(uint64_t session) const;
  // Runs `look` on the session's live graph, under its lock; false for an
  // unknown session. An ended session's graph is empty (freed).
  bool inspect(uint64_t session, const std::function<void(const TaskGraph&)>& look) const;

  // Removes the ended recordings past their age or over a quota.
  void sweep();
  // sweep() when sweep_interval has passed since the last; cheap otherwise.
  void sweepIfDue();

 private:
  struct Session {
    Info info;
    TaskGraph graph;
    std::optional<RecordingWriter> recording;
    std::mutex mutex;  // graph and recording; held per batch
  };
  Session* find(uint64_t id) const;
  static Info snapshot(Session& s);
  // Under the session's lock.
  void stopRecording(Session& s, const std::string& reason);
  // The sessions whose recordings the store removed learn it; logged.
  void recordingsRemoved(const RecordingStore::Removals& removed);

  std::filesystem::path dir_;
  Options options_;
  RecordingStore store_;
  mutable std::mutex mutex_;  // sessions_, by_recording_ and next_id_
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;
  std::unordered_map<std::string, uint64_t> by_recording_;  // recording path -> session
  uint64_t next_id_ = 1;
};

}  // namespace nk
