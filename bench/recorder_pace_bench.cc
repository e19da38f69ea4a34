// The recorder against a big task program, side by side in one run: a
// UTS-shaped tree (bench/uts_program.cc) without the tool, with lossless and
// with lossy task events into a live nodekeeperd; with NK_NULL_TASK_TOOL the
// tool that takes the same callbacks and does nothing (libomp's own cost),
// with NK_CLOCK_TASK_TOOL one that only reads the clock where each event
// takes its time (the floor under any tracer that times every event),
// with NK_LTTNG_TOOL the same events as LTTng-UST tracepoints, discarding and
// blocking (the yardstick: what a tracer built for this costs on the same
// program; its bytes per task are the trace's). Per set-up: wall time and
// its ratio to no tool, tasks the session holds against the program's own
// node count (the oracle; every node is one task), the recording's size
// per task (as the session ends, and once the daemon has compressed what
// it stored while busy), the daemon's CPU seconds while the program ran and in all (the
// graph is built behind the recording, much of it once the program is
// done), its peak memory so far and its memory once the session has ended.
// Then the CPU seconds of each set-up (the program's process and the daemon)
// against the program's own, with how long lossless made the program's
// threads wait for room (the library's exit line, under NK_DEBUG): where a
// ratio over 1 comes from. Last, the Perfetto and OTF2 exports of the last
// lossless session, timed with their sizes and the CLI's peak memory.
// Each run starts once the host has written back what earlier ones wrote.
// Goal (issue 19): 30 M tasks lossless at no more than 1.5 times the
// program's own time on this 2-core machine, daemon under 500 MB.
//
//   recorder_pace_bench [--depth D] [--rounds R] [--threads T]
//   (depth 36: about 6 M tasks, the default; 44: about 30 M)
// Needs NK_DAEMON, NK_CLIENT_LIB, NK_UTS_PROGRAM; NK_CLI for the exports.
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "private_lttng.h"
#include "testlib/daemon_process.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace fs = std::filesystem;
namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// The set-ups without a daemon's session: no recording to look at.
bool recordsNothing(const std::string& setup) {
  return setup == "no tool" || setup == "null tool" || setup == "clock only";
}

long statusKiB(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + field.size());
  return 0;
}

double cpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  std::string field;
  for (char c : text.substr(close + 2)) {
    if (c == ' ') {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
  if (fields.size() < 13) return 0;
  return (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Run {
  double seconds = 0;
  double cpu_seconds = 0;  // the child's, all its threads (the tool's shipper too), user and system
  unsigned long long nodes = 0;
  long peak_kib = 0;  // of the child (getrusage of the waited child)
  int exit_code = -1;
  std::string out, err;
};

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// fork/exec with the environment given, timed, its peak RSS and CPU time
// from wait4. Its stderr goes to a file (a pipe read after stdout could fill
// and hold the child), copied to ours once it has exited.
Run runTimed(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  Run run;
  int out_pipe[2];
  if (pipe(out_pipe) != 0) return run;
  FILE* err_file = std::tmpfile();
  if (!err_file) return run;
  auto start = Clock::now();
  pid_t child = fork();
  if (child == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(fileno(err_file), STDERR_FILENO);
    close(out_pipe[0]);
    close(out_pipe[1]);
    for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  char buffer[4096];
  for (ssize_t n; (n = read(out_pipe[0], buffer, sizeof buffer)) > 0;) run.out.append(buffer, static_cast<size_t>(n));
  close(out_pipe[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.peak_kib = usage.ru_maxrss;
  run.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  std::rewind(err_file);
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, err_file)) > 0;) run.err.append(buffer, n);
  std::fclose(err_file);
  std::fputs(run.err.c_str(), stderr);
  std::sscanf(run.out.c_str(), "nodes %llu", &run.nodes);
  return run;
}

std::optional<v1::Session> newestSession(const fs::path& socket) {
  auto channel = grpc::CreateChannel("unix:" + socket.string(), grpc::InsecureChannelCredentials());
  auto stub = v1::TasksService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 30s);
  v1::SessionList list;
  if (!stub->ListSessions(&context, v1::ListSessionsRequest{}, &list).ok() || list.sessions().empty())
    return std::nullopt;
  return *std::max_element(list.sessions().begin(), list.sessions().end(),
                           [](const auto& a, const auto& b) { return a.session_id() < b.session_id(); });
}

std::optional<v1::Session> endedSession(const fs::path& socket, uint64_t after) {
  for (int i = 0; i < 600; ++i) {
    auto s = newestSession(socket);
    if (s && s->session_id() > after && !s->live()) return s;
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

// In the library's exit line: how long the program's threads waited for
// room in their lossless buffers.
constexpr std::string_view kWaitedSays = "threads waited ";

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int depth = 36, rounds = 1, threads = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--depth" && i + 1 < argc) depth = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: recorder_pace_bench [--depth D] [--rounds R] [--threads T]\n");
      return 2;
    }
  }
  for (const char* var : {"NK_DAEMON", "NK_CLIENT_LIB", "NK_UTS_PROGRAM"})
    if (nk::test::envOr(var).empty()) {
      std::fprintf(stderr, "recorder_pace_bench: set %s\n", var);
      return 2;
    }
  nk::test::TempDir dir("bench-recorder", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "recorder_pace_bench: the daemon did not start\n");
    return 1;
  }
  const std::vector<std::string> program = {nk::test::envOr("NK_UTS_PROGRAM"), "2000", "0.3", "8",
                                            std::to_string(depth)};
  const std::string omp = "OMP_NUM_THREADS=" + std::to_string(threads);
  struct Setup {
    std::string name;
    std::vector<std::string> env;
    std::optional<bool> lttng_blocking;  // traced by LTTng-UST instead, in that session
  };
  std::vector<Setup> setups = {
      {"no tool", {omp}},
      // NK_DEBUG: the library's exit line, whose wait for room is read below.
      {"lossless", {omp, "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"),
                    "NODEKEEPER_SOCKET=" + daemon.socket().string(), "NODEKEEPER_TASKS=lossless", "NK_DEBUG=1"}},
      {"lossy", {omp, "OMP_TOOL_LIBRARIES=" + nk::test::envOr("NK_CLIENT_LIB"),
                 "NODEKEEPER_SOCKET=" + daemon.socket().string(), "NODEKEEPER_TASKS=lossy", "NK_DEBUG=1"}},
  };
  // What libomp spends reporting tasks to any tool: the floor under every
  // task tool, so the ratio above it is what nodekeeper itself adds.
  if (const std::string null_tool = nk::test::envOr("NK_NULL_TASK_TOOL"); !null_tool.empty())
    setups.insert(setups.begin() + 1, Setup{"null tool", {omp, "OMP_TOOL_LIBRARIES=" + null_tool}, std::nullopt});
  // The clock alone, read where libnodekeeper takes each event's time: the
  // least any tracer that times every event pays, before it records a byte.
  if (const std::string clock_tool = nk::test::envOr("NK_CLOCK_TASK_TOOL"); !clock_tool.empty()) {
    const auto null_row = std::find_if(setups.begin(), setups.end(), [](const Setup& s) { return s.name == "null tool"; });
    setups.insert(null_row == setups.end() ? setups.begin() + 1 : null_row + 1,
                  Setup{"clock only", {omp, "OMP_TOOL_LIBRARIES=" + clock_tool}, std::nullopt});
  }
  // The yardstick: the same events as LTTng-UST tracepoints into a session
  // of the bench's own lttng-sessiond (discard mode, LTTng's default
  // channel; and blocking, which waits for room as lossless does).
  nk::bench::PrivateLttng lttng;
  if (const std::string lttng_tool = nk::test::envOr("NK_LTTNG_TOOL"); !lttng_tool.empty()) {
    if (!fs::exists(lttng_tool) || !lttng.start(dir.path()) || !lttng.makeSessions()) {
      std::printf("LTTng-UST rows left out: %s\n",
                  fs::exists(lttng_tool) ? lttng.error().c_str() : (lttng_tool + " not built").c_str());
    } else {
      // Registered with the session daemon before main() (no timeout), so
      // every event of the run is traced.
      const std::vector<std::string> env = {omp, "OMP_TOOL_LIBRARIES=" + lttng_tool,
                                            "LTTNG_HOME=" + lttng.home().string(), "LTTNG_UST_REGISTER_TIMEOUT=-1",
                                            "LTTNG_UST_ALLOW_BLOCKING=1"};
      setups.push_back({"LTTng-UST", env, false});
      setups.push_back({"LTTng block", env, true});
    }
  }
  struct Figures {
    std::vector<double> lttng_lost, lttng_bytes_per_task;
    std::vector<double> seconds, program_cpu, waited, daemon_cpu_run, daemon_cpu, held, bytes_per_task, bytes_per_task_later;
    long daemon_peak_kib = 0;
    long daemon_after_kib = 0;
  };
  std::map<std::string, Figures> figures;
  unsigned long long nodes = 0;
  uint64_t last_session = 0, last_lossless = 0;
  std::printf("recorder_pace_bench: UTS-shaped tree, depth %d, %d thread(s), %d round(s)\n", depth, threads, rounds);
  for (int round = 0; round < rounds; ++round) {
    for (const Setup& setup : setups) {
      // No run pays for an earlier one's writes: LTTng's 3.7 GB trace or a
      // recording (written and then compressed) was still going to disk
      // under the runs after it, the kernel writing it back 30 s on.
      ::sync();
      const double cpu_before = cpuSeconds(daemon.pid());
      Run run;
      std::optional<nk::bench::PrivateLttng::Recorded> traced;
      if (setup.lttng_blocking) {
        traced = lttng.record(*setup.lttng_blocking, [&] {
          run = runTimed(program, setup.env);
          return run.exit_code == 0;
        });
        if (!traced) {
          std::fprintf(stderr, "recorder_pace_bench: %s: %s\n", setup.name.c_str(), lttng.error().c_str());
          return 1;
        }
      } else {
        run = runTimed(program, setup.env);
      }
      if (run.exit_code != 0 || run.nodes == 0) {
        std::fprintf(stderr, "recorder_pace_bench: %s run failed (exit %d): %s\n", setup.name.c_str(), run.exit_code,
                     run.out.c_str());
        return 1;
      }
      if (nodes != 0 && run.nodes != nodes) {
        std::fprintf(stderr, "recorder_pace_bench: the tree changed: %llu then %llu nodes\n", nodes, run.nodes);
        return 1;
      }
      nodes = run.nodes;
      Figures& f = figures[setup.name];
      f.seconds.push_back(run.seconds);
      f.program_cpu.push_back(run.cpu_seconds);
      if (const size_t at = run.err.find(kWaitedSays); at != std::string::npos)
        f.waited.push_back(std::atof(run.err.c_str() + at + kWaitedSays.size()));
      if (traced) {
        f.lttng_lost.push_back(static_cast<double>(traced->discarded));
        f.lttng_bytes_per_task.push_back(static_cast<double>(traced->trace_bytes) / static_cast<double>(nodes));
      }
      if (recordsNothing(setup.name) || traced) continue;
      // While the program ran (its graph may still be building behind).
      f.daemon_cpu_run.push_back(cpuSeconds(daemon.pid()) - cpu_before);
      f.daemon_peak_kib = std::max(f.daemon_peak_kib, statusKiB(daemon.pid(), "VmHWM:"));
      auto session = endedSession(daemon.socket(), last_session);
      if (!session) {
        std::fprintf(stderr, "recorder_pace_bench: no ended session for the %s run\n", setup.name.c_str());
        return 1;
      }
      last_session = session->session_id();
      if (setup.name == "lossless") last_lossless = last_session;
      f.daemon_cpu.push_back(cpuSeconds(daemon.pid()) - cpu_before);
      f.held.push_back(static_cast<double>(session->tasks()) / static_cast<double>(nodes));
      f.bytes_per_task.push_back(static_cast<double>(nk::bench::bytesUnder(session->recording())) /
                                 static_cast<double>(std::max<uint64_t>(1, session->tasks())));
      // Frames stored while the daemon was behind are compressed once the
      // session has ended, by the daemon's idle builder: until the file
      // shrinks or the daemon is idle (a minute at most).
      const uintmax_t recorded = nk::bench::bytesUnder(session->recording());
      for (int second = 0; second < 60; ++second) {
        const double cpu = cpuSeconds(daemon.pid());
        std::this_thread::sleep_for(1s);
        if (nk::bench::bytesUnder(session->recording()) < recorded || cpuSeconds(daemon.pid()) - cpu < 0.02) break;
      }
      f.bytes_per_task_later.push_back(static_cast<double>(nk::bench::bytesUnder(session->recording())) /
                                       static_cast<double>(std::max<uint64_t>(1, session->tasks())));
      // The ended session's graph is freed and trimmed just after it says
      // it ended.
      std::this_thread::sleep_for(2s);
      f.daemon_after_kib = statusKiB(daemon.pid(), "VmRSS:");
    }
  }
  const double base = median(figures["no tool"].seconds);
  std::printf("\n%llu tasks per run; daemon peak memory over the whole bench: %ld MiB\n\n", nodes,
              statusKiB(daemon.pid(), "VmHWM:") / 1024);
  // Each round's runs are neighbours in time and share the host's load of
  // the moment: the median of their ratios to that round's no-tool run.
  auto paired = [&](const Figures& f) {
    const std::vector<double>& own = figures["no tool"].seconds;
    std::vector<double> ratios;
    for (size_t i = 0; i < f.seconds.size() && i < own.size(); ++i) ratios.push_back(f.seconds[i] / own[i]);
    return median(ratios);
  };
  std::printf("(ratio: of the medians; paired: the median of each round's ratio to its no-tool run)\n");
  std::printf("%-10s %9s %7s %7s %13s %12s %12s %11s %11s %14s %17s\n", "set-up", "seconds", "ratio", "paired", "tasks held",
              "bytes/task", "compressed", "CPU in run", "daemon CPU", "peak so far", "daemon RSS after");
  for (const Setup& setup : setups) {
    const Figures& f = figures[setup.name];
    const double s = median(f.seconds);
    if (recordsNothing(setup.name)) {
      std::printf("%-10s %9.2f %7.2f %7.2f %13s %12s %12s %11s %11s %14s %17s\n", setup.name.c_str(), s, s / base, paired(f), "-", "-", "-",
                  "-", "-", "-", "-");
      continue;
    }
    if (setup.lttng_blocking) {
      const std::string lost = "lost " + std::to_string(static_cast<long long>(median(f.lttng_lost)));
      std::printf("%-10s %9.2f %7.2f %7.2f %13s %12.1f %12s %11s %11s %14s %17s\n", setup.name.c_str(), s, s / base, paired(f),
                  lost.c_str(), median(f.lttng_bytes_per_task), "-", "-", "-", "-", "-");
      continue;
    }
    std::printf("%-10s %9.2f %7.2f %7.2f %12.2f%% %12.1f %12.1f %10.2fs %10.2fs %10ld MiB %13ld MiB\n", setup.name.c_str(),
                s, s / base, paired(f), 100 * median(f.held), median(f.bytes_per_task), median(f.bytes_per_task_later),
                median(f.daemon_cpu_run), median(f.daemon_cpu), f.daemon_peak_kib / 1024, f.daemon_after_kib / 1024);
  }
  // Where the time goes: every set-up's CPU against the program's own. On
  // 2 cores what the tool's threads and the daemon take, the program's
  // threads lose; what lossless adds beyond that is its wait for room.
  // (LTTng's rows leave out its session and consumer daemons.)
  std::printf("\nCPU seconds (medians): the program's process (its threads, and the tool's), nodekeeperd while it ran\n");
  std::printf("%-12s %12s %12s %12s %12s %16s\n", "set-up", "program", "nodekeeperd", "sum", "over no tool",
              "waited for room");
  const double base_cpu = median(figures["no tool"].program_cpu);
  for (const Setup& setup : setups) {
    const Figures& f = figures[setup.name];
    const double program_cpu = median(f.program_cpu);
    const double daemon_cpu = median(f.daemon_cpu_run);  // 0 where the daemon took no part
    char daemon[32] = "-", waited[32] = "-";
    if (!f.daemon_cpu_run.empty()) std::snprintf(daemon, sizeof daemon, "%.2fs", daemon_cpu);
    if (!f.waited.empty()) std::snprintf(waited, sizeof waited, "%.3f s", median(f.waited));
    std::printf("%-12s %11.2fs %12s %11.2fs %11.2fx %16s\n", setup.name.c_str(), program_cpu, daemon,
                program_cpu + daemon_cpu, (program_cpu + daemon_cpu) / base_cpu, waited);
  }
  // Each run's time, in order: on a shared 2-core host one set-up's runs
  // spread widely, and a median alone hides how much.
  std::printf("\nseconds of each round\n");
  for (const Setup& setup : setups) {
    std::printf("%-12s", setup.name.c_str());
    for (double seconds : figures[setup.name].seconds) std::printf(" %7.2f", seconds);
    std::printf("\n");
  }
  const std::string cli = nk::test::envOr("NK_CLI");
  if (!cli.empty() && last_lossless != 0) {
    std::printf("\nexports of the last lossless session (%llu tasks)\n", nodes);
    std::printf("%-9s %9s %12s %14s\n", "format", "seconds", "MB", "CLI peak MiB");
    for (const std::string format : {"perfetto", "otf2"}) {
      fs::path out = dir.path() / ("export-" + format);
      Run run = runTimed({cli, "--socket", daemon.socket().string(), "export", std::to_string(last_lossless),
                          "--format", format, "--out", out.string()},
                         {});
      if (run.exit_code != 0) {
        std::printf("%-9s failed (exit %d)\n", format.c_str(), run.exit_code);
        continue;
      }
      std::printf("%-9s %9.2f %12.1f %14ld\n", format.c_str(), run.seconds, static_cast<double>(nk::bench::bytesUnder(out)) / 1e6,
                  run.peak_kib / 1024);
      std::error_code ec;
      fs::remove_all(out, ec);
    }
  }
  return 0;
}
