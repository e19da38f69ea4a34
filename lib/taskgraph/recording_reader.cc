#include "taskgraph/recording_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "taskgraph/recording_format.h"

namespace nk {

namespace {

constexpr size_t kReadBufferSize = 1024 * 1024;

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// pread until `size` bytes or the end of the file.
ptrdiff_t preadFully(int fd, std::byte* out, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ptrdiff_t>(done);
}

}  // namespace

Result<RecordingReader> RecordingReader::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = path.string() + ": cannot open recording: " + std::strerror(err);
    if (err == ENOENT) return notFound(message);
    if (err == EACCES || err == EPERM) return permissionDenied(message);
    return unavailable(message);
  }
  RecordingReader reader(path, fd);
  std::array<std::byte, kRecordingFileHeaderSize> header{};
  ptrdiff_t got = reader.readAt(0, header.data(), header.size());
  if (got < 0) return unavailable(path.string() + ": cannot read recording: " + std::strerror(errno));
  if (static_cast<size_t>(got) < header.size())
    return invalidArgument(path.string() + ": not a recording: file header truncated (" + std::to_string(got) + " of " +
                           std::to_string(header.size()) + " bytes)");
  if (!std::equal(kRecordingFileMagic.begin(), kRecordingFileMagic.end(), header.begin()))
    return invalidArgument(path.string() + ": not a recording: bad file magic (expected \"NKRECORD\")");
  uint32_t version = loadLe32(header.data() + kRecordingVersionOffset);
  if (version < kOldestRecordingVersion || version > kRecordingVersion)
    return invalidArgument(path.string() + ": unsupported recording version " + std::to_string(version) +
                           " (this build reads versions " + std::to_string(kOldestRecordingVersion) + " to " +
                           std::to_string(kRecordingVersion) + ")");
  reader.version_ = version;
  reader.offset_ = kRecordingFileHeaderSize;
  return reader;
}

RecordingReader::RecordingReader(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}

RecordingReader::~RecordingReader() { close(); }

RecordingReader::RecordingReader(RecordingReader&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      version_(other.version_),
      zstd_(std::move(other.zstd_)),
      offset_(other.offset_),
      stop_cause_(other.stop_cause_),
      stop_reason_(std::move(other.stop_reason_)),
      buffer_(std::move(other.buffer_)),
      buffer_offset_(other.buffer_offset_),
      buffer_size_(std::exchange(other.buffer_size_, 0)) {}

RecordingReader& RecordingReader::operator=(RecordingReader&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    version_ = other.version_;
    zstd_ = std::move(other.zstd_);
    offset_ = other.offset_;
    stop_cause_ = other.stop_cause_;
    stop_reason_ = std::move(other.stop_reason_);
    buffer_ = std::move(other.buffer_);
    buffer_offset_ = other.buffer_offset_;
    buffer_size_ = std::exchange(other.buffer_size_, 0);
  }
  return *this;
}

void RecordingReader::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

ptrdiff_t RecordingReader::readAt(uint64_t offset, std::byte* out, size_t size) {
  if (size == 0) return 0;
  // Large reads (big payloads) go straight into the caller's memory.
  if (size >= kReadBufferSize / 2) {
    // Serve what the buffer already holds first, so that a payload starting
    // inside it is not read twice.
    size_t copied = 0;
    if (offset >= buffer_offset_ && offset < buffer_offset_ + buffer_size_) {
      copied = std::min(size, static_cast<size_t>(buffer_offset_ + buffer_size_ - offset));
      std::memcpy(out, buffer_.data() + (offset - buffer_offset_), copied);
    }
    ptrdiff_t rest = preadFully(fd_, out + copied, size - copied, offset + copied);
    if (rest < 0) return -1;
    return static_cast<ptrdiff_t>(copied) + rest;
  }
  bool held = offset >= buffer_offset_ && offset + size <= buffer_offset_ + buffer_size_;
  if (!held) {
    if (buffer_.empty()) buffer_.resize(kReadBufferSize);
    buffer_size_ = 0;
    ptrdiff_t n = preadFully(fd_, buffer_.data(), buffer_.size(), offset);
    if (n < 0) return -1;
    buffer_offset_ = offset;
    buffer_size_ = static_cast<size_t>(n);
  }
  size_t available = static_cast<size_t>(buffer_offset_ + buffer_size_ - offset);
  size_t copied = std::min(size, available);
  std::memcpy(out, buffer_.data() + (offset - buffer_offset_), copied);
  return static_cast<ptrdiff_t>(copied);
}

std::nullopt_t RecordingReader::stop(StopCause cause, std::string_view what, const std::string& detail) {
  stop_cause_ = cause;
  stop_reason_ =
      path_.string() + ": " + std::string(what) + " at byte offset " + std::to_string(offset_) + ": " + detail;
  buffer_ = std::vector<std::byte>();  // not `= {}`, which keeps the capacity
  buffer_size_ = 0;
  return std::nullopt;
}

bool RecordingReader::resumeAfterTruncation() {
  if (stop_cause_ != StopCause::kTruncatedFrame) return false;
  stop_cause_ = StopCause::kNone;
  stop_reason_.clear();
  return true;
}

std::optional<std::vector<std::byte>> RecordingReader::next() {
  if (stop_cause_ != StopCause::kNone || fd_ < 0) return std::nullopt;
  std::array<std::byte, kFrameHeaderSize> header{};
  ptrdiff_t got = readAt(offset_, header.data(), header.size());
  if (got < 0) return stop(StopCause::kReadError, "read error", std::strerror(errno));
  if (got == 0) return std::nullopt;  // clean end
  if (static_cast<size_t>(got) < header.size())
    return stop(StopCause::kTruncatedFrame, "truncated frame",
                "header has " + std::to_string(got) + " of " + std::to_string(kFrameHeaderSize) + " bytes");

  uint32_t magic = loadLe32(header.data() + kFrameMagicOffset);
  if (magic != kFrameMagic)
    return stop(StopCause::kBadMagic, "bad magic", hex32(magic) + ", expected " + hex32(kFrameMagic));
  uint32_t length = loadLe32(header.data() + kFrameLengthOffset);
  const uint32_t max_length = version_ >= 2 ? kMaxStoredFramePayload : kMaxFramePayload;
  if (length > max_length)
    return stop(StopCause::kFrameTooLarge, "frame too large",
                "payload length " + std::to_string(length) + " exceeds the maximum " + std::to_string(max_length));

  std::vector<std::byte> payload(length);
  got = readAt(offset_ + kFrameHeaderSize, payload.data(), payload.size());
  if (got < 0) return stop(StopCause::kReadError, "read error", std::strerror(errno));
  if (static_cast<size_t>(got) < payload.size())
    return stop(StopCause::kTruncatedFrame, "truncated frame",
                "payload has " + std::to_string(got) + " of " + std::to_string(length) + " bytes");

  uint32_t stored = loadLe32(header.data() + kFrameCrcOffset);
  uint32_t computed = crc32c(payload);
  if (stored != computed)
    return stop(
        StopCause::kChecksumMismatch, "checksum mismatch",
        "stored " + hex32(stored) + ", computed " + hex32(computed) + " over " + std::to_string(length) + " bytes");

  if (version_ >= 2) {
    std::vector<std::byte> batch;
    if (std::string fault = zstd_.decompress(payload, batch, kMaxFramePayload); !fault.empty())
      return stop(StopCause::kUndecodable, "undecodable frame", fault);
    offset_ += kFrameHeaderSize + length;
    return batch;
  }
  offset_ += kFrameHeaderSize + length;
  return payload;
}

}  // namespace nk
