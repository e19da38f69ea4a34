#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "cli/tasks_client.h"
#include "base/result.h"

namespace nk::cli {

// A recording read straight from its file (STATE_DIR/recordings/*.nkrec),
// without a daemon: the way to a program's graph after the daemon that
// recorded it has died or restarted (its sessions start again at 1).
class RecordingLoader {
 public:
  static Result<RecordedGraph> load(const std::filesystem::path& path);
  // Each frame's events, in order, to `on_events` (their function names
  // point into the frame: copy what must outlive the call). The result is
  // where the file stopped being readable (empty: read whole), or why it
  // could not be opened.
  static Result<std::string> forEachFrame(const std::filesystem::path& path,
                                          const std::function<void(std::span<const GraphEvent>)>& on_events);
};

}  // namespace nk::cli
