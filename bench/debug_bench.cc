// The task debugger's figures, in one run:
//  1. What the task gate costs a program nobody debugs: ns per task of
//     task_events_program (empty tasks and depend(inout) chains, 1 thread,
//     lossless events into a live daemon, a buffer that holds the run) under
//     libnodekeeper and under the same library built without the gate's
//     check (NK_BENCH_WITHOUT_TASK_GATE), interleaved over rounds; medians.
//     Goal: under 5 ns per task.
//  2. Command to effect: an OpenMP program of short tasks on 2 threads; a
//     frontend (DebugClient, as the CLI's console) sends break, and the
//     gate's reports say when the last worker parked (their CLOCK_MONOTONIC
//     stamps, on this node's clock); then continue. p50 and p99 over the
//     trials, with the acknowledgement's round trip; then continues sent
//     after 1.5 s of quiet with the program held, as a person debugs (the
//     streams idle). Goal: under 5 ms.
//
//   debug_bench [--tasks N] [--rounds R] [--trials T]
// Needs NK_DAEMON, NK_CLIENT_LIB, NK_CLIENT_LIB_WITHOUT_GATE,
// NK_TASKS_BENCH_PROGRAM and NK_TASKS_PROGRAM (omp_tasks_clang).
#include <grpcpp/grpcpp.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "cli/debug_client.h"
#include "task_gate.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  long tasks = 300000;
  int rounds = 11, trials = 60, idle_trials = 24;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) tasks = std::atol(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--trials" && i + 1 < argc) trials = std::max(1, std::atoi(argv[++i]));
    else if (a == "--idle-trials" && i + 1 < argc) idle_trials = std::max(0, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: debug_bench [--tasks N] [--rounds R] [--trials T] [--idle-trials I]\n");
      return 2;
    }
  }
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_CLIENT_LIB_WITHOUT_GATE", "NK_TASKS_BENCH_PROGRAM",
                          "NK_TASKS_PROGRAM"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "debug_bench: set %s\n", var);
      return 2;
    }
  nk::test::TempDir dir("bench-debug", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }

  // 0. The check alone, on this thread: what a task start pays, without
  // the program's noise around it.
  double check_ns = NAN, loop_ns = NAN;
  {
    nk::client::TaskGate gate(nullptr, nullptr);
    constexpr uint64_t kChecks = 200'000'000;
    volatile uint64_t sink = 0;
    auto timed = [&](bool with_check) {
      auto start = std::chrono::steady_clock::now();
      for (uint64_t i = 0; i < kChecks; ++i) {
        if (with_check && gate.active()) [[unlikely]]
          gate.admit(i);
        sink = i;
      }
      return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kChecks;
    };
    std::vector<double> with, without;
    for (int r = 0; r < 5; ++r) {
      with.push_back(timed(true));
      without.push_back(timed(false));
    }
    check_ns = quantile(with, 0.5) - quantile(without, 0.5);
    loop_ns = quantile(without, 0.5);
  }

  // 1. The gate's idle check, A/B.
  const std::map<std::string, std::string> libraries = {{"with gate", nk::test::envOr("NK_CLIENT_LIB")},
                                                        {"without gate", nk::test::envOr("NK_CLIENT_LIB_WITHOUT_GATE")}};
  std::map<std::string, std::vector<double>> ns;  // "kind/setup"
  for (int round = 0; round < rounds; ++round)
    for (const std::string kind : {"empty", "chain"})
      for (int k = 0; k < 2; ++k) {
        const std::string setup = (k + round) % 2 ? "without gate" : "with gate";  // order turns each round
        nk::test::ProcessResult r = nk::test::runProgram(
            {"/usr/bin/env", "OMP_NUM_THREADS=1", "KMP_BLOCKTIME=200", "NODEKEEPER_SOCKET=" + daemon.socket().string(),
             "OMP_TOOL_LIBRARIES=" + libraries.at(setup), "NODEKEEPER_TASKS=lossless",
             "NODEKEEPER_TASK_BUFFER=" + std::to_string(4 * tasks + 8192), nk::test::envOr("NK_TASKS_BENCH_PROGRAM"),
             kind, std::to_string(tasks)},
            std::nullopt, std::chrono::seconds(300));
        std::smatch m;
        if (r.exit_code != 0 || !std::regex_search(r.out, m, std::regex("ns_per_task=([0-9.]+)"))) {
          std::fprintf(stderr, "%s %s failed (%d): %s\n", kind.c_str(), setup.c_str(), r.exit_code, r.err.c_str());
          continue;
        }
        ns[kind + "/" + setup].push_back(std::stod(m[1]));
      }

  // 2. Command to effect.
  nk::test::BackgroundProgram program;
  program.start({"/usr/bin/env", "OMP_NUM_THREADS=2", "NODEKEEPER_SOCKET=" + daemon.socket().string(),
                 "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=lossless",
                 nk::test::envOr("NK_TASKS_PROGRAM"), "steady", "100000000", "50"},
                dir / "steady.out", dir / "steady.err");
  uint64_t session = 0;
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto stub = v1::TasksService::NewStub(channel);
  for (int i = 0; i < 500 && !session; ++i) {
    grpc::ClientContext context;
    v1::SessionList list;
    if (stub->ListSessions(&context, v1::ListSessionsRequest(), &list).ok())
      for (const auto& s : list.sessions())
        if (s.pid() == program.pid() && s.live()) session = s.session_id();
    std::this_thread::sleep_for(20ms);
  }
  std::vector<double> ack_ms, gate_ms, parked_ms;
  // Commands sent after kIdle with the program held (see below).
  constexpr auto kIdle = 1500ms;
  std::vector<double> idle_ack_ms, idle_gate_ms;
  if (session) {
    std::mutex mutex;
    std::condition_variable changed;
    int64_t all_parked_at = 0;
    nk::cli::DebugClient::Callbacks callbacks;
    callbacks.news = [&](const v1::DebugUpdate& update) {
      if (update.has_status() && update.status().parked_workers() == 2 && update.ack().effect_ns() > 0) {
        std::lock_guard lock(mutex);
        if (!all_parked_at) all_parked_at = update.ack().effect_ns();
        changed.notify_all();
      }
    };
    nk::cli::DebugClient client(daemon.socket().string(), callbacks);
    if (client.attach(session, false, 0, 10s)) {
      v1::DebugCommand halt, go;
      halt.mutable_break_all();
      go.mutable_continue_all();
      for (int t = 0; t < trials; ++t) {
        {
          std::lock_guard lock(mutex);
          all_parked_at = 0;
        }
        int64_t sent = monotonicNs();
        auto ack = client.call(halt, 10s);
        int64_t acked = monotonicNs();
        if (!ack || !ack->ack().ok()) break;
        std::unique_lock lock(mutex);
        if (!changed.wait_for(lock, 5s, [&] { return all_parked_at != 0; })) {
          std::fprintf(stderr, "trial %d: the workers did not park\n", t);
          break;
        }
        ack_ms.push_back(static_cast<double>(acked - sent) / 1e6);
        gate_ms.push_back(static_cast<double>(ack->ack().effect_ns() - sent) / 1e6);
        parked_ms.push_back(static_cast<double>(all_parked_at - sent) / 1e6);
        lock.unlock();
        (void)client.call(go, 10s);
        std::this_thread::sleep_for(20ms);  // running again before the next break
      }
      // As a person debugs: the program held, nothing said for a while (no
      // events flow, the streams are quiet), then the next command.
      for (int t = 0; t < idle_trials && !ack_ms.empty(); ++t) {
        auto held = client.call(halt, 10s);
        if (!held || !held->ack().ok()) break;
        std::this_thread::sleep_for(kIdle);
        const int64_t sent = monotonicNs();
        auto resumed = client.call(go, 10s);
        const int64_t acked = monotonicNs();
        if (!resumed || !resumed->ack().ok()) break;
        idle_gate_ms.push_back(static_cast<double>(resumed->ack().effect_ns() - sent) / 1e6);
        idle_ack_ms.push_back(static_cast<double>(acked - sent) / 1e6);
        std::this_thread::sleep_for(20ms);
      }
    }
  }
  program.kill();
  daemon.stop();

  std::printf("The task gate's check when no debugger acts: %ld tasks per run, 1 thread, lossless, %d rounds "
              "(medians)\n",
              tasks, rounds);
  std::printf("%-8s %14s %16s %12s\n", "program", "with gate", "without gate", "difference");
  for (const std::string kind : {"empty", "chain"}) {
    double with = quantile(ns[kind + "/with gate"], 0.5), without = quantile(ns[kind + "/without gate"], 0.5);
    std::printf("%-8s %11.1f ns %13.1f ns %9.1f ns\n", kind.c_str(), with, without, with - without);
  }
  std::printf("the check alone, 200M times in a loop: %+.2f ns each (the bare loop: %.2f ns)\n", check_ns, loop_ns);
  std::printf("goal: under 5 ns per task\n\n");
  std::printf("Command to effect (break, OpenMP program on 2 threads, 50 us tasks), %zu trials\n", parked_ms.size());
  std::printf("%-44s %10s %10s\n", "", "p50 ms", "p99 ms");
  std::printf("%-44s %10.3f %10.3f\n", "frontend sends -> gate holds (ack's stamp)", quantile(gate_ms, 0.5),
              quantile(gate_ms, 0.99));
  std::printf("%-44s %10.3f %10.3f\n", "frontend sends -> last worker parked", quantile(parked_ms, 0.5),
              quantile(parked_ms, 0.99));
  std::printf("%-44s %10.3f %10.3f\n", "frontend sends -> acknowledgement back", quantile(ack_ms, 0.5),
              quantile(ack_ms, 0.99));
  std::printf("%zu continues, each after %.1f s of quiet with the program held:\n", idle_ack_ms.size(),
              std::chrono::duration<double>(kIdle).count());
  std::printf("%-44s %10.3f %10.3f\n", "  frontend sends -> gate releases (ack's stamp)", quantile(idle_gate_ms, 0.5),
              quantile(idle_gate_ms, 0.99));
  std::printf("%-44s %10.3f %10.3f\n", "  frontend sends -> acknowledgement back", quantile(idle_ack_ms, 0.5),
              quantile(idle_ack_ms, 0.99));
  std::printf("goal: under 5 ms to effect\n");
  return parked_ms.empty() ? 1 : 0;
}
