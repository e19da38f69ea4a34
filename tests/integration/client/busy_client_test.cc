// The client library on a busy node (issue 17): a real nodekeeperd
// --emulate, every host CPU kept busy (testlib's HostLoad: NK_TEST_HOST_LOAD
// when set, as under `./run soak`, else NK_BUSY_CLIENT_LOAD per CPU,
// default 2), and real OpenMP programs (omp_tasks, clang on libomp) with
// libnodekeeper as their OMPT tool.
//
//   - Lossless means lossless: fib(N)'s task tree (NK_BUSY_CLIENT_FIB,
//     default 29: 1.66 M tasks; `./run soak` runs 35: 29.9 M) run with
//     NODEKEEPER_TASKS=lossless. The daemon's recording must hold every
//     event the program made, counted against numbers worked out here from
//     N alone: each task created, started and finished once, each taskwait
//     begun and ended once; and the library says nothing.
//   - Short runs never cry wolf: NK_BUSY_CLIENT_RUNS (default 20; 1000 in
//     the soak) short runs, half under a power budget (managed), half for
//     task events only (traced): no "lost" line, no nodekeeper line at all
//     on stderr, and each run as asked in the daemon's own view.
//
// Both print a table; speed is read there, never asserted.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nodekeeper/v1/apps.grpc.pb.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/recording_reader.h"
#include "testlib/background_program.h"
#include "testlib/daemon_fixture.h"
#include "testlib/host_load.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"
#include "wire/compact_events.h"
#include "wire/task_event_record.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

long envLong(const char* name, long fallback) {
  std::string value = envOr(name);
  return value.empty() ? fallback : std::atol(value.c_str());
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

uint64_t fibonacci(int n) {
  uint64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

// What the recording holds, by kind; taskwaits are OMPT's sync regions of
// kind 1 (TaskTool::sync), barriers are left out (one per thread).
struct RecordedEvents {
  uint64_t frames = 0, created = 0, started = 0, finished = 0, taskwait_begun = 0, taskwait_ended = 0;
  // A task that waits is switched in again when it resumes: one start
  // event or more per task, so starts are counted by task.
  uint64_t distinct_created = 0, distinct_started = 0;
  std::string stop_reason;
};

RecordedEvents countRecording(const std::filesystem::path& path) {
  RecordedEvents counts;
  auto reader = RecordingReader::open(path);
  if (!reader.ok()) {
    counts.stop_reason = "cannot open " + path.string();
    return counts;
  }
  std::vector<uint64_t> created_ids, started_ids;
  v1::TaskEventBatch batch;
  while (auto payload = reader->next()) {
    ++counts.frames;
    if (!batch.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
      counts.stop_reason = "frame " + std::to_string(counts.frames) + " does not parse";
      break;
    }
    for (const v1::PackedEvents& packed : batch.packed()) {
      // Read here without the daemon's translator: the compact forms as the
      // wire layout says, then any raw records.
      std::vector<wire::TaskEventRecord> records;
      const std::string& compact = packed.compact();
      std::string fault = wire::CompactEvents::decode(std::as_bytes(std::span(compact.data(), compact.size())),
                                                      records, compact.size());
      if (fault.empty())
        fault = wire::CompactEvents::decode(
            wire::CompactEvents::Split::of(packed.compact_headers(), packed.compact_values()), records,
            packed.compact_headers().size());
      if (!fault.empty()) counts.stop_reason = "frame " + std::to_string(counts.frames) + ": " + fault;
      const std::string& bytes = packed.records();
      for (size_t at = 0; at + sizeof(wire::TaskEventRecord) <= bytes.size(); at += sizeof(wire::TaskEventRecord)) {
        wire::TaskEventRecord r;
        std::memcpy(&r, bytes.data() + at, sizeof r);
        records.push_back(r);
      }
      for (const wire::TaskEventRecord& r : records) {
        switch (r.type) {
          case wire::TaskEventType::kCreated:
            ++counts.created;
            created_ids.push_back(r.task_id);
            break;
          case wire::TaskEventType::kStarted:
            ++counts.started;
            started_ids.push_back(r.task_id);
            break;
          case wire::TaskEventType::kFinished: ++counts.finished; break;
          case wire::TaskEventType::kSync:
            if (r.a == 1) ++(r.b ? counts.taskwait_ended : counts.taskwait_begun);
            break;
          default: break;
        }
      }
    }
  }
  if (counts.stop_reason.empty()) counts.stop_reason = reader->stopReason();
  auto distinct = [](std::vector<uint64_t>& ids) {
    std::sort(ids.begin(), ids.end());
    return static_cast<uint64_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
  };
  counts.distinct_created = distinct(created_ids);
  counts.distinct_started = distinct(started_ids);
  return counts;
}

class BusyClientTest : public DaemonFixture {
 protected:
  BusyClientTest() : DaemonFixture("busy-client", {"--dct-interval-ms", "250"}) {}

  void SetUp() override {
    DaemonFixture::SetUp();
    if (HasFatalFailure()) return;
    apps_ = v1::AppsService::NewStub(channel_);
    tasks_ = v1::TasksService::NewStub(channel_);
    // The soak's load, shared with the daemon's; else one of our own.
    load_ = HostLoad::fromEnvironment();
    if (!load_) {
      load_per_cpu_ = std::atof((envOr("NK_BUSY_CLIENT_LOAD").empty() ? "2" : envOr("NK_BUSY_CLIENT_LOAD")).c_str());
      if (load_per_cpu_ > 0) load_ = std::make_shared<HostLoad>(load_per_cpu_);
    } else {
      load_per_cpu_ = std::atof(envOr("NK_TEST_HOST_LOAD").c_str());
    }
  }
  void TearDown() override {
    load_.reset();
    DaemonFixture::TearDown();
  }

  std::vector<std::string> programEnv() const {
    return {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
            "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"), "OMP_NUM_THREADS=4"};
  }

  std::vector<v1::Session> sessions() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::SessionList list;
    if (!tasks_->ListSessions(&context, v1::ListSessionsRequest(), &list).ok()) return {};
    return {list.sessions().begin(), list.sessions().end()};
  }
  std::optional<v1::Session> sessionOf(pid_t pid) {
    for (const auto& s : sessions())
      if (s.pid() == pid) return s;
    return std::nullopt;
  }
  std::optional<v1::App> appOf(pid_t pid) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::AppList list;
    if (!apps_->ListApps(&context, v1::ListAppsRequest(), &list).ok()) return std::nullopt;
    for (const auto& a : list.apps())
      if (a.pid() == pid) return a;
    return std::nullopt;
  }

  template <typename Predicate>
  static bool eventually(Predicate predicate, std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
      if (predicate()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return predicate();
  }

  std::unique_ptr<v1::AppsService::Stub> apps_;
  std::unique_ptr<v1::TasksService::Stub> tasks_;
  std::shared_ptr<HostLoad> load_;
  double load_per_cpu_ = 0;
};

TEST_F(BusyClientTest, LosslessModeLosesNoEventOfABigTaskTreeOnABusyHost) {
  const int n = static_cast<int>(envLong("NK_BUSY_CLIENT_FIB", 29));
  const auto timeout = std::chrono::seconds(envLong("NK_BUSY_CLIENT_TIMEOUT_S", 600));
  // fib_task(k) makes two tasks for every k >= 2: 2 F(n+1) - 2 in all, and
  // one taskwait in each of the F(n+1) - 1 calls that made some.
  const uint64_t expected_tasks = 2 * fibonacci(n + 1) - 2;
  const uint64_t expected_taskwaits = fibonacci(n + 1) - 1;
  const std::string program = envOr("NK_TASKS_PROGRAM");

  // libomp yields at each idle spin once it sees more threads than CPUs;
  // among spinning processes each yield waits out all their time slices,
  // and a tree of millions of tasks takes hours with or without the tool.
  // Without the yields the program takes its fair share, as a real one
  // tuned for a shared node would.
  const std::string no_yield = "KMP_USE_YIELD=0";
  std::vector<std::string> plain_argv = {"/usr/bin/env", "OMP_NUM_THREADS=4", no_yield, program, "fib",
                                         std::to_string(n)};
  auto start = Clock::now();
  ProcessResult plain = runProgram(plain_argv, std::nullopt, timeout);
  const double plain_s = seconds(Clock::now() - start);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  std::vector<std::string> argv = programEnv();
  // The library's own stall limit (10 s), as a user gets it, unless
  // NK_BUSY_CLIENT_STALL_S sets one.
  if (!envOr("NK_BUSY_CLIENT_STALL_S").empty())
    argv.push_back("NODEKEEPER_TASKS_STALL_S=" + envOr("NK_BUSY_CLIENT_STALL_S"));
  argv.insert(argv.end(), {no_yield, "NODEKEEPER_TASKS=lossless", program, "fib", std::to_string(n)});
  start = Clock::now();
  ProcessResult traced = runProgram(argv, std::nullopt, timeout);
  const double traced_s = seconds(Clock::now() - start);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_NE(traced.out.find("fib=" + std::to_string(fibonacci(n)) + " tasks=" + std::to_string(expected_tasks)),
            std::string::npos)
      << traced.out;
  // Nothing dropped, nothing lost: the library has nothing to say.
  EXPECT_EQ(traced.err, "");

  std::vector<v1::Session> list;
  ASSERT_TRUE(eventually([&] {
    list = sessions();
    return list.size() == 1 && !list[0].live();
  }, 120s)) << "the session did not end";
  EXPECT_EQ(list[0].tasks(), expected_tasks);
  RecordedEvents recorded = countRecording(list[0].recording());
  EXPECT_EQ(recorded.stop_reason, "");
  EXPECT_EQ(recorded.created, expected_tasks);
  EXPECT_EQ(recorded.distinct_created, expected_tasks);
  EXPECT_EQ(recorded.distinct_started, expected_tasks);
  EXPECT_EQ(recorded.finished, expected_tasks);
  EXPECT_EQ(recorded.taskwait_begun, expected_taskwaits);
  EXPECT_EQ(recorded.taskwait_ended, expected_taskwaits);

  // Counted as above: starts once per task.
  const uint64_t expected_events = 3 * expected_tasks + 2 * expected_taskwaits;
  const uint64_t recorded_events = recorded.created + recorded.distinct_started + recorded.finished +
                                   recorded.taskwait_begun + recorded.taskwait_ended;
  std::printf("\nlossless task events, fib(%d), OMP_NUM_THREADS=4, host load %.3g per CPU\n", n, load_per_cpu_);
  std::printf("%-34s %14s\n", "metric", "value");
  std::printf("%-34s %14llu\n", "tasks made (from N)", static_cast<unsigned long long>(expected_tasks));
  std::printf("%-34s %14llu\n", "tasks in the daemon's session", static_cast<unsigned long long>(list[0].tasks()));
  std::printf("%-34s %14llu\n", "events expected (starts per task)", static_cast<unsigned long long>(expected_events));
  std::printf("%-34s %14llu\n", "events recorded (starts per task)", static_cast<unsigned long long>(recorded_events));
  std::printf("%-34s %14llu\n", "events missing",
              static_cast<unsigned long long>(expected_events > recorded_events ? expected_events - recorded_events : 0));
  std::printf("%-34s %14llu\n", "start events (resumes included)", static_cast<unsigned long long>(recorded.started));
  std::printf("%-34s %14llu\n", "recording frames", static_cast<unsigned long long>(recorded.frames));
  std::printf("%-34s %14.1f\n", "time without the tool (s)", plain_s);
  std::printf("%-34s %14.1f\n", "time with lossless events (s)", traced_s);
  std::printf("%-34s %14s\n", "library's stderr", traced.err.empty() ? "(nothing)" : "see above");
  std::fflush(stdout);
}

// One short run's outcome, as the daemon and the program's stderr show it.
struct ShortRun {
  bool managed_asked = false;
  bool seen = false;            // listed by the daemon while it ran
  bool managed_seen = false;    // App.managed
  bool session_whole = false;   // traced: the session holds every task it made
  int exit_code = -1;
  std::vector<std::string> nodekeeper_lines;  // anything the library said
  double seconds = 0;
};

// The daemon lists apps only while they run, so each run holds its end
// (omp_tasks until: task trees again and again until a stop file exists)
// until the test has seen it listed, then ends normally: the exit path
// (unregistering, closing the streams) is the one every short program takes.
TEST_F(BusyClientTest, ShortRunsAreManagedOrTracedAsAskedAndSayNothing) {
  const long runs = envLong("NK_BUSY_CLIENT_RUNS", 20);
  const std::string program = envOr("NK_TASKS_PROGRAM");
  std::vector<ShortRun> results;
  const auto all_start = Clock::now();
  for (long i = 0; i < runs; ++i) {
    ShortRun run;
    run.managed_asked = i % 2 == 0;
    const auto stop = dir_ / ("stop-" + std::to_string(i));
    std::vector<std::string> argv = programEnv();
    argv.push_back(run.managed_asked ? "NODEKEEPER_POWER_BUDGET_MW=60000" : "NODEKEEPER_TASKS=lossless");
    argv.insert(argv.end(), {program, "until", stop.string(), "12"});
    const auto start = Clock::now();
    BackgroundProgram p;
    ASSERT_TRUE(p.start(argv, dir_ / "run.out", dir_ / "run.err"));
    const pid_t pid = p.pid();  // p forgets it once reaped
    std::optional<v1::App> app;
    run.seen = eventually([&] {
      app = appOf(pid);
      // A traced run also has its task session open by then.
      return app && (run.managed_asked || sessionOf(pid));
    }, 60s);
    if (app) run.managed_seen = app->managed();
    std::ofstream(stop) << "stop\n";
    run.exit_code = p.wait(120s);
    if (run.exit_code == -1) p.kill();
    run.seconds = seconds(Clock::now() - start);
    std::istringstream err(p.err());
    for (std::string line; std::getline(err, line);)
      if (line.find("nodekeeper") != std::string::npos || line.find("lost") != std::string::npos)
        run.nodekeeper_lines.push_back(line);
    if (!run.managed_asked) {
      std::smatch m;
      const std::string out = p.out();
      std::optional<v1::Session> session;
      if (std::regex_search(out, m, std::regex("tasks=(\\d+)")) &&
          eventually([&] { return (session = sessionOf(pid)) && !session->live(); }, 60s))
        run.session_whole = session->tasks() == std::stoull(m[1]);
    }
    EXPECT_EQ(run.exit_code, 0) << "run " << i << ": " << p.err();
    EXPECT_TRUE(run.seen) << "run " << i << " was never listed by the daemon";
    EXPECT_EQ(run.managed_seen, run.managed_asked) << "run " << i;
    if (!run.managed_asked) {
      EXPECT_TRUE(run.session_whole) << "run " << i << ": " << p.out();
    }
    for (const auto& line : run.nodekeeper_lines) ADD_FAILURE() << "run " << i << " said: " << line;
    results.push_back(std::move(run));
    if ((i + 1) % 100 == 0) {
      std::printf("%ld runs, %.0f s\n", i + 1, seconds(Clock::now() - all_start));
      std::fflush(stdout);
    }
  }

  int managed = 0, managed_ok = 0, traced = 0, traced_ok = 0, said = 0, failed_exit = 0;
  std::vector<double> durations;
  for (const ShortRun& r : results) {
    (r.managed_asked ? managed : traced)++;
    if (r.managed_asked && r.seen && r.managed_seen) ++managed_ok;
    if (!r.managed_asked && r.seen && !r.managed_seen && r.session_whole) ++traced_ok;
    said += !r.nodekeeper_lines.empty();
    failed_exit += r.exit_code != 0;
    durations.push_back(r.seconds);
  }
  std::sort(durations.begin(), durations.end());
  auto at = [&](double p) {
    return durations.empty() ? 0.0 : durations[static_cast<size_t>(p * static_cast<double>(durations.size() - 1))];
  };
  std::printf("\nshort OpenMP runs with libnodekeeper, host load %.3g per CPU, %.0f s in all\n", load_per_cpu_,
              seconds(Clock::now() - all_start));
  std::printf("%-44s %8s\n", "outcome", "runs");
  std::printf("%-44s %8d\n", "managed (budget) asked", managed);
  std::printf("%-44s %8d\n", "  listed by the daemon as managed", managed_ok);
  std::printf("%-44s %8d\n", "traced only (NODEKEEPER_TASKS=lossless)", traced);
  std::printf("%-44s %8d\n", "  listed unmanaged, every task recorded", traced_ok);
  std::printf("%-44s %8d\n", "runs with a nodekeeper or \"lost\" line", said);
  std::printf("%-44s %8d\n", "runs that did not exit 0", failed_exit);
  std::printf("run time p50 %.2f s, p99 %.2f s, max %.2f s\n", at(0.5), at(0.99), at(1.0));
  std::fflush(stdout);
}

}  // namespace
}  // namespace nk::test
