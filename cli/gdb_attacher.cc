#include "cli/gdb_attacher.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "cli/gdb_process.h"
#include "cli/ptrace_access.h"

namespace v1 = nodekeeper::v1;

namespace nk::cli {

GdbAttacher::GdbAttacher(DebugClient& client, pid_t target, bool interactive, std::chrono::seconds breakpoint_timeout)
    : client_(client), target_(target), interactive_(interactive), breakpoint_timeout_(breakpoint_timeout) {}

namespace {

// Tells the app (through the daemon) to accept `tracer`.
Status allowTracer(DebugClient& client, pid_t tracer, const std::string& function) {
  v1::DebugCommand command;
  command.mutable_gdb()->set_tracer_pid(tracer);
  command.mutable_gdb()->set_function(function);
  auto reply = client.call(command, std::chrono::seconds(10));
  if (!reply) return reply.error();
  if (!reply->ack().ok()) return failedPrecondition("gdb: " + reply->ack().message());
  return {};
}

}  // namespace

Result<std::string> GdbAttacher::run(const std::string& function) {
  if (target_ <= 0) return failedPrecondition("gdb: the session's program is not running");
  PtraceAccess access;
  auto self = access.currentProcess();
  if (!self) return self.error();
  // The app names our gdb as its tracer, so Yama's scope 1 lets it in.
  PtraceDecision decision = access.check(*self, target_, true);
  if (!decision.mayAttach()) return failedPrecondition("gdb: " + decision.explanation);
  if (!interactive_) return scripted(function);

  auto gdb = startAllowed(GdbMode::kTerminal, function);
  if (!gdb) return gdb.error();
  auto code = gdb->wait();
  if (!code) return code.error();
  return "gdb exited with status " + std::to_string(*code);
}

// gdb held before exec while the app is told to accept its pid, then let go.
Result<GdbProcess> GdbAttacher::startAllowed(GdbMode mode, const std::string& function) {
  GdbOptions options;
  options.mode = mode;
  options.target = target_;
  options.breakpoint = function;
  auto gdb = GdbProcess::start(options);
  if (!gdb) return gdb.error();
  if (Status s = allowTracer(client_, gdb->pid(), function); !s) return s.error();
  if (Status s = gdb->release(); !s) return s.error();
  return std::move(*gdb);
}

Result<std::string> GdbAttacher::scripted(const std::string& function) {
  auto gdb = startAllowed(GdbMode::kMi, function);
  if (!gdb) return gdb.error();
  // With a breakpoint: its hit; without: the attach's stop.
  const std::regex hit = function.empty() ? std::regex(R"(\*stopped)")
                                          : std::regex(R"re(\*stopped,reason="breakpoint-hit".*func="([^"]+)")re");
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + breakpoint_timeout_;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{gdb->masterFd(), POLLIN, 0};
    int ready = poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = read(gdb->masterFd(), buffer, sizeof buffer);
    if (n <= 0) break;  // gdb went away
    output.append(buffer, static_cast<size_t>(n));
    std::smatch m;
    if (std::regex_search(output, m, hit)) {
      std::string where = function.empty() ? "attached to pid " + std::to_string(target_)
                                           : "breakpoint on " + function + " hit in " + m[1].str() + " (pid " +
                                                 std::to_string(target_) + ")";
      gdb->terminate();  // detaches: the program runs on
      return where + "; gdb detached";
    }
    if (output.find("^error") != std::string::npos && output.find("ptrace") != std::string::npos) break;
  }
  gdb->terminate();
  std::string tail = output.size() > 400 ? output.substr(output.size() - 400) : output;
  std::string what = function.empty() ? std::string("did not attach") : "the breakpoint on " + function + " was not hit";
  return unavailable("gdb: " + what + " within " + std::to_string(breakpoint_timeout_.count()) + " s; gdb said: " + tail);
}

}  // namespace nk::cli
