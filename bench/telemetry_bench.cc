// Telemetry RPC latency and the daemon's own cost, on a 12-core emulated node.
//
//   telemetry_bench [--calls N] [--seconds S]
//
// Starts a real nodekeeperd --emulate, then measures side by side in one run:
// GetTopology (the RPC floor: no hardware, tiny reply), GetTelemetry from the
// sampler's cache back to back and 11 ms apart (a client that calls now and
// then: the daemon's gRPC threads are idle between calls), and GetTelemetry
// fresh (reads sysfs during the call, when the last read is over 10 ms old;
// in a loop, calls share one read); then
// the daemon's CPU use idle and while one client streams telemetry at 10 Hz,
// and its resident memory. Prints a table; ratios are what to compare.

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using Clock = std::chrono::steady_clock;

namespace {

struct LatencyStats {
  double p50_us = 0, p99_us = 0, mean_us = 0, calls_per_s = 0;
};

template <typename Call>
LatencyStats measure(int calls, Call call, std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  std::vector<double> us;
  us.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < calls / 10; ++i) call();  // warm-up
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    auto t0 = Clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(us.begin(), us.end());
  LatencyStats stats;
  stats.p50_us = us[us.size() / 2];
  stats.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  double sum = 0;
  for (double u : us) sum += u;
  stats.mean_us = sum / static_cast<double>(us.size());
  stats.calls_per_s = calls / total_s;
  return stats;
}

double cpuSecondsOf(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) {
      stime = std::stod(field);
      break;
    }
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double cpuSeconds(pid_t pid) { return cpuSecondsOf("/proc/" + std::to_string(pid) + "/stat"); }

// CPU time of the emulator's physics thread: on a real node the kernel does
// that work, so the daemon's own cost is the rest.
double emulatorCpuSeconds(pid_t pid) {
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "nk-emulator") return cpuSecondsOf((task.path() / "stat").string());
  }
  return 0;
}

double rssMb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

struct CpuUse {
  double total_percent = 0;
  double emulator_percent = 0;
};

CpuUse cpuPercentOver(pid_t pid, double seconds) {
  double c0 = cpuSeconds(pid), e0 = emulatorCpuSeconds(pid);
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  return {100.0 * (cpuSeconds(pid) - c0) / wall, 100.0 * (emulatorCpuSeconds(pid) - e0) / wall};
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 5000;
  double seconds = 20;  // CPU time has 10 ms resolution: long windows
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) calls = std::max(100, std::atoi(argv[++i]));
    else if (arg == "--seconds" && i + 1 < argc) seconds = std::max(1.0, std::atof(argv[++i]));
    else {
      std::fprintf(stderr, "usage: telemetry_bench [--calls N] [--seconds S]\n");
      return 1;
    }
  }
  nk::test::TempDir dir("bench", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path())) {
    std::fprintf(stderr, "telemetry_bench: daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto stub = v1::NodeService::NewStub(channel);
  std::this_thread::sleep_for(std::chrono::seconds(1));

  std::fprintf(stderr, "measuring %d calls of each RPC...\n", calls);
  auto topology = measure(calls, [&] {
    grpc::ClientContext context;
    v1::Topology reply;
    stub->GetTopology(&context, v1::GetTopologyRequest(), &reply);
  });
  v1::GetTelemetryRequest cached_request;
  auto cached = measure(calls, [&] {
    grpc::ClientContext context;
    v1::TelemetrySnapshot reply;
    stub->GetTelemetry(&context, cached_request, &reply);
  });
  v1::GetTelemetryRequest fresh_request;
  fresh_request.set_fresh(true);
  auto fresh_call = [&] {
    grpc::ClientContext context;
    v1::TelemetrySnapshot reply;
    stub->GetTelemetry(&context, fresh_request, &reply);
  };
  // Over 10 ms apart, each call reads sysfs; back to back, calls share the
  // sample the first of them read (the daemon's bound on hardware reads).
  auto fresh = measure(std::min(calls, 300), fresh_call, std::chrono::milliseconds(11));
  auto cached_paced = measure(std::min(calls, 300), [&] {
    grpc::ClientContext context;
    v1::TelemetrySnapshot reply;
    stub->GetTelemetry(&context, cached_request, &reply);
  }, std::chrono::milliseconds(11));
  auto fresh_shared = measure(calls, fresh_call);

  std::fprintf(stderr, "measuring daemon CPU idle for %.0f s...\n", seconds);
  CpuUse idle_cpu = cpuPercentOver(daemon.pid(), seconds);
  double idle_rss = rssMb(daemon.pid());

  std::fprintf(stderr, "measuring daemon CPU while streaming at 10 Hz for %.0f s...\n", seconds);
  grpc::ClientContext stream_context;
  v1::StreamTelemetryRequest stream_request;
  stream_request.set_interval_ms(100);
  auto reader = stub->StreamTelemetry(&stream_context, stream_request);
  int received = 0;
  std::thread drain([&] {
    v1::TelemetrySnapshot snapshot;
    while (reader->Read(&snapshot)) ++received;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CpuUse stream_cpu = cpuPercentOver(daemon.pid(), seconds);
  double stream_rss = rssMb(daemon.pid());
  stream_context.TryCancel();
  drain.join();

  std::printf("\nTelemetry over the Unix socket, 12-core emulated node (%d calls each)\n\n", calls);
  std::printf("%-30s %10s %10s %10s %12s %10s\n", "RPC", "p50 us", "p99 us", "mean us", "calls/s", "p99 ratio");
  auto row = [&](const char* name, const LatencyStats& s) {
    std::printf("%-30s %10.1f %10.1f %10.1f %12.0f %10.2f\n", name, s.p50_us, s.p99_us, s.mean_us, s.calls_per_s,
                s.p99_us / topology.p99_us);
  };
  row("GetTopology (RPC floor)", topology);
  row("GetTelemetry (cached)", cached);
  row("GetTelemetry cached, 11 ms apart", cached_paced);
  row("GetTelemetry fresh, reads sysfs", fresh);
  row("GetTelemetry fresh, in a loop", fresh_shared);
  std::printf("\n%-34s %12s %12s %12s %8s\n", "Daemon process", "CPU %core", "emulator", "daemon only",
              "RSS MB");
  auto cpuRow = [](const char* name, const CpuUse& use, double rss) {
    std::printf("%-34s %12.2f %12.2f %12.2f %8.1f\n", name, use.total_percent, use.emulator_percent,
                use.total_percent - use.emulator_percent, rss);
  };
  cpuRow("idle", idle_cpu, idle_rss);
  cpuRow("one client streaming at 10 Hz", stream_cpu, stream_rss);
  std::printf("(%d snapshots streamed)\n", received);
  std::printf("\nGoals: p99 < 1000 us; CPU < 1%% of a core; RSS < 50 MB\n");
  daemon.stop();
  return 0;
}
