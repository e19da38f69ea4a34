#pragma once

// Real processes for integration tests: the daemon and the CLI, started as
// the installed programs would be, optionally as another user.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nk::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a program to completion, capturing its output. With `as_uid`, drops
// to that uid/gid (and no supplementary groups) first; needs root.
ProcessResult runProgram(const std::vector<std::string>& argv, std::optional<uid_t> as_uid = std::nullopt,
                         std::chrono::seconds timeout = std::chrono::seconds(30));

// Paths of the built programs, from the environment the meson test sets.
std::string daemonPath();
std::string cliPath();

// A scratch directory every local user can traverse (the socket lives
// there, and tests connect as other users too).
std::filesystem::path makeSharedTempDir(const std::string& tag);

class DaemonProcess {
 public:
  DaemonProcess() = default;
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  ~DaemonProcess();

  // Starts `nodekeeperd --emulate [profile] --state-dir DIR --socket DIR/nk.sock
  // extra...` and waits until the socket appears. Returns false (with the
  // daemon's stderr in lastError()) if it exits or does not get ready.
  bool start(const std::filesystem::path& dir, const std::vector<std::string>& extra = {},
             const std::string& profile = "");
  // SIGTERM and wait; returns the exit code.
  int stop();
  // SIGKILL and wait: a crash.
  void kill9();

  pid_t pid() const { return pid_; }
  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& stateDir() const { return dir_; }
  std::filesystem::path sysfs() const { return dir_ / "sysfs" / "sys"; }
  std::string lastError() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  std::filesystem::path stderr_path_;
};

// A program running in the background (an OpenMP app under the daemon),
// its stdout and stderr in files; killed if still running when destroyed.
class BackgroundProgram {
 public:
  BackgroundProgram() = default;
  BackgroundProgram(const BackgroundProgram&) = delete;
  BackgroundProgram& operator=(const BackgroundProgram&) = delete;
  ~BackgroundProgram();

  // argv[0] is a path. An empty `err` leaves stderr where the caller's goes.
  bool start(const std::vector<std::string>& argv, const std::filesystem::path& out,
             const std::filesystem::path& err = {});
  // The exit code (128 + signal when killed); -1 if it is still running
  // after `timeout`.
  int wait(std::chrono::milliseconds timeout);
  // SIGKILL and reap, if it still runs.
  void kill();

  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_, err_;
};

// The variable's value, or "" when it is not set.
std::string envOr(const char* name);

std::string readFile(const std::filesystem::path& path);
std::string readTrimmed(const std::filesystem::path& path);

}  // namespace nk::test
