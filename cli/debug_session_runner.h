#pragma once

#include <sys/types.h>

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/program_output_forwarder.h"
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
  // Where a started program's output and input go: -1 keeps the CLI's.
  struct ProgramIo {
    int output = -1;  // its stdout and stderr
    int input = -1;
  };
  Result<pid_t> launch(const std::vector<std::string>& program, bool break_at_start, ProgramIo io);
  // A started program's stdout and stderr: to --program-output FILE; else,
  // when this console prints JSON, to our stderr with each line prefixed
  // "program: ", so that stdout holds only the JSON lines; else shared.
  // Its stdin is /dev/null when the console reads its commands there.
  Result<pid_t> start(const Invocation& invocation);
  // The program has ended (or was killed): its last output is passed on.
  void programEnded();
  Result<uint64_t> sessionOf(TasksClient& tasks, pid_t pid);
  int console(uint64_t session, pid_t target_pid, const Invocation& invocation);
  int fail(const std::string& message);

  std::ostream& out_;
  std::ostream& err_;
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  bool json_;
  pid_t launched_ = -1;
  std::unique_ptr<ProgramOutputForwarder> forwarder_;
};

}  // namespace nk::cli
