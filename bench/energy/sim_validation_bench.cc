// Validation of the simulator against the emulated node: one
// workload model run twice, side by side in one run, under the same policy:
//  1. as a real OpenMP program (workload_runner, libnodekeeper as its OMPT
//     tool) on a fresh `nodekeeperd --emulate`, its time from the program's
//     clock and its energy from the emulated RAPL counters;
//  2. in NodeSimulator, from the temperature the emulated node had when the
//     program started, with the budget charged as the daemon charges it
//     (all package power).
// Prints both and their ratios; the goal is agreement within 10%.
//
//   sim_validation_bench [--policies ondemand,thermal-aware] [--budget WATTS] [--repeat N]
//
// Needs NK_DAEMON, NK_CLIENT_LIB and NK_RUNNER in the environment
// (run_benchmarks.sh and `./run bench-energy` set them).
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "energy/policy_registry.h"
#include "node_simulator.h"
#include "nodekeeper/v1/apps.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Measured {
  bool ok = false;
  double time_s = 0, energy_j = 0, threads = 0, start_temp_c = NAN;
  double slowest_over_mean = NAN;  // the team's slowest clock over its mean, averaged
};

// Mean of the emulated coretemp inputs: where the node's cores are now.
double meanCoreTemperatureC(const std::filesystem::path& sysfs) {
  double sum = 0;
  int n = 0;
  std::error_code ec;
  for (const auto& hwmon : std::filesystem::directory_iterator(sysfs / "class/hwmon", ec))
    for (int i = 1; i < 64; ++i) {
      std::ifstream label(hwmon.path() / ("temp" + std::to_string(i) + "_label"));
      std::string text;
      if (!std::getline(label, text)) continue;
      if (text.rfind("Core", 0) != 0) continue;
      std::ifstream input(hwmon.path() / ("temp" + std::to_string(i) + "_input"));
      double milli = 0;
      if (input >> milli) {
        sum += milli / 1000.0;
        ++n;
      }
    }
  return n ? sum / n : NAN;
}

std::vector<std::string> phaseArgs(const nk::sim::WorkloadModel& w) {
  std::vector<std::string> out;
  for (const auto& ph : w.phases) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s:%.6f:%.6f", ph.name.c_str(), ph.work_core_s, ph.io_fraction);
    out.push_back(buf);
  }
  return out;
}

Measured runEmulated(const nk::sim::WorkloadModel& w, const std::string& policy, double budget_w) {
  Measured m;
  nk::test::TempDir dir("bench-validate", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "daemon did not start: %s\n", daemon.lastError().c_str());
    return m;
  }
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "NODEKEEPER_SOCKET=" + daemon.socket().string(),
                                   "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"),
                                   "OMP_NUM_THREADS=12"};
  if (budget_w > 0) argv.push_back("NODEKEEPER_POWER_BUDGET_MW=" + std::to_string(std::llround(budget_w * 1000)));
  argv.insert(argv.end(), {nk::test::envOr("NK_RUNNER"), "--sysfs", daemon.sysfs().string(), "--go",
                           (dir / "go").string(), "--cores", (dir / "cores").string(), "--repeat",
                           std::to_string(w.repeat)});
  for (const std::string& a : phaseArgs(w)) argv.push_back(a);
  nk::test::BackgroundProgram app;
  if (!app.start(argv, dir / "runner.out", dir / "runner.err")) {
    std::fprintf(stderr, "cannot start %s\n", argv[0].c_str());
    return m;
  }

  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto apps = v1::AppsService::NewStub(channel);
  v1::AppList list;
  for (auto until = Clock::now() + 20s; Clock::now() < until; std::this_thread::sleep_for(50ms)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    list.Clear();
    if (apps->ListApps(&context, v1::ListAppsRequest(), &list).ok() && list.apps_size() > 0) break;
  }
  if (list.apps_size() == 0) {
    std::fprintf(stderr, "the runner did not register with the daemon\n");
    return m;
  }
  grpc::ClientContext context;
  v1::SetAppPolicyRequest request;
  request.set_app_id(list.apps(0).app_id());
  request.set_policy(policy);
  v1::App reply;
  if (!apps->SetAppPolicy(&context, request, &reply).ok()) {
    std::fprintf(stderr, "SetAppPolicy(%s) failed\n", policy.c_str());
    return m;
  }
  // Where each thread runs, for the runner to read its core's clock: the
  // placed core, or (unplaced) the core the daemon charges it to, one per
  // thread in registration order. Rewritten every 20 ms, atomically.
  std::atomic<bool> stop{false}, started{false};
  double slowest_over_mean_sum = 0;
  int clock_samples = 0;
  std::thread mapper([&] {
    while (!stop) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 2s);
      v1::AppList now;
      if (apps->ListApps(&ctx, v1::ListAppsRequest(), &now).ok() && now.apps_size() > 0) {
        std::string text;
        const auto& threads = now.apps(0).threads();
        for (int i = 0; i < threads.size(); ++i)
          text += std::to_string(threads[i].tid()) + " " +
                  std::to_string(threads[i].core() >= 0 ? threads[i].core() : i % 12) + "\n";
        std::ofstream(dir / "cores.tmp") << text;
        std::filesystem::rename(dir / "cores.tmp", dir / "cores");
        if (started) {
          // The clocks of the team's cores: the barrier waits for the slowest.
          double lo = 1e18, sum = 0;
          int n = 0;
          for (int i = 0; i < threads.size(); ++i) {
            int core = threads[i].core() >= 0 ? threads[i].core() : i % 12;
            std::ifstream in(daemon.sysfs() / "devices/system/cpu" / ("cpu" + std::to_string(core)) /
                             "cpufreq/scaling_cur_freq");
            double khz = 0;
            if (!(in >> khz)) continue;
            lo = std::min(lo, khz);
            sum += khz;
            ++n;
          }
          if (n) {
            slowest_over_mean_sum += lo / (sum / n);
            ++clock_samples;
          }
        }
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  std::this_thread::sleep_for(1s);  // two dT_DCT: the manager has taken the app's cores
  m.start_temp_c = meanCoreTemperatureC(daemon.sysfs());
  std::ofstream(dir / "go") << "go\n";
  started = true;
  int code = app.wait(std::chrono::seconds(600));
  stop = true;
  mapper.join();
  m.slowest_over_mean = clock_samples ? slowest_over_mean_sum / clock_samples : NAN;
  if (code != 0) {
    std::fprintf(stderr, "runner exited with %d: %s\n", code, app.err().c_str());
    app.kill();
  }
  std::smatch match;
  std::string out = app.out();
  std::regex json(R"(\"time_s\":([0-9.]+),\"energy_j\":([0-9.]+),\"threads_mean\":([0-9.]+))");
  if (code == 0 && std::regex_search(out, match, json)) {
    m.time_s = std::stod(match[1]);
    m.energy_j = std::stod(match[2]);
    m.threads = std::stod(match[3]);
    m.ok = true;
  } else {
    std::fprintf(stderr, "runner (exit %d) printed no result: %s%s\n", code, out.c_str(), app.err().c_str());
  }
  daemon.stop();
  return m;
}

nk::sim::SimulationResult runSimulated(const nk::sim::WorkloadModel& w, const std::string& policy_name,
                                       double budget_w, double start_temp_c) {
  nk::PolicyConfig config;
  auto policy = nk::makePolicy(policy_name, config);
  if (!policy) return {};
  nk::sim::NodeSimulator::Options options;
  options.budget_w = budget_w;
  options.budget_scope = nk::sim::BudgetScope::kNode;
  options.initial_temp_c = start_temp_c;
  return nk::sim::NodeSimulator(nk::NodeProfile::xeonE5_2630(), config, options).run(w, **policy);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> policies = {"ondemand", "thermal-aware"};
  double budget_w = 110;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--policies" && i + 1 < argc) {
      policies.clear();
      std::stringstream in(argv[++i]);
      for (std::string p; std::getline(in, p, ',');)
        if (!p.empty()) policies.push_back(p);
    } else if (a == "--budget" && i + 1 < argc) {
      budget_w = std::atof(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: sim_validation_bench [--policies LIST] [--budget WATTS] [--repeat N]\n");
      return 2;
    }
  }
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_RUNNER"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "sim_validation_bench: set %s\n", var);
      return 2;
    }
  // Compute at full load, then a light phase (threads asleep 60% of the
  // time, as in I/O) that ondemand answers with lower clocks.
  nk::sim::WorkloadModel w{"validation", {{"compute", 36.0, 1.0, 0.0, 0, 0.0}, {"light", 24.0, 1.0, 0.0, 0, 0.6}},
                           repeat, {}};
  std::printf("Simulator against the emulated node: '%s' (compute 36 core-s, light 24 core-s at 60%% asleep) x %d, "
              "12 threads\n", w.name.c_str(), repeat);
  std::printf("%-14s %8s %9s %9s %8s %10s %10s %8s %8s %8s %9s\n", "policy", "budget", "emu T s", "sim T s", "T ratio",
              "emu E J", "sim E J", "E ratio", "emu D", "sim D", "emu fmin/f");
  int bad = 0;
  for (const std::string& policy : policies) {
    double budget = policy == "ondemand" || policy == "performance" || policy == "powersave" ? 0.0 : budget_w;
    Measured emu = runEmulated(w, policy, budget);
    if (!emu.ok) {
      std::printf("%-14s  (emulated run failed)\n", policy.c_str());
      ++bad;
      continue;
    }
    auto sim = runSimulated(w, policy, budget, emu.start_temp_c);
    double tr = sim.time_s / emu.time_s, er = sim.energy_j / emu.energy_j;
    std::printf("%-14s %6.0f W %9.2f %9.2f %8.3f %10.0f %10.0f %8.3f %8.1f %8.1f %9.3f\n", policy.c_str(), budget,
                emu.time_s, sim.time_s, tr, emu.energy_j, sim.energy_j, er, emu.threads, sim.mean_threads,
                emu.slowest_over_mean);
    std::fflush(stdout);
    if (std::fabs(tr - 1) > 0.1 || std::fabs(er - 1) > 0.1) ++bad;
  }
  std::printf("goal: time and energy within 10%% (ratios 0.90-1.10); %s\n", bad ? "NOT met" : "met");
  return 0;
}
