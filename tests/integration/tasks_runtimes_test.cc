// Task events end to end from runtimes that are not OpenMP: a C program
// with its own scheduler on the task C API (nodekeeper/tasks.h), and one
// that plays a StarPU built with Ayudame 1 (AYU_event). A real daemon
// records them; the graph rebuilt from the recording is compared exactly
// with what the programs say they did.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "taskgraph/task_event_translator.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/task_graph.h"
#include "task_daemon_fixture.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace nk::test {
namespace {

// What a program printed about its run.
struct Expected {
  struct Task {
    uint64_t parent = 0;
    std::string function;
    int32_t priority = 0;
    int worker = -1;
  };
  std::map<uint64_t, Task> tasks;
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, int>> edges;  // from, to, address, kind
  std::map<std::string, std::string> summary;                     // "tasks=13" and the like
};

// Lines: "task <id> [parent <p>] function <name> priority <p>",
// "edge <from> <to> 0x<address> [<kind>]", "ran <id> worker <w>", and
// key=value words.
Expected parseRun(const std::string& out, int default_kind) {
  Expected e;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "task") {
      uint64_t id = 0;
      in >> id;
      Expected::Task& t = e.tasks[id];
      std::string key;
      while (in >> key) {
        if (key == "parent") in >> t.parent;
        if (key == "function") in >> t.function;
        if (key == "priority") in >> t.priority;
      }
    } else if (word == "edge") {
      uint64_t from = 0, to = 0;
      std::string address;
      int kind = default_kind;
      in >> from >> to >> address;
      if (!(in >> kind)) kind = default_kind;
      e.edges.insert({from, to, std::stoull(address, nullptr, 16), kind});
    } else if (word == "ran") {
      uint64_t id = 0;
      std::string key;
      int worker = -1;
      in >> id >> key >> worker;
      e.tasks[id].worker = worker;
    } else {
      for (std::istringstream words(line); words >> word;)
        if (auto eq = word.find('='); eq != std::string::npos) e.summary[word.substr(0, eq)] = word.substr(eq + 1);
    }
  }
  return e;
}

std::vector<std::string> nodekeeperLines(const std::string& err) {
  std::vector<std::string> found;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("nodekeeper:", 0) == 0) found.push_back(line);
  return found;
}

class TasksRuntimesTest : public TaskDaemonFixture {
 protected:
  TasksRuntimesTest() : TaskDaemonFixture("tasks-runtimes") {}

  // NODEKEEPER_TASKS is unset unless `mode` is given: calling the API is
  // asking for task events.
  ProcessResult runProgram(const char* program_variable, const std::string& mode = "",
                           const std::string& socket = "") {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "NODEKEEPER_TASKS", "-u", "NK_DEBUG",
                                     "NODEKEEPER_SOCKET=" + (socket.empty() ? daemon_.socket().string() : socket)};
    if (!mode.empty()) argv.push_back("NODEKEEPER_TASKS=" + mode);
    argv.push_back(envOr(program_variable));
    return nk::test::runProgram(argv, std::nullopt, std::chrono::seconds(60));
  }

  // Every task, edge, name, parent, priority and state as the program said;
  // each task on the worker that ran it.
  void expectGraph(const TaskGraph& graph, const Expected& expected) {
    ASSERT_EQ(graph.tasks().size(), expected.tasks.size());
    for (const auto& t : graph.tasks()) {
      auto it = expected.tasks.find(t.id);
      ASSERT_NE(it, expected.tasks.end()) << "unexpected task " << t.id;
      const Expected::Task& want = it->second;
      EXPECT_TRUE(t.created) << t.id;
      EXPECT_EQ(t.state, TaskState::kFinished) << t.id;
      EXPECT_FALSE(t.failed) << t.id;
      EXPECT_EQ(t.parent, want.parent) << t.id;
      EXPECT_EQ(t.priority, want.priority) << t.id;
      ASSERT_LT(t.function, graph.functions().size());
      EXPECT_EQ(graph.functions()[t.function], want.function) << t.id;
      EXPECT_EQ(t.thread, want.worker) << t.id;  // the worker number the runtime gave
    }
    std::set<std::tuple<uint64_t, uint64_t, uint64_t, int>> edges;
    std::set<std::pair<uint64_t, uint64_t>> pairs, expected_pairs;
    std::vector<TaskGraph::Dependence> dependences;
    for (const auto& e : graph.edges()) {
      EXPECT_TRUE(pairs.insert({e.from, e.to}).second) << e.from << " -> " << e.to << " twice";
      graph.dependencesOf(e, dependences);
      for (const auto& d : dependences) edges.insert({e.from, e.to, d.address, d.kind});
    }
    for (const auto& [from, to, address, kind] : expected.edges) expected_pairs.insert({from, to});
    EXPECT_EQ(graph.dependences(), expected.edges.size());  // no duplicates either
    EXPECT_EQ(pairs, expected_pairs);
    EXPECT_EQ(edges, expected.edges);
  }

};

TEST_F(TasksRuntimesTest, CApiRuntimeIsRecordedWithEveryEdgeAndName) {
  ProcessResult run = runProgram("NK_CAPI_TASKS_PROGRAM");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.err, "");  // a managed program's output does not change
  Expected expected = parseRun(run.out, 0);
  ASSERT_EQ(expected.summary["result"], "10") << run.out;
  ASSERT_EQ(expected.summary["tasks"], "13") << run.out;
  ASSERT_EQ(expected.summary["edges"], "17") << run.out;
  ASSERT_EQ(expected.tasks.size(), 13u) << run.out;
  ASSERT_EQ(expected.edges.size(), 17u) << run.out;
  for (const auto& [id, t] : expected.tasks) ASSERT_GE(t.worker, 0) << id;

  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].tasks(), 13u);
  EXPECT_NE(list[0].program().find("capi_tasks"), std::string::npos) << list[0].program();

  // Also: the root ran on the main thread (worker 0), apart from the workers.
  expectGraph(graphFromRecording(), expected);
}

TEST_F(TasksRuntimesTest, AyudameRuntimeIsRecordedWithEveryEdgeAndName) {
  ProcessResult run = runProgram("NK_AYUDAME_TASKS_PROGRAM");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // The unknown event is said once; ADDTASK without data after it is not.
  auto said = nodekeeperLines(run.err);
  ASSERT_EQ(said.size(), 1u) << run.err;
  EXPECT_EQ(run.err, said[0] + "\n");
  EXPECT_NE(said[0].find("ignoring AYU_event(99, 7)"), std::string::npos) << said[0];
  Expected expected = parseRun(run.out, 3);  // Ayudame's edges: inout
  ASSERT_EQ(expected.summary["tiles"], "10") << run.out;  // first of three; exit 0 checked all
  ASSERT_EQ(expected.tasks.size(), 6u) << run.out;
  ASSERT_EQ(expected.edges.size(), 6u) << run.out;

  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].tasks(), 6u);
  EXPECT_NE(list[0].program().find("ayudame_tasks"), std::string::npos) << list[0].program();

  TaskGraph graph = graphFromRecording();
  expectGraph(graph, expected);
  EXPECT_EQ(graph.find(999), nullptr);  // the refused ADDTASK
}

// One line in all: whichever part of the library finds the daemon missing
// first (the power-management link or the task events) says so, the other
// stays quiet, and nothing else reaches stderr.
TEST_F(TasksRuntimesTest, WithoutADaemonTheCApiProgramRunsOnAndSaysSoOnce) {
  ProcessResult run = runProgram("NK_CAPI_TASKS_PROGRAM", "", (dir_ / "absent.sock").string());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("result=10"), std::string::npos) << run.out;
  std::vector<std::string> lines;
  std::istringstream err(run.err);
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_TRUE(lines[0].rfind("nodekeeper: task events are not reaching nodekeeperd", 0) == 0 ||
              lines[0].rfind("nodekeeper: nodekeeperd not reachable at", 0) == 0)
      << lines[0];
  EXPECT_NE(lines[0].find("absent.sock"), std::string::npos) << lines[0];
  EXPECT_TRUE(sessions().empty());
}

TEST_F(TasksRuntimesTest, TaskEventsOffMakesTheCallsRecordNothing) {
  for (const char* program : {"NK_CAPI_TASKS_PROGRAM", "NK_AYUDAME_TASKS_PROGRAM"}) {
    ProcessResult run = runProgram(program, "off");
    EXPECT_EQ(run.exit_code, 0) << program << ": " << run.out << run.err;  // every call returned 0
    EXPECT_NE(run.out.find("tasks="), std::string::npos) << run.out;
  }
  EXPECT_TRUE(sessions().empty());
  EXPECT_TRUE(recordings().empty());
}

}  // namespace
}  // namespace nk::test
