#include "perf_cycle_counter.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nk {

namespace {

int openCycles(pid_t tid) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  // User space only: perf_event_paranoid 2 (the usual default) allows it for
  // the caller's own threads, and kernel cycles are not the app's work.
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

PerfCycleCounter::~PerfCycleCounter() {
  for (auto& [tid, fd] : fds_) ::close(fd);
}

std::string PerfCycleCounter::probe() {
  int fd = openCycles(0);
  if (fd < 0) return std::string("perf_event_open(cycles): ") + std::strerror(errno);
  uint64_t value = 0;
  ssize_t n = ::read(fd, &value, sizeof value);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof value)) return "reading a perf cycle counter failed";
  return {};
}

std::optional<uint64_t> PerfCycleCounter::read(pid_t tid) {
  auto it = fds_.find(tid);
  if (it == fds_.end()) {
    int fd = openCycles(tid);
    if (fd < 0) return std::nullopt;
    it = fds_.emplace(tid, fd).first;
  }
  uint64_t value = 0;
  if (::read(it->second, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) {
    forget(tid);
    return std::nullopt;
  }
  return value;
}

void PerfCycleCounter::forget(pid_t tid) {
  auto it = fds_.find(tid);
  if (it == fds_.end()) return;
  ::close(it->second);
  fds_.erase(it);
}

void PerfCycleCounter::forgetExcept(std::span<const pid_t> live_tids) {
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (std::find(live_tids.begin(), live_tids.end(), it->first) != live_tids.end()) {
      ++it;
      continue;
    }
    ::close(it->second);
    it = fds_.erase(it);
  }
}

}  // namespace nk
