#include "testlib/host_load.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>

#include "testlib/test_env.h"

namespace nk::test {

namespace {

// Runs in the forked child of a possibly multithreaded parent: only
// async-signal-safe calls until the loop.
[[noreturn]] void spin(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect.
  if (getppid() != parent) _exit(0);
  // Holding no pipe or file of the test's: a reader waiting for EOF (the
  // test's own output, a daemon's stdout) must not wait for the load.
  int null_fd = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) dup2(null_fd, fd);
  close_range(3, ~0U, 0);
  volatile unsigned long counter = 0;
  for (;;) counter = counter + 1;
}

}  // namespace

HostLoad::HostLoad(double per_cpu) {
  long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  auto count = static_cast<long>(std::lround(per_cpu * static_cast<double>(cpus)));
  pid_t parent = getpid();
  for (long i = 0; i < count; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      // The first child leads the group; the rest join it.
      setpgid(0, group_ > 0 ? group_ : 0);
      spin(parent);
    }
    if (pid < 0) break;
    // Also from the parent, so the group exists before the next fork or a kill.
    setpgid(pid, group_ > 0 ? group_ : pid);
    if (group_ < 0) group_ = pid;
    pids_.push_back(pid);
  }
}

HostLoad::~HostLoad() { stop(); }

void HostLoad::stop() {
  if (group_ > 0) kill(-group_, SIGKILL);
  // A child that had not joined the group yet is killed by pid.
  for (pid_t pid : pids_) kill(pid, SIGKILL);
  for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  pids_.clear();
  group_ = -1;
}

std::shared_ptr<HostLoad> HostLoad::fromEnvironment() {
  static std::mutex mutex;
  static std::weak_ptr<HostLoad> shared;
  std::string value = envOr("NK_TEST_HOST_LOAD");
  double per_cpu = value.empty() ? 0.0 : std::atof(value.c_str());
  if (per_cpu <= 0) return nullptr;
  std::lock_guard lock(mutex);
  auto load = shared.lock();
  if (!load) {
    load = std::make_shared<HostLoad>(per_cpu);
    shared = load;
  }
  return load;
}

}  // namespace nk::test
