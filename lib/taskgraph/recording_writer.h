#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "base/result.h"
#include "taskgraph/recording_format.h"
#include "taskgraph/zstd_frames.h"

namespace nk {

// Appends frames to a task-event recording (recording_format.h). New
// recordings are of the current version, compressed; an existing one is
// appended to in its own version.
//
// Each append() is one writev of the frame header and payload, so a frame
// reaches the page cache whole or (killed mid-write, disk full) torn at the
// tail, where readers stop; a failed append removes its partial frame again.
// flush() makes what was appended durable (fdatasync). The file is locked
// (flock) against a second writer for as long as this object lives.
class RecordingWriter {
 public:
  // A new recording; fails (kFailedPrecondition) if the file exists.
  // Version 1 (uncompressed) is for tests of the framing, and for tools
  // that must write what an older reader reads.
  static Result<RecordingWriter> create(const std::filesystem::path& path, uint32_t version = kRecordingVersion);
  // An existing recording, to append to. A torn last frame (the file ends
  // inside it, as after a crash) is cut off first. Any other bad frame
  // (checksum mismatch, bad magic, oversize length) fails with the reader's
  // message and leaves the file alone: it may be damage in the middle of the
  // file, and truncating there would throw away the good frames behind it.
  static Result<RecordingWriter> openForAppend(const std::filesystem::path& path);

  ~RecordingWriter();
  RecordingWriter(RecordingWriter&& other) noexcept;
  RecordingWriter& operator=(RecordingWriter&& other) noexcept;
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Payloads larger than kMaxFramePayload are refused (kInvalidArgument).
  Status append(std::span<const std::byte> payload);
  // append() in two steps, for a caller that must know what a frame costs
  // before it is written (a quota): stage() makes the frame (compressed, in
  // a version 2 recording) and returns its size on disk, header included;
  // appendStaged() writes it. A new stage() replaces one not written.
  Result<uint64_t> stage(std::span<const std::byte> payload, ZstdFrames::Effort effort = ZstdFrames::Effort::kCompact);
  Status appendStaged();
  // The frame's payload as stage() made it (zstd-compressed when
  // compressesFrames()), until the next stage().
  std::span<const std::byte> staged() const { return staged_; }
  bool compressesFrames() const { return version_ >= 2; }
  // fdatasync. After a failed flush (or a failed append whose partial frame
  // could not be removed) the writer refuses further appends: what reached
  // the disk is unknown.
  Status flush();

  // Size of the file: header plus every frame appended.
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  RecordingWriter(std::filesystem::path path, int fd, uint64_t size, uint32_t version);
  void close();
  Status usable() const;

  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint32_t version_ = kRecordingVersion;
  bool broken_ = false;
  ZstdFrames zstd_;
  std::vector<std::byte> compressed_;  // scratch, reused
  std::span<const std::byte> staged_;  // the payload or compressed_
  bool has_staged_ = false;
};

}  // namespace nk
