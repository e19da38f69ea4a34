#include "sysfs_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "base/units.h"

namespace nk {

namespace {

// EACCES/EPERM are worth their own code: the fix (run as root, udev rule) is
// different from that of a missing driver. EINVAL on write is the kernel
// refusing the value itself.
Error errnoError(const std::filesystem::path& path, int err, std::string_view action = {}) {
  std::string message = path.string() + ": ";
  if (!action.empty()) message += std::string(action) + ": ";
  message += std::strerror(err);
  if (err == EACCES || err == EPERM) return permissionDenied(std::move(message));
  if (err == EINVAL && !action.empty()) return invalidArgument(std::move(message));
  return unavailable(std::move(message));
}

// File contents may be anything (a fuzzer, a half-written file): keep the
// quote short and printable so that it cannot wreck a log line.
std::string quote(std::string_view text) {
  constexpr size_t kMaxQuoted = 40;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxQuoted; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    }
  }
  if (text.size() > kMaxQuoted) out += "...";
  out += "'";
  return out;
}

template <typename T>
Result<T> parseInteger(std::string_view text, const std::filesystem::path& path, bool allow_negative) {
  std::string_view s = trim(text);
  if (s.empty()) return unavailable(path.string() + ": expected a number, found nothing");
  if (s.front() == '-' && !allow_negative)
    return unavailable(path.string() + ": expected a non-negative number, found " + quote(s));
  T value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range)
    return unavailable(path.string() + ": number " + quote(s) + " is out of range");
  if (ec != std::errc() || ptr != s.data() + s.size())
    return unavailable(path.string() + ": expected a number, found " + quote(s));
  return value;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Returns the errno of close(), 0 on success; a failed close after a
  // write can be the only sign that the data did not land.
  int release() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

}  // namespace

bool SysfsFile::exists(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// procfs and sysfs files report a size of 0 or 4096 whatever they hold, so
// this reads until EOF instead of trusting stat().
Result<std::string> SysfsFile::readText(const std::filesystem::path& path, size_t max_bytes) {
  // O_NONBLOCK so that a FIFO planted in a fake tree cannot hang the daemon.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return errnoError(path, errno);
  std::string text;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errnoError(path, errno);
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes)
      return unavailable(path.string() + ": file is larger than " + std::to_string(max_bytes) + " bytes");
    text.append(buffer, static_cast<size_t>(n));
  }
  return std::string(trim(text));
}

Result<uint64_t> SysfsFile::parseUint64(std::string_view text, const std::filesystem::path& path) {
  return parseInteger<uint64_t>(text, path, false);
}

Result<int64_t> SysfsFile::parseInt64(std::string_view text, const std::filesystem::path& path) {
  return parseInteger<int64_t>(text, path, true);
}

Result<uint64_t> SysfsFile::readUint64(const std::filesystem::path& path) {
  auto text = readText(path);
  if (!text) return text.error();
  return parseUint64(*text, path);
}

Result<int64_t> SysfsFile::readInt64(const std::filesystem::path& path) {
  auto text = readText(path);
  if (!text) return text.error();
  return parseInt64(*text, path);
}

Result<std::vector<std::string>> SysfsFile::readWords(const std::filesystem::path& path) {
  auto text = readText(path);
  if (!text) return text.error();
  std::vector<std::string> words;
  for (std::string_view word : splitWhitespace(*text)) words.emplace_back(word);
  return words;
}

Result<std::vector<uint64_t>> SysfsFile::readUint64List(const std::filesystem::path& path) {
  auto text = readText(path);
  if (!text) return text.error();
  std::vector<uint64_t> numbers;
  for (std::string_view word : splitWhitespace(*text)) {
    auto number = parseUint64(word, path);
    if (!number) return number.error();
    numbers.push_back(*number);
  }
  return numbers;
}

// O_TRUNC without O_CREAT: a real sysfs attribute ignores the truncation,
// a regular file in a fake or emulated tree needs it, and a file that does
// not exist must stay an error rather than be created.
Status SysfsFile::write(const std::filesystem::path& path, std::string_view value) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (fd.get() < 0) return errnoError(path, errno);
  std::string action = "writing " + quote(value);
  // sysfs takes the value from a single write(); splitting it would hand the
  // kernel two partial values.
  ssize_t n;
  do {
    n = ::write(fd.get(), value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errnoError(path, errno, action);
  if (static_cast<size_t>(n) != value.size())
    return unavailable(path.string() + ": " + action + ": short write (" + std::to_string(n) + " of " +
                       std::to_string(value.size()) + " bytes)");
  if (int err = fd.release(); err != 0) return errnoError(path, err, action);
  return {};
}

Status SysfsFile::write(const std::filesystem::path& path, uint64_t value) {
  return write(path, std::string_view(std::to_string(value)));
}

std::optional<uint32_t> SysfsFile::indexAfterPrefix(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  // Digits only, so that "policy1.bak" or the subzone "intel-rapl:0:0" do
  // not count.
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  uint32_t index = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return index;
}

Result<std::vector<SysfsFile::IndexedEntry>> SysfsFile::listIndexed(const std::filesystem::path& dir,
                                                                    std::string_view prefix) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return errnoError(dir, ec.value());
  std::vector<IndexedEntry> entries;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    auto index = indexAfterPrefix(it->path().filename().native(), prefix);
    if (index) entries.push_back({*index, it->path()});
  }
  if (ec) return errnoError(dir, ec.value());
  std::sort(entries.begin(), entries.end(),
            [](const IndexedEntry& a, const IndexedEntry& b) { return a.index < b.index; });
  return entries;
}

}  // namespace nk
