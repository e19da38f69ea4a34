#include "held_sysfs_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "base/units.h"
#include "sysfs_file.h"

namespace nk {

namespace {
constexpr unsigned kReopenEveryReads = 1000;
}

HeldSysfsFile::~HeldSysfsFile() { close(); }

HeldSysfsFile::HeldSysfsFile(HeldSysfsFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), reads_since_open_(other.reads_since_open_) {}

HeldSysfsFile& HeldSysfsFile::operator=(HeldSysfsFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    reads_since_open_ = other.reads_since_open_;
  }
  return *this;
}

void HeldSysfsFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool HeldSysfsFile::readHeld(std::string& text) {
  if (fd_ >= 0 && ++reads_since_open_ >= kReopenEveryReads) close();
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    reads_since_open_ = 0;
    if (fd_ < 0) return false;
  }
  char buffer[128];
  ssize_t n = ::pread(fd_, buffer, sizeof buffer, 0);
  // A value that fills the buffer is not a single number: let the plain
  // reader report it.
  if (n <= 0 || static_cast<size_t>(n) == sizeof buffer) {
    close();
    return false;
  }
  text = std::string(trim(std::string_view(buffer, static_cast<size_t>(n))));
  return true;
}

Result<uint64_t> HeldSysfsFile::readUint64() {
  std::string text;
  if (readHeld(text)) {
    auto value = SysfsFile::parseUint64(text, path_);
    if (value) return value;
    close();
  }
  return SysfsFile::readUint64(path_);
}

Result<int64_t> HeldSysfsFile::readInt64() {
  std::string text;
  if (readHeld(text)) {
    auto value = SysfsFile::parseInt64(text, path_);
    if (value) return value;
    close();
  }
  return SysfsFile::readInt64(path_);
}

}  // namespace nk
