// The OMPT tool's cost to an app: 100k parallel regions (empty, and with a
// small loop), timed in child processes of this same binary with and without
// OMP_TOOL_LIBRARIES=libnodekeeper.so, alternating, median of the repeats.
// Goal: under 2% overhead.
//
// Usage: ompt_overhead_bench [path/to/libnodekeeper.so] (default: $NK_CLIENT_LIB)
// The tool runs unmanaged (NODEKEEPER_SOCKET points nowhere), so only the
// callbacks and the background thread are measured.

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kRegions = 100000;
constexpr int kRepeats = 9;

volatile double g_sink = 0;

// Child mode: runs the workload and prints its wall time in nanoseconds.
int child(const char* variant) {
  bool loop = std::strcmp(variant, "loop") == 0;
  // Warm-up: the first region creates the team.
#pragma omp parallel
  { g_sink = g_sink + 0; }
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRegions; ++r) {
    if (loop) {
      double sum = 0;
#pragma omp parallel for reduction(+ : sum)
      for (int i = 0; i < 256; ++i) sum += i * 0.5;
      g_sink = sum;
    } else {
#pragma omp parallel
      { asm volatile("" ::: "memory"); }  // empty body the compiler cannot drop
    }
  }
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf("%lld\n", static_cast<long long>(ns));
  return 0;
}

double runChild(const std::string& self, const std::string& variant, const std::string& tool) {
  std::string command = "env -u OMP_TOOL_LIBRARIES NODEKEEPER_SOCKET=/nonexistent/nk.sock";
  if (!tool.empty()) command += " OMP_TOOL_LIBRARIES='" + tool + "'";
  command += " '" + self + "' --child " + variant + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  long long ns = -1;
  if (std::fscanf(pipe, "%lld", &ns) != 1) ns = -1;
  ::pclose(pipe);
  return static_cast<double>(ns);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--child") == 0) return child(argv[2]);
  std::string tool = argc > 1 ? argv[1] : (std::getenv("NK_CLIENT_LIB") ? std::getenv("NK_CLIENT_LIB") : "");
  if (tool.empty()) {
    std::fprintf(stderr, "usage: %s path/to/libnodekeeper.so (or set NK_CLIENT_LIB)\n", argv[0]);
    return 2;
  }
  std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  char resolved[4096];
  ssize_t n = ::readlink("/proc/self/exe", resolved, sizeof(resolved) - 1);
  if (n > 0) self.assign(resolved, static_cast<size_t>(n));

  std::printf("OMPT tool overhead: %d parallel regions, %s threads, median of %d alternating runs\n", kRegions,
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "default", kRepeats);
  std::printf("%-22s %14s %14s %10s %10s\n", "workload", "no tool (ms)", "tool (ms)", "ratio", "overhead");
  int rc = 0;
  for (const char* variant : {"empty", "loop"}) {
    std::vector<double> without, with;
    for (int i = 0; i < kRepeats; ++i) {
      without.push_back(runChild(self, variant, ""));
      with.push_back(runChild(self, variant, tool));
    }
    double a = median(without), b = median(with);
    if (a <= 0 || b <= 0) {
      std::printf("%-22s failed\n", variant);
      rc = 1;
      continue;
    }
    std::string name = std::string(variant) + (std::strcmp(variant, "loop") == 0 ? " (256-iter for)" : " regions");
    std::printf("%-22s %14.2f %14.2f %10.4f %9.2f%%\n", name.c_str(), a / 1e6, b / 1e6, b / a, (b / a - 1) * 100);
  }
  return rc;
}
