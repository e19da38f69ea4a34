// Budget tracking on the emulated node: how often the node's power exceeds
// an app's budget by more than 5%, per dT_DCT interval, after the first 2 s.
//
//   budget_tracking_bench [--seconds S] [--program PATH] [--budgets W,W,...] [--policy NAME] [--trace]
//
// For each budget and policy, side by side in one run: a fresh
// nodekeeperd --emulate (12 cores), an unmodified OpenMP program with 12
// threads loading libnodekeeper as its OMPT tool and stating the budget
// (NODEKEEPER_POWER_BUDGET_MW), the app's policy set over gRPC, and the
// package energy counters of the emulated sysfs tree read every dT_DCT
// (500 ms). Goal for thermal-aware: under 2% of intervals over budget by
// more than 5%. ondemand and performance ignore budgets: they show what
// the node draws without the energy manager.
//
// Needs NK_DAEMON, NK_CLIENT_LIB and NK_PROGRAM (or --program) in the
// environment; run_benchmarks.sh sets them.

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "nodekeeper/v1/apps.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr double kDctS = 0.5;
constexpr double kWarmupS = 2.0;
constexpr int kCores = 12;

double packageEnergyJ(const std::filesystem::path& sysfs) {
  double joules = 0;
  for (int package = 0; package < 2; ++package) {
    auto path = sysfs / "class/powercap" / ("intel-rapl:" + std::to_string(package)) / "energy_uj";
    std::ifstream in(path);
    double uj = 0;
    if (!(in >> uj)) return NAN;
    joules += uj * 1e-6;
  }
  return joules;
}

struct Result {
  std::string policy;
  double budget_w = 0;
  int intervals = 0;
  int over = 0;          // intervals above budget * 1.05
  double mean_ratio = 0; // mean P / budget
  double max_ratio = 0;
  double mean_d = 0;
};

bool g_trace = false;  // --trace: one line per interval on stderr

bool run(const std::string& policy, double budget_w, double seconds, const std::string& program, Result& result) {
  result = {};
  result.policy = policy;
  result.budget_w = budget_w;
  nk::test::TempDir dir("bench-budget", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "daemon did not start: %s\n", daemon.lastError().c_str());
    return false;
  }
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "NODEKEEPER_SOCKET=" + daemon.socket().string(),
                                   "NODEKEEPER_POWER_BUDGET_MW=" + std::to_string(std::llround(budget_w * 1000)),
                                   "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"),
                                   "OMP_NUM_THREADS=" + std::to_string(kCores),
                                   program,
                                   "100000000",
                                   "2000",
                                   (dir / "stop").string()};
  nk::test::BackgroundProgram app;
  if (!app.start(argv, "/dev/null")) return false;

  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto apps = v1::AppsService::NewStub(channel);
  auto list = [&]() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::AppList reply;
    apps->ListApps(&context, v1::ListAppsRequest(), &reply);
    return reply;
  };
  auto registered = Clock::now() + 20s;
  v1::AppList current;
  while (Clock::now() < registered && (current = list()).apps_size() == 0) std::this_thread::sleep_for(50ms);
  bool ok = current.apps_size() > 0;
  if (ok) {
    grpc::ClientContext context;
    v1::SetAppPolicyRequest request;
    request.set_app_id(current.apps(0).app_id());
    request.set_policy(policy);
    v1::App reply;
    ok = apps->SetAppPolicy(&context, request, &reply).ok();
  }
  if (ok) {
    auto start = Clock::now();
    auto next = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kWarmupS));
    std::this_thread::sleep_until(next);
    double last_j = packageEnergyJ(daemon.sysfs());
    double ratio_sum = 0, d_sum = 0;
    int intervals = static_cast<int>(seconds / kDctS);
    for (int i = 0; i < intervals; ++i) {
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kDctS));
      std::this_thread::sleep_until(next);
      double now_j = packageEnergyJ(daemon.sysfs());
      double power = (now_j - last_j) / kDctS;
      last_j = now_j;
      if (!std::isfinite(power)) continue;
      double ratio = power / budget_w;
      ++result.intervals;
      if (ratio > 1.05) ++result.over;
      ratio_sum += ratio;
      result.max_ratio = std::max(result.max_ratio, ratio);
      auto apps_now = list();
      uint32_t d = apps_now.apps_size() > 0 ? apps_now.apps(0).thread_count() : 0;
      d_sum += d;
      if (g_trace) std::fprintf(stderr, "%s %.0f W  t=%5.1f s  P/B %.3f  D %u\n", policy.c_str(), budget_w,
                                kWarmupS + (i + 1) * kDctS, ratio, d);
    }
    if (result.intervals > 0) {
      result.mean_ratio = ratio_sum / result.intervals;
      result.mean_d = d_sum / result.intervals;
    }
  }
  std::ofstream(dir / "stop") << "stop\n";
  if (app.wait(10s) < 0) app.kill();
  daemon.stop();
  return ok && result.intervals > 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 30;
  std::string program = nk::test::envOr("NK_PROGRAM");
  std::vector<double> budgets = {50, 60, 75};
  std::string only_policy;  // --policy: just this one
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::max(2.0, std::atof(argv[++i]));
    } else if (arg == "--policy" && i + 1 < argc) {
      only_policy = argv[++i];
    } else if (arg == "--trace") {
      g_trace = true;
    } else if (arg == "--program" && i + 1 < argc) {
      program = argv[++i];
    } else if (arg == "--budgets" && i + 1 < argc) {
      budgets.clear();
      std::stringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ','))
        if (double w = std::atof(item.c_str()); w > 0) budgets.push_back(w);
    } else {
      std::fprintf(stderr, "usage: budget_tracking_bench [--seconds S] [--program PATH] [--budgets W,W,...] [--policy NAME] [--trace]\n");
      return 2;
    }
  }
  if (program.empty() || nk::test::envOr("NK_CLIENT_LIB").empty() || budgets.empty()) {
    std::fprintf(stderr, "budget_tracking_bench: set NK_CLIENT_LIB and NK_PROGRAM (or --program), and budgets\n");
    return 2;
  }
  std::printf("Budget tracking, 12-core emulated node, dT_DCT %.1f s, %.0f s measured after %.0f s warm-up\n", kDctS,
              seconds, kWarmupS);
  std::printf("%-14s %9s %10s %13s %12s %11s %8s\n", "policy", "budget", "intervals", "over by >5%", "mean P/B",
              "max P/B", "mean D");
  int failures = 0;
  for (double budget : budgets) {
    for (const char* policy : {"thermal-aware", "ondemand", "performance"}) {
      if (!only_policy.empty() && only_policy != policy) continue;
      Result r;
      if (!run(policy, budget, seconds, program, r)) {
        std::printf("%-14s %7.1f W  (run failed)\n", policy, budget);
        ++failures;
        continue;
      }
      std::printf("%-14s %7.1f W %10d %8d (%4.1f%%) %12.3f %11.3f %8.1f\n", policy, budget, r.intervals, r.over,
                  100.0 * r.over / r.intervals, r.mean_ratio, r.max_ratio, r.mean_d);
      std::fflush(stdout);
    }
  }
  std::printf("goal: thermal-aware over by >5%% in under 2%% of intervals\n");
  return failures ? 1 : 0;
}
