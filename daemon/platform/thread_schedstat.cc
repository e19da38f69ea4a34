#include "thread_schedstat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nk {

ThreadSchedstat::ThreadSchedstat(std::filesystem::path proc_root) : proc_root_(std::move(proc_root)) {}

std::optional<SchedstatTimes> ThreadSchedstat::read(pid_t pid, pid_t tid) const {
  // Plain open/read: this runs for every thread at every control step, and
  // an ifstream costs several times more.
  std::string path = (proc_root_ / std::to_string(pid) / "task" / std::to_string(tid) / "schedstat").string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[128];
  ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  char* end = nullptr;
  SchedstatTimes times;
  times.run_ns = std::strtoull(buffer, &end, 10);
  if (end == buffer) return std::nullopt;
  char* second = end;
  times.wait_ns = std::strtoull(second, &end, 10);
  if (end == second) return std::nullopt;
  return times;
}

}  // namespace nk
