#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nk {

enum class GdbMode {
  // For the CLI: gdb shares the caller's terminal and process group; the
  // caller waits for it. SIGINT and SIGQUIT are ignored in the caller from
  // start() until gdb is reaped, so that Ctrl-C interrupts the debuggee
  // through gdb and does not kill the CLI underneath it.
  kTerminal,
  // For the daemon: `gdb --interpreter=mi3` in its own session on a fresh
  // pseudo-terminal; the slave's path is the endpoint reported to a
  // frontend, the master stays with this object (masterFd()).
  kMi,
};

// Credentials gdb runs with (MI mode).
struct GdbCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups; empty drops them all
};

struct GdbOptions {
  GdbMode mode = GdbMode::kTerminal;
  // A name is looked up in PATH, a path (anything with '/') is taken as is.
  std::string gdb = "gdb";
  pid_t target = 0;
  // Function to stop in: `-ex "break FUNCTION" -ex continue`. Empty: gdb
  // stops the target where attach found it.
  std::string breakpoint;
  // The daemon runs as root; handing a frontend a root gdb would give
  // whoever holds the endpoint root's powers (gdb runs shell commands, reads
  // and writes any file and any process's memory). So in MI mode the daemon
  // sets this to the app owner's credentials: the child drops to them
  // (setgroups, setgid, setuid, in that order, while it still may) before
  // exec, and the pty slave is chowned to the uid so that user can open it.
  // HOME, USER and LOGNAME follow (gdb reads ~/.gdbinit). Dropping needs
  // root; unset keeps the caller's credentials (the CLI, which runs as the
  // user already).
  std::optional<GdbCredentials> run_as;
  // How long the destructor (and terminate()) lets gdb detach before the
  // next, blunter step (SIGTERM, then SIGKILL). A killed gdb leaves its breakpoint traps in the
  // debuggee, which then dies of SIGTRAP; a terminated one detaches cleanly.
  std::chrono::milliseconds detach_grace{3000};
};

// gdb attached to a process, with a hold between fork and exec:
//
//   auto gdb = GdbProcess::start(options);   // forks; the child waits
//   askAppToCall_prctl_PR_SET_PTRACER(gdb->pid());  // pid stays gdb's
//   gdb->release();                          // exec gdb, or why it failed
//
// The hold exists for Yama scope 1, where the app must name its tracer
// before the tracer attaches, and the tracer's pid is only known after fork.
// The destructor ends a gdb still running (detaching first, see
// terminate()) and reaps it, and ends a child never released.
class GdbProcess {
 public:
  // The argument vector gdb is run with (argv[0] is options.gdb as given).
  static std::vector<std::string> arguments(const GdbOptions& options);
  // Where `gdb` would be executed from, or a kFailedPrecondition error that
  // says gdb is not installed.
  static Result<std::string> locate(std::string_view gdb);

  // Checks the options and that gdb is there, opens the pty (MI mode),
  // forks. The child is held until release().
  static Result<GdbProcess> start(const GdbOptions& options);

  GdbProcess(GdbProcess&& other) noexcept;
  GdbProcess& operator=(GdbProcess&& other) noexcept;
  GdbProcess(const GdbProcess&) = delete;
  GdbProcess& operator=(const GdbProcess&) = delete;
  ~GdbProcess();

  // The child's pid, which exec keeps: gdb's pid after release(). -1 once
  // reaped.
  pid_t pid() const { return pid_; }
  GdbMode mode() const { return mode_; }
  // MI mode: the pty slave gdb talks MI on (e.g. "/dev/pts/7"); empty in
  // terminal mode.
  const std::string& endpoint() const { return endpoint_; }
  // MI mode: the pty master, owned by this object; -1 in terminal mode.
  int masterFd() const { return master_fd_; }

  // Lets the child exec gdb; returns once exec has happened or failed (then
  // with the reason, and the child reaped).
  Status release();

  // Blocks until gdb exits: its exit code, or 128 + signal number if a
  // signal ended it (as shells report).
  Result<int> wait();
  // Like wait() without blocking: nothing while gdb still runs.
  Result<std::optional<int>> tryWait();
  // SIGINT to gdb: stops a running debuggee the way Ctrl-C would. A
  // frontend on the MI channel cannot signal gdb, and -exec-interrupt only
  // works with mi-async on, so the daemon needs this for "pause".
  Status interrupt();
  // Has gdb detach and quit (MI mode: interrupt, -target-detach, -gdb-exit;
  // terminal mode: SIGTERM), each step given detach_grace, SIGKILL last;
  // returns once gdb is reaped. Idempotent.
  void terminate();

 private:
  GdbProcess() = default;
  bool reapWithin(std::chrono::milliseconds grace);
  void reaped();
  void closeAll();

  GdbMode mode_ = GdbMode::kTerminal;
  pid_t pid_ = -1;
  int hold_fd_ = -1;       // write end the child blocks on until release()
  int exec_error_fd_ = -1; // CLOEXEC pipe: EOF means exec succeeded
  int master_fd_ = -1;
  std::string endpoint_;
  std::string exec_path_;                   // for error messages
  std::optional<GdbCredentials> run_as_;    // for error messages
  std::chrono::milliseconds detach_grace_{3000};
  // Terminal mode: the caller's dispositions, restored when gdb is reaped.
  std::optional<struct sigaction> saved_sigint_;
  std::optional<struct sigaction> saved_sigquit_;
};

}  // namespace nk
