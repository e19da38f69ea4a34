#include "testlib/mpi_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "testlib/files.h"
#include "testlib/processes.h"

namespace nk::test {

using namespace std::chrono_literals;

bool MpiJob::start(const std::vector<std::string>& argv, const std::filesystem::path& out,
                   const std::filesystem::path& err) {
  out_ = out;
  err_ = err;
  exit_code_ = -1;
  // Ranks that outlive mpirun become this process's children, to reap.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_ = ::fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    ::setpgid(0, 0);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_btl", "self,vader", 1);
    ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    // Open MPI's session directory beside the job's output, not the shared
    // /tmp/ompi.HOST.UID: two root jobs at once (a soak beside the suite)
    // collided there ("mkdir ... File exists").
    ::setenv("OMPI_MCA_orte_tmpdir_base", out.parent_path().c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    _exit(127);
  }
  ::setpgid(pid_, pid_);
  return true;
}

int MpiJob::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(20ms);
  }
}

void MpiJob::kill() {
  if (pid_ <= 0) return;
  // wait() clears pid_ once mpirun is reaped: the group is kept here, so
  // that the group kill below never becomes kill(1, ...).
  const pid_t group = pid_;
  std::vector<pid_t> below = descendantsOf(group);
  ::kill(group, SIGTERM);
  if (wait(3000ms) < 0) {
    ::kill(-group, SIGKILL);
    ::kill(group, SIGKILL);
    wait(10000ms);
  }
  ::kill(-group, SIGKILL);  // a rank still in the group
  for (pid_t p : below)
    if (cmdlineOf(p).find("mpi_check") != std::string::npos) ::kill(p, SIGKILL);
  // mpirun may have ended before its ranks: this process is their
  // subreaper (see start()), so they are reaped here, not left as zombies.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  for (pid_t p : below)
    while (::waitpid(p, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
  pid_ = -1;
}

std::string MpiJob::out() const { return readFile(out_); }
std::string MpiJob::err() const { return readFile(err_); }

}  // namespace nk::test
