#pragma once

#include <filesystem>

#include "cli/tasks_client.h"
#include "common/result.h"

namespace nk::cli {

// A recording read straight from its file (STATE_DIR/recordings/*.nkrec),
// without a daemon: the way to a program's graph after the daemon that
// recorded it has died or restarted (its sessions start again at 1).
class RecordingLoader {
 public:
  static Result<RecordedGraph> load(const std::filesystem::path& path);
};

}  // namespace nk::cli
