#include "testlib/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace nk::test {

// read(2) rather than an ifstream: a /proc file of a process that dies
// while it is read fails with ESRCH, which libstdc++'s filebuf throws as an
// exception whatever the stream's exception mask; here it ends the text.
std::string readFile(const std::filesystem::path& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string readTrimmed(const std::filesystem::path& path) {
  std::string text = readFile(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool writeControl(const std::filesystem::path& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return ::close(fd) == 0 && ok;
}

}  // namespace nk::test
