// What the nodekeeper SPANK plugin adds to a job's start: `srun /bin/true`
// on a one-node Slurm cluster (tests/integration/slurm's SlurmCluster) with
// an empty plugstack.conf, with the plugin, and with the plugin and
// --nk-budget (which also sets the tasks' environment), runs interleaved
// so that the host's load falls on all three alike. The plugin runs the
// nodekeeper CLI twice per step and node (job begin with the step's pid,
// job end), whatever the number of tasks. Needs root (slurmd).
//   slurm_start_bench [--runs N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "slurm_cluster.h"
#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

using namespace nk::test;
using Clock = std::chrono::steady_clock;

namespace {

struct Variant {
  const char* name;
  bool plugin;
  int tasks;
  std::vector<std::string> options;
  std::vector<double> ms;
};

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * (values.size() - 1) + 0.5))];
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / values.size();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: slurm_start_bench [--runs N]\n");
      return 2;
    }
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "slurm_start_bench: needs root (slurmd)\n");
    return 1;
  }
  TempDir dir("slurm-bench", TempDir::Access::kShared);
  DaemonProcess daemon;
  if (!daemon.start(dir.path() / "daemon")) {
    std::fprintf(stderr, "slurm_start_bench: daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }
  const std::string plugin_line = "required " + envOr("NK_SPANK_PLUGIN") + " cli=" + cliPath() +
                                  " socket=" + daemon.socket().string() + " tool=" + envOr("NK_CLIENT_LIB");
  SlurmCluster cluster;
  if (!cluster.start(dir.path() / "slurm", "")) {
    std::fprintf(stderr, "slurm_start_bench: %s\n", cluster.lastError().c_str());
    return 1;
  }
  const std::filesystem::path plugstack = dir.path() / "slurm" / "plugstack.conf";
  // Two tasks beside one: the plugin's cost should not grow with the tasks
  // (one CLI run per step and node, none per task).
  std::vector<Variant> variants = {{"without the plugin", false, 1, {}, {}},
                                   {"with the plugin", true, 1, {}, {}},
                                   {"with the plugin, --nk-budget=40W", true, 1, {"--nk-budget=40W"}, {}},
                                   {"without the plugin, 2 tasks", false, 2, {}, {}},
                                   {"with the plugin, 2 tasks", true, 2, {}, {}}};
  std::fprintf(stderr, "timing %d runs of srun /bin/true per variant, interleaved...\n", runs);
  for (int run = -1; run < runs; ++run) {  // run -1 warms up
    for (Variant& v : variants) {
      // srun and slurmstepd read plugstack.conf at each start.
      std::ofstream(plugstack) << (v.plugin ? plugin_line : std::string("# none")) << "\n";
      std::vector<std::string> args = {"srun", "-N1", "-n" + std::to_string(v.tasks)};
      args.insert(args.end(), v.options.begin(), v.options.end());
      args.push_back("/bin/true");
      auto start = Clock::now();
      ProcessResult result = cluster.run(args);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (result.exit_code != 0) {
        std::fprintf(stderr, "slurm_start_bench: srun failed (%s): %s\n", v.name, result.err.c_str());
        return 1;
      }
      if (run >= 0) v.ms.push_back(ms);
    }
  }
  const double base = percentile(variants[0].ms, 0.5);
  std::printf("\nsrun -N1 -nT /bin/true, one-node Slurm 22.05 on this host (%d runs each, wall time)\n\n", runs);
  std::printf("%-36s %10s %10s %10s %14s\n", "variant", "p50 ms", "p90 ms", "mean ms", "p50 ratio");
  for (const Variant& v : variants)
    std::printf("%-36s %10.1f %10.1f %10.1f %14.2f\n", v.name, percentile(v.ms, 0.5), percentile(v.ms, 0.9),
                mean(v.ms), percentile(v.ms, 0.5) / base);
  std::printf("\nadded by the plugin at p50: %.1f ms (%.1f ms with --nk-budget; %.1f ms to a 2-task step)\n",
              percentile(variants[1].ms, 0.5) - base, percentile(variants[2].ms, 0.5) - base,
              percentile(variants[4].ms, 0.5) - percentile(variants[3].ms, 0.5));
  return 0;
}
