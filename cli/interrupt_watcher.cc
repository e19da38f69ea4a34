#include "cli/interrupt_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>

namespace nk::cli {

namespace {

// Lock-free atomics are safe to touch from a signal handler.
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_write_fd{-1};

extern "C" void onSignal(int) {
  int saved_errno = errno;
  g_interrupted.store(true);
  int fd = g_write_fd.load();
  if (fd >= 0) {
    char byte = 1;
    [[maybe_unused]] ssize_t ignored = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

struct InterruptWatcher::Saved {
  struct sigaction old_int {};
  struct sigaction old_term {};
  int pipe_fds[2] = {-1, -1};
  bool installed = false;
};

InterruptWatcher::InterruptWatcher() : saved_(std::make_unique<Saved>()) {
  if (::pipe2(saved_->pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  g_interrupted.store(false);
  g_write_fd.store(saved_->pipe_fds[1]);

  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: the reader is woken by the cancel, not
  // by EINTR.
  action.sa_flags = SA_RESTART;
  if (::sigaction(SIGINT, &action, &saved_->old_int) != 0) return;
  if (::sigaction(SIGTERM, &action, &saved_->old_term) != 0) {
    ::sigaction(SIGINT, &saved_->old_int, nullptr);
    return;
  }
  saved_->installed = true;
}

InterruptWatcher::~InterruptWatcher() {
  if (saved_->installed) {
    ::sigaction(SIGINT, &saved_->old_int, nullptr);
    ::sigaction(SIGTERM, &saved_->old_term, nullptr);
  }
  g_write_fd.store(-1);
  for (int fd : saved_->pipe_fds)
    if (fd >= 0) ::close(fd);
}

bool InterruptWatcher::valid() const { return saved_->installed; }

bool InterruptWatcher::interrupted() const { return g_interrupted.load(); }

bool InterruptWatcher::wait(std::chrono::milliseconds timeout) const {
  if (interrupted()) return true;
  if (saved_->pipe_fds[0] < 0) return false;
  struct pollfd pfd {saved_->pipe_fds[0], POLLIN, 0};
  int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (ready > 0) {
    char buffer[16];
    while (::read(saved_->pipe_fds[0], buffer, sizeof buffer) > 0) {
    }
  }
  return interrupted();
}

}  // namespace nk::cli
