#pragma once

#include <cstdint>
#include <filesystem>

#include "base/result.h"

namespace nk {

// A recording rewritten with every frame compressed (zstd level 1). The
// recorder stores frames uncompressed while the node has no CPU to spare
// (SessionRegistry); once the program is gone there is time, and the
// recording shrinks to about a third.
class RecordingCompactor {
 public:
  struct Compacted {
    uint64_t frames = 0;
    uint64_t bytes = 0;  // of the new file
  };
  // Writes `from`'s frames to `to`, a new file (kFailedPrecondition if it
  // exists), and makes it durable. A recording that ends in a torn or bad
  // frame is copied up to it, as a reader would read it. `to` is removed
  // again on failure, and when it would grow past `max_bytes`
  // (kResourceExhausted: the room its caller set aside).
  static Result<Compacted> compact(const std::filesystem::path& from, const std::filesystem::path& to,
                                   uint64_t max_bytes = UINT64_MAX);
};

}  // namespace nk
