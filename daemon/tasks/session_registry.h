#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/recording_writer.h"
#include "taskgraph/task_graph.h"
#include "taskgraph/zstd_frames.h"
#include "tasks/recording_store.h"
#include "tasks/idle_priority.h"
#include "tasks/session_graph.h"
#include "tasks/spare_cpu_watch.h"

namespace nk {

// The task sessions the daemon holds: one per publishing app, each with its
// live graph and its append-only recording under the recordings
// directory. Sessions stay listed (not live) after their app has gone, so
// a frontend can still look at the graph through the recording, which
// stays on disk; the ended session's graph is freed.
//
// A batch is recorded when it arrives and its graph is built later
// (SessionGraph): by a builder thread at the lowest priority, or by whoever
// looks at the graph, or, once the batches waiting over all sessions pass
// Options::max_pending_bytes, by the stream that brings more.
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
    // Batches received and not yet in their graphs, over all sessions, as
    // their compressed frames (a few bytes a task): past this the streams
    // build their own graphs before they read on.
    uint64_t max_pending_bytes = uint64_t{256} << 20;
    // False: no builder thread; graphs are built only when looked at or
    // when the pending bytes pass the bound (tests that want to see a
    // graph wait behind its batches).
    bool build_in_background = true;
    // Tasks each live graph keeps in memory (TaskGraph's window); 0: all.
    size_t graph_max_tasks = 0;
    // The host's CPUs and their use since the previous call. With it the
    // builder takes live sessions only while the host has CPU to spare
    // (SpareCpuWatch): on a busy node their graphs wait in the recording
    // until the program ends, or until a reader looks (readers build what
    // they look at). Unset or no answer: built whatever the load.
    std::function<std::optional<SpareCpuWatch::Sample>()> host_cpu_use;
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
    // What the live graph did not keep, past its bounds (tasks, their
    // dependences, function names), "; " between; empty while it keeps all.
    std::string graph_limited;
    std::array<uint64_t, 5> by_state{};  // tasks per TaskState value (kept when the graph is freed)
  };

  // Counts for /metrics, since the daemon started.
  struct Totals {
    uint64_t sessions_opened = 0;
    uint64_t sessions_live = 0;  // now
    uint64_t batches_received = 0;
    uint64_t batches_unrecorded = 0;  // received while their session was not recording
    uint64_t batches_refused = 0;     // malformed (noteRefusedBatch) or not kept (append failed)
    uint64_t events = 0;              // taken into the sessions' graphs, ever
  };

  // Takes account of the recordings an earlier run left in the directory.
  SessionRegistry(std::filesystem::path recordings_dir, Options options);
  explicit SessionRegistry(std::filesystem::path recordings_dir);
  ~SessionRegistry();
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // A new session and its recording file.
  Result<uint64_t> open(pid_t pid, uid_t uid, std::string program);
  // One batch, checked already (TaskEventTranslator::check): recorded as
  // one frame (serialized, so a recording replays exactly what arrived),
  // then queued for the graph.
  Status append(uint64_t session, const nodekeeper::v1::TaskEventBatch& batch);
  // The app's stream ended: flush the recording. The graph is freed once
  // it has taken every batch (its counts stay in Info).
  void close(uint64_t session);

  // All sessions, or those of one user.
  std::vector<Info> list(std::optional<uid_t> only_uid = std::nullopt) const;
  std::optional<Info> info(uint64_t session) const;
  // Runs `look` on the session's live graph, under its lock, with every
  // batch received so far in it; false for an unknown session. An ended
  // session's graph is empty (freed).
  bool inspect(uint64_t session, const std::function<void(const TaskGraph&)>& look) const;

  // A batch its stream refused before append() (it failed its checks).
  void noteRefusedBatch() { batches_refused_.fetch_add(1, std::memory_order_relaxed); }
  // Cheap: builds no graph, waits for no build (a session's count is what
  // its graph has taken so far).
  Totals totals() const;

  // Removes the ended recordings past their age or over a quota.
  void sweep();
  // sweep() when sweep_interval has passed since the last; cheap otherwise.
  void sweepIfDue();

  // Bytes of batches held in memory, not yet in their graphs, over all
  // sessions (batches read back from recordings are not counted).
  uint64_t pendingBytes() const { return pending_total_.load(std::memory_order_relaxed); }
  // The session's batches not yet in its graph; 0 for an unknown session.
  size_t pendingBatches(uint64_t session) const;
  // Memory the session holds beyond its Info: its graph and the stream's
  // scratch and zstd context; 0 for an unknown session.
  size_t heldBytes(uint64_t session) const;
  // How many times the builder thread has woken to look for work.
  uint64_t builderPasses() const { return builder_passes_.load(std::memory_order_relaxed); }

 private:
  struct Session {
    Session(std::atomic<uint64_t>& pending_total, size_t graph_max_tasks, IdlePriority& builder)
        : graph(pending_total, graph_max_tasks, &builder) {}
    Info info;
    std::optional<RecordingWriter> recording;
    ZstdFrames zstd;       // frames for the graph while the session is not recorded
    std::string wire;      // scratch, reused
    bool released = false; // the ended session's graph is freed, its counts in info
    bool readable = false; // the graph can read frames back from the recording
    bool stored_frames = false;    // some frames were stored uncompressed
    bool compact_pending = false;  // ended: the builder compresses its recording
    std::mutex mutex;      // all of the above; held per batch
    SessionGraph graph;    // locks of its own
  };
  Session* find(uint64_t id) const;
  std::vector<Session*> all() const;
  Info snapshot(Session& s) const;
  // An ended session whose graph has taken every batch: the graph is freed
  // and its counts kept.
  void releaseIfDone(Session& s) const;
  void buildInBackground();
  static bool isLive(Session& s);
  // Whether the builder may take live sessions now; samples the host's CPU
  // use once per kSpareCpuInterval at the most.
  bool liveBuildAllowed(SpareCpuWatch& watch, std::chrono::steady_clock::time_point& last_sample) const;
  static constexpr std::chrono::milliseconds kSpareCpuInterval{250};
  // New work for the builder; nothing without one.
  enum class Work { kLiveBatch, kSessionEnded };
  void wakeBuilder(Work work);
  bool compactionDue(Session& s) const;
  // Rewrites an ended recording with its stored frames compressed. It stays
  // ended meanwhile, so the quota may still remove it (a busy node's idle
  // builder may take long to get to it); a removed one stays removed
  // (RecordingStore::replace).
  void compactRecording(Session& s);
  // Under the session's lock.
  void stopRecording(Session& s, const std::string& reason);
  // The sessions whose recordings the store removed learn it; logged.
  void recordingsRemoved(const RecordingStore::Removals& removed);

  // Declared first: sessions (destroyed before it) give their bytes back.
  std::atomic<uint64_t> pending_total_{0};
  // The builder's thread; its sessions' graphs lift it when they wait on it.
  mutable IdlePriority builder_priority_;
  std::filesystem::path dir_;
  Options options_;
  RecordingStore store_;
  mutable std::mutex mutex_;  // sessions_, by_recording_ and next_id_
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;
  std::unordered_map<std::string, uint64_t> by_recording_;  // recording path -> session
  uint64_t next_id_ = 1;

  std::mutex builder_mutex_;  // stopping_
  std::condition_variable builder_wake_;
  bool stopping_ = false;
  std::atomic<uint64_t> batches_queued_{0};
  // The builder has put live sessions off until the host has CPU to spare,
  // and looks again within kSpareCpuInterval: their batches need not wake it.
  std::atomic<bool> builder_deferring_{false};
  std::atomic<uint64_t> builder_passes_{0};
  // For totals(): one relaxed add per session or batch, none per event.
  std::atomic<uint64_t> sessions_opened_{0};
  std::atomic<uint64_t> batches_received_{0};
  std::atomic<uint64_t> batches_unrecorded_{0};
  std::atomic<uint64_t> batches_refused_{0};  // ever, so the builder sees new work since it looked
  std::thread builder_;  // last: started once everything above is made
};

}  // namespace nk
