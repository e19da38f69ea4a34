// The daemon's timing on a busy node: idle host vs every CPU busy, in one run.
//
//   busy_node_bench [--load N] [--seconds S] [--calls C]
//
// Starts a real nodekeeperd --emulate (debug log), then measures twice, first
// on the idle host and then with HostLoad keeping every host CPU busy N times
// over (default 4):
//   - telemetry RPC latency (NodeService.GetTelemetry over the Unix socket,
//     what `nodekeeper status` calls), p50 and p99;
//   - the energy loop's lateness: how late each dT_DVFS step runs against
//     its schedule, from the daemon's "energy loop: step late by" lines;
//   - the fault tree's heartbeat period, from its "heartbeat period" lines.
// The loop ticks are shortened (--dct-interval-ms 100, so 100 ms steps with
// no app) to get enough samples in S seconds. Prints metric | idle | loaded
// | ratio; ratios are what to compare (the host is shared and noisy).

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testlib/daemon_process.h"
#include "testlib/host_load.h"
#include "testlib/temp_dir.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace v1 = nodekeeper::v1;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

// The numbers after `marker` in the log lines from byte `from` on.
std::vector<double> loggedValues(const std::filesystem::path& log, std::streamoff from, const std::string& marker) {
  std::ifstream in(log);
  in.seekg(from);
  std::vector<double> values;
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find(marker);
    if (at != std::string::npos) values.push_back(std::atof(line.c_str() + at + marker.size()));
  }
  return values;
}

std::streamoff logSize(const std::filesystem::path& log) {
  std::error_code ec;
  auto size = std::filesystem::file_size(log, ec);
  return ec ? 0 : static_cast<std::streamoff>(size);
}

struct Phase {
  std::vector<double> rpc_us, late_us, heartbeat_us;
  int rpc_failures = 0;
};

// Telemetry calls spread over `seconds` (so the log covers the same window),
// then the daemon's log lines written meanwhile.
Phase measure(v1::NodeService::Stub& stub, const nk::test::DaemonProcess& daemon, double seconds, int calls) {
  Phase phase;
  auto from = logSize(daemon.stderrPath());
  auto spacing = std::chrono::duration<double>(seconds / calls);
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(spacing * i));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::TelemetrySnapshot reply;
    auto t0 = Clock::now();
    auto status = stub.GetTelemetry(&context, v1::GetTelemetryRequest(), &reply);
    if (!status.ok()) ++phase.rpc_failures;
    phase.rpc_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
  phase.late_us = loggedValues(daemon.stderrPath(), from, "energy loop: step late by ");
  phase.heartbeat_us = loggedValues(daemon.stderrPath(), from, "fault tree: heartbeat period ");
  return phase;
}

}  // namespace

int main(int argc, char** argv) {
  double load_per_cpu = 4;
  double seconds = 15;
  int calls = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--load" && i + 1 < argc) load_per_cpu = std::max(0.5, std::atof(argv[++i]));
    else if (arg == "--seconds" && i + 1 < argc) seconds = std::max(2.0, std::atof(argv[++i]));
    else if (arg == "--calls" && i + 1 < argc) calls = std::max(100, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: busy_node_bench [--load N] [--seconds S] [--calls C]\n");
      return 1;
    }
  }
  nk::test::TempDir dir("busy-bench", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  if (!daemon.start(dir.path(), {"--log-level", "debug", "--dct-interval-ms", "100"})) {
    std::fprintf(stderr, "busy_node_bench: daemon did not start: %s\n", daemon.lastError().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto stub = v1::NodeService::NewStub(channel);
  std::this_thread::sleep_for(std::chrono::seconds(1));

  std::fprintf(stderr, "idle host: %d telemetry calls over %.0f s...\n", calls, seconds);
  Phase idle = measure(*stub, daemon, seconds, calls);
  Phase loaded;
  long processes = 0;
  {
    nk::test::HostLoad load(load_per_cpu);
    processes = static_cast<long>(load.pids().size());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::fprintf(stderr, "%ld spinning processes: %d telemetry calls over %.0f s...\n", processes, calls, seconds);
    loaded = measure(*stub, daemon, seconds, calls);
  }
  daemon.stop();

  std::printf("\nThe daemon on a busy node: idle host vs %ld spinning processes (%.1fx the CPUs), %.0f s each\n\n",
              processes, load_per_cpu, seconds);
  std::printf("%-36s %12s %12s %8s\n", "metric", "idle", "loaded", "ratio");
  auto row = [](const char* name, const std::vector<double>& idle_values, const std::vector<double>& loaded_values,
                double p) {
    double a = percentile(idle_values, p), b = percentile(loaded_values, p);
    std::printf("%-36s %12.0f %12.0f %8.2f\n", name, a, b, a > 0 ? b / a : 0.0);
  };
  row("telemetry RPC p50 (us)", idle.rpc_us, loaded.rpc_us, 0.50);
  row("telemetry RPC p99 (us)", idle.rpc_us, loaded.rpc_us, 0.99);
  row("energy loop lateness p50 (us)", idle.late_us, loaded.late_us, 0.50);
  row("energy loop lateness p99 (us)", idle.late_us, loaded.late_us, 0.99);
  if (!idle.heartbeat_us.empty() || !loaded.heartbeat_us.empty()) {
    row("heartbeat period p50 (us)", idle.heartbeat_us, loaded.heartbeat_us, 0.50);
    row("heartbeat period p99 (us)", idle.heartbeat_us, loaded.heartbeat_us, 0.99);
  }
  std::printf("(samples idle/loaded: RPC %zu/%zu, failed %d/%d; energy steps %zu/%zu; heartbeats %zu/%zu)\n",
              idle.rpc_us.size(), loaded.rpc_us.size(), idle.rpc_failures, loaded.rpc_failures, idle.late_us.size(),
              loaded.late_us.size(), idle.heartbeat_us.size(), loaded.heartbeat_us.size());
  return 0;
}
