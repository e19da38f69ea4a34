// Task events end to end: real OpenMP task programs (clang, libomp) under
// the OMPT tool with NODEKEEPER_TASKS=lossless, a real daemon recording
// them; the graph rebuilt from the recording file is checked exactly.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/task_event_translator.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "tasks/recording_reader.h"
#include "tasks/task_graph.h"
#include "test_process.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace nk::test {
namespace {

class TasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeSharedTempDir("tasks");
    ASSERT_TRUE(daemon_.start(dir_)) << daemon_.lastError();
    auto channel = grpc::CreateChannel("unix:" + daemon_.socket().string(), grpc::InsecureChannelCredentials());
    tasks_ = v1::TasksService::NewStub(channel);
  }
  void TearDown() override {
    daemon_.stop();
    std::filesystem::remove_all(dir_);
  }

  ProcessResult runProgram(const std::vector<std::string>& args, const std::string& mode = "lossless") {
    std::vector<std::string> argv = {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                                     "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=" + mode,
                                     "OMP_NUM_THREADS=4", envOr("NK_TASKS_PROGRAM")};
    argv.insert(argv.end(), args.begin(), args.end());
    return nk::test::runProgram(argv, std::nullopt, std::chrono::seconds(60));
  }

  std::vector<v1::Session> sessions() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::SessionList list;
    EXPECT_TRUE(tasks_->ListSessions(&context, v1::ListSessionsRequest(), &list).ok());
    return {list.sessions().begin(), list.sessions().end()};
  }

  // The graph as the recording holds it: every frame a TaskEventBatch.
  TaskGraph graphFromRecording(uint64_t* frames) {
    TaskGraph graph;
    *frames = 0;
    std::filesystem::path file;
    for (const auto& entry : std::filesystem::directory_iterator(daemon_.stateDir() / "recordings"))
      if (entry.path().extension() == ".nkrec") file = entry.path();
    EXPECT_FALSE(file.empty());
    if (file.empty()) return graph;
    auto reader = RecordingReader::open(file);
    EXPECT_TRUE(reader.ok());
    if (!reader.ok()) return graph;
    std::vector<GraphEvent> events;
    while (auto payload = reader->next()) {
      v1::TaskEventBatch batch;
      EXPECT_TRUE(batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())));
      ++*frames;
      TaskEventTranslator::toGraphEvents(batch, events);
      for (const GraphEvent& g : events) graph.apply(g);
    }
    EXPECT_EQ(reader->stopReason(), "");
    return graph;
  }

  std::filesystem::path dir_;
  DaemonProcess daemon_;
  std::unique_ptr<v1::TasksService::Stub> tasks_;
};

TEST_F(TasksTest, FibonacciTasksAreAllRecordedAndRun) {
  ProcessResult run = runProgram({"fib", "12"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("fib=144 tasks=(\\d+)"))) << run.out;
  uint64_t expected = std::stoull(m[1]);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].tasks(), expected);
  EXPECT_NE(list[0].program().find("omp_tasks_clang fib 12"), std::string::npos) << list[0].program();
  uint64_t frames = 0;
  TaskGraph graph = graphFromRecording(&frames);
  EXPECT_GT(frames, 0u);
  EXPECT_EQ(graph.tasks().size(), expected);
  EXPECT_TRUE(graph.edges().empty());  // no depend clauses
  std::set<std::string> functions;
  for (const auto& t : graph.tasks()) {
    EXPECT_TRUE(t.created) << t.id;
    EXPECT_EQ(t.state, TaskState::kFinished) << t.id;
    functions.insert(graph.functions()[t.function]);
  }
  // Two task constructs in fib_task, told apart by their offsets.
  EXPECT_EQ(functions.size(), 2u);
  for (const auto& f : functions) EXPECT_EQ(f.rfind("fib_task+0x", 0), 0u) << f;
}

// The seed's Figure 2: two chains of ten, every edge and address exact.
TEST_F(TasksTest, SeedFigureTwoGraphHasEveryEdgeAndAddress) {
  ProcessResult run = runProgram({"figure2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("addr_left=(0x[0-9a-f]+) addr_right=(0x[0-9a-f]+)")))
      << run.out;
  uint64_t left = std::stoull(m[1], nullptr, 16), right = std::stoull(m[2], nullptr, 16);
  uint64_t frames = 0;
  TaskGraph graph = graphFromRecording(&frames);
  ASSERT_EQ(graph.tasks().size(), 20u);
  ASSERT_EQ(graph.edges().size(), 18u);
  // Creation order alternates left, right; each chain links its own tasks in order.
  std::vector<uint64_t> order;
  for (const auto& t : graph.tasks()) order.push_back(t.id);
  std::map<uint64_t, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::set<std::pair<size_t, size_t>> edges;
  for (const auto& e : graph.edges()) {
    size_t from = position.at(e.from), to = position.at(e.to);
    EXPECT_EQ(to - from, 2u);
    EXPECT_EQ(e.address, from % 2 == 0 ? left : right) << from << "->" << to;
    edges.insert({from, to});
  }
  EXPECT_EQ(edges.size(), 18u);
  std::set<uint32_t> functions;
  for (const auto& t : graph.tasks()) {
    EXPECT_EQ(t.state, TaskState::kFinished);
    functions.insert(t.function);
  }
  EXPECT_EQ(functions.size(), 2u);  // the two constructs
}

TEST_F(TasksTest, CliListsTheSessionAsTableAndJson) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  ProcessResult json = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "--json", "tasks"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"tasks\": 20"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("omp_tasks_clang figure2"), std::string::npos) << json.out;
  ProcessResult text = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "tasks"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("SESSION", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("omp_tasks_clang figure2"), std::string::npos) << text.out;
}

TEST_F(TasksTest, ExportWritesPerfettoAndDotFromTheDaemon) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  std::string id = std::to_string(list[0].session_id());
  auto trace = dir_ / "trace.json";
  ProcessResult r = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export", id, "--format",
                                          "perfetto", "--out", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("20 tasks, 18 edges"), std::string::npos) << r.err;
  auto json = nlohmann::json::parse(readFile(trace));
  int slices = 0, flows = 0;
  for (const auto& e : json["traceEvents"]) {
    slices += e["ph"] == "X";
    flows += e["ph"] == "s";
  }
  EXPECT_EQ(slices, 20);
  EXPECT_EQ(flows, 18);
  // By pid too, to standard output, as DOT.
  ProcessResult dot = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export",
                                            std::to_string(list[0].pid()), "--format", "dot", "--out", "-"});
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  size_t arrows = 0;
  for (size_t at = dot.out.find(" -> "); at != std::string::npos; at = dot.out.find(" -> ", at + 1)) ++arrows;
  EXPECT_EQ(arrows, 18u);
  // Bad input: one line each.
  ProcessResult unknown = nk::test::runProgram(
      {cliPath(), "--socket", daemon_.socket().string(), "export", "999", "--format", "dot", "--out", "-"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no task session with id or pid 999"), std::string::npos) << unknown.err;
  ProcessResult format = nk::test::runProgram(
      {cliPath(), "--socket", daemon_.socket().string(), "export", id, "--format", "svg", "--out", "-"});
  EXPECT_EQ(format.exit_code, 1);
  EXPECT_NE(format.err.find("perfetto or dot, not 'svg'"), std::string::npos) << format.err;
}

TEST_F(TasksTest, WithoutADaemonTheProgramRunsOnAndSaysSoOnce) {
  daemon_.stop();
  ProcessResult run = runProgram({"figure2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  size_t first = run.err.find("task events are not reaching nodekeeperd");
  EXPECT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("task events are not reaching nodekeeperd", first + 1), std::string::npos) << run.err;
}

}  // namespace
}  // namespace nk::test
