// Issue 5's hot-path figures, side by side in one run: wall time per task of
// an OpenMP program (libomp, 2 threads) creating many empty tasks, and
// tasks chained by depend(inout), under four set-ups, interleaved over
// rounds (medians):
//   no tool               OMP_TOOL_LIBRARIES unset
//   tool, tasks off       libnodekeeper, NODEKEEPER_TASKS=off (the floor any OMPT tool pays)
//   tool, lossless        NODEKEEPER_TASKS=lossless into a live nodekeeperd
//   tool, lossy           NODEKEEPER_TASKS=lossy
// Goal: under 60 ns per task added by task events (lossless against tasks
// off). The lossless runs also give the sustained event rate into the
// daemon's recording (the producer waits when its buffer is full, so the
// program runs at the rate the events are taken) and check that the
// session holds every task (zero loss).
//
//   task_events_bench [--tasks N] [--rounds R]
// Needs NK_DAEMON, NK_CLIENT_LIB and NK_TASKS_BENCH_PROGRAM.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "../tests/integration/test_process.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long tasks = 300000;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) tasks = std::atol(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: task_events_bench [--tasks N] [--rounds R]\n");
      return 2;
    }
  }
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_TASKS_BENCH_PROGRAM"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "task_events_bench: set %s\n", var);
      return 2;
    }
  auto dir = nk::test::makeSharedTempDir("bench-tasks");
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir)) {
    std::fprintf(stderr, "daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto stub = v1::TasksService::NewStub(channel);

  const std::vector<std::string> setups = {"no tool", "tool, tasks off", "tool, lossless", "tool, lossy"};
  std::map<std::pair<std::string, std::string>, std::vector<double>> ns;
  std::map<std::string, std::vector<double>> recorded_share;  // tasks in the session / tasks created
  for (int round = 0; round < rounds; ++round)
    for (const std::string kind : {"empty", "chain"})
      for (size_t k = 0; k < setups.size(); ++k) {
        const std::string& setup = setups[(k + round) % setups.size()];  // order turns each round
        std::vector<std::string> env = {"/usr/bin/env", "OMP_NUM_THREADS=2", "KMP_BLOCKTIME=200",
                                        "NODEKEEPER_SOCKET=" + daemon.socket().string()};
        if (setup != "no tool") env.push_back("OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"));
        if (setup == "tool, tasks off") env.push_back("NODEKEEPER_TASKS=off");
        if (setup == "tool, lossless") env.push_back("NODEKEEPER_TASKS=lossless");
        if (setup == "tool, lossy") env.push_back("NODEKEEPER_TASKS=lossy");
        env.insert(env.end(), {nk::test::envOr("NK_TASKS_BENCH_PROGRAM"), kind, std::to_string(tasks)});
        nk::test::ProcessResult r = nk::test::runProgram(env, std::nullopt, std::chrono::seconds(300));
        std::smatch m;
        if (r.exit_code != 0 || !std::regex_search(r.out, m, std::regex("ns_per_task=([0-9.]+)"))) {
          std::fprintf(stderr, "%s %s failed (%d): %s\n", kind.c_str(), setup.c_str(), r.exit_code, r.err.c_str());
          continue;
        }
        ns[{kind, setup}].push_back(std::stod(m[1]));
        if (setup == "tool, lossless" || setup == "tool, lossy") {
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() + 5s);
          v1::SessionList list;
          if (stub->ListSessions(&context, v1::ListSessionsRequest(), &list).ok() && list.sessions_size() > 0) {
            const auto& last = list.sessions(list.sessions_size() - 1);
            // The warm-up's 1000 tasks are in the session too.
            recorded_share[kind + "/" + setup].push_back(static_cast<double>(last.tasks()) / (tasks + 1000));
          }
        }
      }
  daemon.stop();
  std::filesystem::remove_all(dir);

  std::printf("Task events on the app thread: %ld tasks per run, 2 threads, %d rounds (medians)\n", tasks, rounds);
  std::printf("%-8s %-17s %10s %14s %14s %12s\n", "program", "set-up", "ns/task", "vs no tool", "vs tasks off",
              "recorded");
  for (const std::string kind : {"empty", "chain"}) {
    double none = median(ns[{kind, "no tool"}]), off = median(ns[{kind, "tool, tasks off"}]);
    for (const std::string& setup : setups) {
      double v = median(ns[{kind, setup}]);
      auto share = recorded_share.find(kind + "/" + setup);
      std::string recorded = share == recorded_share.end() ? "-" : std::to_string(median(share->second) * 100).substr(0, 5) + "%";
      std::printf("%-8s %-17s %10.1f %+13.1f %+13.1f %12s\n", kind.c_str(), setup.c_str(), v, v - none, v - off,
                  recorded.c_str());
    }
  }
  // created + started + finished per task (and one edge per chained task).
  for (const std::string kind : {"empty", "chain"}) {
    double per_task_ns = median(ns[{kind, "tool, lossless"}]);
    double events = kind == "chain" ? 4.0 : 3.0;
    std::printf("%s, lossless: %.2f million events/s into the daemon (goal 5)\n", kind.c_str(),
                events * 1e3 / per_task_ns);
  }
  std::printf("goal: under 60 ns per task added by task events (lossless vs tasks off)\n");
  return 0;
}
