// A real OpenMP program that runs a workload model on an emulated node, for
// the simulator's validation (sim_validation_bench). The emulated node's
// clocks do not slow the host, so each thread credits its progress the way
// the simulator's model does: a quantum of work takes (1 - io) f_max / f
// seconds of spinning at its core's emulated clock f plus io seconds
// asleep. Its core is the one FILE (--cores: "tid core" lines, kept
// current by the bench from the daemon's ListApps) names for its tid, else
// core <thread number>. The team is as large as the runtime (and so
// nodekeeper's DCT) makes each parallel region.
//
//   workload_runner --sysfs ROOT --go FILE [--cores FILE] [--repeat N] NAME:WORK:IO ...
//
// Waits for FILE to exist after its first parallel region (so that the app
// is registered and its policy set), then runs the phases and prints one
// JSON line: {"time_s":...,"energy_j":...,"threads_mean":...}.
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Phase {
  std::string name;
  double work_core_s = 0;
  double io = 0;
};

std::string g_root;
std::string g_cores;

// The core FILE names for this thread, else `fallback`.
int coreOf(pid_t tid, int fallback) {
  if (g_cores.empty()) return fallback;
  FILE* f = std::fopen(g_cores.c_str(), "re");
  if (!f) return fallback;
  int t = 0, c = 0, found = fallback;
  while (std::fscanf(f, "%d %d", &t, &c) == 2)
    if (t == tid) found = c;
  std::fclose(f);
  return found;
}
double g_fmax_khz = 0;

double readNumber(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NAN;
  char buf[64];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  if (n <= 0) return NAN;
  buf[n] = 0;
  return std::strtod(buf, nullptr);
}

double energyJ() {
  double j = 0;
  for (int p = 0; p < 2; ++p) {
    double uj = readNumber(g_root + "/class/powercap/intel-rapl:" + std::to_string(p) + "/energy_uj");
    if (std::isfinite(uj)) j += uj * 1e-6;
  }
  return j;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "workload_runner: %s\nusage: workload_runner --sysfs ROOT --go FILE [--repeat N] NAME:WORK:IO ...\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string go;
  int repeat = 1;
  std::vector<Phase> phases;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sysfs" && i + 1 < argc) g_root = argv[++i];
    else if (a == "--go" && i + 1 < argc) go = argv[++i];
    else if (a == "--cores" && i + 1 < argc) g_cores = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else {
      Phase ph;
      size_t c1 = a.find(':'), c2 = a.find(':', c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) usage(("bad phase '" + a + "'").c_str());
      ph.name = a.substr(0, c1);
      ph.work_core_s = std::atof(a.substr(c1 + 1, c2 - c1 - 1).c_str());
      ph.io = std::atof(a.substr(c2 + 1).c_str());
      if (!(ph.work_core_s > 0) || ph.io < 0 || ph.io >= 1) usage(("bad phase '" + a + "'").c_str());
      phases.push_back(ph);
    }
  }
  if (g_root.empty() || go.empty() || phases.empty() || repeat < 1) usage("missing arguments");
  g_fmax_khz = readNumber(g_root + "/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!(g_fmax_khz > 0)) usage("no cpuinfo_max_freq under --sysfs");

  int warm = 0;
#pragma omp parallel reduction(+ : warm)
  warm += 1;
  while (access(go.c_str(), F_OK) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  double e0 = energyJ();
  auto t0 = Clock::now();
  double thread_time = 0;  // integral of D over time
  constexpr double kChunkWallS = 0.05;  // a parallel region at most this long at f_max
  constexpr double kQuantumS = 0.005;
  for (int r = 0; r < repeat; ++r)
    for (const Phase& ph : phases) {
      double left = ph.work_core_s;
      while (left > 1e-12) {
        int team = omp_get_max_threads();
        double chunk = std::min(left, kChunkWallS * team);
        const Clock::time_point c0 = Clock::now();
        int used = 1;
#pragma omp parallel
        {
          int t = omp_get_thread_num();
          int d = omp_get_num_threads();
#pragma omp single
          used = d;
          int core = coreOf(gettid(), t);
          std::string freq = g_root + "/devices/system/cpu/cpu" + std::to_string(core) + "/cpufreq/scaling_cur_freq";
          double mine = chunk / d;
          // Absolute deadlines from the region's start: a thread the host
          // scheduled late catches up instead of adding its delay.
          Clock::time_point deadline = c0;
          auto after = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
          while (mine > 1e-12) {
            double q = std::min(mine, kQuantumS);
            double f = readNumber(freq);
            if (!(f > 0)) f = g_fmax_khz;
            deadline += after(q * (1.0 - ph.io) * g_fmax_khz / f);
            while (Clock::now() < deadline) {
            }
            if (ph.io > 0) {
              deadline += after(q * ph.io);
              std::this_thread::sleep_until(deadline);
            }
            mine -= q;
          }
        }
        thread_time += used * std::chrono::duration<double>(Clock::now() - c0).count();
        left -= chunk;
      }
    }
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  double joules = energyJ() - e0;
  std::printf("{\"time_s\":%.3f,\"energy_j\":%.1f,\"threads_mean\":%.2f,\"warm\":%d}\n", seconds, joules,
              seconds > 0 ? thread_time / seconds : 0.0, warm);
  return 0;
}
