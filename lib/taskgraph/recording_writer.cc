#include "recording_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "taskgraph/recording_format.h"
#include "taskgraph/recording_reader.h"

namespace nk {

namespace {

constexpr mode_t kRecordingMode = 0640;

std::string errnoText(int err) { return std::strerror(err); }

// writev until every byte is written; loops on short writes and EINTR.
// Returns 0 or an errno value.
int writevFully(int fd, iovec* iov, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    size_t done = static_cast<size_t>(n);
    while (count > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return 0;
}

// Takes the writer's lock on `fd`, or explains who holds it.
Status lockForWriting(int fd, const std::filesystem::path& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return failedPrecondition(path.string() + ": recording is already open for writing");
    return unavailable(path.string() + ": flock: " + errnoText(errno));
  }
  return {};
}

void syncDirectoryOf(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Result<RecordingWriter> RecordingWriter::create(const std::filesystem::path& path, uint32_t version) {
  if (version < kOldestRecordingVersion || version > kRecordingVersion)
    return invalidArgument(path.string() + ": cannot write recording version " + std::to_string(version));
  // The file is created unnamed (O_TMPFILE) and linked under its name only
  // once its header is written and synced: killed during create, the daemon
  // leaves no file rather than one without a header, which readers reject.
  // Where the file system has no O_TMPFILE, a plain exclusive create.
  std::filesystem::path dir = path.parent_path();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_APPEND | O_CLOEXEC, kRecordingMode);
  const bool unnamed = fd >= 0;
  if (!unnamed) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, kRecordingMode);
  auto createError = [&](int err) -> Error {
    std::string message = path.string() + ": cannot create recording: " + errnoText(err);
    if (err == EEXIST) return failedPrecondition(message);
    if (err == EACCES || err == EPERM) return permissionDenied(message);
    return unavailable(message);
  };
  if (fd < 0) return createError(errno);

  RecordingWriter writer(path, fd, 0, version);
  auto fail = [&](Error error) {
    writer.close();
    if (!unnamed) ::unlink(path.c_str());
    return error;
  };
  if (Status locked = lockForWriting(fd, path); !locked) return fail(locked.error());
  auto header = recordingFileHeader(version);
  iovec iov{header.data(), header.size()};
  if (int err = writevFully(fd, &iov, 1); err != 0)
    return fail(unavailable(path.string() + ": cannot write recording header: " + errnoText(err)));
  // The file and its name are made durable once, here; frames are made
  // durable by flush().
  if (::fdatasync(fd) != 0) return fail(unavailable(path.string() + ": fdatasync: " + errnoText(errno)));
  if (unnamed) {
    // linkat does not replace an existing file: EEXIST, as O_EXCL would.
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    int linked = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
    if (linked != 0 && errno == ENOENT)  // no /proc; needs CAP_DAC_READ_SEARCH
      linked = ::linkat(fd, "", AT_FDCWD, path.c_str(), AT_EMPTY_PATH);
    if (linked != 0) return fail(createError(errno));
  }
  syncDirectoryOf(path);
  writer.size_ = header.size();
  return writer;
}

Result<RecordingWriter> RecordingWriter::openForAppend(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = path.string() + ": cannot open recording: " + errnoText(err);
    if (err == ENOENT) return notFound(message);
    if (err == EACCES || err == EPERM) return permissionDenied(message);
    return unavailable(message);
  }
  RecordingWriter writer(path, fd, 0, kRecordingVersion);
  // Lock before reading, so that no other writer appends while we look for
  // the end.
  if (Status locked = lockForWriting(fd, path); !locked) return locked.error();

  auto reader = RecordingReader::open(path);
  if (!reader) return reader.error();
  while (reader->next()) {
  }
  using Cause = RecordingReader::StopCause;
  Cause cause = reader->stopCause();
  if (cause == Cause::kReadError) return unavailable(reader->stopReason());
  if (cause != Cause::kNone && cause != Cause::kTruncatedFrame)
    return failedPrecondition("cannot append to a damaged recording: " + reader->stopReason());
  uint64_t good = reader->goodBytes();
  writer.version_ = reader->version();
  if (cause == Cause::kTruncatedFrame) {
    if (::ftruncate(fd, static_cast<off_t>(good)) != 0)
      return unavailable(path.string() + ": cannot cut the torn last frame: " + errnoText(errno));
    if (::fdatasync(fd) != 0) return unavailable(path.string() + ": fdatasync: " + errnoText(errno));
  }
  writer.size_ = good;
  return writer;
}

RecordingWriter::RecordingWriter(std::filesystem::path path, int fd, uint64_t size, uint32_t version)
    : path_(std::move(path)), fd_(fd), size_(size), version_(version) {}

RecordingWriter::~RecordingWriter() { close(); }

RecordingWriter::RecordingWriter(RecordingWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      version_(other.version_),
      broken_(other.broken_),
      zstd_(std::move(other.zstd_)) {}

RecordingWriter& RecordingWriter::operator=(RecordingWriter&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    version_ = other.version_;
    broken_ = other.broken_;
    zstd_ = std::move(other.zstd_);
  }
  return *this;
}

void RecordingWriter::close() {
  if (fd_ >= 0) ::close(fd_);  // also releases the flock
  fd_ = -1;
}

Status RecordingWriter::usable() const {
  if (fd_ < 0) return failedPrecondition("recording writer is not open");
  if (broken_)
    return failedPrecondition(path_.string() + ": recording refused further appends after an earlier write error");
  return {};
}

Status RecordingWriter::append(std::span<const std::byte> payload) {
  if (auto staged = stage(payload); !staged) return staged.error();
  return appendStaged();
}

Result<uint64_t> RecordingWriter::stage(std::span<const std::byte> payload, ZstdFrames::Effort effort) {
  has_staged_ = false;
  if (Status ok = usable(); !ok) return ok.error();
  if (payload.size() > kMaxFramePayload)
    return invalidArgument(path_.string() + ": frame payload of " + std::to_string(payload.size()) +
                           " bytes exceeds the maximum " + std::to_string(kMaxFramePayload));
  staged_ = payload;
  if (version_ >= 2) {
    zstd_.compress(payload, compressed_, effort);
    if (compressed_.empty()) return internalError(path_.string() + ": zstd could not compress a frame");
    if (compressed_.size() > kMaxStoredFramePayload)
      return internalError(path_.string() + ": zstd grew a frame past its bound");
    staged_ = compressed_;
  }
  has_staged_ = true;
  return kFrameHeaderSize + staged_.size();
}

Status RecordingWriter::appendStaged() {
  if (Status ok = usable(); !ok) return ok;
  if (!has_staged_) return failedPrecondition(path_.string() + ": no frame staged to append");
  has_staged_ = false;
  auto header = frameHeader(staged_);
  iovec iov[2] = {{header.data(), header.size()}, {const_cast<std::byte*>(staged_.data()), staged_.size()}};
  int err = writevFully(fd_, iov, staged_.empty() ? 1 : 2);
  if (err != 0) {
    // Take back whatever part of the frame was written, so that the next
    // append does not land behind a torn frame that readers stop at.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) broken_ = true;
    return unavailable(path_.string() + ": cannot append frame: " + errnoText(err));
  }
  size_ += header.size() + staged_.size();
  return {};
}

Status RecordingWriter::flush() {
  if (Status ok = usable(); !ok) return ok;
  while (::fdatasync(fd_) != 0) {
    if (errno == EINTR) continue;
    // After a failed fdatasync the kernel may have dropped the dirty pages:
    // later syncs can succeed without the data ever reaching the disk.
    broken_ = true;
    return unavailable(path_.string() + ": fdatasync: " + errnoText(errno));
  }
  return {};
}

}  // namespace nk
