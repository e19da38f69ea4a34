#include "testlib/host_load.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testlib/wait_for.h"

namespace nk::test {
namespace {

// The process's state letter and user CPU ticks from /proc/PID/stat; state
// 0 when the process is gone.
struct ProcStat {
  char state = 0;
  long utime_ticks = 0;
};

ProcStat procStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 2));
  ProcStat stat;
  std::string field;
  for (int i = 3; fields >> field; ++i) {
    if (i == 3) stat.state = field[0];
    if (i == 14) {
      stat.utime_ticks = std::stol(field);
      break;
    }
  }
  return stat;
}

// Gone, or a zombie waiting for a reaper that is not us: either way it
// runs no more.
bool notRunning(pid_t pid) {
  char state = procStat(pid).state;
  return state == 0 || state == 'Z' || state == 'X';
}

long cpus() { return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)); }

TEST(HostLoad, StartsItsMultipleOfTheCpusInOneProcessGroup) {
  HostLoad load(2);
  ASSERT_EQ(static_cast<long>(load.pids().size()), 2 * cpus());
  for (pid_t pid : load.pids()) {
    EXPECT_EQ(kill(pid, 0), 0) << pid;
    // Child and parent both call setpgid; whichever runs first, the group is set.
    EXPECT_TRUE(waitFor([&] { return getpgid(pid) == load.processGroup(); })) << pid;
  }
}

TEST(HostLoad, ItsChildrenReallyUseTheCpu) {
  HostLoad load(1);
  ASSERT_FALSE(load.pids().empty());
  auto utime = [&] {
    long sum = 0;
    for (pid_t pid : load.pids()) sum += procStat(pid).utime_ticks;
    return sum;
  };
  long before = utime();
  // Spinning, each child gains a tick every 10 ms it runs; generous
  // timeout, no assertion on how fast.
  EXPECT_TRUE(waitFor([&] { return utime() > before + 10 * static_cast<long>(load.pids().size()); },
                      std::chrono::seconds(30)))
      << "user CPU ticks of the load: " << before << " -> " << utime();
}

TEST(HostLoad, LeavesNoProcessWhenDestroyed) {
  std::vector<pid_t> pids;
  pid_t group = -1;
  {
    HostLoad load(1);
    pids = load.pids();
    group = load.processGroup();
    ASSERT_FALSE(pids.empty());
  }
  for (pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(kill(pid, 0), -1) << pid << " still exists";
    EXPECT_EQ(errno, ESRCH);
  }
  EXPECT_EQ(kill(-group, 0), -1) << "process group " << group << " still has members";
}

TEST(HostLoad, StopEndsTheLoadBeforeDestruction) {
  HostLoad load(1);
  std::vector<pid_t> pids = load.pids();
  load.stop();
  EXPECT_TRUE(load.pids().empty());
  for (pid_t pid : pids) EXPECT_NE(kill(pid, 0), 0) << pid;
}

TEST(HostLoad, ChildrenDieWithAHolderThatNeverRunsItsDestructor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t holder = fork();
  if (holder == 0) {
    close(fds[0]);
    HostLoad load(1);
    for (pid_t pid : load.pids()) (void)!write(fds[1], &pid, sizeof pid);
    close(fds[1]);
    // A crashed test: no destructor runs.
    raise(SIGKILL);
  }
  ASSERT_GT(holder, 0);
  close(fds[1]);
  std::vector<pid_t> pids;
  pid_t pid;
  while (static_cast<long>(pids.size()) < cpus() && read(fds[0], &pid, sizeof pid) == sizeof pid) pids.push_back(pid);
  close(fds[0]);
  waitpid(holder, nullptr, 0);
  ASSERT_EQ(static_cast<long>(pids.size()), cpus());
  for (pid_t child : pids)
    EXPECT_TRUE(waitFor([&] { return notRunning(child); }, std::chrono::seconds(10))) << child << " still runs";
}

TEST(HostLoad, TheEnvironmentAsksForOneSharedLoadOrNone) {
  unsetenv("NK_TEST_HOST_LOAD");
  EXPECT_EQ(HostLoad::fromEnvironment(), nullptr);
  setenv("NK_TEST_HOST_LOAD", "0", 1);
  EXPECT_EQ(HostLoad::fromEnvironment(), nullptr);
  setenv("NK_TEST_HOST_LOAD", "1", 1);
  auto first = HostLoad::fromEnvironment();
  auto second = HostLoad::fromEnvironment();
  unsetenv("NK_TEST_HOST_LOAD");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);
  EXPECT_EQ(static_cast<long>(first->pids().size()), cpus());
  std::vector<pid_t> pids = first->pids();
  first.reset();
  second.reset();
  for (pid_t child : pids) EXPECT_NE(kill(child, 0), 0) << child << " outlived the last holder";
}

}  // namespace
}  // namespace nk::test
