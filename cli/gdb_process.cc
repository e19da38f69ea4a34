#include "cli/gdb_process.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace nk {
namespace {

// What the child reports through the exec-error pipe when it cannot exec:
// the step that failed and its errno. Fixed-size so the child writes it
// with one write() and no allocation (it is a fork of a threaded process).
enum class ChildStep : int { kHold, kSession, kTerminal, kSetgroups, kSetgid, kSetuid, kExec };
struct ChildFailure {
  ChildStep step;
  int error;
};

std::string errnoText(int error) { return std::strerror(error); }

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool isExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Pointers into `strings` for execve; `strings` must outlive them.
std::vector<char*> cStrings(std::span<std::string> strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The caller's environment, with the identity variables of `run_as` when
// gdb changes user, so that gdb reads that user's ~/.gdbinit and not root's.
std::vector<std::string> childEnvironment(const std::optional<GdbCredentials>& run_as) {
  std::vector<std::string> env;
  std::vector<std::string> replaced;
  if (run_as) {
    std::string home = "/", name = std::to_string(run_as->uid);
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(run_as->uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      home = found->pw_dir;
      name = found->pw_name;
    }
    replaced = {"HOME=" + home, "USER=" + name, "LOGNAME=" + name};
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    bool overridden = false;
    for (auto& r : replaced) {
      if (entry.substr(0, entry.find('=') + 1) == std::string_view(r).substr(0, r.find('=') + 1)) overridden = true;
    }
    if (!overridden) env.emplace_back(entry);
  }
  env.insert(env.end(), replaced.begin(), replaced.end());
  return env;
}

std::string describeFailure(const ChildFailure& failure, const std::optional<GdbCredentials>& run_as,
                            const std::string& path) {
  switch (failure.step) {
    case ChildStep::kHold: return "the gdb child could not wait for release: " + errnoText(failure.error);
    case ChildStep::kSession: return "setsid for gdb failed: " + errnoText(failure.error);
    case ChildStep::kTerminal: return "making the pty gdb's terminal failed: " + errnoText(failure.error);
    case ChildStep::kSetgroups:
      return "dropping gdb's supplementary groups failed (only root can): " + errnoText(failure.error);
    case ChildStep::kSetgid: return "setgid(" + std::to_string(run_as ? run_as->gid : 0) + ") for gdb failed: " + errnoText(failure.error);
    case ChildStep::kSetuid: return "setuid(" + std::to_string(run_as ? run_as->uid : 0) + ") for gdb failed: " + errnoText(failure.error);
    case ChildStep::kExec: break;
  }
  if (failure.error == ENOENT) return "gdb is not installed: " + path + " does not exist (apt-get install gdb)";
  return "cannot execute " + path + ": " + errnoText(failure.error);
}

[[noreturn]] void childFail(int fd, ChildStep step, int error) {
  ChildFailure failure{step, error};
  [[maybe_unused]] auto n = ::write(fd, &failure, sizeof failure);
  ::_exit(127);
}

// Between fork and exec: async-signal-safe calls only.
[[noreturn]] void runChild(const GdbOptions& options, int hold_fd, int error_fd, int slave_fd, const char* path,
                           char* const* argv, char* const* envp, int max_fd) {
  // Ignored signals survive exec; the terminal-mode parent ignores SIGINT
  // and a daemon may ignore SIGPIPE or block what it handles elsewhere, but
  // gdb expects the defaults.
  for (int sig : {SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGHUP, SIGCHLD, SIGTSTP, SIGTTIN, SIGTTOU}) {
    ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  char byte = 0;
  ssize_t n;
  do n = ::read(hold_fd, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n < 0) childFail(error_fd, ChildStep::kHold, errno);
  if (n == 0) ::_exit(0);  // the parent gave up on us without releasing
  ::close(hold_fd);

  if (slave_fd >= 0) {
    // Its own session with the pty as controlling terminal: the daemon's
    // signals and terminal (if any) are not gdb's, and gdb gets a real tty.
    if (::setsid() < 0) childFail(error_fd, ChildStep::kSession, errno);
    if (::ioctl(slave_fd, TIOCSCTTY, 0) < 0) childFail(error_fd, ChildStep::kTerminal, errno);
    // A caller running with 0-2 closed may have got the slave as one of
    // them; dup2 onto itself would keep its CLOEXEC and lose it at exec.
    if (slave_fd <= 2 && (slave_fd = ::fcntl(slave_fd, F_DUPFD_CLOEXEC, 3)) < 0) {
      childFail(error_fd, ChildStep::kTerminal, errno);
    }
    for (int fd = 0; fd <= 2; ++fd) {
      if (::dup2(slave_fd, fd) < 0) childFail(error_fd, ChildStep::kTerminal, errno);
    }
    if (slave_fd > 2) ::close(slave_fd);
  }

  if (options.run_as) {
    // Groups and gid first: after setuid there is no privilege left to
    // change them.
    const auto& creds = *options.run_as;
    if (::setgroups(creds.groups.size(), creds.groups.data()) < 0) childFail(error_fd, ChildStep::kSetgroups, errno);
    if (::setgid(creds.gid) < 0) childFail(error_fd, ChildStep::kSetgid, errno);
    if (::setuid(creds.uid) < 0) childFail(error_fd, ChildStep::kSetuid, errno);
    // A half-dropped process must never run gdb.
    if (creds.uid != 0 && ::setuid(0) == 0) childFail(error_fd, ChildStep::kSetuid, EPERM);
  }

  // The daemon's sockets and files are not gdb's business. error_fd is
  // CLOEXEC already and must stay open up to exec.
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
    for (int fd = 3; fd < max_fd; ++fd) {
      if (fd != error_fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  ::execve(path, argv, envp);
  childFail(error_fd, ChildStep::kExec, errno);
}

}  // namespace

std::vector<std::string> GdbProcess::arguments(const GdbOptions& options) {
  std::vector<std::string> args{options.gdb, "-q"};
  if (options.mode == GdbMode::kMi) {
    // Nobody answers a question on the MI channel: a y/n query (a
    // breakpoint on an unknown function, debuginfod) would hang the session
    // at its start. Pending breakpoints also cover functions in libraries
    // the app has yet to dlopen; a misspelt one is reported on the MI
    // stream ("Function ... not defined") and simply never hits.
    args.insert(args.end(), {"--interpreter=mi3", "-iex", "set confirm off", "-iex", "set breakpoint pending on"});
  }
  args.insert(args.end(), {"-p", std::to_string(options.target)});
  if (!options.breakpoint.empty()) {
    args.insert(args.end(), {"-ex", "break " + options.breakpoint, "-ex", "continue"});
  }
  return args;
}

Result<std::string> GdbProcess::locate(std::string_view gdb) {
  if (gdb.empty()) return invalidArgument("no gdb given");
  if (gdb.find('/') != std::string_view::npos) {
    std::string path(gdb);
    if (isExecutable(path)) return path;
    return failedPrecondition("gdb is not installed: " + path + " is not an executable file (apt-get install gdb)");
  }
  const char* env_path = std::getenv("PATH");
  std::string_view dirs = env_path && *env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::string path = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + std::string(gdb);
    if (isExecutable(path)) return path;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return failedPrecondition("gdb is not installed: no " + std::string(gdb) + " in PATH (apt-get install gdb)");
}

Result<GdbProcess> GdbProcess::start(const GdbOptions& options) {
  if (options.target <= 0) return invalidArgument("gdb needs a process to attach to, not pid " + std::to_string(options.target));
  for (unsigned char c : options.breakpoint) {
    // One -ex is one gdb command; a newline would smuggle in another.
    if (c < 0x20 || c == 0x7f) return invalidArgument("breakpoint location holds a control character");
  }
  auto path = locate(options.gdb);
  if (!path) return path.error();

  // Everything the child needs is built here: after fork it may not allocate.
  auto args = arguments(options);
  auto env = childEnvironment(options.run_as);
  auto argv = cStrings(args);
  auto envp = cStrings(env);
  long open_max = ::sysconf(_SC_OPEN_MAX);
  int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;

  GdbProcess gdb;
  gdb.mode_ = options.mode;
  gdb.detach_grace_ = options.detach_grace;
  int slave_fd = -1;
  if (options.mode == GdbMode::kMi) {
    if (::openpty(&gdb.master_fd_, &slave_fd, nullptr, nullptr, nullptr) < 0) {
      return internalError("openpty for gdb failed: " + errnoText(errno));
    }
    ::fcntl(gdb.master_fd_, F_SETFD, FD_CLOEXEC);
    ::fcntl(slave_fd, F_SETFD, FD_CLOEXEC);  // the child dup2s it onto 0-2
    char name[128];
    if (::ttyname_r(slave_fd, name, sizeof name) != 0) {
      closeFd(slave_fd);
      return internalError("cannot name gdb's pty: " + errnoText(errno));
    }
    gdb.endpoint_ = name;
    // MI is a byte protocol: no echo of what the frontend writes, no CR
    // added to gdb's newlines, no line editing or signal characters.
    struct termios mode {};
    if (::tcgetattr(slave_fd, &mode) == 0) {
      ::cfmakeraw(&mode);
      ::tcsetattr(slave_fd, TCSANOW, &mode);
    }
    if (options.run_as && ::fchown(slave_fd, options.run_as->uid, static_cast<gid_t>(-1)) < 0) {
      int error = errno;
      closeFd(slave_fd);
      return permissionDenied("cannot give gdb's pty " + gdb.endpoint_ + " to uid " + std::to_string(options.run_as->uid) +
                              ": " + errnoText(error));
    }
  }

  int hold[2], exec_error[2];
  if (::pipe2(hold, O_CLOEXEC) < 0) {
    closeFd(slave_fd);
    return internalError("pipe for gdb failed: " + errnoText(errno));
  }
  if (::pipe2(exec_error, O_CLOEXEC) < 0) {
    int error = errno;
    closeFd(slave_fd);
    ::close(hold[0]);
    ::close(hold[1]);
    return internalError("pipe for gdb failed: " + errnoText(error));
  }

  if (options.mode == GdbMode::kTerminal) {
    // Before fork, so no Ctrl-C lands in the window where gdb exists and
    // the CLI still dies of it.
    struct sigaction ignore {}, old {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    if (::sigaction(SIGINT, &ignore, &old) == 0) gdb.saved_sigint_ = old;
    if (::sigaction(SIGQUIT, &ignore, &old) == 0) gdb.saved_sigquit_ = old;
  }

  pid_t pid = ::fork();
  if (pid < 0) {
    int error = errno;
    closeFd(slave_fd);
    for (int fd : {hold[0], hold[1], exec_error[0], exec_error[1]}) ::close(fd);
    return internalError("fork for gdb failed: " + errnoText(error));  // ~GdbProcess restores signals
  }
  if (pid == 0) {
    ::close(hold[1]);
    ::close(exec_error[0]);
    if (gdb.master_fd_ >= 0) ::close(gdb.master_fd_);
    runChild(options, hold[0], exec_error[1], slave_fd, path->c_str(), argv.data(), envp.data(), max_fd);
  }
  gdb.pid_ = pid;
  ::close(hold[0]);
  ::close(exec_error[1]);
  closeFd(slave_fd);
  gdb.hold_fd_ = hold[1];
  gdb.exec_error_fd_ = exec_error[0];
  gdb.exec_path_ = *path;
  gdb.run_as_ = options.run_as;
  return gdb;
}

GdbProcess::GdbProcess(GdbProcess&& other) noexcept { *this = std::move(other); }

GdbProcess& GdbProcess::operator=(GdbProcess&& other) noexcept {
  if (this == &other) return *this;
  terminate();
  closeAll();
  mode_ = other.mode_;
  pid_ = std::exchange(other.pid_, -1);
  hold_fd_ = std::exchange(other.hold_fd_, -1);
  exec_error_fd_ = std::exchange(other.exec_error_fd_, -1);
  master_fd_ = std::exchange(other.master_fd_, -1);
  endpoint_ = std::exchange(other.endpoint_, {});
  exec_path_ = std::exchange(other.exec_path_, {});
  run_as_ = std::exchange(other.run_as_, std::nullopt);
  detach_grace_ = other.detach_grace_;
  saved_sigint_ = std::exchange(other.saved_sigint_, std::nullopt);
  saved_sigquit_ = std::exchange(other.saved_sigquit_, std::nullopt);
  return *this;
}

GdbProcess::~GdbProcess() {
  terminate();
  closeAll();
}

Status GdbProcess::release() {
  if (pid_ < 0) return failedPrecondition("gdb has already exited");
  if (hold_fd_ < 0) return failedPrecondition("gdb was released already");
  char byte = 'x';
  ssize_t n;
  do n = ::write(hold_fd_, &byte, 1);
  while (n < 0 && errno == EINTR);
  int write_error = errno;
  closeFd(hold_fd_);
  if (n != 1) {
    terminate();
    return internalError("cannot release gdb's child: " + errnoText(write_error));
  }

  // EOF: exec closed the CLOEXEC write end, gdb runs. A whole record: the
  // child failed and exits.
  ChildFailure failure{};
  size_t got = 0;
  while (got < sizeof failure) {
    n = ::read(exec_error_fd_, reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  closeFd(exec_error_fd_);
  if (got == 0) return {};
  std::string why = got == sizeof failure ? describeFailure(failure, run_as_, exec_path_)
                                          : "gdb's child failed before exec";
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped();
  if (failure.step == ChildStep::kExec) return failedPrecondition(why);
  return permissionDenied(why);
}

Result<int> GdbProcess::wait() {
  if (pid_ < 0) return failedPrecondition("gdb has already been reaped");
  // A held child waits for release(), so waiting for it would never end.
  if (hold_fd_ >= 0) return failedPrecondition("gdb has not been released");
  int status = 0;
  pid_t done;
  do done = ::waitpid(pid_, &status, 0);
  while (done < 0 && errno == EINTR);
  if (done < 0) return internalError("waiting for gdb failed: " + errnoText(errno));
  reaped();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result<std::optional<int>> GdbProcess::tryWait() {
  if (pid_ < 0) return failedPrecondition("gdb has already been reaped");
  int status = 0;
  pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done < 0) return internalError("waiting for gdb failed: " + errnoText(errno));
  if (done == 0) return std::optional<int>();
  reaped();
  return std::optional<int>(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

Status GdbProcess::interrupt() {
  if (pid_ < 0) return failedPrecondition("gdb has already exited");
  if (hold_fd_ >= 0) return failedPrecondition("gdb has not been released");
  if (::kill(pid_, SIGINT) < 0) return internalError("cannot interrupt gdb: " + errnoText(errno));
  return {};
}

bool GdbProcess::reapWithin(std::chrono::milliseconds grace) {
  auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) {
      reaped();
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // gdb blocked writing to a full pty cannot get to its commands or
    // signals; nobody reads its output any more, so drain it.
    if (master_fd_ >= 0) {
      struct pollfd p {master_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) > 0 && (p.revents & POLLIN)) {
        char sink[4096];
        [[maybe_unused]] auto n = ::read(master_fd_, sink, sizeof sink);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void GdbProcess::terminate() {
  if (pid_ < 0) return;
  if (hold_fd_ >= 0) {
    // Never released: still our fork, not gdb, and attached to nothing.
    closeFd(hold_fd_);
    ::kill(pid_, SIGKILL);
  } else if (master_fd_ >= 0) {
    // SIGTERM alone is not enough in MI mode: gdb quitting while the
    // debuggee runs stops it with a SIGINT that can reach the debuggee
    // after the detach and kill it (seen with gdb 13). So: SIGINT to gdb,
    // which stops the debuggee and takes the signal itself (SIGINT is
    // "nopass"), then detach and exit as MI commands, which gdb reads once
    // the debuggee is stopped. The leading newline ends whatever a frontend
    // left half-written.
    ::kill(pid_, SIGINT);
    static constexpr std::string_view kQuit = "\n-target-detach\n-gdb-exit\n";
    struct pollfd p {master_fd_, POLLOUT, 0};
    if (::poll(&p, 1, 100) > 0 && (p.revents & POLLOUT)) {
      [[maybe_unused]] auto n = ::write(master_fd_, kQuit.data(), kQuit.size());
    }
    if (reapWithin(detach_grace_)) return;
    ::kill(pid_, SIGTERM);
  } else {
    // Terminal mode: gdb detaches what it attached to when it quits.
    ::kill(pid_, SIGTERM);
  }
  if (reapWithin(detach_grace_)) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped();
}

void GdbProcess::reaped() {
  pid_ = -1;
  if (saved_sigint_) ::sigaction(SIGINT, &*saved_sigint_, nullptr);
  if (saved_sigquit_) ::sigaction(SIGQUIT, &*saved_sigquit_, nullptr);
  saved_sigint_.reset();
  saved_sigquit_.reset();
}

void GdbProcess::closeAll() {
  closeFd(hold_fd_);
  closeFd(exec_error_fd_);
  closeFd(master_fd_);
  // Dispositions are restored here too for a fork that failed (no pid).
  reaped();
}

}  // namespace nk
