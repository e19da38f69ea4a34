// The task events' hot-path figures, side by side in one run: wall time per task of
// an OpenMP program (libomp, 1 and 2 threads) on three shapes (empty tasks from one
// producer; tasks chained by depend(inout); a fib-shaped tree, each task making two
// and waiting for them), under these set-ups, interleaved over rounds (medians):
//   no tool               OMP_TOOL_LIBRARIES unset
//   null task tool        a tool with the same task callbacks that does nothing
//                         (NK_NULL_TASK_TOOL): libomp's own cost, the floor
//   LTTng-UST             the same events as LTTng-UST tracepoints (NK_LTTNG_TOOL),
//                         into a session of a private lttng-sessiond, LTTng's
//                         default channel: discard mode, 4 x 512 KiB per CPU
//   LTTng-UST blocking    the same with --blocking-timeout=inf: the app waits for
//                         room, as nodekeeper lossless does
//   nk tasks off          libnodekeeper, NODEKEEPER_TASKS=off
//   nk lossless           NODEKEEPER_TASKS=lossless into a live nodekeeperd
//   nk lossless, big buf  a per-thread buffer that holds the whole run: the event
//                         path alone, no waiting for the shipper
//   nk lossy              NODEKEEPER_TASKS=lossy
//   base lossless (and big buf)  with NK_CLIENT_LIB_BASELINE: another build of
//                         libnodekeeper (a change's "before") side by side
// Goal: nodekeeper lossless at or below LTTng-UST's cost, and under 60 ns per task
// over the null task tool.
//
// With 2 threads on this 2-core machine the app has no core to spare, so the
// consumers' work (nodekeeper's shipper and daemon, LTTng's consumer daemon) shows
// in its time; with 1 thread they run beside it. "kept" is the share of tasks in
// nodekeeper's session, or 1 - discarded/events for LTTng (its session statistics).
//
// The LTTng session daemon is the bench's own: lttng-sessiond --no-kernel with
// LTTNG_HOME in the bench's temporary directory, run as uid 65534 when the bench is
// root (a root session daemon always uses /var/run/lttng and would meet a system
// one; the programs, root, reach the private one through LTTNG_HOME), stopped at the
// end. Two sessions (discard, blocking), each one channel and the events 'nk_omp:*',
// made once; around each run one of them is started, then stopped (which waits until
// the consumer daemon has written everything) and its statistics read. Without
// lttng-sessiond or the tool the LTTng rows say so.
//
//   task_events_bench [--tasks N] [--rounds R] [--threads T] [--long]
// --threads T: that team size alone (default: 1 and 2).
// --long (or NK_TASKS_BENCH_LONG=1): a million tasks a run, 9 rounds.
// Needs NK_DAEMON, NK_CLIENT_LIB and NK_TASKS_BENCH_PROGRAM; NK_NULL_TASK_TOOL and
// NK_LTTNG_TOOL for those rows; with NK_CLI also records a million-task graph and
// times its exports.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "private_lttng.h"
#include "testlib/daemon_process.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// VmRSS: now; VmHWM: the peak so far.
long residentKiB(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + field.size());
  return 0;
}

// Events each tool emits per task, near enough for rates and shares: created,
// started, finished; one dependence per chained task; a taskwait's begin and
// end per two tasks of the tree.
double eventsPerTask(const std::string& kind) { return kind == "empty" ? 3.0 : 4.0; }

}  // namespace

int main(int argc, char** argv) {
  long tasks = 100000;
  int rounds = 5;
  bool long_run = nk::test::envOr("NK_TASKS_BENCH_LONG") == "1";
  std::optional<long> tasks_flag;
  std::optional<int> rounds_flag;
  std::vector<int> team_sizes = {1, 2};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) tasks_flag = std::atol(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds_flag = std::max(1, std::atoi(argv[++i]));
    else if (a == "--long") long_run = true;
    else if (a == "--threads" && i + 1 < argc) team_sizes = {std::max(1, std::atoi(argv[++i]))};
    else {
      std::fprintf(stderr, "usage: task_events_bench [--tasks N] [--rounds R] [--threads T] [--long]\n");
      return 2;
    }
  }
  if (long_run) {
    tasks = 1000000;
    rounds = 9;
  }
  tasks = tasks_flag.value_or(tasks);
  rounds = rounds_flag.value_or(rounds);
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_TASKS_BENCH_PROGRAM"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "task_events_bench: set %s\n", var);
      return 2;
    }
  nk::test::TempDir dir("bench-tasks", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto stub = v1::TasksService::NewStub(channel);

  std::vector<std::string> setups = {"no tool", "nk tasks off", "nk lossless", "nk lossless, big buf", "nk lossy"};
  const std::string null_task_tool = nk::test::envOr("NK_NULL_TASK_TOOL");
  if (!null_task_tool.empty()) setups.insert(setups.begin() + 1, "null task tool");
  const std::string lttng_tool = nk::test::envOr("NK_LTTNG_TOOL");
  std::string lttng_missing;
  nk::bench::PrivateLttng lttng;
  if (lttng_tool.empty())
    lttng_missing = "NK_LTTNG_TOOL not set";
  else if (!fs::exists(lttng_tool))
    lttng_missing = lttng_tool + " not built (it needs liblttng-ust-dev)";
  else if (!lttng.start(dir.path()) || !lttng.makeSessions())
    lttng_missing = lttng.error();
  if (lttng_missing.empty()) {
    auto at = std::find(setups.begin(), setups.end(), "nk tasks off");
    setups.insert(at, {"LTTng-UST", "LTTng-UST blocking"});
  }
  // Another build of the library side by side (a change's before and after).
  const std::string baseline_lib = nk::test::envOr("NK_CLIENT_LIB_BASELINE");
  if (!baseline_lib.empty()) setups.insert(setups.end(), {"base lossless", "base lossless, big buf"});
  const std::vector<std::string> kinds = {"empty", "chain", "fib"};
  // Keyed by "threads/kind/setup".
  std::map<std::string, std::vector<double>> ns;
  std::map<std::string, std::vector<double>> kept;  // share of tasks (nodekeeper) or events (LTTng) recorded
  std::map<std::string, std::vector<double>> trace_bytes_per_task;
  std::map<std::string, uint64_t> discarded;  // LTTng, over all rounds
  auto key = [](int threads, const std::string& kind, const std::string& setup) {
    return std::to_string(threads) + "/" + kind + "/" + setup;
  };
  for (int round = 0; round < rounds; ++round)
    for (int threads : team_sizes)
      for (const std::string& kind : kinds)
        for (size_t k = 0; k < setups.size(); ++k) {
          const std::string& setup = setups[(k + round) % setups.size()];  // order turns each round
          const bool is_lttng = setup.rfind("LTTng", 0) == 0;
          std::vector<std::string> env = {"/usr/bin/env", "OMP_NUM_THREADS=" + std::to_string(threads),
                                          "KMP_BLOCKTIME=200", "NODEKEEPER_SOCKET=" + daemon.socket().string()};
          if (setup == "null task tool") env.push_back("OMP_TOOL_LIBRARIES=" + null_task_tool);
          else if (is_lttng)
            // Registered with the session daemon before main() (no timeout), so
            // every event of the run is traced.
            env.insert(env.end(), {"OMP_TOOL_LIBRARIES=" + lttng_tool, "LTTNG_HOME=" + lttng.home().string(),
                                   "LTTNG_UST_REGISTER_TIMEOUT=-1", "LTTNG_UST_ALLOW_BLOCKING=1"});
          else if (setup.rfind("base", 0) == 0) env.push_back("OMP_TOOL_LIBRARIES=" + baseline_lib);
          else if (setup != "no tool") env.push_back("OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"));
          if (setup == "nk tasks off") env.push_back("NODEKEEPER_TASKS=off");
          if (setup == "nk lossless" || setup == "base lossless") env.push_back("NODEKEEPER_TASKS=lossless");
          if (setup == "nk lossy") env.push_back("NODEKEEPER_TASKS=lossy");
          if (setup == "nk lossless, big buf" || setup == "base lossless, big buf")
            env.insert(env.end(),
                       {"NODEKEEPER_TASKS=lossless", "NODEKEEPER_TASK_BUFFER=" + std::to_string(5 * tasks + 8192)});
          env.insert(env.end(), {nk::test::envOr("NK_TASKS_BENCH_PROGRAM"), kind, std::to_string(tasks)});
          const std::string at = key(threads, kind, setup);
          long made = 0;
          auto run = [&] {
            nk::test::ProcessResult r = nk::test::runProgram(env, std::nullopt, std::chrono::seconds(300));
            std::smatch m;
            if (r.exit_code != 0 || !std::regex_search(r.out, m, std::regex("ns_per_task=([0-9.]+) tasks=([0-9]+)"))) {
              std::fprintf(stderr, "%s %s failed (%d): %s\n", kind.c_str(), setup.c_str(), r.exit_code,
                           r.err.c_str());
              return false;
            }
            ns[at].push_back(std::stod(m[1]));
            made = std::stol(m[2]);
            return true;
          };
          if (!is_lttng) {
            if (!run()) continue;
          } else {
            auto recorded = lttng.record(setup == "LTTng-UST blocking", run);
            if (!recorded) {
              std::fprintf(stderr, "%s %s: %s\n", kind.c_str(), setup.c_str(), lttng.error().c_str());
              continue;
            }
            // The warm-up's 1000 tasks are in the trace too.
            const double events = eventsPerTask(kind) * static_cast<double>(made + 1000);
            kept[at].push_back(1.0 - static_cast<double>(recorded->discarded) / events);
            discarded[at] += recorded->discarded;
            trace_bytes_per_task[at].push_back(static_cast<double>(recorded->trace_bytes) / (made + 1000));
          }
          if (setup.rfind("nk loss", 0) == 0 || setup.rfind("base", 0) == 0) {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            v1::SessionList list;
            if (stub->ListSessions(&context, v1::ListSessionsRequest(), &list).ok() && list.sessions_size() > 0) {
              const auto& last = list.sessions(list.sessions_size() - 1);
              kept[at].push_back(static_cast<double>(last.tasks()) / (made + 1000));
            }
          }
        }
  lttng.stop();
  // A million-task graph recorded, then exported from the daemon by the
  // CLI as users would, and what the live graph costs the daemon.
  struct ExportTime {
    std::string format;
    double seconds = NAN;
    uintmax_t bytes = 0;
  };
  std::vector<ExportTime> exports;
  double rss_per_task = NAN;
  long big = 1000000;
  if (!nk::test::envOr("NK_CLI").empty()) {
    long rss_before = residentKiB(daemon.pid(), "VmRSS:");
    nk::test::ProcessResult r = nk::test::runProgram(
        {"/usr/bin/env", "OMP_NUM_THREADS=2", "NODEKEEPER_SOCKET=" + daemon.socket().string(),
         "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"), "NODEKEEPER_TASKS=lossless",
         nk::test::envOr("NK_TASKS_BENCH_PROGRAM"), "empty", std::to_string(big)},
        std::nullopt, std::chrono::seconds(300));
    // The peak: the graph is freed when the session ends.
    rss_per_task = static_cast<double>(residentKiB(daemon.pid(), "VmHWM:") - rss_before) * 1024.0 / (big + 1000);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::SessionList list;
    if (r.exit_code == 0 && stub->ListSessions(&context, v1::ListSessionsRequest(), &list).ok() &&
        list.sessions_size() > 0) {
      std::string id = std::to_string(list.sessions(list.sessions_size() - 1).session_id());
      for (const std::string format : {"perfetto", "otf2", "dot"}) {
        auto out = dir / ("export-" + format);
        auto start = std::chrono::steady_clock::now();
        nk::test::ProcessResult e = nk::test::runProgram({nk::test::envOr("NK_CLI"), "--socket",
                                                          daemon.socket().string(), "export", id, "--format", format,
                                                          "--out", out.string()},
                                                         std::nullopt, std::chrono::seconds(300));
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (e.exit_code != 0) {
          std::fprintf(stderr, "export %s failed: %s\n", format.c_str(), e.err.c_str());
          continue;
        }
        exports.push_back({format, seconds, fs::is_directory(out) ? nk::bench::bytesUnder(out) : fs::file_size(out)});
      }
    }
  }
  daemon.stop();

  std::printf("Task events on the app thread: about %ld tasks per run, %d rounds, medians; +: ns per task over\n"
              "that set-up; x LTTng: what the set-up adds over the null tool, over what LTTng-UST adds\n",
              tasks, rounds);
  if (!lttng_missing.empty()) std::printf("LTTng-UST rows left out: %s\n", lttng_missing.c_str());
  std::printf("%-7s %-6s %-21s %8s %9s %9s %8s %8s %8s %9s\n", "threads", "tasks", "set-up", "ns/task", "+no tool",
              "+null", "x LTTng", "kept", "Mev/s", "trace B/t");
  for (int threads : team_sizes)
    for (const std::string& kind : kinds) {
      const double none = median(ns[key(threads, kind, "no tool")]);
      const double null_task = median(ns[key(threads, kind, "null task tool")]);
      const double lttng_added = median(ns[key(threads, kind, "LTTng-UST")]) - null_task;
      for (const std::string& setup : setups) {
        const double v = median(ns[key(threads, kind, setup)]);
        auto share = kept.find(key(threads, kind, setup));
        char kept_text[32] = "-", ratio[32] = "-", rate[32] = "-", bytes[32] = "-";
        if (share != kept.end()) std::snprintf(kept_text, sizeof kept_text, "%.2f%%", median(share->second) * 100);
        // Below the null tool is noise, and so is a ratio to it.
        if (setup != "no tool" && setup != "null task tool" && !std::isnan(lttng_added) && lttng_added > 0)
          std::snprintf(ratio, sizeof ratio, v < null_task ? "<0" : "%.2f", (v - null_task) / lttng_added);
        if (setup == "nk lossless" || setup == "base lossless" || setup == "LTTng-UST blocking")
          std::snprintf(rate, sizeof rate, "%.2f", eventsPerTask(kind) * 1e3 / v);
        auto trace = trace_bytes_per_task.find(key(threads, kind, setup));
        if (trace != trace_bytes_per_task.end()) std::snprintf(bytes, sizeof bytes, "%.0f", median(trace->second));
        std::printf("%-7d %-6s %-21s %8.1f %+9.1f %+9.1f %8s %8s %8s %9s\n", threads, kind.c_str(), setup.c_str(), v,
                    v - none, v - null_task, ratio, kept_text, rate, bytes);
      }
    }
  for (const auto& [at, count] : discarded)
    if (count > 0) std::printf("LTTng discarded %llu events over the rounds of %s\n",
                               static_cast<unsigned long long>(count), at.c_str());
  if (!exports.empty() || !std::isnan(rss_per_task)) {
    std::printf("\n%ld tasks recorded (lossless, 2 threads), then exported by 'nodekeeper export':\n", big);
    std::printf("%-10s %10s %10s\n", "format", "seconds", "MB");
    for (const auto& e : exports)
      std::printf("%-10s %10.2f %10.1f\n", e.format.c_str(), e.seconds, static_cast<double>(e.bytes) / 1e6);
    std::printf("daemon peak resident memory per live task: %.0f bytes (goal under 200)\n", rss_per_task);
    std::printf("goal: each export under 10 s\n");
  }
  std::printf("goal: at least 5 million events/s into the daemon, lossless, with 100%% kept\n");
  std::printf("goal: nk lossless at or below LTTng-UST (x LTTng <= 1), under 60 ns per task over the null tool\n");
  return 0;
}
