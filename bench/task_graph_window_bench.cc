// The live graph's window (TaskGraph max_tasks, the daemon's
// --task-graph-tasks): the same events applied to an unlimited graph and
// to one that keeps 1 M tasks, side by side: ns per event applied, the
// graph's own count of its bytes at its peak, and the process's peak RSS.
// Two shapes, 10 M tasks each by default:
//   tree   UTS-like: two threads' slots, each task creates one to four
//          children, all but one finish at once, the last goes deeper (up
//          to 40 unfinished ancestors), a dependence between siblings;
//   chain  each task depends on the one before, runs and finishes.
// Each run is its own process (fork), so its peak RSS is its own; each
// graph runs three times, alternating, and its best ns/event is shown.
//
//   task_graph_window_bench [MILLIONS_OF_TASKS] [WINDOW]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "taskgraph/task_graph.h"

namespace {

using nk::GraphEvent;
using nk::TaskGraph;
using T = GraphEvent::Type;

uint64_t id(uint64_t slot, uint64_t serial) { return (slot << 40) | serial; }

GraphEvent event(T type, uint64_t task, int64_t ts) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = ts;
  return e;
}

// Events a chunk at a time: 10 M tasks' events would take gigabytes.
class Generator {
 public:
  Generator(bool tree, uint64_t tasks) : tree_(tree), tasks_(tasks) {}
  bool done() const { return made_ >= tasks_ && path_.empty(); }
  void fill(std::vector<GraphEvent>& out) {
    out.clear();
    while (out.size() < 4096 && !done()) tree_ ? treeStep(out) : chainStep(out);
  }

 private:
  uint64_t make(std::vector<GraphEvent>& out, uint64_t parent) {
    const uint64_t slot = made_ % 2;
    const uint64_t task = id(slot + 1, ++serial_[slot]);
    ++made_;
    GraphEvent c = event(T::kCreated, task, ++ts_);
    c.parent = parent;
    c.function = made_ % 3 ? "uts_node" : "uts_leaf";
    out.push_back(c);
    GraphEvent s = event(T::kStarted, task, ++ts_);
    s.thread = static_cast<int32_t>(slot);
    out.push_back(s);
    return task;
  }
  void treeStep(std::vector<GraphEvent>& out) {
    if (path_.empty() && made_ == 0) path_.push_back(make(out, 0));
    if (made_ < tasks_) {
      uint64_t previous = 0;
      const uint64_t children = 1 + (made_ * 2654435761u >> 7) % 4;
      for (uint64_t c = 0; c < children && made_ < tasks_; ++c) {
        const uint64_t child = make(out, path_.back());
        if (previous != 0) {
          GraphEvent d = event(T::kDependence, child, ts_);
          d.from = previous;
          d.address = 0x7f0000000000 + c * 64;
          d.kind = 3;
          out.push_back(d);
        }
        if (c + 1 == children && path_.size() < 40)
          path_.push_back(child);
        else
          out.push_back(event(T::kFinished, child, ++ts_));
        previous = child;
      }
      if (path_.size() > 1 && (made_ * 40503u >> 5) % 3 == 0) {
        out.push_back(event(T::kFinished, path_.back(), ++ts_));
        path_.pop_back();
      }
    } else {
      out.push_back(event(T::kFinished, path_.back(), ++ts_));
      path_.pop_back();
    }
  }
  void chainStep(std::vector<GraphEvent>& out) {
    const uint64_t task = id(1, ++made_);
    GraphEvent c = event(T::kCreated, task, ++ts_);
    c.function = "chain";
    out.push_back(c);
    if (made_ > 1) {
      GraphEvent d = event(T::kDependence, task, ts_);
      d.from = id(1, made_ - 1);
      d.address = 0x7f0000001000;
      d.kind = 3;
      out.push_back(d);
    }
    GraphEvent s = event(T::kStarted, task, ++ts_);
    s.thread = static_cast<int32_t>(made_ % 4);
    out.push_back(s);
    out.push_back(event(T::kFinished, task, ++ts_));
  }

  bool tree_;
  uint64_t tasks_, made_ = 0;
  uint64_t serial_[2] = {0, 0};
  std::vector<uint64_t> path_;
  int64_t ts_ = 1'000'000;
};

struct Result {
  double ns_per_event = 0;
  uint64_t events = 0, peak_bytes = 0, held = 0, dropped = 0, total = 0, compactions = 0, reads = 0;
  long peak_rss_kib = 0;
};

Result runHere(bool tree, uint64_t tasks, size_t window) {
  TaskGraph graph(window);
  Generator generator(tree, tasks);
  std::vector<GraphEvent> chunk;
  chunk.reserve(8192);
  Result r;
  std::chrono::nanoseconds applying{0};
  while (!generator.done()) {
    generator.fill(chunk);
    const auto start = std::chrono::steady_clock::now();
    for (const GraphEvent& e : chunk) graph.apply(e);
    applying += std::chrono::steady_clock::now() - start;
    r.events += chunk.size();
    // Every 64 chunks: the count walks the slot tables.
    if ((r.events >> 12) % 64 == 0) r.peak_bytes = std::max<uint64_t>(r.peak_bytes, graph.approximateBytes());
  }
  r.peak_bytes = std::max<uint64_t>(r.peak_bytes, graph.approximateBytes());
  r.ns_per_event = static_cast<double>(applying.count()) / static_cast<double>(r.events);
  r.held = graph.tasks().size();
  r.dropped = graph.tasksDropped();
  r.total = graph.totalTasks();
  r.compactions = graph.generation();
  r.reads = graph.compactionReads();
  return r;
}

// In a child, so that the peak RSS is this run's alone.
bool run(bool tree, uint64_t tasks, size_t window, Result& out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    close(fds[0]);
    Result r = runHere(tree, tasks, window);
    const ssize_t n = write(fds[1], &r, sizeof r);
    _exit(n == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  const ssize_t n = read(fds[0], &out, sizeof out);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      n != static_cast<ssize_t>(sizeof out))
    return false;
  out.peak_rss_kib = usage.ru_maxrss;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t millions = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10;
  const size_t window = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  if (millions == 0) {
    std::fprintf(stderr, "usage: task_graph_window_bench [MILLIONS_OF_TASKS] [WINDOW]\n");
    return 2;
  }
  const uint64_t tasks = millions * 1'000'000;
  std::printf("Live task graph, %" PRIu64 " M tasks: unlimited against a window of %zu tasks\n", millions, window);
  std::printf("%-6s %-10s %10s %9s %11s %11s %10s %10s %8s %8s\n", "shape", "graph", "events", "ns/event",
              "peak bytes", "peak RSS", "held", "dropped", "ns ratio", "RSS ratio");
  bool ok = true;
  for (bool tree : {true, false}) {
    // Alternating, best of three: the host's other load moves single runs
    // by more than the difference.
    Result unlimited, limited;
    bool ran = true;
    for (int round = 0; round < 3 && ran; ++round) {
      Result u, l;
      ran = run(tree, tasks, 0, u) && run(tree, tasks, window, l);
      if (round == 0 || u.ns_per_event < unlimited.ns_per_event) unlimited = u;
      if (round == 0 || l.ns_per_event < limited.ns_per_event) limited = l;
    }
    if (!ran) {
      std::fprintf(stderr, "a run failed\n");
      ok = false;
      continue;
    }
    const char* shape = tree ? "tree" : "chain";
    auto row = [&](const char* name, const Result& r, const Result& base) {
      std::printf("%-6s %-10s %10" PRIu64 " %9.1f %9.1f MB %8.1f MB %10" PRIu64 " %10" PRIu64 " %8.2f %8.3f\n", shape,
                  name, r.events, r.ns_per_event, r.peak_bytes / 1e6, r.peak_rss_kib / 1024.0, r.held, r.dropped,
                  r.ns_per_event / base.ns_per_event,
                  static_cast<double>(r.peak_rss_kib) / static_cast<double>(base.peak_rss_kib));
    };
    row("unlimited", unlimited, unlimited);
    row("window", limited, unlimited);
    std::printf("%-6s %-10s %" PRIu64 " compactions read %.2f entries per event\n", shape, "", limited.compactions,
                static_cast<double>(limited.reads) / static_cast<double>(limited.events));
    if (limited.total != unlimited.total) {
      std::fprintf(stderr, "%s: the windowed graph counted %" PRIu64 " tasks, the unlimited %" PRIu64 "\n", shape,
                   limited.total, unlimited.total);
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
