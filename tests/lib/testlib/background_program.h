#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace nk::test {

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

}  // namespace nk::test
