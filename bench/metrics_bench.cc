// What a Prometheus scrape costs the daemon, next to one GetTelemetry RPC.
//
//   metrics_bench [--calls N]
//
// For an emulated node of 12 cores (the Xeon E5-2630 profile) and of 96 (the
// same profile with 48 cores a package), starts a real nodekeeperd
// --metrics-port 0 and measures side by side: GetTelemetry from the
// sampler's cache over the Unix socket (the yardstick), a whole scrape of
// the daemon's /metrics over HTTP (connect, render, transfer; its apps: none),
// and NodeMetrics::render alone on a snapshot of that many cores with 1, 100
// and 1000 apps. Prints a table of medians; the ratio column is the figure.

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "metrics/node_metrics.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"
#include "testlib/wait_for.h"

namespace v1 = nodekeeper::v1;
using Clock = std::chrono::steady_clock;

namespace {

template <typename Call>
double medianUs(int calls, Call call) {
  std::vector<double> us;
  us.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < std::max(1, calls / 10); ++i) call();  // warm-up
  for (int i = 0; i < calls; ++i) {
    auto t0 = Clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The source tree's profile with `cores_per_package` cores in each package.
std::filesystem::path profileWith(const std::filesystem::path& dir, int cores_per_package) {
  std::string text = readFile(std::filesystem::path(NK_PROFILES_DIR) / "xeon-e5-2630.toml");
  text = std::regex_replace(text, std::regex(R"(cores_per_package = [0-9]+)"),
                            "cores_per_package = " + std::to_string(cores_per_package));
  auto path = dir / ("bench-" + std::to_string(cores_per_package) + ".toml");
  std::ofstream(path) << text;
  return path;
}

nk::NodeMetrics::Snapshot snapshotOf(int cores, int apps, const nk::RpcLatencies& rpc) {
  auto sample = std::make_shared<nk::TelemetrySample>();
  for (int i = 0; i < cores; ++i) {
    nk::CoreSample c;
    c.id = static_cast<uint32_t>(i);
    c.package = static_cast<uint32_t>(i * 2 / cores);
    c.cur_khz = 2'300'000 + static_cast<uint64_t>(i) * 100;
    c.min_khz = 1'200'000;
    c.max_khz = 2'800'000;
    c.temperature_c = 40.125 + i * 0.25;
    sample->cores.push_back(c);
  }
  for (uint32_t p = 0; p < 2; ++p) sample->packages.push_back({p, 61.73, 12345.678, 0, 0, 95, true, 48.5});
  sample->node_power_w = 123.46;
  sample->node_energy_j = 24691.356;
  nk::NodeMetrics::Snapshot s;
  s.telemetry = sample;
  for (int i = 0; i < apps; ++i) {
    nk::AppRecord a;
    a.pid = 100000 + i;
    a.name = "lulesh2.0-" + std::to_string(i % 7);
    a.power_budget_mw = 60'000;
    a.effective_budget_mw = 55'000;
    a.measured_power_mw = 51'234;
    a.threads.resize(12);
    a.decision.thread_count = 10;
    s.apps.push_back(std::move(a));
  }
  s.symptoms = {{"unspecified", 0}, {"response_timeout", 3}, {"mpi_error", 1}, {"heartbeat_lost", 0},
                {"thermal_alarm", 0}, {"power_alarm", 0}, {"rank_exited", 2}};
  s.faults = {{"unspecified", 0}, {"node_down", 1}, {"process_hang", 1}, {"process_crash", 0},
              {"network_degraded", 0}, {"overheating", 0}};
  s.rpc = &rpc;
  s.version = "0.1.0";
  s.node_name = "node007";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) {
      calls = std::max(50, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: metrics_bench [--calls N]\n");
      return 1;
    }
  }
  nk::RpcLatencies rpc;  // a page's worth of histograms: the daemon's unary methods
  for (const char* method : {"GetTelemetry", "GetTopology", "SetFrequency", "SetPowerCap", "ListApps", "SetBudget",
                             "ListSessions", "ListJobs", "ReportSymptom", "ListFaults"})
    rpc.observe(std::string("/nodekeeper.v1.Svc/") + method, 0.0004);

  std::printf("%-44s %8s %10s %12s %10s\n", "what", "cores", "median us", "page bytes", "x GetTelemetry");
  for (int cores : {12, 96}) {
    nk::test::TempDir dir("metrics-bench", nk::test::TempDir::Access::kShared);
    nk::test::DaemonProcess daemon;
    const std::string profile = cores == 12 ? "" : profileWith(dir.path(), cores / 2).string();
    if (!daemon.start(dir.path(), {"--metrics-port", "0"}, profile)) {
      std::fprintf(stderr, "metrics_bench: daemon did not start: %s\n", daemon.lastError().c_str());
      return 1;
    }
    std::smatch port;
    static const std::regex logged(R"(serving Prometheus metrics at http://127\.0\.0\.1:([0-9]+)/metrics)");
    std::string log;
    nk::test::waitFor([&] { return std::regex_search(log = readFile(daemon.stderrPath()), port, logged); },
                      std::chrono::seconds(20));
    if (port.empty()) {
      std::fprintf(stderr, "metrics_bench: the daemon logged no metrics URL:\n%s\n", log.c_str());
      return 1;
    }
    auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
    auto stub = v1::NodeService::NewStub(channel);
    std::this_thread::sleep_for(std::chrono::seconds(1));

    const double telemetry_us = medianUs(calls, [&] {
      grpc::ClientContext context;
      v1::TelemetrySnapshot reply;
      stub->GetTelemetry(&context, v1::GetTelemetryRequest(), &reply);
    });
    httplib::Client client("127.0.0.1", std::stoi(port[1].str()));
    size_t scraped_bytes = 0;
    const double scrape_us = medianUs(calls, [&] {
      auto page = client.Get("/metrics");
      scraped_bytes = page ? page->body.size() : 0;
    });
    auto row = [&](const std::string& what, double us, size_t bytes) {
      std::printf("%-44s %8d %10.1f %12zu %10.2f\n", what.c_str(), cores, us, bytes, us / telemetry_us);
    };
    row("GetTelemetry (cached), Unix socket", telemetry_us, 0);
    row("GET /metrics over HTTP, real daemon, 0 apps", scrape_us, scraped_bytes);
    for (int apps : {1, 100, 1000}) {
      const nk::NodeMetrics::Snapshot snapshot = snapshotOf(cores, apps, rpc);
      size_t bytes = 0;
      const double render_us = medianUs(std::max(50, calls / (apps >= 1000 ? 20 : 1)), [&] {
        bytes = nk::NodeMetrics::render(snapshot).size();
      });
      row("NodeMetrics::render, " + std::to_string(apps) + " app" + (apps == 1 ? "" : "s"), render_us, bytes);
    }
    daemon.stop();
  }
  return 0;
}
