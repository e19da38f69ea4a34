#include "testlib/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "testlib/files.h"

namespace nk::test {

namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(20);

int exitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop();
}

bool DaemonProcess::start(const std::filesystem::path& dir, const std::vector<std::string>& extra,
                          const std::string& profile) {
  dir_ = dir;
  socket_ = dir / "nk.sock";
  stderr_path_ = dir / ("daemon-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".log");
  start_failure_.clear();
  if (!host_load_) host_load_ = HostLoad::fromEnvironment();
  // Checked here so the reason reaches the test; the child could only exit 127.
  if (::access(program_.c_str(), X_OK) != 0) {
    start_failure_ = "cannot run the daemon " + program_ + ": " + std::strerror(errno) + "\n";
    return false;
  }
  std::vector<std::string> argv = {program_, "--emulate"};
  if (!profile.empty()) argv.push_back(profile);
  argv.insert(argv.end(), {"--state-dir", dir.string(), "--socket", socket_.string(), "--config", "/dev/null"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A daemon killed earlier leaves its socket behind; waiting for the path
  // to appear must see the new daemon's socket, not that one.
  std::error_code ec;
  std::filesystem::remove(socket_, ec);
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  if (pid_ < 0) {
    start_failure_ = std::string("fork: ") + std::strerror(errno) + "\n";
    return false;
  }
  return waitForSocket();
}

bool DaemonProcess::waitForSocket() {
  auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(socket_)) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      start_failure_ = "the daemon " + program_ + " exited with " + std::to_string(exitCodeOf(status)) +
                       " before its socket " + socket_.string() + " appeared\n";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  start_failure_ = "the daemon " + program_ + " has no socket at " + socket_.string() + " after " +
                   std::to_string(kReadyTimeout.count()) + " s\n";
  return false;
}

int DaemonProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return exitCodeOf(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill9();
  return -1;
}

void DaemonProcess::kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string DaemonProcess::lastError() const { return start_failure_ + readFile(stderr_path_); }

}  // namespace nk::test
