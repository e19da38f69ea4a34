// Live task debugging end to end: real OpenMP programs under libnodekeeper
// and a C program with its own scheduler on the task C API, steered through
// a real daemon by the CLI's debug console (--batch) and by DebugClient, the
// frontend side of TasksService.Debug. Every case checks what the program
// did, not only what the daemon says.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/debug_client.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "testlib/background_program.h"
#include "testlib/daemon_fixture.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace nk::test {
namespace {

constexpr uint32_t kGraceS = 3;

class DebugTest : public DaemonFixture {
 protected:
  DebugTest() : DaemonFixture("debug", {"--debug-grace-s", std::to_string(kGraceS)}) {}
  void TearDown() override {
    program_.kill();
    DaemonFixture::TearDown();
  }

  std::vector<std::string> env(bool break_at_start) {
    std::vector<std::string> argv = {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                                     "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=lossless",
                                     "OMP_NUM_THREADS=2"};
    if (break_at_start) argv.push_back("NODEKEEPER_BREAK_AT_START=1");
    return argv;
  }
  // An OpenMP program of `tasks` tasks spinning `micros` each.
  void startOpenMp(long tasks, long micros, bool break_at_start) {
    auto argv = env(break_at_start);
    argv.insert(argv.end(), {envOr("NK_TASKS_PROGRAM"), "steady", std::to_string(tasks), std::to_string(micros)});
    ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  }
  void startCApi(int tasks, int workers, int spin_ms) {
    auto argv = env(true);
    argv.insert(argv.end(), {envOr("NK_CAPI_DEBUG_PROGRAM"), std::to_string(tasks), std::to_string(workers),
                             std::to_string(spin_ms)});
    ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  }

  // The program's live session, once it has streamed.
  uint64_t session() {
    auto channel = grpc::CreateChannel("unix:" + daemon_.socket().string(), grpc::InsecureChannelCredentials());
    auto stub = v1::TasksService::NewStub(channel);
    for (int i = 0; i < 500; ++i) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + 5s);
      v1::SessionList list;
      if (stub->ListSessions(&context, v1::ListSessionsRequest(), &list).ok())
        for (const auto& s : list.sessions())
          if (s.pid() == program_.pid() && s.live()) return s.session_id();
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no session for pid " << program_.pid() << "; program stderr: " << program_.err();
    return 0;
  }

  // `nodekeeper debug --batch` with these lines: one JSON object per line.
  std::vector<Json> batch(uint64_t session, const std::vector<std::string>& lines, int* exit_code = nullptr,
                          std::optional<uid_t> as_uid = std::nullopt) {
    std::filesystem::path file = dir_ / ("batch-" + std::to_string(++batches_));
    std::ofstream(file) << [&] {
      std::string text;
      for (const auto& l : lines) text += l + "\n";
      return text;
    }();
    std::filesystem::permissions(file, std::filesystem::perms::others_read, std::filesystem::perm_options::add);
    std::string cli = cliPath();
    if (as_uid) {
      // Another user may not reach the build tree (a CI clone is the
      // runner's alone): a copy beside the socket.
      auto copy = dir_ / "nodekeeper";
      if (!std::filesystem::exists(copy)) {
        std::filesystem::copy_file(cli, copy);
        std::filesystem::permissions(copy, std::filesystem::perms(0755));
      }
      cli = copy.string();
    }
    ProcessResult run = runProgram({cli, "--socket", daemon_.socket().string(), "debug", std::to_string(session),
                                    "--batch", file.string()},
                                   as_uid, 120s);
    if (exit_code) *exit_code = run.exit_code;
    std::vector<Json> out;
    std::istringstream in(run.out);
    for (std::string line; std::getline(in, line);) {
      auto j = Json::parse(line, nullptr, false);
      if (j.is_discarded()) ADD_FAILURE() << "not JSON: " << line;
      else out.push_back(j);
    }
    last_err_ = run.err;
    return out;
  }

  std::unique_ptr<cli::DebugClient> frontend(uint64_t session, bool events, cli::DebugClient::Callbacks callbacks = {}) {
    auto client = std::make_unique<cli::DebugClient>(daemon_.socket().string(), std::move(callbacks));
    auto attached = client->attach(session, events, 0, 10s);
    EXPECT_TRUE(attached.ok()) << (attached ? "" : attached.error().message);
    return client;
  }
  static v1::DebugUpdate call(cli::DebugClient& client, v1::DebugCommand command) {
    auto reply = client.call(std::move(command), 10s);
    EXPECT_TRUE(reply.ok()) << (reply ? "" : reply.error().message);
    return reply ? *reply : v1::DebugUpdate();
  }
  static v1::DebugStatus status(cli::DebugClient& client) {
    v1::DebugCommand c;
    c.mutable_status();
    return call(client, c).status();
  }
  // "started <id> order <k>" lines of the C API program.
  std::map<uint64_t, int> startOrder() {
    std::map<uint64_t, int> order;
    std::istringstream in(program_.out());
    std::string word;
    uint64_t id = 0;
    int k = 0;
    for (std::string line; std::getline(in, line);) {
      std::istringstream l(line);
      std::string started, of;
      if (l >> started >> id >> of >> k && started == "started") order[id] = k;
    }
    return order;
  }

  BackgroundProgram program_;
  std::string last_err_;
  int batches_ = 0;
};

bool allOk(const std::vector<Json>& lines) {
  for (const auto& l : lines)
    if (!l.value("ok", false)) return false;
  return !lines.empty();
}

std::string dump(const std::vector<Json>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.dump().substr(0, 400) + "\n";
  return out;
}

// Every line of a --batch run's stdout, each of which must be JSON.
std::vector<Json> jsonLines(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto j = Json::parse(line, nullptr, false);
    if (j.is_discarded())
      ADD_FAILURE() << "not JSON: " << line;
    else
      out.push_back(j);
  }
  return out;
}

// The status a batch line carried.
Json statusOf(const std::vector<Json>& lines, size_t index) {
  return index < lines.size() && lines[index].contains("status") ? lines[index]["status"] : Json::object();
}

// How the tool names the task construct of omp_tasks.cc on the first line
// holding `pragma`: its function and that line.
std::string constructName(const std::string& function, const std::string& pragma) {
  std::ifstream source(envOr("NK_TASKS_SOURCE"));
  std::string line;
  for (int number = 1; std::getline(source, line); ++number)
    if (line.find(pragma) != std::string::npos) return function + " (omp_tasks.cc:" + std::to_string(number) + ")";
  ADD_FAILURE() << "no '" << pragma << "' in " << envOr("NK_TASKS_SOURCE");
  return {};
}

// `block function` takes the function's bare name (each of its constructs)
// and a prefix; the daemon sends the app the names the graph shows.
TEST_F(DebugTest, OpenMpBlockFunctionTakesTheBareNameAndAPrefix) {
  auto argv = env(true);
  argv.insert(argv.end(), {envOr("NK_TASKS_PROGRAM"), "fib", "8"});
  ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  uint64_t id = session();
  const std::string a = constructName("fib_task", "#pragma omp task shared(a)");
  const std::string b = constructName("fib_task", "#pragma omp task shared(b)");
  // Held at the start, fib(8)'s first two tasks made: both constructs known.
  auto out = batch(id, {"wait parked 2 20", "block function fib_task", "status", "block function fib", "block function main",
                        "unblock function fib_task (omp_tasks.cc:", "status", "continue"});
  ASSERT_EQ(out.size(), 8u) << last_err_;
  EXPECT_TRUE(out[1].value("ok", false)) << dump(out);
  const std::string blocked = out[1].value("message", "");
  EXPECT_NE(blocked.find("of " + a + ", and its tasks created from now on"), std::string::npos) << blocked;
  EXPECT_NE(blocked.find("of " + b + ", and its tasks created from now on"), std::string::npos) << blocked;
  EXPECT_EQ(statusOf(out, 2)["blocked_functions"], Json::array({a, b})) << out[2].dump();
  // "fib" is no function here, but a prefix of one function's names.
  EXPECT_TRUE(out[3].value("ok", false)) << dump(out);
  EXPECT_NE(out[3].value("message", "").find("of " + a), std::string::npos) << out[3].dump();
  // main has made no task in this run: refused, with the names there are.
  EXPECT_FALSE(out[4].value("ok", true)) << dump(out);
  EXPECT_EQ(out[4].value("error", ""), "block function: no function 'main' among the session's tasks (" + a + ", " +
                                             b + "); a function is known once one of its tasks has been created")
      << out[4].dump();
  EXPECT_TRUE(out[5].value("ok", false)) << dump(out);
  EXPECT_NE(out[5].value("message", "").find("unblocked"), std::string::npos) << out[5].dump();
  EXPECT_TRUE(statusOf(out, 6)["blocked_functions"].empty()) << out[6].dump();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  EXPECT_NE(program_.out().find("fib=21"), std::string::npos) << program_.out();
}

TEST_F(DebugTest, OpenMpBreakThenStepOneRunsExactlyOneTask) {
  startOpenMp(200, 1000, true);
  uint64_t id = session();
  auto out = batch(id, {"wait parked 2 20", "status", "step 1", "wait finished 1 20", "wait seconds 0.5", "status",
                        "continue", "wait finished 200 60"});
  ASSERT_EQ(out.size(), 8u) << last_err_;
  ASSERT_TRUE(allOk(out)) << dump(out);
  // Held at the start: both workers at the gate, nothing run.
  EXPECT_EQ(statusOf(out, 1)["finished"], 0);
  EXPECT_TRUE(statusOf(out, 1)["held"].get<bool>());
  // After step 1 and half a second: one task ran, none runs, both wait.
  Json after = statusOf(out, 5);
  EXPECT_EQ(after["finished"], 1) << after.dump();
  EXPECT_EQ(after["running"], 0) << after.dump();
  EXPECT_EQ(after["parked_workers"], 2) << after.dump();
  EXPECT_EQ(after["steps_left"], 0);
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  EXPECT_NE(program_.out().find("tasks=200"), std::string::npos) << program_.out();
}

TEST_F(DebugTest, OpenMpBlockedTaskHoldsItsWorkerWhileOthersRunAndRunsAfterUnblock) {
  startOpenMp(100, 2000, true);
  uint64_t id = session();
  auto first = batch(id, {"wait parked 2 20", "status"});
  ASSERT_TRUE(allOk(first)) << dump(first);
  Json ready = statusOf(first, 1)["ready"];
  ASSERT_GE(ready.size(), 10u) << dump(first);
  std::string blocked = std::to_string(ready[5].get<uint64_t>());
  auto out = batch(id, {"block " + blocked, "continue", "wait finished 99 60", "wait seconds 0.5", "status",
                        "unblock " + blocked, "wait finished 100 60"});
  ASSERT_EQ(out.size(), 7u) << last_err_;
  ASSERT_TRUE(allOk(out)) << dump(out);
  Json held = statusOf(out, 4);
  EXPECT_EQ(held["finished"], 99) << held.dump();
  EXPECT_EQ(held["parked_workers"], 1) << held.dump();  // the worker that was to run it waits
  EXPECT_EQ(held["blocked"], Json::array({ready[5]})) << held.dump();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  EXPECT_NE(program_.out().find("tasks=100"), std::string::npos);
}

TEST_F(DebugTest, OpenMpUndeferredTasksAreHeldAndSteppedToo) {
  auto argv = env(true);
  argv.insert(argv.end(), {envOr("NK_TASKS_PROGRAM"), "undeferred", "20"});
  ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  uint64_t id = session();
  auto out = batch(id, {"wait parked 1 20", "step 3", "wait finished 3 20", "wait seconds 0.5", "status", "continue",
                        "wait finished 20 60"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  Json after = statusOf(out, 4);
  EXPECT_EQ(after["finished"], 3) << after.dump();
  EXPECT_EQ(after["parked_workers"], 1) << after.dump();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  EXPECT_NE(program_.out().find("tasks=20"), std::string::npos) << program_.out();
}

TEST_F(DebugTest, DebugStartsAProgramHeldAtItsStartAndLetsItFinishOnQuit) {
  std::filesystem::path file = dir_ / "launch";
  std::ofstream(file) << "wait parked 2 20\nstep 1\nwait finished 1 20\nwait seconds 0.3\nstatus\nquit\n";
  ProcessResult run = runProgram({"/usr/bin/env", "OMP_NUM_THREADS=2", "NODEKEEPER_LIBRARY=" + envOr("NK_CLIENT_LIB"),
                                  cliPath(), "--socket", daemon_.socket().string(), "debug", "--break-at-start",
                                  "--batch", file.string(), "--", envOr("NK_TASKS_PROGRAM"), "steady", "50", "100"},
                                 std::nullopt, 120s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<Json> out = jsonLines(run.out);
  ASSERT_EQ(out.size(), 5u) << run.out;
  EXPECT_TRUE(allOk(out)) << run.out;
  EXPECT_EQ(statusOf(out, 4)["finished"], 1) << out[4].dump();
  // It ran on to its end after quit; what it printed came to stderr,
  // marked, not among the JSON lines.
  EXPECT_NE(run.err.find("program: tasks=50\n"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("tasks=50"), std::string::npos) << run.out;
}

TEST_F(DebugTest, AStartedProgramsOutputGoesToProgramOutputFile) {
  std::filesystem::path file = dir_ / "launch";
  std::ofstream(file) << "wait tasks 1 20\ncontinue\nwait finished 50 60\nstatus\n";
  std::filesystem::path output = dir_ / "program-output";
  ProcessResult run = runProgram({"/usr/bin/env", "OMP_NUM_THREADS=2", "NODEKEEPER_LIBRARY=" + envOr("NK_CLIENT_LIB"),
                                  cliPath(), "--socket", daemon_.socket().string(), "debug", "--break-at-start",
                                  "--batch", file.string(), "--program-output", output.string(), "--",
                                  envOr("NK_TASKS_PROGRAM"), "steady", "50", "100"},
                                 std::nullopt, 120s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<Json> out = jsonLines(run.out);
  ASSERT_EQ(out.size(), 4u) << run.out;
  EXPECT_TRUE(allOk(out)) << run.out;
  std::ifstream written(output);
  std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "tasks=50\n");
  EXPECT_EQ(run.err.find("program:"), std::string::npos) << run.err;

  // Only for a program it starts.
  ProcessResult attach = runProgram({cliPath(), "--socket", daemon_.socket().string(), "debug", "1",
                                     "--program-output", output.string()},
                                    std::nullopt, 60s);
  EXPECT_EQ(attach.exit_code, 1);
  EXPECT_NE(attach.err.find("--program-output is for a program it starts"), std::string::npos) << attach.err;
}

// OpenMP cannot run another task in place of a blocked one: blocking a
// function of fib's tree ends with every worker parked on one of its
// tasks. Status says so and what frees them; the queued count is the
// tasks that may run (OMPT itself never reports "queued").
TEST_F(DebugTest, OpenMpBlockedFunctionHoldsEveryWorkerAndStatusSaysWhatFreesThem) {
  auto argv = env(true);
  argv.insert(argv.end(), {envOr("NK_TASKS_PROGRAM"), "fib", "18"});
  ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  uint64_t id = session();
  auto first = batch(id, {"wait parked 2 20", "status"});
  ASSERT_TRUE(allOk(first)) << dump(first);
  Json at_start = statusOf(first, 1);
  // fib(18)'s two first tasks, each held by a worker at the break: created,
  // nothing before them, so queued.
  EXPECT_EQ(at_start["queued"], 2) << at_start.dump();
  EXPECT_EQ(at_start["not_queued"], 0) << at_start.dump();
  EXPECT_EQ(at_start["ready_total"], 2) << at_start.dump();
  ASSERT_EQ(at_start["functions"].size(), 2u) << at_start.dump();
  const std::string blocked = at_start["functions"][0]["function"].get<std::string>();

  auto go = batch(id, {"block function " + blocked, "continue"});
  ASSERT_TRUE(allOk(go)) << dump(go);
  auto watcher = frontend(id, false);
  // Until the line stays put with nothing finishing: a worker that leaves
  // the gate says nothing, so for the moment between a worker's wake-up
  // and its first task's events a stale line may show.
  v1::DebugStatus stalled, before;
  EXPECT_TRUE(waitFor(
      [&] {
        before = stalled;
        std::this_thread::sleep_for(200ms);
        stalled = status(*watcher);
        return !stalled.stall().empty() && stalled.stall() == before.stall() &&
               stalled.finished() == before.finished();
      },
      60s))
      << stalled.DebugString();
  std::smatch m;
  const std::string line = stalled.stall();
  EXPECT_TRUE(std::regex_match(line, m,
                               std::regex("all 2 workers are held by blocked tasks of (.+) \\(([0-9]+) tasks\\); "
                                          "'unblock function (.+)' frees them")))
      << line;
  if (m.size() == 4) {
    EXPECT_EQ(m[1], blocked);
    EXPECT_EQ(m[3], blocked);
    EXPECT_GE(std::stoul(m[2]), 2u);
  }
  EXPECT_EQ(stalled.parked_workers(), 2u);
  EXPECT_GT(stalled.queued(), 0u) << stalled.DebugString();

  // The console shows the same.
  auto seen = batch(id, {"status"});
  ASSERT_TRUE(allOk(seen)) << dump(seen);
  EXPECT_EQ(statusOf(seen, 0)["stall"], line) << seen[0].dump();

  // Unblocked, it runs to its end with the right answer.
  auto done = batch(id, {"unblock function " + blocked});
  ASSERT_TRUE(allOk(done)) << dump(done);
  EXPECT_EQ(program_.wait(120s), 0) << program_.err();
  EXPECT_NE(program_.out().find("fib=2584"), std::string::npos) << program_.out();
}

TEST_F(DebugTest, CApiStepOneRunsExactlyOneTask) {
  startCApi(12, 3, 5);
  uint64_t id = session();
  auto out = batch(id, {"wait tasks 12 20", "step 1", "wait finished 1 20", "wait seconds 0.5", "status", "continue",
                        "wait finished 12 60"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  Json after = statusOf(out, 4);
  EXPECT_EQ(after["finished"], 1) << after.dump();
  EXPECT_EQ(after["running"], 0) << after.dump();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  auto order = startOrder();
  EXPECT_EQ(order.size(), 12u) << program_.out();
}

TEST_F(DebugTest, CApiBlockedTaskIsSkippedWhileOthersRunAndRunsAfterUnblock) {
  startCApi(12, 2, 5);
  uint64_t id = session();
  auto out = batch(id, {"wait tasks 12 20", "block 105", "continue", "wait finished 11 60", "wait seconds 0.5", "status",
                        "unblock 105", "wait finished 12 60"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  Json held = statusOf(out, 5);
  EXPECT_EQ(held["finished"], 11) << held.dump();
  EXPECT_EQ(held["parked_workers"], 0) << held.dump();  // the scheduler ran others, nobody waits
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  auto order = startOrder();
  ASSERT_EQ(order.size(), 12u) << program_.out();
  EXPECT_EQ(order[105], 11) << program_.out();  // the last to start
}

TEST_F(DebugTest, CApiPauseOnTaskEndBreaksAfterTheNextTask) {
  startCApi(8, 1, 2);
  uint64_t id = session();
  auto out = batch(id, {"wait tasks 8 20", "pause task_end", "continue", "wait finished 1 20", "wait seconds 0.5",
                        "status", "pause off task_end", "continue", "wait finished 8 60"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  Json paused = statusOf(out, 5);
  EXPECT_TRUE(paused["held"].get<bool>()) << paused.dump();
  EXPECT_EQ(paused["finished"], 1) << paused.dump();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
}

TEST_F(DebugTest, CApiPriorityChangesTheOrder) {
  startCApi(12, 1, 1);
  uint64_t id = session();
  auto out = batch(id, {"wait tasks 12 20", "priority 109 5", "priority 104 3", "continue", "wait finished 12 60"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  auto order = startOrder();
  ASSERT_EQ(order.size(), 12u) << program_.out();
  EXPECT_EQ(order[109], 0) << program_.out();
  EXPECT_EQ(order[104], 1) << program_.out();
  EXPECT_EQ(order[101], 2) << program_.out();  // then the runtime's own order
  EXPECT_EQ(order[112], 11) << program_.out();
}

TEST_F(DebugTest, TwoFrontendsAtOnceSeeTheSameEvents) {
  startOpenMp(60, 1000, true);
  uint64_t id = session();
  struct Seen {
    std::mutex mutex;
    std::vector<uint64_t> started;
  } a, b;
  auto record = [](Seen& seen) {
    cli::DebugClient::Callbacks callbacks;
    callbacks.events = [&seen](const v1::TaskEventBatch& batch) {
      std::lock_guard lock(seen.mutex);
      for (const auto& e : batch.events())
        if (e.has_started()) seen.started.push_back(e.started().task_id());
    };
    return callbacks;
  };
  auto first = frontend(id, true, record(a));
  auto second = frontend(id, true, record(b));
  EXPECT_EQ(status(*first).frontends(), 2u);
  v1::DebugCommand go;
  go.mutable_continue_all();
  v1::DebugUpdate ack = call(*first, go);
  EXPECT_TRUE(ack.ack().ok()) << ack.ack().message();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  for (int i = 0; i < 500; ++i) {
    {
      std::scoped_lock lock(a.mutex, b.mutex);
      if (a.started.size() >= 60 && b.started.size() >= 60) break;
    }
    std::this_thread::sleep_for(20ms);
  }
  std::scoped_lock lock(a.mutex, b.mutex);
  EXPECT_EQ(a.started.size(), 60u);
  EXPECT_EQ(a.started, b.started);  // the same events, in the same order
  EXPECT_EQ(std::set<uint64_t>(a.started.begin(), a.started.end()).size(), 60u);
}

TEST_F(DebugTest, AKilledFrontendReleasesItsBreakAfterTheGracePeriod) {
  startOpenMp(2000, 2000, false);
  uint64_t id = session();
  std::filesystem::path file = dir_ / "hold";
  std::ofstream(file) << "break\nwait parked 2 20\nwait seconds 300\n";
  BackgroundProgram cli;
  ASSERT_TRUE(cli.start({cliPath(), "--socket", daemon_.socket().string(), "debug", std::to_string(id), "--batch",
                         file.string()},
                        dir_ / "cli.out", dir_ / "cli.err"));
  auto watcher = frontend(id, false);
  v1::DebugStatus s;
  for (int i = 0; i < 1000 && !(s.held() && s.parked_workers() == 2); ++i) {
    std::this_thread::sleep_for(10ms);
    s = status(*watcher);
  }
  ASSERT_TRUE(s.held() && s.parked_workers() == 2) << s.DebugString() << cli.err();
  cli.kill();
  // The break outlives its frontend (the watcher holds none)...
  v1::DebugStatus right_after = status(*watcher);
  EXPECT_TRUE(right_after.held()) << right_after.DebugString();
  EXPECT_LT(right_after.finished(), 2000u);
  // ...then lifts, and the program runs to its end.
  EXPECT_EQ(program_.wait(120s), 0) << program_.err();
  EXPECT_NE(program_.out().find("tasks=2000"), std::string::npos);
}

TEST_F(DebugTest, AKilledDaemonReleasesTheProgramAtOnce) {
  startOpenMp(400, 2000, true);
  uint64_t id = session();
  auto out = batch(id, {"wait parked 2 20"});
  ASSERT_TRUE(allOk(out)) << dump(out);
  daemon_.kill9();
  EXPECT_EQ(program_.wait(60s), 0) << program_.err();
  EXPECT_NE(program_.out().find("tasks=400"), std::string::npos);
  EXPECT_NE(program_.err().find("lost nodekeeperd while debugging"), std::string::npos) << program_.err();
}

TEST_F(DebugTest, GdbAttachesAndStopsAtATaskFunctionThenTheProgramRunsOn) {
  auto argv = env(true);
  // Task trees again and again until the stop file: still running when gdb
  // has attached, however busy the host (a fixed fib(31) outran the test's
  // patience under NK_TEST_HOST_LOAD), and ending soon after it is told.
  const auto stop = dir_ / "stop";
  argv.insert(argv.end(), {envOr("NK_TASKS_PROGRAM"), "until", stop.string(), "16"});
  ASSERT_TRUE(program_.start(argv, dir_ / "program.out", dir_ / "program.err"));
  uint64_t id = session();
  auto out = batch(id, {"wait parked 2 20", "continue", "gdb fib_task"});
  std::ofstream(stop) << "stop\n";
  ASSERT_EQ(out.size(), 3u) << last_err_;
  ASSERT_TRUE(allOk(out)) << dump(out);
  EXPECT_NE(out[2]["message"].get<std::string>().find("breakpoint on fib_task hit in fib_task"), std::string::npos)
      << out[2].dump();
  // gdb detached: the program runs on, every round with the right answer
  // (its exit code says so).
  EXPECT_EQ(program_.wait(120s), 0) << program_.err();
  EXPECT_NE(program_.out().find("fib=987 "), std::string::npos) << program_.out();
}

TEST_F(DebugTest, BadCommandsAreRefusedAndChangeNothing) {
  startCApi(4, 1, 1);
  uint64_t id = session();
  int code = 0;
  auto out = batch(id, {"wait tasks 4 20", "block 999", "priority 999 1", "step 0", "frobnicate", "status"}, &code);
  ASSERT_EQ(out.size(), 6u) << last_err_;
  EXPECT_NE(code, 0);
  EXPECT_FALSE(out[1]["ok"].get<bool>());
  EXPECT_NE(out[1]["error"].get<std::string>().find("no such task"), std::string::npos) << out[1].dump();
  EXPECT_FALSE(out[2]["ok"].get<bool>());
  EXPECT_FALSE(out[3]["ok"].get<bool>());
  EXPECT_NE(out[4]["error"].get<std::string>().find("unknown command"), std::string::npos);
  EXPECT_TRUE(statusOf(out, 5)["blocked"].empty()) << out[5].dump();
  // Another user may not attach at all.
  int other_code = 0;
  auto other = batch(id, {"continue"}, &other_code, 65534);
  EXPECT_NE(other_code, 0);
  EXPECT_TRUE(other.empty());
  EXPECT_NE(last_err_.find("belongs to another user"), std::string::npos) << last_err_;
  // An unknown session.
  batch(777, {"status"}, &other_code);
  EXPECT_NE(other_code, 0);
  EXPECT_NE(last_err_.find("no task session 777"), std::string::npos) << last_err_;
  // Still held at its start: the bad commands let nothing run.
  EXPECT_EQ(program_.wait(200ms), -1);
  auto go = batch(id, {"continue", "wait finished 4 30"});
  EXPECT_TRUE(allOk(go)) << dump(go);
  EXPECT_EQ(program_.wait(30s), 0) << program_.err();
}

}  // namespace
}  // namespace nk::test
