// `nodekeeper export` of real OpenMP task programs (clang, libomp) recorded
// by a real daemon: the Perfetto protobuf trace decoded with the trace
// proto holds exactly one slice per task run, matched against the
// recording read independently (TaskGraph from its file), from the file
// and through the daemon, whole and in a --from/--to window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "perfetto/perfetto_trace.pb.h"
#include "task_daemon_fixture.h"
#include "taskgraph/perfetto_trace_writer.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/task_event_translator.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"

namespace pp = perfetto::protos;

namespace nk::test {
namespace {

struct Slice {
  uint64_t track = 0, task = 0, start = 0, end = 0;
  std::string name;
  bool unfinished = false, cut = false;
};

struct Trace {
  std::vector<Slice> slices;
  std::set<uint64_t> flows_begun, flows_ended;
  std::string problem;  // empty: well formed
};

Trace decode(const std::filesystem::path& file) {
  Trace t;
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  pp::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    t.problem = "does not parse as a perfetto.protos.Trace";
    return t;
  }
  std::map<uint64_t, std::string> names, annotations;
  std::map<uint64_t, std::vector<Slice>> open;
  for (const pp::TracePacket& p : trace.packet()) {
    for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names()) annotations[n.iid()] = n.name();
    if (!p.has_track_event()) continue;
    const pp::TrackEvent& e = p.track_event();
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      Slice s;
      s.track = e.track_uuid();
      s.start = p.timestamp();
      s.name = names.at(e.name_iid());
      for (const auto& a : e.debug_annotations())
        if (annotations[a.name_iid()] == "task") s.task = a.uint_value();
      t.flows_ended.insert(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
      open[s.track].push_back(s);
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      auto& stack = open[e.track_uuid()];
      if (stack.empty()) {
        t.problem = "a SLICE_END without its SLICE_BEGIN";
        return t;
      }
      Slice s = stack.back();
      stack.pop_back();
      s.end = p.timestamp();
      for (const auto& a : e.debug_annotations()) {
        s.unfinished = s.unfinished || annotations[a.name_iid()] == "unfinished";
        s.cut = s.cut || annotations[a.name_iid()] == "cut";
      }
      t.flows_begun.insert(e.flow_ids().begin(), e.flow_ids().end());
      t.slices.push_back(s);
    }
  }
  for (const auto& [track, stack] : open)
    if (!stack.empty()) t.problem = "a SLICE_BEGIN without its SLICE_END";
  return t;
}

class TaskExportTest : public TaskDaemonFixture {
 protected:
  TaskExportTest() : TaskDaemonFixture("task-export") {}

  ProcessResult runTasks(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                                     "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=lossless",
                                     "OMP_NUM_THREADS=4", envOr("NK_TASKS_PROGRAM")};
    argv.insert(argv.end(), args.begin(), args.end());
    return runProgram(argv, std::nullopt, std::chrono::seconds(60));
  }
  ProcessResult exportTo(const std::string& session, const std::filesystem::path& out,
                         const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {cliPath(), "--socket", daemon_.socket().string(), "export", session, "--out",
                                     out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runProgram(argv);
  }
  // The session's first timestamp as the export counts it: the earliest of
  // the recording's first frame, read here on its own.
  int64_t sessionStart() {
    auto reader = RecordingReader::open(recordings().at(0));
    EXPECT_TRUE(reader.ok());
    auto payload = reader->next();
    EXPECT_TRUE(payload.has_value());
    nodekeeper::v1::TaskEventBatch batch;
    EXPECT_TRUE(batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())));
    std::vector<GraphEvent> events;
    TaskEventTranslator translator;
    EXPECT_EQ(translator.toGraphEvents(batch, events), "");
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const GraphEvent& e : events) first = std::min(first, e.timestamp_ns);
    return first;
  }
};

// Every task of the recording that ran, as one slice: its thread's track,
// its function's name, its start and end.
void expectOneSlicePerRun(const TaskGraph& graph, const Trace& trace) {
  ASSERT_EQ(trace.problem, "");
  std::map<uint64_t, int> per_task;
  for (const Slice& s : trace.slices) ++per_task[s.task];
  size_t ran = 0;
  for (const TaskGraph::Task& t : graph.tasks()) {
    if (t.started_ns == 0) {
      EXPECT_EQ(per_task.count(t.id), 0u) << t.id << " never ran";
      continue;
    }
    ++ran;
    EXPECT_EQ(per_task[t.id], 1) << "task " << t.id;
  }
  EXPECT_EQ(trace.slices.size(), ran);
  std::map<uint64_t, const Slice*> by_task;
  for (const Slice& s : trace.slices) by_task[s.task] = &s;
  for (const TaskGraph::Task& t : graph.tasks()) {
    if (t.started_ns == 0 || !by_task.count(t.id)) continue;
    const Slice& s = *by_task[t.id];
    EXPECT_EQ(s.track, PerfettoTraceWriter::threadTrack(t.thread)) << t.id;
    EXPECT_EQ(s.name, graph.functions()[t.function].empty() ? "task" : graph.functions()[t.function]) << t.id;
    EXPECT_EQ(s.start, static_cast<uint64_t>(t.started_ns)) << t.id;
    EXPECT_FALSE(s.unfinished) << t.id;  // the program ran to its end
    if (!s.cut) {
      EXPECT_EQ(s.end, static_cast<uint64_t>(t.finished_ns)) << t.id;
    }
  }
}

TEST_F(TaskExportTest, PerfettoTraceHasOneSlicePerTaskRunFromTheFileAndTheDaemon) {
  ProcessResult run = runTasks({"fib", "14"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const TaskGraph graph = graphFromRecording();
  ASSERT_GT(graph.tasks().size(), 500u);

  const auto from_file = dir_ / "file.pftrace";
  ProcessResult exported = exportTo(recordings().at(0).string(), from_file);  // perfetto is the default
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.err.find(std::to_string(graph.tasks().size()) + " tasks"), std::string::npos) << exported.err;
  expectOneSlicePerRun(graph, decode(from_file));

  const auto from_daemon = dir_ / "daemon.pftrace";
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  exported = exportTo(std::to_string(list[0].session_id()), from_daemon, {"--format", "perfetto"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  expectOneSlicePerRun(graph, decode(from_daemon));

  // OTF2, streamed the same way: an Enter and a Leave per run.
  const auto archive = dir_ / "otf2";
  exported = exportTo(recordings().at(0).string(), archive, {"--format", "otf2"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  ProcessResult print = runProgram({"/usr/bin/otf2-print", (archive / "traces.otf2").string()});
  ASSERT_EQ(print.exit_code, 0) << print.err;
  size_t enters = 0, leaves = 0, ran = 0;
  std::istringstream lines(print.out);
  for (std::string line; std::getline(lines, line);) {
    enters += line.rfind("ENTER", 0) == 0;
    leaves += line.rfind("LEAVE", 0) == 0;
  }
  for (const TaskGraph::Task& t : graph.tasks()) ran += t.started_ns > 0;
  EXPECT_EQ(enters, ran);
  EXPECT_EQ(leaves, ran);
}

// A taskwait that waits for nothing (a task that created none) is not
// recorded; one that waits for children is, begin and end.
TEST_F(TaskExportTest, OnlyTaskwaitsThatWaitForChildrenAreRecorded) {
  ProcessResult run = runTasks({"leaves", "200"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.out.find("leaves=200"), std::string::npos) << run.out;
  auto reader = RecordingReader::open(recordings().at(0));
  ASSERT_TRUE(reader.ok());
  TaskEventTranslator translator;
  size_t begins = 0, ends = 0, created = 0;
  while (auto payload = reader->next()) {
    nodekeeper::v1::TaskEventBatch batch, structured;
    ASSERT_TRUE(batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())));
    translator.toStructured(batch, structured);
    for (const nodekeeper::v1::TaskEvent& e : structured.events()) {
      created += e.has_created();
      if (e.has_sync() && e.sync().kind() == nodekeeper::v1::TaskSync::KIND_TASKWAIT) (e.sync().end() ? ends : begins)++;
    }
  }
  EXPECT_EQ(created, 200u);
  EXPECT_EQ(begins, 1u);
  EXPECT_EQ(ends, 1u);
}

TEST_F(TaskExportTest, DependencesBecomeFlowsThatEndWhereTheyBegan) {
  ProcessResult run = runTasks({"cholesky"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const TaskGraph graph = graphFromRecording();
  const auto out = dir_ / "cholesky.pftrace";
  ProcessResult exported = exportTo(recordings().at(0).string(), out);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  Trace trace = decode(out);
  expectOneSlicePerRun(graph, trace);
  // Every arrow that ends began at a predecessor's end; a chain of
  // dependences made at least one.
  EXPECT_FALSE(trace.flows_ended.empty());
  for (uint64_t flow : trace.flows_ended) EXPECT_TRUE(trace.flows_begun.count(flow)) << flow;
}

TEST_F(TaskExportTest, AWindowKeepsExactlyTheRunsThatOverlapIt) {
  ProcessResult run = runTasks({"fib", "14"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const TaskGraph graph = graphFromRecording();
  const int64_t start = sessionStart();
  int64_t last_end = 0;
  for (const TaskGraph::Task& t : graph.tasks()) last_end = std::max(last_end, t.finished_ns);
  // The middle third of the session, in nanoseconds from its start.
  const int64_t span = last_end - start;
  const int64_t from = span / 3, to = 2 * span / 3;
  const auto out = dir_ / "window.pftrace";
  ProcessResult exported = exportTo(recordings().at(0).string(), out,
                                    {"--from", std::to_string(from) + "ns", "--to", std::to_string(to) + "ns"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  Trace trace = decode(out);
  ASSERT_EQ(trace.problem, "");
  std::set<uint64_t> expected, got;
  for (const TaskGraph::Task& t : graph.tasks())
    if (t.started_ns > 0 && t.started_ns <= start + to && t.finished_ns >= start + from) expected.insert(t.id);
  for (const Slice& s : trace.slices) got.insert(s.task);
  EXPECT_FALSE(expected.empty());
  EXPECT_LT(expected.size(), graph.tasks().size());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got.size(), trace.slices.size()) << "one slice per run";

  ProcessResult bad = exportTo(recordings().at(0).string(), dir_ / "bad.pftrace", {"--from", "soon"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--from: 'soon'"), std::string::npos) << bad.err;
  ProcessResult json = exportTo(recordings().at(0).string(), dir_ / "w.json", {"--format", "json", "--to", "1s"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_NE(json.err.find("--from and --to select runs of a trace"), std::string::npos) << json.err;
}

}  // namespace
}  // namespace nk::test
