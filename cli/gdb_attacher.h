#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "cli/debug_client.h"
#include "cli/gdb_process.h"
#include "base/result.h"

namespace nk::cli {

// The debug console's `gdb [FUNCTION]`: checks that ptrace will let this
// user attach (and explains Yama's refusals), starts gdb held, has the app
// accept it as its tracer through the daemon, then lets it run.
// On a terminal, gdb takes the terminal until the user quits it. In a
// script (--batch), gdb runs on its MI interface: the console waits for the
// breakpoint to be hit, reports where, and detaches, so the program runs on.
class GdbAttacher {
 public:
  GdbAttacher(DebugClient& client, pid_t target, bool interactive, std::chrono::seconds breakpoint_timeout);

  Result<std::string> run(const std::string& function);

 private:
  Result<std::string> scripted(const std::string& function);
  Result<GdbProcess> startAllowed(GdbMode mode, const std::string& function);

  DebugClient& client_;
  pid_t target_;
  bool interactive_;
  std::chrono::seconds breakpoint_timeout_;
};

}  // namespace nk::cli
