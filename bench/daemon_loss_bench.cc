// How soon a program gets back what the daemon took, when the daemon dies:
// idle host vs every CPU busy, in one run.
//
//   daemon_loss_bench [--trials K] [--load N]
//
// Each trial starts a real nodekeeperd --emulate (the default 12-core node)
// and team_watch_program with libnodekeeper under a 45 W budget and
// OMP_NUM_THREADS=12. Once the budget holds it at a small team (D <= 6)
// with its threads pinned, the daemon is killed with SIGKILL; the program
// prints every region's time, team size and the fewest CPUs any team
// thread may run on, and the trial's result is the time from the kill to
// the first region at the program's own team size (12) with no thread
// pinned (every mask as wide as the one it started with). K trials
// (default 10) idle, then K with HostLoad keeping every host CPU busy N
// times over (default 4). Prints p50 / p99 / max per condition.
//
// Needs NK_DAEMON, NK_CLIENT_LIB and NK_TEAM_WATCH_PROGRAM.

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/host_load.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr int kOwnTeam = 12;       // OMP_NUM_THREADS, the node's cores
constexpr int kSmallTeam = 6;      // what the budget must hold it under
constexpr uint64_t kBudgetMw = 45000;

struct Region {
  int64_t ns = 0;
  int team = 0;
  int fewest_cpus = 0;
};

// The regions printed so far (a last line still being written is left out).
std::vector<Region> regions(const std::string& output) {
  std::vector<Region> out;
  std::istringstream in(output.substr(0, output.rfind('\n') + 1));
  std::string line;
  while (std::getline(in, line)) {
    Region r;
    long long ns = 0;
    long sum = 0;
    if (std::sscanf(line.c_str(), "%lld %d %d %ld", &ns, &r.team, &r.fewest_cpus, &sum) == 4) {
      r.ns = ns;
      out.push_back(r);
    }
  }
  return out;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

struct Condition {
  std::vector<double> back_ms;  // kill to own team, unpinned
  int never_held = 0;           // the budget never got it to a small, pinned team
  int never_back = 0;           // not back within 10 s
};

// One trial; adds its outcome to `result`.
void trial(Condition& result, int own_cpus) {
  nk::test::TempDir dir("daemon-loss", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path(), {"--dct-interval-ms", "250", "--emulate-ignore-host-load"})) {
    std::fprintf(stderr, "daemon_loss_bench: daemon did not start: %s\n", daemon.lastError().c_str());
    std::exit(1);
  }
  const auto stop = dir.path() / "stop";
  nk::test::BackgroundProgram program;
  if (!program.start({"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon.socket().string(),
                      "NODEKEEPER_POWER_BUDGET_MW=" + std::to_string(kBudgetMw),
                      "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"),
                      "OMP_NUM_THREADS=" + std::to_string(kOwnTeam), nk::test::envOr("NK_TEAM_WATCH_PROGRAM"), "2000",
                      stop.string()},
                     dir.path() / "out", dir.path() / "err")) {
    std::fprintf(stderr, "daemon_loss_bench: cannot start %s\n", nk::test::envOr("NK_TEAM_WATCH_PROGRAM").c_str());
    std::exit(1);
  }
  // Held: the last few regions small and pinned.
  bool held = false;
  for (auto until = Clock::now() + 30s; Clock::now() < until && !held; std::this_thread::sleep_for(20ms)) {
    auto r = regions(program.out());
    held = r.size() >= 3 && std::all_of(r.end() - 3, r.end(), [&](const Region& x) {
             return x.team <= kSmallTeam && x.fewest_cpus < own_cpus;
           });
  }
  if (!held) {
    ++result.never_held;
  } else {
    const int64_t killed_ns = nowNs();
    daemon.kill9();
    std::optional<double> back;
    for (auto until = Clock::now() + 10s; Clock::now() < until && !back; std::this_thread::sleep_for(5ms)) {
      for (const Region& r : regions(program.out()))
        if (r.ns > killed_ns && r.team == kOwnTeam && r.fewest_cpus == own_cpus) {
          back = static_cast<double>(r.ns - killed_ns) / 1e6;
          break;
        }
    }
    if (back)
      result.back_ms.push_back(*back);
    else
      ++result.never_back;
  }
  std::ofstream(stop) << "stop\n";
  if (program.wait(30s) == -1) program.kill();
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 10;
  double load_per_cpu = 4;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--trials" && i + 1 < argc) trials = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--load" && i + 1 < argc) load_per_cpu = std::max(0.5, std::atof(argv[++i]));
    else {
      std::fprintf(stderr, "usage: daemon_loss_bench [--trials K] [--load N]\n");
      return 2;
    }
  }
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_TEAM_WATCH_PROGRAM"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "daemon_loss_bench: %s is not set\n", var);
      return 2;
    }
  cpu_set_t own;
  CPU_ZERO(&own);
  if (sched_getaffinity(0, sizeof own, &own) != 0) return 1;
  const int own_cpus = CPU_COUNT(&own);

  Condition idle, loaded;
  std::fprintf(stderr, "idle host: %d trials...\n", trials);
  for (int k = 0; k < trials; ++k) trial(idle, own_cpus);
  {
    nk::test::HostLoad load(load_per_cpu);
    std::fprintf(stderr, "%zu spinning processes: %d trials...\n", load.pids().size(), trials);
    for (int k = 0; k < trials; ++k) trial(loaded, own_cpus);
  }

  std::printf("\nDaemon killed (SIGKILL) while a 45 W budget holds a 12-thread program at D <= 6, pinned:\n"
              "time until its regions run at 12 threads again with no thread pinned (%d CPUs each)\n\n",
              own_cpus);
  std::printf("%-28s %10s %10s %10s %8s %11s %11s\n", "condition", "p50 ms", "p99 ms", "max ms", "trials",
              "never held", "never back");
  auto row = [&](const char* name, const Condition& c) {
    std::printf("%-28s %10.0f %10.0f %10.0f %8zu %11d %11d\n", name, percentile(c.back_ms, 0.5),
                percentile(c.back_ms, 0.99), c.back_ms.empty() ? 0.0 : *std::max_element(c.back_ms.begin(), c.back_ms.end()),
                c.back_ms.size(), c.never_held, c.never_back);
  };
  row("idle host", idle);
  char name[64];
  std::snprintf(name, sizeof name, "host load %gx the CPUs", load_per_cpu);
  row(name, loaded);
  std::printf("(the program starts a region every 2 ms plus the region's own time: that is the resolution)\n");
  return 0;
}
