#pragma once

#include <sys/types.h>

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/tasks_client.h"
#include "base/result.h"

namespace nk::cli {

// `nodekeeper debug`: finds or starts the program, attaches a DebugConsole
// to its session and feeds it lines (typed, or from --batch); a recording
// or an ended session is replayed instead.
class DebugSessionRunner {
 public:
  DebugSessionRunner(std::ostream& out, std::ostream& err, std::string socket_path, std::chrono::milliseconds timeout,
                     bool json);

  int run(const Invocation& invocation, TasksClient& tasks);

 private:
  Result<pid_t> launch(const std::vector<std::string>& program, bool break_at_start);
  Result<uint64_t> sessionOf(TasksClient& tasks, pid_t pid);
  int console(uint64_t session, pid_t target_pid, const Invocation& invocation);
  int fail(const std::string& message);

  std::ostream& out_;
  std::ostream& err_;
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  bool json_;
  pid_t launched_ = -1;
};

}  // namespace nk::cli
