#include "tasks/session_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "taskgraph/function_name_limits.h"
#include "taskgraph/recording_compactor.h"
#include "taskgraph/recording_format.h"

namespace nk {

namespace {

// What a listing says of a session's graph.
void takeCounts(SessionRegistry::Info& info, const SessionGraph::Counts& counts) {
  info.tasks = counts.tasks;
  info.edges = counts.edges;
  info.events = counts.events;
  info.by_state = counts.by_state;
  std::vector<std::string> limits;
  if (counts.tasks_not_held != 0)
    limits.push_back("holds " + std::to_string(counts.max_held) + " unfinished tasks at the most (" +
                     std::to_string(TaskGraph::kMaxHeldPerWindow) + " times task_graph_tasks): the " +
                     std::to_string(counts.tasks_not_held) + " tasks created since" +
                     (counts.dependences_not_held != 0
                          ? " (and " + std::to_string(counts.dependences_not_held) + " dependences on them)"
                          : std::string()) +
                     " are in the recording only");
  if (counts.names_not_kept != 0)
    limits.push_back("left " + std::to_string(counts.names_not_kept) + " function names unnamed, past the " +
                     std::to_string(FunctionNameLimits::kMaxNames) + " names or " +
                     std::to_string(FunctionNameLimits::kMaxStreamNameBytes >> 20) +
                     " MiB of names a stream may keep (their tasks show no function)");
  if (counts.functions_not_kept != 0)
    limits.push_back("counts " + std::to_string(counts.functions_not_kept) + " tasks of functions past the first " +
                     std::to_string(FunctionNameLimits::kMaxNames) + " under \"" +
                     std::string(TaskGraph::kOtherFunctions) + "\"");
  info.graph_limited.clear();
  for (const std::string& limit : limits) info.graph_limited += (info.graph_limited.empty() ? "" : "; ") + limit;
}

// A recording being rewritten compressed, beside the original.
// A rewrite in progress: ".compacting-session-3-pid42-uid1000.nkrec.part", a
// name the store never counts and a "*.nkrec" listing never shows.
constexpr std::string_view kCompactingPrefix = ".compacting-";
constexpr std::string_view kCompactingSuffix = ".part";

}  // namespace

SessionRegistry::SessionRegistry(std::filesystem::path recordings_dir, Options options)
    : dir_(std::move(recordings_dir)),
      options_(std::move(options)),
      store_(dir_, RecordingStore::Options{.limits = options_.limits,
                                           .clock = options_.clock,
                                           .sweep_interval = options_.sweep_interval,
                                           .warn = options_.log_warning}) {
  // Ids go on from the last run's, so that names do not collide.
  next_id_ = store_.highestSessionId() + 1;
  // A rewrite an earlier run did not finish: the original is whole.
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir_, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.starts_with(kCompactingPrefix) && it->symlink_status(type_ec).type() == std::filesystem::file_type::regular)
      std::filesystem::remove(it->path(), type_ec);
  }
  if (options_.build_in_background) builder_ = std::thread([this] { buildInBackground(); });
}

SessionRegistry::~SessionRegistry() {
  {
    std::lock_guard lock(builder_mutex_);
    stopping_ = true;
  }
  builder_wake_.notify_one();
  if (builder_.joinable()) builder_.join();
}

// Graphs are built in time nobody else wants: SCHED_IDLE runs the thread
// only while no other thread wants the core, and any that wakes takes the
// core back at once. (At nice 19 it still cost a UTS-shaped program under
// lossless capture about a quarter of its time, the app's threads waking
// behind it.) Only the building and the compressing are idle: the
// bookkeeping between them takes locks that the streams recording the
// apps' events need, and an idle thread preempted while holding one can
// wait seconds for its next slice on a busy node. A reader that needs a
// graph's lock while the builder holds it lifts the builder
// (IdlePriority), so it waits behind one slice (SessionGraph::kSliceEvents)
// at the most, at normal priority.
void SessionRegistry::buildInBackground() {
  builder_priority_.adopt();
  (void)pthread_setname_np(pthread_self(), "nk-graph");
  if (!IdlePriority::liftable())
    options_.log_warning(
        "task graph builder: no CAP_SYS_NICE, so a reader cannot lift the idle builder out of a graph's lock; "
        "on a busy node such a read may wait for the builder's next time slice");
  // Events per session per turn: sessions take turns, and the loop looks
  // for new sessions and for the stop now and then.
  constexpr size_t kEventsPerTurn = 64 * SessionGraph::kSliceEvents;
  SpareCpuWatch spare_cpu;
  // Long ago: the first look at live work starts an interval afresh.
  std::chrono::steady_clock::time_point last_sample{};
  std::unique_lock lock(builder_mutex_);
  while (!stopping_) {
    builder_passes_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t queued_before = batches_queued_.load(std::memory_order_acquire);
    lock.unlock();
    bool built = false;
    bool deferred = false;
    // Asked only when a live session waits, so that the host is sampled
    // while there is live work, not before it came.
    std::optional<bool> live_allowed;
    for (Session* s : all()) {
      if (s->graph.pending() && isLive(*s)) {
        if (!live_allowed) live_allowed = liveBuildAllowed(spare_cpu, last_sample);
        if (!*live_allowed) {
          deferred = true;
          continue;
        }
      }
      if (s->graph.pending()) {
        {
          IdlePriority::Idle idle(builder_priority_);
          built = s->graph.build(kEventsPerTurn) > 0 || built;
        }
        releaseIfDone(*s);
      }
      if (compactionDue(*s)) {
        compactRecording(*s);
        built = true;
      }
    }
    lock.lock();
    // Nothing was waiting, and nothing came since the pass began; or what
    // came waits for spare CPU, looked for again after an interval.
    if (!built && deferred) {
      builder_deferring_.store(true, std::memory_order_relaxed);
      builder_wake_.wait_for(lock, kSpareCpuInterval);
      builder_deferring_.store(false, std::memory_order_relaxed);
    } else if (!built && batches_queued_.load(std::memory_order_acquire) == queued_before)
      builder_wake_.wait_for(lock, std::chrono::seconds(1));
  }
}

bool SessionRegistry::isLive(Session& s) {
  std::lock_guard lock(s.mutex);
  return s.info.live;
}

bool SessionRegistry::liveBuildAllowed(SpareCpuWatch& watch,
                                       std::chrono::steady_clock::time_point& last_sample) const {
  if (!options_.host_cpu_use) return true;
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = now - last_sample;
  if (elapsed < kSpareCpuInterval) return watch.spare();
  std::optional<SpareCpuWatch::Sample> sample = options_.host_cpu_use();
  last_sample = now;
  if (!sample) return true;
  // Live work came after the builder stopped looking (it looks each
  // interval while there is some): this sample's interval is mostly the
  // idle host before the program started, and building on it gave the
  // builder the start of every run.
  if (elapsed > 2 * kSpareCpuInterval) {
    watch.forget();
    return false;
  }
  watch.observe(*sample);
  return watch.spare();
}

SessionRegistry::SessionRegistry(std::filesystem::path recordings_dir)
    : SessionRegistry(std::move(recordings_dir), Options{}) {}

void SessionRegistry::wakeBuilder(Work work) {
  if (!builder_.joinable()) return;
  batches_queued_.fetch_add(1, std::memory_order_release);
  // On a busy node the batches come a thousand times a second: each wake
  // was a futex call on the stream's thread and a switch to the builder on
  // a core the app wanted, only for the builder to put them off again.
  if (work == Work::kLiveBatch && builder_deferring_.load(std::memory_order_relaxed)) return;
  builder_wake_.notify_one();
}

Result<uint64_t> SessionRegistry::open(pid_t pid, uid_t uid, std::string program) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return internalError("cannot create the recordings directory " + dir_.string() + ": " + ec.message());
  RecordingStore::Removals removed = store_.sweep();
  auto session = std::make_unique<Session>(pending_total_, options_.graph_max_tasks, builder_priority_);
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
    // Without a reader the graph takes its batches from memory instead.
    session->readable = session->graph.readFrom(recording);
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
  sessions_opened_.fetch_add(1, std::memory_order_relaxed);
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

Status SessionRegistry::append(uint64_t id, const nodekeeper::v1::TaskEventBatch& batch) {
  Session* s = find(id);
  if (!s) return notFound("no task session " + std::to_string(id));
  RecordingStore::Removals removed;
  Status result;
  std::vector<std::byte> frame;
  std::optional<std::pair<uint64_t, uint32_t>> recorded_at;
  bool recording_took = false;  // the batch is on disk
  // While the program runs, frames are stored as they come (still zstd
  // frames, a tenth of a nanosecond a byte) and the idle builder compresses
  // the recording once the session ends: compressing here (three
  // nanoseconds a byte, zstd level 1) was half the stream's time, and on a
  // busy node every cycle the stream spends is one the app's cores lose.
  // Without a builder nothing would compress them later.
  const ZstdFrames::Effort effort = builder_.joinable() ? ZstdFrames::Effort::kFastest : ZstdFrames::Effort::kCompact;
  {
    std::lock_guard lock(s->mutex);
    s->wire.clear();
    batch.SerializeToString(&s->wire);
    const auto payload = std::as_bytes(std::span(s->wire.data(), s->wire.size()));
    if (s->recording) {
      // Charged what it takes on disk, compressed.
      auto staged = s->recording->stage(payload, effort);
      if (!staged) {
        result = staged.error();
      } else {
        auto growth = store_.grow(s->info.recording, *staged);
        removed = std::move(growth.removed);
        const uint64_t frame_at = s->recording->size() + kFrameHeaderSize;
        if (!growth.allowed) {
          stopRecording(*s, growth.refusal);
        } else if (Status appended = s->recording->appendStaged(); !appended) {
          store_.resize(s->info.recording, s->recording->size());
          result = appended;
        } else {
          recording_took = true;
          s->stored_frames = s->stored_frames || effort == ZstdFrames::Effort::kFastest;
          // The graph reads the frame back from the recording.
          if (s->recording->compressesFrames() && s->readable)
            recorded_at.emplace(frame_at, static_cast<uint32_t>(s->recording->staged().size()));
        }
      }
    }
    if (result && !recorded_at) {
      s->zstd.compress(payload, frame, effort);
      if (frame.empty()) result = internalError("task session " + std::to_string(id) + ": zstd could not compress a batch");
    }
  }
  recordingsRemoved(removed);
  if (!result) {
    batches_refused_.fetch_add(1, std::memory_order_relaxed);
    return result;
  }
  batches_received_.fetch_add(1, std::memory_order_relaxed);
  if (!recording_took) batches_unrecorded_.fetch_add(1, std::memory_order_relaxed);
  if (recorded_at) {
    s->graph.queueRecorded(recorded_at->first, recorded_at->second);
  } else {
    s->graph.queue(std::move(frame));
  }
  if (pending_total_.load(std::memory_order_relaxed) > options_.max_pending_bytes) {
    // The builder is far behind (a node too busy to give it any time) and
    // the batches wait in memory: this stream pays for its own graph before
    // it reads on, which slows the app the way building every batch as it
    // came did, no more.
    s->graph.build(SIZE_MAX);
  } else {
    wakeBuilder(Work::kLiveBatch);
  }
  return result;
}

void SessionRegistry::close(uint64_t id) {
  Session* s = find(id);
  if (!s) return;
  {
    std::lock_guard lock(s->mutex);
    if (s->recording) (void)s->recording->flush();
    s->recording.reset();
    // The stream's scratch and compression context, kept by an ended
    // session for as long as the daemon runs otherwise.
    std::string().swap(s->wire);  // a move-assigned empty string would keep the buffer
    s->zstd = ZstdFrames();
    if (!s->info.recording.empty()) {
      s->compact_pending = s->stored_frames && builder_.joinable();
      store_.end(s->info.recording);
    }
    s->info.live = false;
  }
  // Frontends read an ended session from its recording: its graph would
  // only hold memory (a daemon outlives many programs). It is freed once it
  // has taken what is still queued: here if nothing is, else by the builder
  // or by the next reader.
  releaseIfDone(*s);
  wakeBuilder(Work::kSessionEnded);
  recordingsRemoved(store_.sweep());
}

void SessionRegistry::releaseIfDone(Session& s) const {
  {
    std::lock_guard lock(s.mutex);
    if (s.info.live || s.released) return;
  }
  if (s.graph.pending()) return;
  SessionGraph::Counts counts;
  {
    // Freeing a big graph is work like building it: idle, on the builder.
    std::optional<IdlePriority::Idle> idle;
    if (builder_priority_.onIdleThread()) idle.emplace(builder_priority_);
    counts = s.graph.release();
  }
  std::lock_guard lock(s.mutex);
  s.released = true;
  takeCounts(s.info, counts);
}

size_t SessionRegistry::heldBytes(uint64_t session) const {
  Session* s = find(session);
  if (!s) return 0;
  size_t stream = 0;
  {
    std::lock_guard lock(s->mutex);
    stream = s->wire.capacity() + s->zstd.contextBytes();
  }
  return stream + s->graph.heldBytes();
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

SessionRegistry::Info SessionRegistry::snapshot(Session& s) const {
  Info info;
  {
    std::lock_guard lock(s.mutex);
    if (s.released) return s.info;
    info = s.info;
  }
  // What is listed is what has arrived: the graph takes its queue first.
  s.graph.look([](const TaskGraph&) {});
  if (!info.live) {
    releaseIfDone(s);
    std::lock_guard lock(s.mutex);
    if (s.released) return s.info;
  }
  takeCounts(info, s.graph.counts());
  return info;
}

std::vector<SessionRegistry::Session*> SessionRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<Session*> sessions;
  sessions.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) sessions.push_back(s.get());
  return sessions;
}

SessionRegistry::Totals SessionRegistry::totals() const {
  Totals t;
  t.sessions_opened = sessions_opened_.load(std::memory_order_relaxed);
  t.batches_received = batches_received_.load(std::memory_order_relaxed);
  t.batches_unrecorded = batches_unrecorded_.load(std::memory_order_relaxed);
  t.batches_refused = batches_refused_.load(std::memory_order_relaxed);
  for (Session* s : all()) {
    {
      std::lock_guard lock(s->mutex);
      if (s->info.live) ++t.sessions_live;
    }
    t.events += s->graph.counts().events;
  }
  return t;
}

std::vector<SessionRegistry::Info> SessionRegistry::list(std::optional<uid_t> only_uid) const {
  std::vector<Info> out;
  for (Session* s : all()) {
    // The owner is set before the session is listed and never changes; a
    // user's listing does not build other users' graphs.
    if (only_uid && s->info.uid != *only_uid) continue;
    out.push_back(snapshot(*s));
  }
  return out;
}

std::optional<SessionRegistry::Info> SessionRegistry::info(uint64_t id) const {
  Session* s = find(id);
  if (!s) return std::nullopt;
  return snapshot(*s);
}

bool SessionRegistry::compactionDue(Session& s) const {
  std::lock_guard lock(s.mutex);
  return s.compact_pending && s.released;
}

void SessionRegistry::compactRecording(Session& s) {
  std::filesystem::path recording;
  {
    std::lock_guard lock(s.mutex);
    s.compact_pending = false;
    recording = s.info.recording;
  }
  if (recording.empty()) return;
  // Not named as a recording, so the store never counts or removes it.
  const std::filesystem::path compacted = recording.parent_path() / (std::string(kCompactingPrefix) +
                                                                     recording.filename().string() +
                                                                     std::string(kCompactingSuffix));
  std::error_code ec;
  std::filesystem::remove(compacted, ec);
  const uint64_t before = std::filesystem::file_size(recording, ec);
  const std::string session = "task session " + std::to_string(s.info.id);
  if (ec) {
    // Gone already, or never readable: nothing to rewrite.
    if (ec != std::errc::no_such_file_or_directory)
      options_.log_warning(session + ": its recording stays uncompressed: cannot read its size: " + ec.message());
    return;
  }
  // The rewrite sits beside the recording until it replaces it: the owner's
  // quota must hold both, or the recording stays as it is.
  switch (store_.reserve(recording, before)) {
    case RecordingStore::Reservation::kReserved:
      break;
    case RecordingStore::Reservation::kNoRoom:
      options_.log_info(session + ": its recording stays uncompressed: no room under the quota to rewrite it");
      return;
    case RecordingStore::Reservation::kGone:
      return;  // removed by the quota meanwhile
  }
  auto done = [&] {
    IdlePriority::Idle idle(builder_priority_);
    return RecordingCompactor::compact(recording, compacted, before);
  }();
  if (!done) {
    store_.resize(recording, before);
    options_.log_warning(session + ": its recording stays uncompressed: " + done.error().message);
  } else if (!store_.replace(recording, compacted, done->bytes, ec)) {
    store_.resize(recording, before);  // nothing when it was removed meanwhile
    if (ec)
      options_.log_warning(session + ": its recording stays uncompressed: cannot replace " + recording.string() +
                           ": " + ec.message());
  } else {
    // Readers that had it open read the old file to its end; new ones the new.
    options_.log_info(session + ": recording compressed from " + std::to_string(before) + " to " +
                      std::to_string(done->bytes) + " bytes");
  }
  recordingsRemoved(store_.sweep());
}

size_t SessionRegistry::pendingBatches(uint64_t id) const {
  Session* s = find(id);
  return s ? s->graph.queuedBatches() : 0;
}

bool SessionRegistry::inspect(uint64_t id, const std::function<void(const TaskGraph&)>& look) const {
  Session* s = find(id);
  if (!s) return false;
  s->graph.look(look);
  return true;
}

}  // namespace nk
