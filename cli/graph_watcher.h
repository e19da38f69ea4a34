#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <span>
#include <string>

#include "base/result.h"
#include "taskgraph/task_graph.h"

namespace nk::cli {

class InterruptWatcher;

// `graph --watch`: follows a live session and redraws FILE as its graph
// grows. Rendering runs apart from the stream's reader, so a slow `dot`
// never holds up the events; what it draws is the graph as it was when the
// refresh began.
class GraphWatcher {
 public:
  struct Output {
    std::string format;  // "svg" or "dot"
    std::string path;    // FILE, replaced whole at each refresh
    bool json = false;   // progress as JSON lines on `out`, else as text on `err`
  };

  GraphWatcher(Output output, std::ostream& out, std::ostream& err);

  // Follows `session` through the daemon at `socket_path` until it ends or
  // Ctrl-C, then draws the last state once more. An error comes worded as
  // the one line the user sees.
  Status follow(const std::string& socket_path, std::chrono::milliseconds timeout, uint64_t session);

  // The stream reader's side: one batch's events into the graph.
  void apply(std::span<const GraphEvent> events);
  // Whether the graph changed since the last refresh.
  [[nodiscard]] bool changed() const;
  // Draws the graph as it is now into FILE and says so.
  Status refresh();

 private:
  struct Progress {
    bool interrupted = false;  // by Ctrl-C
    bool refreshed = false;    // FILE drawn at least once
    Status outcome;            // of the last refresh
  };

  Progress refreshUntilEnded(const std::atomic<bool>& ended, const InterruptWatcher& interrupts);
  Result<std::string> render(std::string dot) const;
  Status replaceFile(const std::string& text) const;
  void reportProgress(size_t tasks, size_t edges);

  Output output_;
  std::ostream& out_;
  std::ostream& err_;
  mutable std::mutex mutex_;
  TaskGraph graph_;       // guarded by mutex_
  bool changed_ = false;  // guarded by mutex_: since the last refresh
};

}  // namespace nk::cli
