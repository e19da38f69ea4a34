// Task events end to end: real OpenMP task programs (clang, libomp) under
// the OMPT tool with NODEKEEPER_TASKS=lossless, a real daemon recording
// them; the graph rebuilt from the recording file is checked exactly.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "taskgraph/task_event_translator.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/recording_reader.h"
#include "taskgraph/task_graph.h"
#include "task_daemon_fixture.h"
#include "testlib/background_program.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"
#include "wire/compact_events.h"
#include "wire/publish_limits.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace nk::test {
namespace {

constexpr uid_t kNobody = 65534;
constexpr const char* kWatchAsOtherFlag = "--nk-watch-as-other";

// Run as another user: list the sessions, then try to watch one.
// How the tool names a task construct of omp_tasks.cc: the function that
// holds it and the line of its pragma, the first line after `after` (when
// given) that holds `pragma`.
std::string constructName(const std::string& function, const std::string& pragma, const std::string& after = "") {
  std::ifstream source(envOr("NK_TASKS_SOURCE"));
  std::string line;
  bool past = after.empty();
  for (int number = 1; std::getline(source, line); ++number) {
    if (!past) {
      past = line.find(after) != std::string::npos;
      continue;
    }
    if (line.find(pragma) != std::string::npos) return function + " (omp_tasks.cc:" + std::to_string(number) + ")";
  }
  ADD_FAILURE() << "no '" << pragma << "' in " << envOr("NK_TASKS_SOURCE");
  return {};
}

int watchAsOther(const std::string& socket, uint64_t session) {
  auto stub = v1::TasksService::NewStub(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    v1::SessionList list;
    grpc::Status s = stub->ListSessions(&context, v1::ListSessionsRequest(), &list);
    std::printf("list code %d sessions %d\n", static_cast<int>(s.error_code()), list.sessions_size());
  }
  grpc::ClientContext context;
  v1::WatchRequest request;
  request.set_session_id(session);
  auto reader = stub->Watch(&context, request);
  v1::TaskEventBatch batch;
  int events = 0;
  while (reader->Read(&batch)) events += batch.events_size();
  grpc::Status s = reader->Finish();
  std::printf("watch code %d: %s\nevents %d\n", static_cast<int>(s.error_code()), s.error_message().c_str(), events);
  return 0;
}

class TasksTest : public TaskDaemonFixture {
 protected:
  explicit TasksTest(std::vector<std::string> daemon_args = {}) : TaskDaemonFixture("tasks", std::move(daemon_args)) {}

  // What the daemon says as a Publish stream opens, key by key.
  std::map<std::string, std::vector<std::string>> publishMetadata() {
    grpc::ClientContext context;
    auto stream = tasks_->Publish(&context);
    stream->WaitForInitialMetadata();
    std::map<std::string, std::vector<std::string>> said;
    for (const auto& [key, value] : context.GetServerInitialMetadata())
      said[std::string(key.data(), key.size())].emplace_back(value.data(), value.size());
    EXPECT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
    return said;
  }

  // omp_tasks with `args`, under the tool and this daemon.
  std::vector<std::string> programArgv(const std::vector<std::string>& args, const std::string& mode = "lossless",
                                       const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                                     "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=" + mode,
                                     "OMP_NUM_THREADS=4"};
    argv.insert(argv.end(), extra_env.begin(), extra_env.end());
    argv.push_back(envOr("NK_TASKS_PROGRAM"));
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  ProcessResult runProgram(const std::vector<std::string>& args, const std::string& mode = "lossless",
                           const std::vector<std::string>& extra_env = {}) {
    return nk::test::runProgram(programArgv(args, mode, extra_env), std::nullopt, std::chrono::seconds(60));
  }
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
  // Two task constructs in fib_task, each named by its line.
  EXPECT_EQ(functions, (std::set<std::string>{constructName("fib_task", "#pragma omp task shared(a)"),
                                              constructName("fib_task", "#pragma omp task shared(b)")}));
}

// The library sends the split form only to a daemon that names it, in the
// Publish stream's initial metadata (task_forms_test holds the library to
// that, against a daemon from before the form and one that names it).
TEST_F(TasksTest, TheDaemonNamesTheFormsItReadsAsAPublishStreamOpens) {
  auto said = publishMetadata();
  const std::vector<std::string>& forms = said[std::string(wire::CompactEvents::kFormsMetadataKey)];
  ASSERT_EQ(forms.size(), 1u);
  EXPECT_TRUE(wire::CompactEvents::namesSplit(forms[0])) << forms[0];
  // And its limits, at their defaults here.
  EXPECT_EQ(said[std::string(wire::PublishLimits::kMaxMessageBytesKey)], std::vector<std::string>{"4194304"});
  EXPECT_EQ(said[std::string(wire::PublishLimits::kMessagesPerSecondKey)], std::vector<std::string>{"10000"});
}

// A daemon an administrator gave the least message size there is and a low
// message rate ends a stream that goes past either. The library keeps under
// both, as the daemon names them when the stream opens, and a lossless
// program loses nothing. (Before, its first message over the size ended
// the stream: 68,833 of 9.2 million events of a UTS run reached a daemon
// at 64 KiB, and the program said the daemon was not there.)
class TasksUnderTightLimitsTest : public TasksTest {
 protected:
  TasksUnderTightLimitsTest() : TasksTest({"--max-message-bytes", "4096", "--stream-messages-per-second", "1000"}) {}
};

TEST_F(TasksUnderTightLimitsTest, TheDaemonNamesItsLimits) {
  auto said = publishMetadata();
  EXPECT_EQ(said[std::string(wire::PublishLimits::kMaxMessageBytesKey)], std::vector<std::string>{"4096"});
  EXPECT_EQ(said[std::string(wire::PublishLimits::kMessagesPerSecondKey)], std::vector<std::string>{"1000"});
}

TEST_F(TasksUnderTightLimitsTest, ALosslessProgramKeepsUnderThemAndLosesNothing) {
  // About 77,000 events: 1,300 messages of at most 59 events, past the
  // first second's burst of the rate.
  ProcessResult run = runProgram({"fib", "20"}, "lossless", {"NK_DEBUG=1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("fib=6765 tasks=(\\d+)"))) << run.out;
  const uint64_t expected = std::stoull(m[1]);
  EXPECT_NE(run.err.find(" 0 lost"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" 0 dropped"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("not reaching"), std::string::npos) << run.err;
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].tasks(), expected);
  TaskGraph graph = graphFromRecording();
  ASSERT_EQ(graph.tasks().size(), expected);
  std::set<std::string> functions;
  for (const auto& t : graph.tasks()) {
    EXPECT_EQ(t.state, TaskState::kFinished) << t.id;
    functions.insert(graph.functions()[t.function]);
  }
  EXPECT_EQ(functions, (std::set<std::string>{constructName("fib_task", "#pragma omp task shared(a)"),
                                              constructName("fib_task", "#pragma omp task shared(b)")}));
}

// A stand-in for a daemon whose gRPC is slow to start a stream (a busy
// node, or its callback threads asleep): it names the least message size
// there is only 300 ms after the stream opens, and counts the tasks it is
// told of. gRPC itself ends a call whose message is larger.
class LateLimitsDaemon final : public v1::TasksService::Service {
 public:
  grpc::Status Publish(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::TaskControl, v1::TaskEventBatch>* stream) override {
    std::this_thread::sleep_for(300ms);
    context->AddInitialMetadata(std::string(wire::PublishLimits::kMaxMessageBytesKey),
                                std::to_string(wire::PublishLimits::kMinMessageBytes));
    stream->SendInitialMetadata();
    TaskEventTranslator translator;
    v1::TaskEventBatch batch;
    std::vector<GraphEvent> events;
    while (stream->Read(&batch)) {
      events.clear();
      if (!translator.toGraphEvents(batch, events).empty()) ++unreadable;
      for (const GraphEvent& e : events) created += e.type == GraphEvent::Type::kCreated;
    }
    return grpc::Status::OK;
  }
  std::atomic<uint64_t> created{0}, unreadable{0};
};

// The library sends nothing before the daemon names its limits. (It sent
// its first messages at the defaults when the names came late, and a
// daemon that takes 4 KiB ended the stream: CI saw a tight-limits run
// record no task at all.)
TEST(TasksAgainstALateDaemon, NothingIsSentBeforeTheDaemonNamesItsLimits) {
  TempDir dir("tasks-late", TempDir::Access::kShared);
  LateLimitsDaemon daemon;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + (dir / "nk.sock").string(), grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(static_cast<int>(wire::PublishLimits::kMinMessageBytes));
  builder.RegisterService(&daemon);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  ProcessResult run = runProgram({"/usr/bin/env", "NODEKEEPER_SOCKET=" + (dir / "nk.sock").string(),
                                  "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=lossless",
                                  "OMP_NUM_THREADS=4", "NK_DEBUG=1", envOr("NK_TASKS_PROGRAM"), "fib", "20"},
                                 std::nullopt, 60s);
  server->Shutdown();
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("fib=6765 tasks=(\\d+)"))) << run.out;
  EXPECT_EQ(daemon.created.load(), std::stoull(m[1])) << run.err;
  EXPECT_EQ(daemon.unreadable.load(), 0u);
  EXPECT_EQ(run.err.find("task events are not reaching"), std::string::npos) << run.err;
}

// A daemon at a low message rate that stalls (stopped here for 4 s, as a
// busy node may hold it) then finds the messages the program sent meanwhile
// in a clump, more than the rate's one-second burst. The program kept to
// the rate; the daemon reads the clump as the rate allows and the recording
// loses nothing. (The daemon used to count the clump against the rate and
// end the stream: the rest of the program's events were lost.)
class TasksUnderALowRateTest : public TasksTest {
 protected:
  TasksUnderALowRateTest() : TasksTest({"--stream-messages-per-second", "20"}) {}
};

TEST_F(TasksUnderALowRateTest, AClumpAfterTheDaemonStallsIsReadAtTheRateAndNothingIsLost) {
  // About 4 s of 2,000 us tasks on 2 cores: events all along the stall.
  const long tasks = 4000;
  BackgroundProgram program;
  ASSERT_TRUE(program.start(programArgv({"steady", std::to_string(tasks), "2000"}, "lossless", {"NK_DEBUG=1"}),
                            dir_ / "clump.out", dir_ / "clump.err"));
  ASSERT_TRUE(waitFor([&] { return !sessions().empty(); }, 60s)) << program.err();
  // 4 s: the program, paced at nine tenths of the rate, sends up to 3.6
  // seconds' worth meanwhile, where more than one second's is a clump.
  ASSERT_EQ(::kill(daemon_.pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(4s);
  ::kill(daemon_.pid(), SIGCONT);
  ASSERT_EQ(program.wait(120s), 0) << program.err();
  EXPECT_NE(program.out().find("tasks=" + std::to_string(tasks)), std::string::npos) << program.out();
  const std::string err = program.err();
  EXPECT_NE(err.find(" 0 lost"), std::string::npos) << err;
  EXPECT_NE(err.find(" 0 dropped"), std::string::npos) << err;
  EXPECT_EQ(err.find("not reaching"), std::string::npos) << err;
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].tasks(), static_cast<uint64_t>(tasks));
  EXPECT_EQ(list[0].recording_stopped(), "");
  // It was held to the rate: the stalled daemon found more than a second's
  // worth waiting (else this test would not test the clump).
  const std::string log = readFile(daemon_.stderrPath());
  EXPECT_NE(log.find("holding a Tasks.Publish stream of uid " + std::to_string(geteuid())), std::string::npos) << log;
}

// A daemon killed while the program exits, after gRPC has taken the last
// writes but before the daemon read them: the program said nothing, as if
// every event sent had been recorded. It says now that the last may not
// have been. (Killed any earlier, the writes after fail and are counted
// lost: said too.) The daemon is stopped first so that the writes wait
// unread; the exit then waits for its answer (the stall limit, 10 s) until
// the kill ends the stream.
TEST_F(TasksTest, ADaemonKilledAsTheProgramExitsIsSaidToHaveMissedTheLastEvents) {
  BackgroundProgram program;
  ASSERT_TRUE(program.start(programArgv({"steady", "1000", "500"}), dir_ / "killed.out", dir_ / "killed.err"));
  ASSERT_TRUE(waitFor([&] { return !sessions().empty(); }, 60s)) << program.err();
  ASSERT_EQ(::kill(daemon_.pid(), SIGSTOP), 0);
  // About 0.25 s of tasks on 2 cores; then the program waits at its exit.
  std::this_thread::sleep_for(3s);
  ASSERT_EQ(::kill(daemon_.pid(), SIGKILL), 0);
  ::kill(daemon_.pid(), SIGCONT);
  ASSERT_EQ(program.wait(60s), 0) << program.err();
  EXPECT_NE(program.out().find("tasks=1000"), std::string::npos) << program.out();
  const std::string err = program.err();
  std::smatch m;
  const bool said_unread = std::regex_search(err, m, std::regex("of the [0-9]+ events sent, the last may not have been recorded"));
  const bool said_lost = std::regex_search(err, m, std::regex(" [1-9][0-9]* lost"));
  EXPECT_TRUE(said_unread || said_lost) << err;
  EXPECT_EQ(err.find("took none for"), std::string::npos) << "the kill, not the patience, ended the wait\n" << err;
}

// Under NK_DEBUG a normal lossless exit says what recording cost the
// program: every event sent, how long its threads waited for room, and the
// shipper thread's CPU (read when it ends, so a few thousand tasks show).
TEST_F(TasksTest, UnderNkDebugTheExitLineSaysWhatRecordingCost) {
  ProcessResult run = runProgram({"fib", "20"}, "lossless", {"NK_DEBUG=1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("fib=6765 tasks=(\\d+)"))) << run.out;
  const uint64_t tasks = std::stoull(m[1]);
  ASSERT_TRUE(std::regex_search(run.err, m, std::regex("task events: (\\d+) sent, 0 lost"))) << run.err;
  EXPECT_GE(std::stoull(m[1]), 2 * tasks) << "each task is created and ends, at least";
  EXPECT_TRUE(std::regex_search(run.err, m, std::regex("threads waited [0-9.]+ s in all"))) << run.err;
  ASSERT_TRUE(std::regex_search(run.err, m, std::regex("task shipper's thread used ([0-9.]+) s of CPU"))) << run.err;
  EXPECT_GT(std::stod(m[1]), 0.0) << run.err;
  // Without NK_DEBUG a normal exit stays silent.
  ProcessResult quiet = runProgram({"fib", "20"}, "lossless");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("task shipper"), std::string::npos) << quiet.err;
  // The daemon read every event and said so: nothing may be missing.
  EXPECT_EQ(run.err.find("may not have been recorded"), std::string::npos) << run.err;
  EXPECT_EQ(quiet.err.find("may not have been recorded"), std::string::npos) << quiet.err;
}

// The program's process, thread by thread: name and scheduling policy (read
// from the kernel, by thread id).
std::map<std::string, int> threadPolicies(pid_t pid) {
  std::map<std::string, int> policies;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::string name;
    std::getline(std::ifstream(entry.path() / "comm"), name);
    const int policy = sched_getscheduler(static_cast<pid_t>(std::stol(entry.path().filename().string())));
    if (policy >= 0) policies[name] = policy;
  }
  return policies;
}

// The shipper runs at SCHED_BATCH, so that its wake-ups never preempt the
// program's own threads on a full node; the program's threads keep theirs.
TEST_F(TasksTest, TheShipperNeverPreemptsTheProgramsThreads) {
  const auto stop = dir_ / "stop-shipper-policy";
  BackgroundProgram program;
  ASSERT_TRUE(program.start(programArgv({"until", stop.string(), "12"}), dir_ / "policy.out", dir_ / "policy.err"));
  // Read once the daemon has the program's session: the shipper opened it,
  // after it set its policy (its name comes before).
  std::map<std::string, int> policies;
  const bool seen = waitFor([&] {
    if (sessions().empty()) return false;
    policies = threadPolicies(program.pid());
    return policies.count("nk-shipper") != 0;
  }, 60s);
  std::ofstream(stop) << "stop\n";
  EXPECT_EQ(program.wait(60s), 0) << program.err();
  ASSERT_TRUE(seen) << "no thread named nk-shipper";
  EXPECT_EQ(policies["nk-shipper"], SCHED_BATCH);
  EXPECT_EQ(policies["omp_tasks_clang"], SCHED_OTHER) << "the program's main thread";
}

// Temanejo's Figure 2: two chains of ten, every edge and address exact.
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

// A blocked Cholesky of 3 x 3 tiles: ten tasks of four kinds, depend(in)
// and depend(inout) on tiles. The expected graph is worked out by hand from
// the program's loop (tasks in creation order):
//   0 potrf 00 | 1 trsm 10 | 2 trsm 20 | 3 syrk 11 | 4 gemm 21 | 5 syrk 22
//   6 potrf 11 | 7 trsm 21 | 8 syrk 22 | 9 potrf 22
TEST_F(TasksTest, BlockedCholeskyHasEveryEdgeAndAddress) {
  ProcessResult run = runProgram({"cholesky"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::map<std::string, uint64_t> tile;
  std::regex line("tile (\\d) (\\d) (0x[0-9a-f]+)");
  for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), line); it != std::sregex_iterator(); ++it)
    tile[(*it)[1].str() + (*it)[2].str()] = std::stoull((*it)[3], nullptr, 16);
  ASSERT_EQ(tile.size(), 6u) << run.out;
  uint64_t frames = 0;
  TaskGraph graph = graphFromRecording(&frames);
  ASSERT_EQ(graph.tasks().size(), 10u);
  // One thread creates them all, so creation times give the program's order.
  std::vector<const TaskGraph::Task*> order;
  for (const auto& t : graph.tasks()) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->created_ns < b->created_ns; });
  std::map<uint64_t, int> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]->id] = static_cast<int>(i);
  std::set<std::tuple<int, int, uint64_t>> expected = {
      {0, 1, tile["00"]}, {0, 2, tile["00"]}, {1, 3, tile["10"]}, {1, 4, tile["10"]},
      {2, 4, tile["20"]}, {2, 5, tile["20"]}, {3, 6, tile["11"]}, {6, 7, tile["11"]},
      {4, 7, tile["21"]}, {7, 8, tile["21"]}, {5, 8, tile["22"]}, {8, 9, tile["22"]}};
  std::set<std::tuple<int, int, uint64_t>> recorded;
  for (const auto& e : graph.edges()) recorded.insert({position.at(e.from), position.at(e.to), e.address});
  EXPECT_EQ(graph.edges().size(), expected.size());
  EXPECT_EQ(recorded, expected);
  // Four constructs: potrf, trsm, gemm and syrk each have one name.
  std::vector<uint32_t> f;
  for (const auto* t : order) {
    EXPECT_EQ(t->state, TaskState::kFinished);
    f.push_back(t->function);
  }
  EXPECT_EQ(f[0], f[6]);
  EXPECT_EQ(f[0], f[9]);
  EXPECT_EQ(f[1], f[2]);
  EXPECT_EQ(f[1], f[7]);
  EXPECT_EQ(f[3], f[5]);
  EXPECT_EQ(f[3], f[8]);
  EXPECT_EQ(std::set<uint32_t>(f.begin(), f.end()).size(), 4u);
  const std::string in = "void cholesky_tasks()";
  EXPECT_EQ(graph.functions()[f[0]], constructName("cholesky_tasks", "depend(inout : g_tile[k][k])", in));
  EXPECT_EQ(graph.functions()[f[1]], constructName("cholesky_tasks", "depend(inout : g_tile[i][k])", in));
  EXPECT_EQ(graph.functions()[f[3]], constructName("cholesky_tasks", "depend(inout : g_tile[i][i])", in));
  EXPECT_EQ(graph.functions()[f[4]], constructName("cholesky_tasks", "depend(inout : g_tile[i][j])", in));
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

TEST_F(TasksTest, ExportWritesPerfettoJsonAndDotFromTheDaemon) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  std::string id = std::to_string(list[0].session_id());
  auto trace = dir_ / "trace.json";
  ProcessResult r = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export", id, "--format",
                                          "json", "--out", trace.string()});
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
  EXPECT_NE(dot.out.find(constructName("main", "#pragma omp task depend(inout : x)")), std::string::npos) << dot.out;
  // Bad input: one line each.
  ProcessResult unknown = nk::test::runProgram(
      {cliPath(), "--socket", daemon_.socket().string(), "export", "999", "--format", "dot", "--out", "-"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no task session with id or pid 999"), std::string::npos) << unknown.err;
  ProcessResult format = nk::test::runProgram(
      {cliPath(), "--socket", daemon_.socket().string(), "export", id, "--format", "svg", "--out", "-"});
  EXPECT_EQ(format.exit_code, 1);
  EXPECT_NE(format.err.find("perfetto, json, otf2 or dot, not 'svg'"), std::string::npos) << format.err;
}

TEST_F(TasksTest, GraphDrawsSvgAndStatsCountRunsPerFunction) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  std::string id = std::to_string(list[0].session_id());
  std::string socket = daemon_.socket().string();
  auto svg_path = dir_ / "graph.svg";
  ProcessResult svg = nk::test::runProgram({cliPath(), "--socket", socket, "graph", id, "--out", svg_path.string()});
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  std::string text = readFile(svg_path);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_NE(text.find("<svg"), std::string::npos) << text.substr(0, 200);
  EXPECT_EQ(count("class=\"node\""), 20u);
  EXPECT_EQ(count("class=\"edge\""), 18u);
  ProcessResult bad = nk::test::runProgram({cliPath(), "--socket", socket, "graph", id, "--format", "png"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("svg or dot, not 'png'"), std::string::npos) << bad.err;

  ProcessResult stats = nk::test::runProgram({cliPath(), "--socket", socket, "--json", "tasks", "stats", id});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  auto json = nlohmann::json::parse(stats.out);
  EXPECT_EQ(json["tasks"], 20);
  EXPECT_EQ(json["edges"], 18);
  EXPECT_EQ(json["states"]["finished"], 20);
  EXPECT_EQ(json["states"]["running"], 0);
  ASSERT_EQ(json["functions"].size(), 2u);
  for (const auto& f : json["functions"]) {
    EXPECT_EQ(f["runs"], 10) << f;
    EXPECT_LE(f["min_ns"].get<int64_t>(), f["mean_ns"].get<int64_t>());
    EXPECT_LE(f["mean_ns"].get<int64_t>(), f["max_ns"].get<int64_t>());
  }
  // In clang's outlined region of main, which no symbol of the user's
  // names: named by main and the lines.
  std::set<std::string> names{json["functions"][0]["function"], json["functions"][1]["function"]};
  const std::string left = constructName("main", "#pragma omp task depend(inout : x)");
  const std::string right = constructName("main", "#pragma omp task depend(inout : y)");
  EXPECT_EQ(names, (std::set<std::string>{left, right}));
  ProcessResult table = nk::test::runProgram({cliPath(), "--socket", socket, "tasks", "stats", id});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("20 tasks (not_queued 0, queued 0, running 0, finished 20), 18 edges (18 dependences)"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("FUNCTION"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(left), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(right), std::string::npos) << table.out;
}

TEST_F(TasksTest, Otf2ExportIsReadByOtf2Print) {
  ASSERT_EQ(runProgram({"cholesky"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  auto archive = dir_ / "trace";
  ProcessResult r = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export",
                                          std::to_string(list[0].pid()), "--format", "otf2", "--out",
                                          archive.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("10 tasks, 12 edges written to " + archive.string() + "/traces.otf2"), std::string::npos)
      << r.err;
  ProcessResult print = nk::test::runProgram({"/usr/bin/otf2-print", (archive / "traces.otf2").string()});
  ASSERT_EQ(print.exit_code, 0) << print.err;
  size_t enters = 0, leaves = 0;
  std::istringstream lines(print.out);
  for (std::string line; std::getline(lines, line);) {
    enters += line.rfind("ENTER", 0) == 0;
    leaves += line.rfind("LEAVE", 0) == 0;
  }
  EXPECT_EQ(enters, 10u) << print.out;
  EXPECT_EQ(leaves, 10u);
  // The archive is not overwritten.
  ProcessResult again = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export",
                                              std::to_string(list[0].pid()), "--format", "otf2", "--out",
                                              archive.string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(archive.string()), std::string::npos) << again.err;
}

TEST_F(TasksTest, OnlyTheOwnerOrAnAdminMayWatchASession) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a frontend as uid " << kNobody;
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  auto self = dir_ / "tasks_test";
  std::filesystem::copy_file("/proc/self/exe", self);
  std::filesystem::permissions(self, std::filesystem::perms(0755));
  ProcessResult other = nk::test::runProgram(
      {self.string(), kWatchAsOtherFlag, daemon_.socket().string(), std::to_string(list[0].session_id())}, kNobody);
  ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
  EXPECT_NE(other.out.find("sessions 0"), std::string::npos) << other.out;  // not listed for others
  EXPECT_NE(other.out.find("watch code " + std::to_string(grpc::StatusCode::PERMISSION_DENIED)), std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("belongs to another user"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("events 0"), std::string::npos) << other.out;
  // The owner (root, also the admin here) watches it whole, as structured events.
  grpc::ClientContext context;
  v1::WatchRequest request;
  request.set_session_id(list[0].session_id());
  auto reader = tasks_->Watch(&context, request);
  v1::TaskEventBatch batch;
  int created = 0;
  while (reader->Read(&batch)) {
    EXPECT_EQ(batch.packed_size(), 0);
    for (const auto& e : batch.events()) created += e.has_created();
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(created, 20);
}

// A daemon that hangs (stopped here) takes no events: a lossless program
// with a small buffer stops waiting for it after the stall limit (1 s
// here), drops what does not fit (counted), finishes with the right result
// and exits.
TEST_F(TasksTest, AHungDaemonDoesNotHoldALosslessProgram) {
  ASSERT_EQ(::kill(daemon_.pid(), SIGSTOP), 0);
  auto start = std::chrono::steady_clock::now();
  ProcessResult run =
      runProgram({"fib", "16"}, "lossless", {"NODEKEEPER_TASK_BUFFER=64", "NODEKEEPER_TASKS_STALL_S=1"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::kill(daemon_.pid(), SIGCONT);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("fib=987"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("nodekeeperd has taken no task events for 1 s"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("dropped (nodekeeperd took none for 1 s)"), std::string::npos) << run.err;
  EXPECT_LT(seconds, 50.0) << "the runner's own limit is 60 s";
}

// A recording cut inside a frame (a crash while appending) or with a flipped
// byte is read up to its last good frame, from its file without a daemon
// and through the daemon, with one warning that says where it stopped.
TEST_F(TasksTest, DamagedRecordingsAreReadUpToTheLastGoodFrame) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  std::filesystem::path file;
  for (const auto& entry : std::filesystem::directory_iterator(daemon_.stateDir() / "recordings"))
    if (entry.path().extension() == ".nkrec") file = entry.path();
  ASSERT_FALSE(file.empty());
  std::string whole = readFile(file);
  auto cut = dir_ / "cut.nkrec";
  {
    std::ofstream out(cut, std::ios::binary);
    out << whole.substr(0, 40);  // past the file's header, inside the first frame
  }
  std::string socket = daemon_.socket().string();
  ProcessResult offline = nk::test::runProgram({cliPath(), "--socket", "/nonexistent.sock", "--json", "tasks",
                                                "stats", cut.string()});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_NE(offline.err.find("nodekeeper: warning: " + cut.string()), std::string::npos) << offline.err;
  EXPECT_NE(offline.err.find("byte offset"), std::string::npos) << offline.err;
  auto json = nlohmann::json::parse(offline.out);
  EXPECT_EQ(json["tasks"], 0) << offline.out;
  EXPECT_NE(offline.err.find("using the 0 tasks recorded before it"), std::string::npos) << offline.err;
  // The whole file, offline, has everything.
  ProcessResult full = nk::test::runProgram({cliPath(), "--json", "tasks", "stats", file.string()});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(full.err, "");
  EXPECT_EQ(nlohmann::json::parse(full.out)["states"]["finished"], 20);

  // Through the daemon: the ended session's recording with a byte flipped
  // in its last frame.
  whole[whole.size() - 3] ^= 0x5a;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << whole;
  }
  ProcessResult viaDaemon = nk::test::runProgram(
      {cliPath(), "--socket", socket, "export", std::to_string(list[0].session_id()), "--format", "dot", "--out", "-"});
  ASSERT_EQ(viaDaemon.exit_code, 0) << viaDaemon.err;
  EXPECT_NE(viaDaemon.err.find("nodekeeper: warning: task session " + std::to_string(list[0].session_id())),
            std::string::npos)
      << viaDaemon.err;
  EXPECT_NE(viaDaemon.err.find("checksum"), std::string::npos) << viaDaemon.err;
  EXPECT_NE(viaDaemon.out.find("digraph tasks"), std::string::npos);
  // Not a recording at all: one clear line, exit 1.
  auto junk = dir_ / "junk.nkrec";
  {
    std::ofstream out(junk);
    out << "not a recording";
  }
  ProcessResult bad = nk::test::runProgram({cliPath(), "tasks", "stats", junk.string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("nodekeeper: tasks stats: "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(junk.string()), std::string::npos) << bad.err;
}

// The daemon killed (-9) mid-run: the program finishes unchanged and says
// so once; the recording on disk is read up to its last complete frame.
TEST_F(TasksTest, DaemonKilledMidRunLeavesTheProgramAndARecording) {
  BackgroundProgram program;
  ASSERT_TRUE(program.start(programArgv({"steady", "3000", "500"}), dir_ / "steady.out", dir_ / "steady.err"));
  // Until the session has tasks, then kill the daemon.
  bool streaming = false;
  for (int i = 0; i < 100 && !streaming; ++i) {
    std::this_thread::sleep_for(20ms);
    auto list = sessions();
    streaming = !list.empty() && list[0].tasks() > 0;
  }
  ASSERT_TRUE(streaming);
  auto files = recordings();
  ASSERT_EQ(files.size(), 1u);
  daemon_.kill9();
  EXPECT_EQ(program.wait(std::chrono::seconds(60)), 0) << program.err();
  EXPECT_NE(program.out().find("tasks=3000"), std::string::npos) << program.out();
  std::vector<std::string> lines;
  std::istringstream err(program.err());
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  // Said once as the events stopped getting through, counted at exit.
  size_t told = 0;
  for (const auto& line : lines) told += line.find("task events are not reaching nodekeeperd") != std::string::npos;
  EXPECT_EQ(told, 1u) << program.err();

  ProcessResult stats = nk::test::runProgram({cliPath(), "--json", "tasks", "stats", files[0].string()});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  auto json = nlohmann::json::parse(stats.out);
  EXPECT_GT(json["tasks"].get<int>(), 0) << stats.out;
  EXPECT_LT(json["states"]["finished"].get<int>(), 3000) << stats.out;
}

TEST_F(TasksTest, WithoutADaemonTheProgramRunsOnAndSaysSoOnce) {
  daemon_.stop();
  ProcessResult run = runProgram({"figure2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // One line, from whichever part of the library noticed first.
  std::vector<std::string> lines;
  std::istringstream err(run.err);
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_TRUE(lines[0].rfind("nodekeeper: task events are not reaching nodekeeperd", 0) == 0 ||
              lines[0].rfind("nodekeeper: nodekeeperd not reachable at", 0) == 0)
      << lines[0];
}

// `debug` on a recording: the console steps through the events as if the
// program ran, and refuses to steer it; the same through the daemon for the
// ended session.
TEST_F(TasksTest, DebugReplaysARecordingAndAnEndedSession) {
  ASSERT_EQ(runProgram({"figure2"}).exit_code, 0);
  auto files = recordings();
  ASSERT_EQ(files.size(), 1u);
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  ASSERT_FALSE(list[0].live());
  auto batch = dir_ / "replay.txt";
  {
    std::ofstream out(batch);
    out << "next 5\nstatus\nuntil finished 20\nstatus\nbreak\n";
  }
  auto parse = [](const std::string& out) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  };
  for (const std::string& source : {files[0].string(), std::to_string(list[0].session_id())}) {
    SCOPED_TRACE(source);
    ProcessResult r = nk::test::runProgram(
        {cliPath(), "--socket", daemon_.socket().string(), "debug", "--batch", batch.string(), source}, std::nullopt,
        std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 1) << r.err;  // the refused break
    EXPECT_EQ(r.err, "") << r.err;       // a whole recording: no warning
    auto lines = parse(r.out);
    ASSERT_EQ(lines.size(), 5u) << r.out;
    // 20 tasks created, queued?, started, finished, and 18 dependences.
    uint64_t total = lines[0]["events"];
    EXPECT_GE(total, 20u * 3 + 18) << lines[0];
    EXPECT_EQ(lines[0]["ok"], true) << lines[0];
    EXPECT_EQ(lines[0]["event"], 5) << lines[0];
    ASSERT_EQ(lines[0]["applied"].size(), 5u) << lines[0];
    EXPECT_EQ(lines[0]["applied"][0].get<std::string>().rfind("event 1/" + std::to_string(total) + ": ", 0), 0u)
        << lines[0];
    const auto& early = lines[1]["status"];
    uint64_t known = early["not_queued"].get<uint64_t>() + early["queued"].get<uint64_t>() +
                     early["running"].get<uint64_t>() + early["finished"].get<uint64_t>();
    EXPECT_GE(known, 1u) << lines[1];
    EXPECT_LE(known, 5u) << lines[1];
    EXPECT_LT(early["finished"].get<uint64_t>(), 20u) << lines[1];
    EXPECT_EQ(early["live"], false);
    EXPECT_EQ(lines[2]["ok"], true) << lines[2];
    EXPECT_GT(lines[2]["event"].get<uint64_t>(), 5u) << lines[2];
    EXPECT_LE(lines[2]["event"].get<uint64_t>(), total) << lines[2];
    const auto& done = lines[3]["status"];
    EXPECT_EQ(done["finished"], 20) << lines[3];
    EXPECT_EQ(done["running"], 0) << lines[3];
    EXPECT_EQ(done["queued"], 0) << lines[3];
    EXPECT_EQ(done["not_queued"], 0) << lines[3];
    ASSERT_EQ(done["functions"].size(), 2u) << lines[3];
    for (const auto& f : done["functions"]) EXPECT_EQ(f["finished"], 10) << f;
    EXPECT_EQ(lines[4]["command"], "break");
    EXPECT_EQ(lines[4]["ok"], false);
    EXPECT_EQ(lines[4]["error"], "replay: a recording cannot be steered") << lines[4];
    EXPECT_EQ(lines[4]["event"], lines[2]["event"]);  // refused: nothing moved
  }
}

// `graph --watch` follows a running program: FILE appears while it runs
// and, once it has ended, holds the whole graph.
TEST_F(TasksTest, GraphWatchRedrawsTheSvgAsTheGraphGrows) {
  std::string socket = daemon_.socket().string();
  auto svg_path = dir_ / "live.svg";
  // Refused up front: standard output, and a file that cannot grow.
  ProcessResult no_out = nk::test::runProgram({cliPath(), "--socket", socket, "graph", "1", "--watch"});
  EXPECT_EQ(no_out.exit_code, 1);
  EXPECT_NE(no_out.err.find("--watch needs --out FILE"), std::string::npos) << no_out.err;
  ProcessResult file = nk::test::runProgram(
      {cliPath(), "--socket", socket, "graph", (dir_ / "x.nkrec").string(), "--watch", "--out", svg_path.string()});
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_NE(file.err.find("a recording's file cannot grow"), std::string::npos) << file.err;

  BackgroundProgram program;
  ASSERT_TRUE(program.start(programArgv({"steady", "300", "3000"}), dir_ / "steady.out", dir_ / "steady.err"));
  uint64_t session = 0;
  for (int i = 0; i < 250 && session == 0; ++i) {
    for (const auto& s : sessions())
      if (s.pid() == program.pid() && s.live()) session = s.session_id();
    if (session == 0) std::this_thread::sleep_for(10ms);
  }
  ASSERT_NE(session, 0u) << program.err();
  BackgroundProgram watcher;
  ASSERT_TRUE(watcher.start({cliPath(), "--socket", socket, "graph", std::to_string(session), "--watch", "--format",
                             "svg", "--out", svg_path.string()},
                            dir_ / "watch.out", dir_ / "watch.err"));
  bool seen_while_running = false;
  int code = -1;
  for (int i = 0; i < 6000 && code == -1; ++i) {
    code = program.wait(5ms);
    if (code == -1 && std::filesystem::exists(svg_path)) seen_while_running = true;
  }
  ASSERT_EQ(code, 0) << program.err();
  EXPECT_TRUE(seen_while_running) << watcher.err();
  // The session's end ends the watch, without Ctrl-C.
  int watch_code = watcher.wait(30000ms);
  if (watch_code == -1) watcher.kill();
  ASSERT_EQ(watch_code, 0) << watcher.err();
  std::string text = readFile(svg_path);
  size_t nodes = 0;
  for (size_t at = text.find("class=\"node\""); at != std::string::npos; at = text.find("class=\"node\"", at + 1))
    ++nodes;
  EXPECT_EQ(nodes, 300u) << text.substr(0, 300);
  EXPECT_FALSE(std::filesystem::exists(svg_path.string() + ".tmp"));
  // One line per refresh, the last with the whole graph.
  std::vector<std::string> progress;
  std::istringstream err(watcher.err());
  for (std::string line; std::getline(err, line);) progress.push_back(line);
  ASSERT_GE(progress.size(), 2u) << watcher.err();
  for (const auto& line : progress) EXPECT_EQ(line.rfind("graph: ", 0), 0u) << line;
  EXPECT_EQ(progress.back(), "graph: 300 tasks, 0 edges -> " + svg_path.string()) << watcher.err();
}

}  // namespace
}  // namespace nk::test

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], nk::test::kWatchAsOtherFlag) == 0)
    return nk::test::watchAsOther(argv[2], std::stoull(argv[3]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
