#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace nk::test {

// mpirun in a process group of its own, so that every process it starts
// can be ended with it; its stdout and stderr in files. Open MPI is told
// it may run as root, oversubscribed, over shared memory. Ended (kill())
// when destroyed.
class MpiJob {
 public:
  MpiJob() = default;
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;
  ~MpiJob() { kill(); }

  // argv[0] is looked up in PATH. Makes this process the subreaper of the
  // ranks, so that ranks that outlive mpirun are reaped here.
  bool start(const std::vector<std::string>& argv, const std::filesystem::path& out,
             const std::filesystem::path& err);

  // The exit code (128 + signal when killed); -1 if still running after `timeout`.
  int wait(std::chrono::milliseconds timeout);

  // mpirun, its process group, and every process below it (the ranks, even
  // if they moved to a group of their own): SIGTERM to mpirun first, so that
  // it ends its ranks itself, then SIGKILL.
  void kill();

  // -1 once it ended (wait() saw it) or was killed.
  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::filesystem::path out_, err_;
};

}  // namespace nk::test
