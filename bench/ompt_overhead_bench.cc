// The OMPT tool's cost to an app: 100k parallel regions (empty, and with a
// small loop), each run in a child process of this same binary, without and
// with OMP_TOOL_LIBRARIES=libnodekeeper.so. Goal: under 2% overhead.
//
//   ompt_overhead_bench [--repeats N] [--null-tool PATH] [path/to/libnodekeeper.so]
//
// The library defaults to $NK_CLIENT_LIB. With --null-tool (a tool that
// registers the same callbacks and does nothing, bench/ompt_null_tool.cc)
// a third side shows what libomp itself costs once any tool is attached.
//
// What makes the two columns comparable:
// - Both children run on LLVM libomp, which each child checks and reports.
//   libgomp ignores OMP_TOOL_LIBRARIES, so a libgomp build times the same
//   thing twice and shows noise as "overhead" (that is how the tool once
//   looked faster than no tool). The "tool" child must also show the tool
//   actually loaded, the other must show it absent.
// - Both get the very same environment apart from OMP_TOOL_LIBRARIES:
//   OMP_NUM_THREADS, KMP_BLOCKTIME, OMP_PROC_BIND and OMP_PLACES are fixed
//   explicitly (the caller's values when set, else fixed defaults), and
//   NODEKEEPER_SOCKET points nowhere so the tool runs unmanaged: callbacks
//   plus its background thread, never a daemon.
// - Each child warms up (team creation, page faults, the CPU leaving idle)
//   before its clock starts, and library loading is outside the timing.
// - Runs are interleaved, one of each side per round, and the order turns
//   from round to round, so drift and order effects fall on every side;
//   the table gives medians and the median of the per-round ratios.

#include <dlfcn.h>
#include <link.h>
#include <omp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr int kRegions = 100000;
constexpr int kWarmupRegions = 5000;
constexpr int kDefaultRepeats = 11;
constexpr double kGoalPct = 2.0;

// Environment the children share; the caller's value wins when set.
struct SharedSetting {
  const char* name;
  const char* fallback;
};
constexpr SharedSetting kSharedSettings[] = {
    {"KMP_BLOCKTIME", "200"},    // libomp's default, written out so both sides surely use it
    {"OMP_PROC_BIND", "false"},  // unpinned unless the caller asks
    {"OMP_PLACES", "cores"},
};

double g_loop_sink = 0.0;

// --- child -----------------------------------------------------------------

std::string realPathOf(const char* path) {
  char resolved[PATH_MAX];
  return ::realpath(path, resolved) ? std::string(resolved) : std::string(path);
}

struct LoadedObjects {
  std::string wanted;
  bool found = false;
};

int findObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* objects = static_cast<LoadedObjects*>(data);
  if (info->dlpi_name && *info->dlpi_name && realPathOf(info->dlpi_name) == objects->wanted)
    objects->found = true;
  return 0;
}

long long processCpuNs() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

void runRegions(bool loop, int count) {
  for (int r = 0; r < count; ++r) {
    if (loop) {
      double sum = 0;
#pragma omp parallel for reduction(+ : sum)
      for (int i = 0; i < 256; ++i)
        sum += i * 0.5;
      g_loop_sink += sum;
    } else {
#pragma omp parallel
      { asm volatile("" ::: "memory"); }  // an empty body the compiler cannot drop
    }
  }
}

// Prints "<wall ns> <cpu ns> <team size> <runtime library> <tool loaded 0|1>";
// `tool` is the library whose presence is reported ("-" for none). CPU time
// is the whole process's, so the tool's background thread counts; it also
// leaves out time spent descheduled, which on a busy machine is most of
// the noise in the wall time.
int child(const char* variant, const char* tool) {
  bool loop = std::strcmp(variant, "loop") == 0;
  runRegions(loop, kWarmupRegions);
  long long cpu_start = processCpuNs();
  auto start = std::chrono::steady_clock::now();
  runRegions(loop, kRegions);
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  long long cpu_ns = processCpuNs() - cpu_start;

  int team = 0;
#pragma omp parallel
  {
#pragma omp master
    team = omp_get_num_threads();
  }
  Dl_info runtime{};
  const char* runtime_path = "unknown";
  if (::dladdr(reinterpret_cast<void*>(&omp_get_num_threads), &runtime) && runtime.dli_fname)
    runtime_path = runtime.dli_fname;
  LoadedObjects objects{realPathOf(tool), false};
  ::dl_iterate_phdr(&findObject, &objects);
  std::printf("%lld %lld %d %s %d\n", static_cast<long long>(ns), cpu_ns, team, realPathOf(runtime_path).c_str(),
              objects.found ? 1 : 0);
  return 0;
}

// --- parent ----------------------------------------------------------------

struct ChildResult {
  bool ok = false;
  double ns = 0.0;
  double cpu_ns = 0.0;
  int team = 0;
  std::string runtime;
  bool tool_loaded = false;
};

// One way of running the children: no tool, the null tool, libnodekeeper.
struct Side {
  std::string label;
  std::string tool;  // empty: no tool
  std::vector<std::string> env;
  std::vector<double> ns;
  std::vector<double> cpu_ns;
};

std::vector<std::string> childEnvironment(const std::string& threads, const std::string& tool) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool ours = name == "OMP_TOOL_LIBRARIES" || name == "OMP_TOOL" || name == "OMP_NUM_THREADS" ||
                name == "NODEKEEPER_SOCKET" || name == "NK_TEST_FORCE_THREADS" || name == "NK_DEBUG";
    for (const SharedSetting& s : kSharedSettings)
      ours = ours || name == s.name;
    if (!ours)
      env.push_back(entry);
  }
  env.push_back("OMP_NUM_THREADS=" + threads);
  for (const SharedSetting& s : kSharedSettings) {
    const char* value = std::getenv(s.name);
    env.push_back(std::string(s.name) + "=" + (value && *value ? value : s.fallback));
  }
  env.push_back("NODEKEEPER_SOCKET=/nonexistent/nodekeeper-bench.sock");
  if (!tool.empty())
    env.push_back("OMP_TOOL_LIBRARIES=" + tool);
  return env;
}

// fork + execve rather than popen: no shell between us and the child, and
// an environment that is exactly the one built above.
ChildResult runChild(const std::string& self, const char* variant, const Side& side) {
  ChildResult result;
  int out[2];
  if (::pipe(out) != 0)
    return result;
  std::vector<char*> envp;
  for (const std::string& e : side.env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string tool_arg = side.tool.empty() ? "-" : side.tool;
  std::vector<char*> argv = {const_cast<char*>(self.c_str()), const_cast<char*>("--child"),
                             const_cast<char*>(variant), tool_arg.data(), nullptr};
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return result;
  }
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    // The tool says once on stderr that it runs unmanaged; not our output.
    if (FILE* null = std::freopen("/dev/null", "w", stderr); !null)
      ::_exit(126);
    ::execve(self.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return result;
  long long ns = 0, cpu_ns = 0;
  int team = 0, loaded = 0;
  char runtime[PATH_MAX] = {};
  if (std::sscanf(text.c_str(), "%lld %lld %d %4095s %d", &ns, &cpu_ns, &team, runtime, &loaded) != 5)
    return result;
  result.ok = ns > 0 && cpu_ns > 0;
  result.ns = static_cast<double>(ns);
  result.cpu_ns = static_cast<double>(cpu_ns);
  result.team = team;
  result.runtime = runtime;
  result.tool_loaded = loaded != 0;
  return result;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

bool isLlvmLibomp(const std::string& runtime) { return runtime.find("libomp") != std::string::npos; }

// A child that ran on the wrong runtime, or with the tool in the wrong
// state, would make the comparison meaningless: refuse it by name.
bool checkChild(const ChildResult& r, const Side& side, const char* variant, const std::string& threads) {
  const char* label = side.label.c_str();
  if (!r.ok) {
    std::fprintf(stderr, "ompt_overhead_bench: %s child (%s) failed\n", label, variant);
    return false;
  }
  if (!isLlvmLibomp(r.runtime)) {
    std::fprintf(stderr,
                 "ompt_overhead_bench: the %s child ran on %s, not LLVM libomp; libgomp has no OMPT, so no "
                 "tool would ever load. Link with -lomp (see bench/meson.build).\n",
                 label, r.runtime.c_str());
    return false;
  }
  if (r.tool_loaded != !side.tool.empty()) {
    std::fprintf(stderr, "ompt_overhead_bench: the %s child %s its tool loaded\n", label,
                 r.tool_loaded ? "had" : "did not have");
    return false;
  }
  if (std::to_string(r.team) != threads) {
    std::fprintf(stderr, "ompt_overhead_bench: the %s child ran teams of %d, not OMP_NUM_THREADS=%s\n", label, r.team,
                 threads.c_str());
    return false;
  }
  return true;
}

void printUsage(FILE* out, const char* argv0) {
  std::fprintf(out, "usage: %s [--repeats N] [--null-tool PATH] [path/to/libnodekeeper.so]  (default: $NK_CLIENT_LIB)\n",
               argv0);
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.2f%%", (ratio - 1.0) * 100.0);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0)
    return child(argv[2], argv[3]);

  int repeats = kDefaultRepeats;
  std::string tool = std::getenv("NK_CLIENT_LIB") ? std::getenv("NK_CLIENT_LIB") : "";
  std::string null_tool;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      printUsage(stdout, argv[0]);
      return 0;
    }
    if (arg == "--repeats" && i + 1 < argc) {
      char* end = nullptr;
      long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 1 || value > 1000) {
        std::fprintf(stderr, "ompt_overhead_bench: --repeats needs a whole number from 1 to 1000\n");
        return 2;
      }
      repeats = static_cast<int>(value);
    } else if (arg == "--null-tool" && i + 1 < argc) {
      null_tool = argv[++i];
    } else if (!arg.empty() && arg[0] != '-') {
      tool = arg;
    } else {
      printUsage(stderr, argv[0]);
      return 2;
    }
  }
  for (const std::string* path : {&tool, &null_tool}) {
    if (path == &null_tool && path->empty())
      continue;
    if (path->empty() || ::access(path->c_str(), R_OK) != 0) {
      std::fprintf(stderr, "ompt_overhead_bench: no readable tool library '%s'\n", path->c_str());
      printUsage(stderr, argv[0]);
      return 2;
    }
  }
  std::string self = realPathOf("/proc/self/exe");

  const char* threads_env = std::getenv("OMP_NUM_THREADS");
  std::string threads = threads_env && *threads_env ? threads_env
                                                    : std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Side> sides;
  sides.push_back({"no-tool", "", childEnvironment(threads, ""), {}});
  if (!null_tool.empty()) {
    null_tool = realPathOf(null_tool.c_str());
    sides.push_back({"null-tool", null_tool, childEnvironment(threads, null_tool), {}});
  }
  tool = realPathOf(tool.c_str());
  sides.push_back({"nodekeeper", tool, childEnvironment(threads, tool), {}});
  const size_t kNoTool = 0, kNull = 1, kNodekeeper = sides.size() - 1;
  bool with_null = sides.size() == 3;

  std::printf("OMPT tool overhead: %d parallel regions after %d warm-up, OMP_NUM_THREADS=%s", kRegions, kWarmupRegions,
              threads.c_str());
  for (const SharedSetting& s : kSharedSettings) {
    const char* value = std::getenv(s.name);
    std::printf(" %s=%s", s.name, value && *value ? value : s.fallback);
  }
  std::printf("\n%d rounds, one run of each side per round, order turning; tool unmanaged (no daemon)\n", repeats);
  if (FILE* load = std::fopen("/proc/loadavg", "r")) {
    double load1 = 0;
    if (std::fscanf(load, "%lf", &load1) == 1 && load1 > 0.5 * std::thread::hardware_concurrency())
      std::printf("note: load average %.2f on %u CPUs before the runs; expect noise\n", load1,
                  std::thread::hardware_concurrency());
    std::fclose(load);
  }

  int rc = 0;
  std::string runtime;
  std::printf("%-20s %9s %9s %9s %10s %10s %18s %10s %10s\n", "workload", "no tool", "null tool", "tool", "overhead",
              "round", "round", "null tool", "CPU time");
  std::printf("%-20s %9s %9s %9s %10s %10s %18s %10s %10s\n", "", "(ns/reg)", "(ns/reg)", "(ns/reg)", "(medians)",
              "median", "min..max", "overhead", "overhead");
  for (const char* variant : {"empty", "loop"}) {
    for (Side& side : sides) {
      side.ns.clear();
      side.cpu_ns.clear();
    }
    std::vector<double> round_ratio;
    bool failed = false;
    for (int round = 0; round < repeats && !failed; ++round) {
      std::vector<ChildResult> results(sides.size());
      // Turn the order each round, and run it backwards every other round,
      // so that no side is always first or always after the same one.
      for (size_t k = 0; k < sides.size(); ++k) {
        size_t turned = (k + static_cast<size_t>(round)) % sides.size();
        size_t which = round % 2 ? sides.size() - 1 - turned : turned;
        results[which] = runChild(self, variant, sides[which]);
      }
      for (size_t k = 0; k < sides.size() && !failed; ++k)
        failed = !checkChild(results[k], sides[k], variant, threads);
      if (failed)
        break;
      runtime = results[kNoTool].runtime;
      for (size_t k = 0; k < sides.size(); ++k) {
        sides[k].ns.push_back(results[k].ns);
        sides[k].cpu_ns.push_back(results[k].cpu_ns);
      }
      round_ratio.push_back(results[kNodekeeper].ns / results[kNoTool].ns);
    }
    std::string name = std::string(variant) + (std::strcmp(variant, "loop") == 0 ? " (256-iter for)" : " regions");
    if (failed) {
      std::printf("%-20s failed (see stderr)\n", name.c_str());
      rc = 1;
      continue;
    }
    double none = median(sides[kNoTool].ns), nk = median(sides[kNodekeeper].ns);
    double null = with_null ? median(sides[kNull].ns) : 0.0;
    auto [lo, hi] = std::minmax_element(round_ratio.begin(), round_ratio.end());
    std::string null_ns = with_null ? std::to_string(static_cast<long long>(null / kRegions + 0.5)) : "-";
    double cpu_ratio = median(sides[kNodekeeper].cpu_ns) / median(sides[kNoTool].cpu_ns);
    std::printf("%-20s %9.1f %9s %9.1f %10s %10s %18s %10s %10s\n", name.c_str(), none / kRegions, null_ns.c_str(),
                nk / kRegions, percent(nk / none).c_str(), percent(median(round_ratio)).c_str(),
                (percent(*lo) + ".." + percent(*hi)).c_str(), with_null ? percent(null / none).c_str() : "-",
                percent(cpu_ratio).c_str());
    std::fflush(stdout);
  }
  if (!runtime.empty())
    std::printf("runtime on every side: %s\n", runtime.c_str());
  std::printf("overhead = tool / no tool - 1 in wall time (goal under %.0f%%); round = the same ratio within each\n"
              "round; null tool = the same callbacks doing nothing; CPU time = medians of the process's CPU time\n",
              kGoalPct);
  return rc;
}
