#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

namespace nk::test {

// Every host CPU kept busy, as on a compute node running a job: plain
// spinning child processes, `per_cpu` times the host's online CPUs, started
// when constructed and killed (and reaped) when destroyed. The children form
// one process group and die with the thread that created them
// (PR_SET_PDEATHSIG), so a test that fails, throws or is killed leaves none
// behind. Create it on a thread that outlives it (the test's own).
class HostLoad {
 public:
  explicit HostLoad(double per_cpu);
  HostLoad(const HostLoad&) = delete;
  HostLoad& operator=(const HostLoad&) = delete;
  ~HostLoad();

  // The spinning processes, all in processGroup().
  const std::vector<pid_t>& pids() const { return pids_; }
  pid_t processGroup() const { return group_; }

  // SIGKILL the group and reap every child; the destructor does it too.
  void stop();

  // The load the environment asks for (NK_TEST_HOST_LOAD=N, N times the
  // CPUs; unset, empty or 0: none), shared by everyone holding it in this
  // process: the first holder starts it, the last one's release stops it.
  // Tests that start several daemons load the host once, not once each.
  static std::shared_ptr<HostLoad> fromEnvironment();

 private:
  std::vector<pid_t> pids_;
  pid_t group_ = -1;
};

}  // namespace nk::test
