// What the daemon's open streams cost it, side by side in one run.
//
//   stream_cost_bench [--streams N,N,...] [--per-connection K]
//
// Starts a real nodekeeperd --emulate and holds more and more streams open
// on it (K per connection, default 3): watches of symptoms that wait for
// something to send, the cheapest kind for a client and the one a stream
// costs most to keep for a daemon with a thread per stream. At each count it
// measures the daemon's threads, resident memory and CPU over 3 s, and
// GetTelemetry's latency from another client (what `nodekeeper status`
// waits for). Prints a table; the ratios against no streams are what to
// compare.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/daemon_process.h"
#include "testlib/processes.h"
#include "testlib/temp_dir.h"

namespace v1 = nodekeeper::v1;
using Clock = std::chrono::steady_clock;

namespace {

// A follow watch of symptoms; none come, so it only waits.
class WaitingStream final : public grpc::ClientReadReactor<v1::Symptom> {
 public:
  WaitingStream(v1::FaultsService::Stub& stub, std::atomic<int>& ended) : ended_(ended) {
    request_.set_follow(true);
    stub.async()->WatchSymptoms(&context_, &request_, this);
    StartRead(&symptom_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (ok) StartRead(&symptom_);
  }
  void OnDone(const grpc::Status&) override { ++ended_; }
  void cancel() { context_.TryCancel(); }

 private:
  std::atomic<int>& ended_;
  grpc::ClientContext context_;
  v1::WatchSymptomsRequest request_;
  v1::Symptom symptom_;
};

std::shared_ptr<grpc::Channel> channelTo(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per channel
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

struct Row {
  int streams = 0;
  long threads = 0;
  double rss_mib = 0;
  double cpu_percent = 0;
  double p50_ms = 0, p99_ms = 0;
};

Row measure(pid_t daemon, v1::NodeService::Stub& status, int streams) {
  Row row;
  row.streams = streams;
  std::this_thread::sleep_for(std::chrono::seconds(1));  // settle after opening
  const double cpu0 = nk::test::cpuSecondsOf(daemon);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  row.cpu_percent =
      100.0 * (nk::test::cpuSecondsOf(daemon) - cpu0) / std::chrono::duration<double>(Clock::now() - t0).count();
  row.threads = nk::test::statusNumber(daemon, "Threads:");
  row.rss_mib = nk::test::statusNumber(daemon, "VmRSS:") / 1024.0;
  std::vector<double> ms;
  for (int i = 0; i < 50; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::GetTelemetryRequest request;
    v1::TelemetrySnapshot reply;
    const auto c0 = Clock::now();
    grpc::Status s = status.GetTelemetry(&context, request, &reply);
    ms.push_back(s.ok() ? std::chrono::duration<double, std::milli>(Clock::now() - c0).count() : 5000.0);
  }
  std::sort(ms.begin(), ms.end());
  row.p50_ms = ms[ms.size() / 2];
  row.p99_ms = ms[ms.size() * 99 / 100];
  return row;
}

std::vector<int> parseCounts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::atoi(item.c_str()));
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts{0, 300, 1000, 3000};
  int per_connection = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--streams") counts = parseCounts(argv[i + 1]);
    else if (flag == "--per-connection") per_connection = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: stream_cost_bench [--streams N,N,...] [--per-connection K]\n");
      return 2;
    }
  }
  std::sort(counts.begin(), counts.end());
  nk::test::TempDir dir("stream-cost-bench", nk::test::TempDir::Access::kShared);
  nk::test::DaemonProcess daemon;
  const std::string most = std::to_string(counts.back() + 16);
  if (!daemon.start(dir.path(), {"--connections-per-user", most, "--connections-total", most, "--streams-per-user",
                                 most, "--streams-total", most})) {
    std::fprintf(stderr, "stream_cost_bench: cannot run the daemon: %s\n", daemon.lastError().c_str());
    return 1;
  }
  auto status = v1::NodeService::NewStub(channelTo(daemon.socket().string()));
  std::vector<std::unique_ptr<v1::FaultsService::Stub>> stubs;
  std::vector<std::unique_ptr<WaitingStream>> streams;
  std::atomic<int> ended{0};
  std::vector<Row> rows;
  for (int count : counts) {
    while (static_cast<int>(streams.size()) < count) {
      if (streams.size() % per_connection == 0)
        stubs.push_back(v1::FaultsService::NewStub(channelTo(daemon.socket().string())));
      streams.push_back(std::make_unique<WaitingStream>(*stubs.back(), ended));
    }
    rows.push_back(measure(daemon.pid(), *status, count));
    std::fprintf(stderr, "  %d streams measured\n", count);
  }
  const int ended_early = ended.load();  // refused or ended by the daemon: should be none
  for (auto& stream : streams) stream->cancel();
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (ended < static_cast<int>(streams.size()) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Row after = measure(daemon.pid(), *status, 0);

  std::printf("Open streams: the daemon's cost (follow watches of symptoms, %d per connection)\n", per_connection);
  std::printf("| streams | threads | RSS MiB | CPU %% | GetTelemetry p50 ms | p99 ms | p50 vs none |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  const double base = rows.front().p50_ms > 0 ? rows.front().p50_ms : 1;
  auto print = [&](const Row& r, const char* label) {
    std::printf("| %s | %ld | %.1f | %.1f | %.2f | %.2f | %.2fx |\n", label, r.threads, r.rss_mib, r.cpu_percent,
                r.p50_ms, r.p99_ms, r.p50_ms / base);
  };
  for (const Row& r : rows) print(r, std::to_string(r.streams).c_str());
  print(after, "0 (all closed)");
  std::printf("streams refused or ended by the daemon before the client left: %d of %zu\n", ended_early,
              streams.size());
  return 0;
}
