// The streamed exports: TaskRunTracker's runs, windows and flows, written
// as Perfetto protobuf by PerfettoTraceWriter and decoded again with the
// trace proto, as trace_processor would read them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "perfetto/perfetto_trace.pb.h"
#include "taskgraph/export_window.h"
#include "taskgraph/perfetto_trace_writer.h"
#include "taskgraph/task_run_tracker.h"

namespace nk {
namespace {

namespace pp = perfetto::protos;
using T = GraphEvent::Type;

GraphEvent created(uint64_t task, uint64_t parent, const char* function, int64_t at) {
  GraphEvent e;
  e.type = T::kCreated;
  e.task = task;
  e.parent = parent;
  e.function = function;
  e.timestamp_ns = at;
  return e;
}
GraphEvent dependence(uint64_t from, uint64_t to, int64_t at) {
  GraphEvent e;
  e.type = T::kDependence;
  e.from = from;
  e.task = to;
  e.address = 0x1000 + from;
  e.kind = 3;
  e.timestamp_ns = at;
  return e;
}
GraphEvent step(T type, uint64_t task, int64_t at, int32_t thread = -1) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = at;
  e.thread = thread;
  return e;
}

// One slice as trace_processor builds it: a begin matched with the next
// end on its track.
struct Slice {
  uint64_t track = 0;
  std::string name;
  uint64_t task = 0, parent = 0;
  uint64_t start = 0, end = 0;
  bool failed = false, unfinished = false, cut = false;
  std::vector<uint64_t> flows_in, flows_out;
};

struct Decoded {
  std::vector<Slice> slices;                 // in end order
  std::map<uint64_t, std::string> threads;   // track uuid -> thread name
  size_t packets = 0;
  std::vector<std::string> problems;
};

Decoded decode(const std::string& bytes) {
  Decoded d;
  pp::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    d.problems.push_back("does not parse as a Trace");
    return d;
  }
  std::map<uint64_t, std::string> names, annotation_names;
  std::map<uint64_t, std::vector<Slice>> open;
  d.packets = static_cast<size_t>(trace.packet_size());
  for (const pp::TracePacket& p : trace.packet()) {
    if (p.trusted_packet_sequence_id() != 1) d.problems.push_back("a packet off sequence 1");
    for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names()) annotation_names[n.iid()] = n.name();
    if (p.has_track_descriptor()) {
      if (p.track_descriptor().has_thread()) d.threads[p.track_descriptor().uuid()] = p.track_descriptor().thread().thread_name();
      continue;
    }
    if (!p.has_track_event()) continue;
    const pp::TrackEvent& e = p.track_event();
    if (p.sequence_flags() != pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) d.problems.push_back("event without flags");
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      Slice s;
      s.track = e.track_uuid();
      if (!names.count(e.name_iid())) d.problems.push_back("name iid not interned yet");
      s.name = names[e.name_iid()];
      s.start = p.timestamp();
      for (const auto& a : e.debug_annotations()) {
        if (annotation_names[a.name_iid()] == "task") s.task = a.uint_value();
        if (annotation_names[a.name_iid()] == "parent") s.parent = a.uint_value();
      }
      s.flows_in.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
      open[s.track].push_back(s);
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      auto& stack = open[e.track_uuid()];
      if (stack.empty()) {
        d.problems.push_back("an end without a begin");
        continue;
      }
      Slice s = stack.back();
      stack.pop_back();
      s.end = p.timestamp();
      if (s.end < s.start) d.problems.push_back("a slice ends before it starts");
      for (const auto& a : e.debug_annotations()) {
        const std::string& n = annotation_names[a.name_iid()];
        s.failed = s.failed || (n == "failed" && a.bool_value());
        s.unfinished = s.unfinished || (n == "unfinished" && a.bool_value());
        s.cut = s.cut || (n == "cut" && a.bool_value());
      }
      s.flows_out.assign(e.flow_ids().begin(), e.flow_ids().end());
      d.slices.push_back(s);
    }
  }
  for (const auto& [track, stack] : open)
    if (!stack.empty()) d.problems.push_back("a begin without an end");
  return d;
}

const Slice* sliceOf(const Decoded& d, uint64_t task) {
  for (const Slice& s : d.slices)
    if (s.task == task) return &s;
  return nullptr;
}

// Exports `events` (one batch per element) and decodes the result.
Decoded exportEvents(const std::vector<std::vector<GraphEvent>>& batches, ExportWindow window = {},
                     TaskRunTracker::Counts* counts = nullptr) {
  std::ostringstream out;
  PerfettoTraceWriter writer(out, "session 1");
  TaskRunTracker tracker(writer, window);
  for (const auto& batch : batches) tracker.apply(batch);
  tracker.finish();
  if (counts) *counts = tracker.counts();
  EXPECT_EQ(writer.bytesWritten(), out.str().size());
  return decode(out.str());
}

// Thread 0: 1 (outer) 1000-5000 encloses 2 (inner) 2000-3000.
// Thread 1: 3 (no name, failed) 1500-2500, then 5 (inner) from 4000, still
//   running at the end (6000, 4's creation).
// Thread 2: 7 and 8 (lossy) overlap without nesting: 1200-3200, 2200-4200.
// 4 never starts. Dependences 3 -> 2 and 2 -> 5 (predecessors open: flows),
// 1 -> 4 (never runs), 3 -> 5 (3 finished by then: no flow).
std::vector<std::vector<GraphEvent>> nestedSession() {
  return {
      {created(1, 0, "outer", 1000), created(2, 1, "inner", 1010), created(3, 1, "", 1020),
       created(5, 1, "inner", 1030), created(7, 0, "lossy", 1040), created(8, 0, "lossy", 1050),
       dependence(3, 2, 1060), step(T::kStarted, 1, 1000, 0), step(T::kStarted, 7, 1200, 2)},
      {step(T::kStarted, 3, 1500, 1), dependence(2, 5, 1600), step(T::kStarted, 2, 2000, 0),
       step(T::kStarted, 8, 2200, 2), step(T::kFailed, 3, 2500, 1), dependence(3, 5, 2600)},
      {step(T::kFinished, 2, 3000, 0), step(T::kFinished, 7, 3200, 2), step(T::kStarted, 5, 4000, 1),
       step(T::kFinished, 8, 4200, 2), step(T::kFinished, 1, 5000, 0), created(4, 1, "never", 6000),
       dependence(1, 4, 6000)},
  };
}

TEST(PerfettoExportTest, OneSlicePerRunOnItsThreadsTrack) {
  TaskRunTracker::Counts counts;
  Decoded d = exportEvents(nestedSession(), {}, &counts);
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  ASSERT_EQ(d.slices.size(), 6u);
  EXPECT_EQ(counts.runs, 6u);
  EXPECT_EQ(counts.tasks, 7u);
  EXPECT_EQ(counts.dependences, 4u);
  EXPECT_EQ(sliceOf(d, 4), nullptr) << "4 never ran";
  using Expected = std::tuple<uint64_t, std::string, uint64_t, uint64_t, uint64_t>;  // task, name, parent, start, end
  for (auto [task, name, parent, start, end] :
       {Expected{1, "outer", 0, 1000, 5000}, {2, "inner", 1, 2000, 3000}, {3, "task", 1, 1500, 2500},
        {5, "inner", 1, 4000, 6000}, {7, "lossy", 0, 1200, 3200}, {8, "lossy", 0, 2200, 3200}}) {
    const Slice* s = sliceOf(d, task);
    ASSERT_NE(s, nullptr) << task;
    EXPECT_EQ(s->name, name) << task;
    EXPECT_EQ(s->parent, parent) << task;
    EXPECT_EQ(s->start, start) << task;
    EXPECT_EQ(s->end, end) << task;
  }
  EXPECT_EQ(sliceOf(d, 1)->track, sliceOf(d, 2)->track);
  EXPECT_NE(sliceOf(d, 1)->track, sliceOf(d, 3)->track);
  EXPECT_EQ(d.threads.at(sliceOf(d, 3)->track), "thread 1");
  EXPECT_EQ(d.threads.size(), 3u);
  EXPECT_TRUE(sliceOf(d, 3)->failed);
  EXPECT_FALSE(sliceOf(d, 2)->failed);
  EXPECT_TRUE(sliceOf(d, 5)->unfinished);
  EXPECT_FALSE(sliceOf(d, 1)->unfinished);
  EXPECT_TRUE(sliceOf(d, 8)->cut) << "ended with 7, which encloses it on thread 2";
  EXPECT_FALSE(sliceOf(d, 7)->cut);
}

TEST(PerfettoExportTest, FlowsJoinAnOpenPredecessorsEndToItsSuccessorsBegin) {
  Decoded d = exportEvents(nestedSession());
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  // 2 -> 5: 2's end starts the arrow, 5's begin ends it.
  ASSERT_EQ(sliceOf(d, 2)->flows_out.size(), 1u);
  EXPECT_EQ(sliceOf(d, 5)->flows_in, sliceOf(d, 2)->flows_out);
  // 3 -> 5 came after 3 finished: no arrow (that would need finished tasks
  // kept). 3 -> 2: 2 started before 3 ended (reordered data); an arrow
  // would point backwards.
  EXPECT_TRUE(sliceOf(d, 3)->flows_out.empty());
  EXPECT_TRUE(sliceOf(d, 2)->flows_in.empty());
  EXPECT_TRUE(sliceOf(d, 1)->flows_out.empty()) << "1 -> 4: 4 never ran";
  // A chain whose dependences arrive while the predecessor runs: 10 -> 11
  // -> 12, with two addresses between 10 and 11 (one arrow).
  d = exportEvents({{created(10, 0, "a", 100), step(T::kStarted, 10, 110, 0), created(11, 0, "b", 120),
                     dependence(10, 11, 121), dependence(10, 11, 122), created(12, 0, "c", 130),
                     dependence(11, 12, 131)},
                    {step(T::kFinished, 10, 200, 0), step(T::kStarted, 11, 210, 1), step(T::kFinished, 11, 300, 1),
                     step(T::kStarted, 12, 310, 0), step(T::kFinished, 12, 400, 0)}});
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  ASSERT_EQ(sliceOf(d, 10)->flows_out.size(), 1u);
  EXPECT_EQ(sliceOf(d, 11)->flows_in, sliceOf(d, 10)->flows_out);
  ASSERT_EQ(sliceOf(d, 11)->flows_out.size(), 1u);
  EXPECT_EQ(sliceOf(d, 12)->flows_in, sliceOf(d, 11)->flows_out);
  EXPECT_NE(sliceOf(d, 10)->flows_out, sliceOf(d, 11)->flows_out);
}

TEST(PerfettoExportTest, AWindowKeepsTheRunsThatOverlapIt) {
  // Times relative to the session's first event (1000).
  auto window = ExportWindow::parse("1.1us", "1.9us");  // 2100 .. 2900
  ASSERT_TRUE(window.ok()) << window.error().message;
  Decoded d = exportEvents(nestedSession(), *window);
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  std::vector<uint64_t> tasks;
  for (const Slice& s : d.slices) tasks.push_back(s.task);
  std::sort(tasks.begin(), tasks.end());
  // 5 starts at 4000, after the window; every other run overlaps it.
  EXPECT_EQ(tasks, (std::vector<uint64_t>{1, 2, 3, 7, 8}));
  EXPECT_EQ(sliceOf(d, 1)->start, 1000u) << "a run is kept whole, not clipped";
  EXPECT_EQ(sliceOf(d, 1)->end, 5000u);

  auto late = ExportWindow::parse("3.5us", std::nullopt);  // 4500 ..
  ASSERT_TRUE(late.ok());
  d = exportEvents(nestedSession(), *late);
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  tasks.clear();
  for (const Slice& s : d.slices) tasks.push_back(s.task);
  std::sort(tasks.begin(), tasks.end());
  EXPECT_EQ(tasks, (std::vector<uint64_t>{1, 5})) << "1 ends at 5000, 5 is still running";
  EXPECT_TRUE(sliceOf(d, 5)->unfinished);

  auto early = ExportWindow::parse(std::nullopt, "100ns");  // .. 1100
  ASSERT_TRUE(early.ok());
  d = exportEvents(nestedSession(), *early);
  ASSERT_EQ(d.slices.size(), 1u);
  EXPECT_EQ(d.slices[0].task, 1u);
}

// Batches are per app thread: a worker's batch with a task's start and
// finish can come before its creator's batch with the creation. The run is
// still written with its name and parent, and the worker's later runs stay
// in order behind it.
TEST(PerfettoExportTest, AStartBeforeItsCreationWaitsForTheName) {
  Decoded d = exportEvents({
      {created(1, 0, "root", 100), step(T::kStarted, 1, 110, 0)},
      // Worker 1: 2 runs (its creation is in thread 0's next batch), then 3.
      {step(T::kStarted, 2, 200, 1), step(T::kFinished, 2, 250, 1), step(T::kStarted, 3, 260, 1),
       step(T::kFinished, 3, 270, 1)},
      {created(2, 1, "child", 150), created(3, 1, "other", 160), dependence(2, 3, 161),
       step(T::kFinished, 1, 300, 0)},
  });
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  ASSERT_EQ(d.slices.size(), 3u);
  EXPECT_EQ(sliceOf(d, 2)->name, "child");
  EXPECT_EQ(sliceOf(d, 2)->parent, 1u);
  EXPECT_EQ(sliceOf(d, 2)->start, 200u);
  EXPECT_EQ(sliceOf(d, 2)->end, 250u);
  EXPECT_EQ(sliceOf(d, 3)->name, "other");
  EXPECT_EQ(sliceOf(d, 3)->start, 260u);
  // The dependence came after the creation, in the same batch: the held
  // runs wait for the batch's end, so 2's end still has 3 ahead of it.
  ASSERT_EQ(sliceOf(d, 2)->flows_out.size(), 1u);
  EXPECT_EQ(sliceOf(d, 3)->flows_in, sliceOf(d, 2)->flows_out);
  // A creation that never comes: the run is written at the end, unnamed.
  d = exportEvents({{step(T::kStarted, 9, 100, 0), step(T::kFinished, 9, 200, 0)}});
  ASSERT_EQ(d.slices.size(), 1u);
  EXPECT_EQ(d.slices[0].name, "task");
  EXPECT_EQ(d.slices[0].end, 200u);
}

TEST(PerfettoExportTest, MemoryFollowsOpenTasksNotTheSessionsLength) {
  // A chain of 100,000 tasks on two threads, each created just before it
  // runs and depending on the one before.
  std::vector<std::vector<GraphEvent>> batches;
  const char* functions[] = {"even", "odd"};
  for (uint64_t i = 1; i <= 100'000; ++i) {
    if (batches.empty() || batches.back().size() >= 512) batches.emplace_back();
    auto& b = batches.back();
    const int64_t t = static_cast<int64_t>(i) * 100;
    b.push_back(created(i, 0, functions[i % 2], t));
    if (i > 1) b.push_back(dependence(i - 1, i, t + 1));
    b.push_back(step(T::kStarted, i, t + 10, static_cast<int32_t>(i % 2)));
    b.push_back(step(T::kFinished, i, t + 90, -1));
  }
  TaskRunTracker::Counts counts;
  std::ostringstream out;
  PerfettoTraceWriter writer(out, "chain");
  TaskRunTracker tracker(writer);
  for (const auto& b : batches) tracker.apply(b);
  tracker.finish();
  counts = tracker.counts();
  EXPECT_EQ(counts.runs, 100'000u);
  EXPECT_LE(counts.peak_open, 2u);
  EXPECT_LT(out.str().size(), 100'000u * 80) << "interned names: a run costs tens of bytes";
  Decoded d = decode(out.str());
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  EXPECT_EQ(d.slices.size(), 100'000u);
}

TEST(ExportWindowTest, ParsesUnitsAndRefusesNonsense) {
  EXPECT_EQ(*ExportWindow::parseTime("1.5s"), 1'500'000'000);
  EXPECT_EQ(*ExportWindow::parseTime("250ms"), 250'000'000);
  EXPECT_EQ(*ExportWindow::parseTime("40us"), 40'000);
  EXPECT_EQ(*ExportWindow::parseTime("900ns"), 900);
  EXPECT_EQ(*ExportWindow::parseTime("0"), 0);
  for (const char* bad : {"", "s", "12", "-1s", "1.5", "1h", "1e3s", "1..2s", "99999999999s", "1 s"}) {
    auto r = ExportWindow::parseTime(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("'" + std::string(bad) + "'"), std::string::npos);
    }
  }
  auto reversed = ExportWindow::parse("2s", "1s");
  ASSERT_FALSE(reversed.ok());
  EXPECT_NE(reversed.error().message.find("after --to"), std::string::npos);
  auto bad_to = ExportWindow::parse("1s", "soon");
  ASSERT_FALSE(bad_to.ok());
  EXPECT_EQ(bad_to.error().message.rfind("--to: ", 0), 0u);
}

}  // namespace
}  // namespace nk
