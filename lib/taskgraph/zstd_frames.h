#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nk {

// zstd for recording frames (version 2 of recording_format.h): each frame's
// payload is one zstd frame with its content size, so a reader knows what
// it will get before it decompresses, and refuses more than it allows.
// Holds its (de)compression contexts: made once, reused for every frame.
class ZstdFrames {
 public:
  // How hard compress() tries.
  enum class Effort {
    // zstd's fastest regular level (level 1): about 3.3 ns a byte here, a
    // third of the size for task events.
    kCompact,
    // zstd's lowest level: next to a copy (0.1 ns a byte) and next to no
    // smaller, for a recorder that has no CPU to spare; still one zstd
    // frame, so readers do not tell the difference.
    kFastest,
  };

  ZstdFrames();
  ~ZstdFrames();
  ZstdFrames(ZstdFrames&&) noexcept;
  ZstdFrames& operator=(ZstdFrames&&) noexcept;

  // Replaces `out` with the compressed `data`; empty when zstd failed
  // (which, for in-memory input and a big enough buffer, it does not).
  void compress(std::span<const std::byte> data, std::vector<std::byte>& out, Effort effort = Effort::kCompact);
  // Replaces `out` with the decompressed `frame`. Returns what is wrong (not
  // one zstd frame, no content size, more than `max_size` bytes, corrupt),
  // or empty.
  std::string decompress(std::span<const std::byte> frame, std::vector<std::byte>& out, size_t max_size);
  // What the contexts made so far take (they are made on first use).
  size_t contextBytes() const;

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
};

}  // namespace nk
