#include "tasks/session_registry.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "graph_event_batch.h"
#include "taskgraph/function_name_limits.h"
#include "taskgraph/recording_format.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/zstd_frames.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

namespace fs = std::filesystem;

class SessionRegistryTest : public ::testing::Test {
 protected:
  static std::vector<GraphEvent> twoTasks(uint64_t first) {
    GraphEvent a, b, edge;
    a.task = first;
    a.function = "f";
    b.task = first + 1;
    b.function = "f";
    edge.type = GraphEvent::Type::kDependence;
    edge.from = first;
    edge.task = first + 1;
    edge.address = 0x40;
    return {a, b, edge};
  }
  // Twenty batches of 100 task pairs each; `sent` gets them as serialized.
  static void appendBatches(SessionRegistry& registry, uint64_t id, std::vector<std::string>& sent) {
    for (uint64_t batch = 0; batch < 20; ++batch) {
      std::vector<GraphEvent> events;
      for (uint64_t t = 1; t < 200; t += 2) {
        auto pair = twoTasks(batch * 1000 + t);
        events.insert(events.end(), pair.begin(), pair.end());
      }
      auto wire = test::batchOf(events);
      sent.push_back(wire.SerializeAsString());
      ASSERT_TRUE(registry.append(id, wire).ok());
    }
  }

  // Lines the registry logs, from its builder thread too.
  class LoggedLines {
   public:
    std::function<void(const std::string&)> sink() {
      return [this](const std::string& line) {
        std::lock_guard lock(mutex_);
        lines_.push_back(line);
      };
    }
    bool said(const std::string& what) const {
      std::lock_guard lock(mutex_);
      return std::any_of(lines_.begin(), lines_.end(),
                         [&](const std::string& line) { return line.find(what) != std::string::npos; });
    }

   private:
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
  };

  test::TempDir dir_{"sessions-test"};
  LoggedLines logged_;
};

TEST_F(SessionRegistryTest, AnEndedSessionKeepsItsCountsAndRecordingButNotItsGraph) {
  SessionRegistry registry(dir_ / "recordings");
  auto id = registry.open(42, 1000, "prog --flag");
  ASSERT_TRUE(id.ok());
  const std::string frame = test::batchOf(twoTasks(1)).SerializeAsString();
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(3))).ok());
  auto live = registry.info(*id);
  ASSERT_TRUE(live);
  EXPECT_TRUE(live->live);
  EXPECT_EQ(live->tasks, 4u);
  EXPECT_EQ(live->edges, 2u);
  EXPECT_EQ(live->events, 6u);

  registry.close(*id);
  auto ended = registry.info(*id);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->live);
  EXPECT_EQ(ended->tasks, 4u);
  EXPECT_EQ(ended->edges, 2u);
  EXPECT_EQ(ended->recording.filename(), "session-1-pid42-uid1000.nkrec");
  EXPECT_EQ(ended->recording_stopped, "");
  auto reader = RecordingReader::open(ended->recording);
  ASSERT_TRUE(reader.ok());
  int frames = 0;
  while (auto payload = reader->next()) {
    EXPECT_EQ(payload->size(), frame.size());
    ++frames;
  }
  EXPECT_EQ(frames, 2);
  EXPECT_FALSE(registry.append(999, test::batchOf(twoTasks(5))).ok());
}

// An ended session gives back what its stream and graph used: a daemon
// outlives many programs. What it keeps is its Info.
TEST_F(SessionRegistryTest, AnEndedSessionHoldsNoMoreThanANewOne) {
  SessionRegistry registry(dir_ / "recordings");
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  std::vector<std::string> sent;
  appendBatches(registry, *id, sent);
  auto fresh = registry.open(43, 1000, "prog");
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(registry.inspect(*id, [](const TaskGraph&) {}));
  EXPECT_GT(registry.heldBytes(*id), registry.heldBytes(*fresh) + sent.back().size());
  registry.close(*id);
  auto ended = registry.info(*id);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->live);
  EXPECT_EQ(ended->tasks, 4000u);
  EXPECT_LE(registry.heldBytes(*id), registry.heldBytes(*fresh));
}

// Each session's graph keeps Options::graph_max_tasks tasks; what the
// session reports counts every task and edge, those dropped too.
TEST_F(SessionRegistryTest, ASessionsGraphKeepsItsWindowAndItsInfoCountsEverything) {
  SessionRegistry::Options options;
  options.graph_max_tasks = 100;
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  for (uint64_t first = 1; first < 2000; first += 2) {
    std::vector<GraphEvent> events = twoTasks(first);
    for (uint64_t task : {first, first + 1}) {
      GraphEvent done;
      done.type = GraphEvent::Type::kFinished;
      done.task = task;
      events.push_back(done);
    }
    ASSERT_TRUE(registry.append(*id, test::batchOf(events)).ok());
  }
  size_t held = 0;
  ASSERT_TRUE(registry.inspect(*id, [&](const TaskGraph& graph) { held = graph.tasks().size(); }));
  EXPECT_LE(held, 100u);
  auto live = registry.info(*id);
  ASSERT_TRUE(live);
  EXPECT_EQ(live->tasks, 2000u);
  EXPECT_EQ(live->edges, 1000u);
  EXPECT_EQ(live->by_state[static_cast<size_t>(TaskState::kFinished)], 2000u);
  registry.close(*id);
  EXPECT_EQ(registry.info(*id)->tasks, 2000u);
  EXPECT_EQ(registry.info(*id)->edges, 1000u);
}

// Tasks that never finish are held up to four windows; the session says
// so, live and ended, and still counts every task.
TEST_F(SessionRegistryTest, ASessionWhoseTasksNeverFinishSaysItsGraphStoppedHoldingThem) {
  SessionRegistry::Options options;
  options.graph_max_tasks = 100;
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  for (uint64_t first = 1; first < 1000; first += 2)
    ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(first))).ok());
  size_t held = 0;
  ASSERT_TRUE(registry.inspect(*id, [&](const TaskGraph& graph) { held = graph.tasks().size(); }));
  EXPECT_EQ(held, 400u);
  auto live = registry.info(*id);
  ASSERT_TRUE(live);
  EXPECT_EQ(live->tasks, 1000u);
  const std::string said =
      "holds 400 unfinished tasks at the most (4 times task_graph_tasks): the 600 tasks created since (and 300 "
      "dependences on them) are in the recording only";
  EXPECT_EQ(live->graph_limited, said);
  registry.close(*id);
  EXPECT_EQ(registry.info(*id)->graph_limited, said);
  EXPECT_EQ(registry.info(*id)->tasks, 1000u);
}

// Names past FunctionNameLimits are said too: those a stream left unnamed,
// and the tasks a graph counted under one entry.
TEST_F(SessionRegistryTest, ASessionSaysWhichFunctionNamesItsGraphDidNotKeep) {
  SessionRegistry registry(dir_ / "recordings");
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  constexpr size_t kPerBatch = 8192;
  const size_t names = FunctionNameLimits::kMaxNames + 10;
  for (size_t first = 1; first <= names; first += kPerBatch)
    ASSERT_TRUE(registry.append(*id, test::namesAndCreations(first, std::min(kPerBatch, names + 1 - first), 0)).ok());
  // The stream kept 65,536 names, and so does the graph: five more, named
  // in the task events themselves, are counted together.
  const std::vector<std::string> others = {"g1", "g2", "g3", "g4", "g5"};  // GraphEvent views them
  std::vector<GraphEvent> more;
  for (const std::string& name : others) {
    GraphEvent e;
    e.task = 1000000 + more.size() + 1;
    e.function = name;
    more.push_back(e);
  }
  ASSERT_TRUE(registry.append(*id, test::batchOf(more)).ok());
  const std::string said = "left 10 function names unnamed, past the 65536 names or 4 MiB of names a stream may keep "
                           "(their tasks show no function); counts 5 tasks of functions past the first 65536 under \"" +
                           std::string(TaskGraph::kOtherFunctions) + "\"";
  auto live = registry.info(*id);
  ASSERT_TRUE(live);
  EXPECT_EQ(live->tasks, names + 5);
  EXPECT_EQ(live->graph_limited, said);
  registry.close(*id);
  EXPECT_EQ(registry.info(*id)->graph_limited, said);
}

TEST_F(SessionRegistryTest, UsersSeeTheirOwnSessions) {
  SessionRegistry registry(dir_ / "recordings");
  ASSERT_TRUE(registry.open(1, 1000, "a").ok());
  ASSERT_TRUE(registry.open(2, 1001, "b").ok());
  ASSERT_TRUE(registry.open(3, 1000, "c").ok());
  EXPECT_EQ(registry.list().size(), 3u);
  auto mine = registry.list(1000);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].program, "a");
  EXPECT_EQ(mine[1].program, "c");
}

// A registry with small limits, a clock the test moves and the lines it logs.
class QuotaTest : public SessionRegistryTest {
 protected:
  SessionRegistry::Options options(uint64_t per_user, uint64_t total) {
    SessionRegistry::Options o;
    o.limits = {per_user, total, std::chrono::hours(24)};
    o.clock = [this] { return now_; };
    o.log_info = [this](const std::string& line) { infos_.push_back(line); };
    o.log_warning = [this](const std::string& line) { warnings_.push_back(line); };
    // No builder: frames are compressed as they come, so their sizes are
    // known here and an ended recording ends at once (with a builder it
    // counts as live until its compaction, which the builder does when it
    // gets to it).
    o.build_in_background = false;
    return o;
  }
  static uint64_t directoryBytes(const fs::path& dir) {
    uint64_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(dir)) bytes += entry.file_size();
    return bytes;
  }

  RecordingStore::Clock::time_point now_ = RecordingStore::Clock::now();
  std::vector<std::string> infos_, warnings_;
  // What a batch of twoTasks takes in a recording, compressed, with its
  // frame header: the quotas count that. (Task ids below 64 are one byte
  // each, so every such batch takes the same.)
  const uint64_t frame_bytes_ = [] {
    const std::string wire = test::batchOf(twoTasks(1)).SerializeAsString();
    std::vector<std::byte> compressed;
    ZstdFrames().compress(std::as_bytes(std::span(wire.data(), wire.size())), compressed);
    return kFrameHeaderSize + compressed.size();
  }();
};

TEST_F(QuotaTest, ALiveSessionAtItsQuotaStopsRecordingAndItsGraphGoesOn) {
  const uint64_t quota = 16 + 3 * frame_bytes_ + frame_bytes_ / 2;
  SessionRegistry registry(dir_ / "recordings", options(quota, 1 << 20));
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1 + 2 * i))).ok()) << i;
  auto info = registry.info(*id);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->live);
  EXPECT_EQ(info->tasks, 20u);  // the graph took every batch
  EXPECT_EQ(info->recording_stopped,
            "stopped: uid 1000's live recordings reached their quota of " + std::to_string(quota) + " bytes");
  ASSERT_EQ(warnings_.size(), 1u);  // once, not per batch
  EXPECT_NE(warnings_[0].find("task session 1 (pid 42, uid 1000) stopped recording"), std::string::npos)
      << warnings_[0];
  // What was recorded before stays whole and readable.
  EXPECT_EQ(fs::file_size(info->recording), 16u + 3 * frame_bytes_);
  auto reader = RecordingReader::open(info->recording);
  ASSERT_TRUE(reader.ok());
  int frames = 0;
  while (reader->next()) ++frames;
  EXPECT_EQ(frames, 3);
  EXPECT_EQ(reader->stopReason(), "");
  registry.close(*id);
  EXPECT_EQ(registry.info(*id)->recording_stopped, info->recording_stopped);
}

TEST_F(QuotaTest, TotalsCountSessionsBatchesThoseUnrecordedAndRefusedAndEventsTaken) {
  const uint64_t quota = 16 + 3 * frame_bytes_ + frame_bytes_ / 2;
  SessionRegistry registry(dir_ / "recordings", options(quota, 1 << 20));
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1 + 2 * i))).ok()) << i;
  registry.noteRefusedBatch();
  EXPECT_FALSE(registry.append(*id + 100, test::batchOf(twoTasks(1))).ok());  // no such session: not a batch of one
  auto totals = registry.totals();
  EXPECT_EQ(totals.sessions_opened, 1u);
  EXPECT_EQ(totals.sessions_live, 1u);
  EXPECT_EQ(totals.batches_received, 10u);
  EXPECT_EQ(totals.batches_unrecorded, 7u);  // three fit the quota
  EXPECT_EQ(totals.batches_refused, 1u);
  EXPECT_EQ(totals.events, 0u);  // nothing built yet: totals() builds nothing
  (void)registry.info(*id);      // looking builds the graph
  EXPECT_EQ(registry.totals().events, 30u);
  registry.close(*id);
  totals = registry.totals();
  EXPECT_EQ(totals.sessions_live, 0u);
  EXPECT_EQ(totals.events, 30u);
}

TEST_F(QuotaTest, OldestEndedRecordingsMakeRoomAndTheirSessionsSaySo) {
  const uint64_t quota = 2 * (16 + 3 * frame_bytes_);
  SessionRegistry registry(dir_ / "recordings", options(quota, 1 << 20));
  std::vector<uint64_t> ids;
  for (int run = 0; run < 5; ++run) {
    auto id = registry.open(100 + run, 1000, "prog");
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1 + 2 * i))).ok());
    EXPECT_LE(directoryBytes(dir_ / "recordings"), quota) << run;
    registry.close(*id);
    now_ += std::chrono::seconds(1);
  }
  // Room for two: the three oldest went, the newest two are whole.
  for (int run = 0; run < 5; ++run) {
    auto info = registry.info(ids[run]);
    ASSERT_TRUE(info);
    if (run < 3) {
      EXPECT_TRUE(info->recording.empty()) << run;
      EXPECT_EQ(info->recording_stopped,
                "removed: uid 1000's recordings over their quota of " + std::to_string(quota) + " bytes")
          << run;
    } else {
      EXPECT_EQ(fs::file_size(info->recording), 16u + 3 * frame_bytes_) << run;
      EXPECT_EQ(info->recording_stopped, "") << run;
    }
  }
  EXPECT_TRUE(warnings_.empty());
  ASSERT_FALSE(infos_.empty());
  EXPECT_NE(infos_[0].find("removed 1 ended task recording (" + std::to_string(16 + 3 * frame_bytes_) + " bytes)"),
            std::string::npos)
      << infos_[0];
  // Another user's recordings are not theirs to spend.
  auto other = registry.open(7, 1001, "other");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(registry.info(*other)->recording.empty());
  EXPECT_FALSE(registry.info(ids[4])->recording.empty());
}

TEST_F(QuotaTest, EndedRecordingsPastTheirAgeGoAtTheNextSweep) {
  SessionRegistry registry(dir_ / "recordings", options(1 << 20, 1 << 20));
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  registry.close(*id);
  fs::path file = registry.info(*id)->recording;
  registry.sweepIfDue();
  EXPECT_TRUE(fs::exists(file));
  now_ += std::chrono::hours(25);
  registry.sweepIfDue();
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(registry.info(*id)->recording_stopped, "removed: ended more than 1 day ago");
  // A new registry (the daemon restarted) goes on from the last session id.
  auto kept = registry.open(43, 1000, "prog");
  ASSERT_TRUE(kept.ok());
  registry.close(*kept);
  SessionRegistry restarted(dir_ / "recordings", options(1 << 20, 1 << 20));
  auto next = restarted.open(44, 1000, "prog");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, *kept + 1);
}

TEST_F(QuotaTest, ASessionOpenedOverTheQuotaRunsUnrecorded) {
  // Room for the first recording and its batch, not for a second header.
  const uint64_t quota = 16 + frame_bytes_ + 10;
  SessionRegistry registry(dir_ / "recordings", options(quota, 1 << 20));
  auto first = registry.open(42, 1000, "prog");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(registry.append(*first, test::batchOf(twoTasks(1))).ok());
  auto second = registry.open(43, 1000, "prog");  // the first is live: nothing to remove
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(registry.append(*second, test::batchOf(twoTasks(1))).ok());
  auto info = registry.info(*second);
  EXPECT_TRUE(info->recording.empty());
  EXPECT_EQ(info->tasks, 2u);
  EXPECT_EQ(info->recording_stopped,
            "not recorded: uid 1000's live recordings reached their quota of " + std::to_string(quota) + " bytes");
}

}  // namespace
}  // namespace nk

namespace nk {
namespace {

// Batches are recorded at once and reach the graph later; whoever looks
// sees every batch received.
TEST_F(SessionRegistryTest, TheGraphTakesItsQueuedBatchesWhenLookedAt) {
  SessionRegistry::Options options;
  options.build_in_background = false;
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  for (uint64_t first = 1; first < 20; first += 2)
    ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(first))).ok());
  // Read back from the recording: none of them held in memory.
  EXPECT_EQ(registry.pendingBatches(*id), 10u);
  EXPECT_EQ(registry.pendingBytes(), 0u);
  size_t tasks = 0;
  ASSERT_TRUE(registry.inspect(*id, [&](const TaskGraph& graph) { tasks = graph.tasks().size(); }));
  EXPECT_EQ(tasks, 20u);
  EXPECT_EQ(registry.pendingBatches(*id), 0u);

  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(21))).ok());
  auto info = registry.info(*id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->tasks, 22u);
  EXPECT_EQ(info->edges, 11u);
  EXPECT_EQ(info->events, 33u);
}

TEST_F(SessionRegistryTest, AnEndedSessionKeepsTheCountsOfBatchesStillQueuedWhenItEnded) {
  SessionRegistry::Options options;
  options.build_in_background = false;
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(3))).ok());
  registry.close(*id);
  auto ended = registry.info(*id);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->live);
  EXPECT_EQ(ended->tasks, 4u);
  EXPECT_EQ(ended->events, 6u);
  EXPECT_EQ(registry.pendingBytes(), 0u);
  size_t tasks = 1;
  ASSERT_TRUE(registry.inspect(*id, [&](const TaskGraph& graph) { tasks = graph.tasks().size(); }));
  EXPECT_EQ(tasks, 0u);  // freed
}

// A session not recorded keeps its batches in memory until its graph takes
// them; a builder that gets no time cannot make the daemon hold them all:
// past the bound the stream builds its own graph.
TEST_F(SessionRegistryTest, PastThePendingBoundTheStreamBuildsItsOwnGraph) {
  for (uint64_t bound : {uint64_t{1} << 20, uint64_t{1}}) {
    SessionRegistry::Options options;
    options.build_in_background = false;
    options.limits = {1, 1, std::chrono::hours(24)};  // nothing is recorded
    options.max_pending_bytes = bound;
    SessionRegistry registry(dir_ / ("recordings" + std::to_string(bound)), options);
    auto id = registry.open(42, 1000, "prog");
    ASSERT_TRUE(id.ok());
    ASSERT_EQ(registry.info(*id)->recording, fs::path());
    ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
    if (bound == 1) {
      EXPECT_EQ(registry.pendingBatches(*id), 0u);
      EXPECT_EQ(registry.pendingBytes(), 0u);
    } else {
      EXPECT_EQ(registry.pendingBatches(*id), 1u);
      EXPECT_GT(registry.pendingBytes(), 0u);
    }
    EXPECT_EQ(registry.info(*id)->tasks, 2u);
  }
}

TEST_F(SessionRegistryTest, TheBuilderThreadBuildsWithNobodyLooking) {
  SessionRegistry registry(dir_ / "recordings");
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  for (int i = 0; i < 3000 && registry.pendingBatches(*id) > 0; ++i) usleep(10'000);
  EXPECT_EQ(registry.pendingBatches(*id), 0u);
}

// A host whose CPUs are all busy (a program spinning on every core): the
// builder leaves live graphs to readers and to the session's end.
TEST_F(SessionRegistryTest, OnABusyHostTheBuilderWaitsForTheSessionsEnd) {
  std::atomic<bool> busy{true};
  std::atomic<int> asked{0};
  SessionRegistry::Options options;
  options.host_cpu_use = [&]() -> std::optional<SpareCpuWatch::Sample> {
    ++asked;
    return SpareCpuWatch::Sample{.cpus = 2, .busy_cpus = busy ? 2.0 : 0.2};
  };
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  // Several samples, each of them busy: the batch is still waiting.
  for (int i = 0; i < 3000 && asked < 4; ++i) usleep(10'000);
  ASSERT_GE(asked.load(), 4);
  EXPECT_EQ(registry.pendingBatches(*id), 1u);
  // A reader is not kept waiting: it builds what it looks at.
  EXPECT_EQ(registry.info(*id)->tasks, 2u);

  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(3))).ok());
  registry.close(*id);
  for (int i = 0; i < 3000 && registry.pendingBatches(*id) > 0; ++i) usleep(10'000);
  EXPECT_EQ(registry.pendingBatches(*id), 0u);
  EXPECT_EQ(registry.info(*id)->tasks, 4u);
}

// What it put off, it looks at again once an interval (250 ms): a batch of
// a live session on a busy host does not wake it, an ended session does.
TEST_F(SessionRegistryTest, OnABusyHostBatchesDoNotWakeTheBuilder) {
  std::atomic<int> asked{0};
  SessionRegistry::Options options;
  options.host_cpu_use = [&]() -> std::optional<SpareCpuWatch::Sample> {
    ++asked;
    return SpareCpuWatch::Sample{.cpus = 2, .busy_cpus = 2.0};
  };
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  for (int i = 0; i < 3000 && asked < 3; ++i) usleep(10'000);
  ASSERT_GE(asked.load(), 3);  // it has put the session off
  const uint64_t passes_before = registry.builderPasses();
  const auto started = std::chrono::steady_clock::now();
  constexpr int kBatches = 400;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(3 + 2 * static_cast<uint64_t>(i)))).ok());
    usleep(1'000);  // as a stream's batches come, some ms apart
  }
  const auto intervals = (std::chrono::steady_clock::now() - started) / std::chrono::milliseconds(250);
  // Its own looks, one an interval, and one a batch would be 400.
  EXPECT_LE(registry.builderPasses() - passes_before, static_cast<uint64_t>(intervals) + 2);
  EXPECT_EQ(registry.pendingBatches(*id), static_cast<size_t>(kBatches) + 1);

  registry.close(*id);
  for (int i = 0; i < 3000 && registry.pendingBatches(*id) > 0; ++i) usleep(10'000);
  EXPECT_EQ(registry.pendingBatches(*id), 0u);
  EXPECT_EQ(registry.info(*id)->tasks, 2u * (kBatches + 1));
}

// The host's first answer once a live session waits covers the time before
// it (here: an idle host; in life, the second before a program started):
// the builder waits for an interval of the program's own before it builds.
TEST_F(SessionRegistryTest, TheBuilderDoesNotJudgeAProgramByTheIdleTimeBeforeIt) {
  std::atomic<int> asked{0};
  SessionRegistry::Options options;
  options.host_cpu_use = [&]() -> std::optional<SpareCpuWatch::Sample> {
    const bool first = asked++ == 0;
    return SpareCpuWatch::Sample{.cpus = 2, .busy_cpus = first ? 0.0 : 2.0};
  };
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  for (int i = 0; i < 3000 && asked < 3; ++i) usleep(10'000);
  ASSERT_GE(asked.load(), 3);
  EXPECT_EQ(registry.pendingBatches(*id), 1u);
  registry.close(*id);
  for (int i = 0; i < 3000 && registry.pendingBatches(*id) > 0; ++i) usleep(10'000);
  EXPECT_EQ(registry.info(*id)->tasks, 2u);
}

TEST_F(SessionRegistryTest, WithCpuToSpareTheBuilderTakesLiveSessions) {
  SessionRegistry::Options options;
  options.host_cpu_use = []() -> std::optional<SpareCpuWatch::Sample> {
    return SpareCpuWatch::Sample{.cpus = 2, .busy_cpus = 1.0};
  };
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(registry.append(*id, test::batchOf(twoTasks(1))).ok());
  for (int i = 0; i < 3000 && registry.pendingBatches(*id) > 0; ++i) usleep(10'000);
  EXPECT_EQ(registry.pendingBatches(*id), 0u);
}

}  // namespace
}  // namespace nk

namespace nk {
namespace {

// Frames are stored while the program runs; once it is gone the builder
// compresses the recording, and it reads the same.
TEST_F(SessionRegistryTest, StoredFramesAreCompressedOnceTheSessionEnds) {
  SessionRegistry::Options options;
  options.log_info = logged_.sink();
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  std::vector<std::string> sent;
  appendBatches(registry, *id, sent);
  const fs::path recording = registry.info(*id)->recording;
  const uint64_t stored = fs::file_size(recording);
  registry.close(*id);
  for (int i = 0; i < 3000 && !logged_.said("recording compressed"); ++i) usleep(10'000);
  ASSERT_TRUE(logged_.said("recording compressed"));
  EXPECT_LT(fs::file_size(recording) * 2, stored);
  auto reader = RecordingReader::open(recording);
  ASSERT_TRUE(reader.ok());
  size_t frames = 0;
  while (auto payload = reader->next()) {
    ASSERT_LT(frames, sent.size());
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(payload->data()), payload->size()), sent[frames]);
    ++frames;
  }
  EXPECT_EQ(frames, sent.size());
  EXPECT_EQ(registry.info(*id)->tasks, 20u * 200u);
  for (const auto& entry : fs::directory_iterator(recording.parent_path()))
    EXPECT_EQ(entry.path().filename().string().rfind(".compacting-", 0), std::string::npos) << entry.path();
}

// The rewrite sits beside the recording until it replaces it; where the
// owner's quota cannot hold both, the recording stays as stored, whole, and
// the directory never holds more than the quota.
TEST_F(SessionRegistryTest, NoRoomUnderTheQuotaLeavesTheRecordingStored) {
  uint64_t stored = 0;
  {
    SessionRegistry probe(dir_ / "probe", SessionRegistry::Options{});
    auto id = probe.open(41, 1000, "prog");
    ASSERT_TRUE(id.ok());
    std::vector<std::string> ignored;
    appendBatches(probe, *id, ignored);
    stored = fs::file_size(probe.info(*id)->recording);
  }
  SessionRegistry::Options options;
  options.limits.per_user_bytes = stored + stored / 2;
  options.log_info = logged_.sink();
  SessionRegistry registry(dir_ / "recordings", options);
  auto id = registry.open(42, 1000, "prog");
  ASSERT_TRUE(id.ok());
  std::vector<std::string> sent;
  appendBatches(registry, *id, sent);
  const fs::path recording = registry.info(*id)->recording;
  ASSERT_EQ(fs::file_size(recording), stored);
  registry.close(*id);
  auto said = [&](const std::string& what) { return logged_.said(what); };
  for (int i = 0; i < 2000 && !said("stays uncompressed") && !said("recording compressed"); ++i) usleep(10'000);
  EXPECT_TRUE(
      said("its recording stays uncompressed: no room under the quota "
           "to rewrite it"));
  EXPECT_FALSE(said("recording compressed"));
  EXPECT_EQ(fs::file_size(recording), stored);
  auto reader = RecordingReader::open(recording);
  ASSERT_TRUE(reader.ok());
  size_t frames = 0;
  while (reader->next()) ++frames;
  EXPECT_EQ(frames, sent.size());
  for (const auto& entry : fs::directory_iterator(recording.parent_path()))
    EXPECT_EQ(entry.path().filename().string().rfind(".compacting-", 0), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace nk
