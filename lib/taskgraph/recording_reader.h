#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "taskgraph/recording_format.h"
#include "taskgraph/zstd_frames.h"

namespace nk {

// Reads a task-event recording (recording_format.h) frame by frame, through
// a buffer of bounded size: files may be far larger than memory.
//
// next() returns payloads until the end of the file or the first bad frame;
// the file is never read past a bad frame. Then stopReason() says why it
// stopped ("" for a clean end) and goodBytes() is the offset just past the
// last good frame, which is where a writer may truncate and resume.
// A clean end is not final: when the file has grown since (a live
// recording), the next call to next() returns the frames appended meanwhile.
// A bad frame is final.
class RecordingReader {
 public:
  enum class StopCause {
    kNone,
    kTruncatedFrame,
    kBadMagic,
    kFrameTooLarge,
    kChecksumMismatch,
    kUndecodable,  // a version 2 payload that does not decompress
    kReadError
  };

  // Fails (kInvalidArgument) when the file does not start with a recording
  // header of a supported version, or when it cannot be opened.
  static Result<RecordingReader> open(const std::filesystem::path& path);

  ~RecordingReader();
  RecordingReader(RecordingReader&& other) noexcept;
  RecordingReader& operator=(RecordingReader&& other) noexcept;
  RecordingReader(const RecordingReader&) = delete;
  RecordingReader& operator=(const RecordingReader&) = delete;

  std::optional<std::vector<std::byte>> next();

  // Following a live recording: the frame its writer is appending right now
  // looks truncated. This forgets that stop (and only that one), so that
  // next() reads the frame again; false when there is nothing to resume.
  bool resumeAfterTruncation();

  // Empty after a clean end (or before the end); otherwise one line naming
  // the file, the byte offset of the bad frame and what is wrong with it.
  const std::string& stopReason() const { return stop_reason_; }
  StopCause stopCause() const { return stop_cause_; }
  // Offset just past the last good frame (the file header counts as good).
  uint64_t goodBytes() const { return offset_; }
  const std::filesystem::path& path() const { return path_; }
  // The file's format version (recording_format.h).
  uint32_t version() const { return version_; }

 private:
  RecordingReader(std::filesystem::path path, int fd);
  void close();
  // Copies up to `size` bytes at `offset` into `out`, from the buffer or the
  // file; fewer only at the end of the file. -1 on a read error (errno set).
  ptrdiff_t readAt(uint64_t offset, std::byte* out, size_t size);
  // Records "<path>: <what> at byte offset <offset_>: <detail>"; final.
  std::nullopt_t stop(StopCause cause, std::string_view what, const std::string& detail);

  std::filesystem::path path_;
  int fd_ = -1;
  uint32_t version_ = kRecordingVersion;
  ZstdFrames zstd_;
  uint64_t offset_ = 0;
  StopCause stop_cause_ = StopCause::kNone;
  std::string stop_reason_;
  std::vector<std::byte> buffer_;
  uint64_t buffer_offset_ = 0;  // file offset of buffer_[0]
  size_t buffer_size_ = 0;      // valid bytes in buffer_
};

}  // namespace nk
