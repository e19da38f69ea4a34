// The exports' goal: a graph of 1 million tasks exported to Perfetto in
// under 10 s, and to OTF2 likewise. Builds the graph from events as a
// session would (create, dependence on the previous task, start, finish on
// one of 12 threads), then exports it to Perfetto JSON, DOT and an OTF2
// archive in /tmp, side by side in one run, and reports the graph's memory
// per task (goal: under 200 bytes).
//
//   graph_export_bench [TASKS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "taskgraph/graph_exporter.h"
#include "taskgraph/otf2_exporter.h"
#include "taskgraph/task_graph.h"
#include "testlib/temp_dir.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  auto seconds = [](Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); };

  auto t0 = Clock::now();
  nk::TaskGraph graph;
  const char* functions[] = {"cholesky_potrf", "cholesky_trsm", "cholesky_syrk", "cholesky_gemm"};
  for (uint64_t i = 1; i <= n; ++i) {
    nk::GraphEvent e;
    e.type = nk::GraphEvent::Type::kCreated;
    e.task = i;
    e.function = functions[i % 4];
    e.timestamp_ns = static_cast<int64_t>(i * 100);
    graph.apply(e);
    if (i > 1) {
      nk::GraphEvent d;
      d.type = nk::GraphEvent::Type::kDependence;
      d.from = i - 1;
      d.task = i;
      d.address = 0x7f0000000000 + (i % 64) * 4096;
      graph.apply(d);
    }
    nk::GraphEvent s;
    s.type = nk::GraphEvent::Type::kStarted;
    s.task = i;
    s.thread = static_cast<int32_t>(i % 12);
    s.timestamp_ns = static_cast<int64_t>(i * 100 + 10);
    graph.apply(s);
    s.type = nk::GraphEvent::Type::kFinished;
    s.timestamp_ns = static_cast<int64_t>(i * 100 + 90);
    graph.apply(s);
  }
  double build_s = seconds(t0);

  // A directory of this run's own: two runs at once must not clear each other's archive.
  const nk::test::TempDir scratch("graph-export-bench");
  const std::filesystem::path& path = scratch.path();
  auto perfetto = path / "nk-graph-export-bench.json";
  auto dot = path / "nk-graph-export-bench.dot";
  t0 = Clock::now();
  {
    std::ofstream out(perfetto);
    nk::GraphExporter::perfettoJson(graph, out);
  }
  double perfetto_s = seconds(t0);
  t0 = Clock::now();
  {
    std::ofstream out(dot);
    nk::GraphExporter::dot(graph, out);
  }
  double dot_s = seconds(t0);
  const std::string otf2_name = "nk-graph-export-bench";
  const std::filesystem::path otf2_parts[] = {path / (otf2_name + ".otf2"), path / (otf2_name + ".def"),
                                              path / otf2_name};
  t0 = Clock::now();
  std::string otf2_error;
  bool otf2_ok = nk::Otf2Exporter::write(graph, path, otf2_name, &otf2_error);
  double otf2_s = seconds(t0);
  if (!otf2_ok) {
    std::fprintf(stderr, "%s\n", otf2_error.c_str());
    return 1;
  }
  uintmax_t otf2_bytes = 0;
  for (const auto& part : otf2_parts) {
    if (std::filesystem::is_directory(part)) {
      for (const auto& f : std::filesystem::recursive_directory_iterator(part)) {
        if (f.is_regular_file()) otf2_bytes += f.file_size();
      }
    } else {
      otf2_bytes += std::filesystem::file_size(part);
    }
  }
  auto perfetto_mb = std::filesystem::file_size(perfetto) / 1e6;
  auto dot_mb = std::filesystem::file_size(dot) / 1e6;
  auto otf2_mb = static_cast<double>(otf2_bytes) / 1e6;

  std::printf("graph of %llu tasks, %zu edges (4M events applied)\n", static_cast<unsigned long long>(n),
              graph.edges().size());
  std::printf("%-24s %10s %10s %10s\n", "step", "seconds", "MB", "vs 10 s");
  std::printf("%-24s %10.2f %10s %10s\n", "apply events", build_s, "-", "-");
  std::printf("%-24s %10.2f %10.1f %10.3f\n", "export Perfetto JSON", perfetto_s, perfetto_mb, perfetto_s / 10);
  std::printf("%-24s %10.2f %10.1f %10.3f\n", "export DOT", dot_s, dot_mb, dot_s / 10);
  std::printf("%-24s %10.2f %10.1f %10.3f\n", "export OTF2", otf2_s, otf2_mb, otf2_s / 10);
  std::printf("graph memory: %.0f bytes per task (goal under 200)\n",
              static_cast<double>(graph.approximateBytes()) / static_cast<double>(n));
  return 0;
}
