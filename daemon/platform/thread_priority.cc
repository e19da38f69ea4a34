#include "thread_priority.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

namespace nk {

namespace {

std::mutex refusal_mutex;
std::function<void(const std::string&)> refusal_log;
std::atomic<bool> refusal_reported{false};

}  // namespace

Status ThreadPriority::setCallingThreadNice(int nice) {
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice) != 0) {
    int err = errno;
    std::string what = "setpriority(nice " + std::to_string(nice) + ") of thread " + std::to_string(gettid()) + ": " +
                       std::strerror(err);
    if (err == EACCES || err == EPERM) return permissionDenied(what);
    return unavailable(what);
  }
  return {};
}

int ThreadPriority::callingThreadNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
}

void ThreadPriority::raiseLatencyBound(std::string_view thread_name) {
  if (callingThreadNice() <= kLatencyBoundNice) return;
  auto status = setCallingThreadNice(kLatencyBoundNice);
  if (status || refusal_reported.exchange(true)) return;
  std::lock_guard lock(refusal_mutex);
  if (refusal_log)
    refusal_log("latency-bound threads keep the daemon's nice value (" + std::string(thread_name) +
                " first): " + status.error().message);
}

void ThreadPriority::setRefusalLog(std::function<void(const std::string&)> log) {
  std::lock_guard lock(refusal_mutex);
  refusal_log = std::move(log);
}

}  // namespace nk
