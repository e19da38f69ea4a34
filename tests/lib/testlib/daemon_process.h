#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "testlib/host_load.h"
#include "testlib/test_env.h"

namespace nk::test {

// A real nodekeeperd on an emulated node, for integration tests and
// benchmarks: started in a state directory with its socket there, waited
// for until the socket appears, stopped (SIGTERM) when destroyed. With
// NK_TEST_HOST_LOAD=N set (`./run soak`) it holds the shared HostLoad from
// its first start until destroyed, so every daemon test runs on a busy host.
class DaemonProcess {
 public:
  // `program` is a path; tests name a missing or fake one to test this class.
  explicit DaemonProcess(std::string program = daemonPath()) : program_(std::move(program)) {}
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;
  ~DaemonProcess();

  // Starts `nodekeeperd --emulate [profile] --state-dir DIR --socket DIR/nk.sock
  // --config /dev/null extra...` and waits until the socket appears. Returns
  // false, with the reason in lastError(), if the program cannot run, exits
  // first or has no socket after 20 s.
  bool start(const std::filesystem::path& dir, const std::vector<std::string>& extra = {},
             const std::string& profile = "");
  // SIGTERM and wait; returns the exit code (-1 if not running; SIGKILL
  // after 10 s).
  int stop();
  // SIGKILL and wait: a crash.
  void kill9();

  pid_t pid() const { return pid_; }
  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& stateDir() const { return dir_; }
  std::filesystem::path sysfs() const { return dir_ / "sysfs" / "sys"; }
  // The daemon's stderr (its log), for tests and benchmarks that read it.
  const std::filesystem::path& stderrPath() const { return stderr_path_; }
  // Why the last start failed (a line, when it did), then the daemon's stderr.
  std::string lastError() const;

 private:
  // Waits for the socket; false (with start_failure_ set) otherwise.
  bool waitForSocket();

  std::string program_;
  pid_t pid_ = -1;
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  std::filesystem::path stderr_path_;
  std::string start_failure_;
  std::shared_ptr<HostLoad> host_load_;
};

}  // namespace nk::test
