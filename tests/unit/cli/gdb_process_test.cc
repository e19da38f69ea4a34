#include "cli/gdb_process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "cli/ptrace_access.h"
#include "testlib/temp_dir.h"

#ifndef NK_GDB_TARGET_HELPER
#error "NK_GDB_TARGET_HELPER must name the debuggee helper executable"
#endif

namespace nk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kFunction = "nk_debug_target_tick";
// gdb attaching and reading symbols on a loaded 2-core machine is slow;
// generous, but every wait below ends.
constexpr auto kGdbTimeout = 90s;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string statusField(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      auto value = line.substr(key.size() + 1);
      auto start = value.find_first_not_of(" \t");
      return start == std::string::npos ? "" : value.substr(start);
    }
  }
  return "";
}

// Reads `fd` until `done(everything so far)` or the deadline.
std::string readUntil(int fd, const std::function<bool(const std::string&)>& done, std::chrono::seconds timeout) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(out)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) break;
    struct pollfd p {fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: gdb closed the pty
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// The MI record of the breakpoint stop in kFunction, or empty.
std::string breakpointStop(const std::string& mi) {
  std::istringstream lines(mi);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("*stopped,reason=\"breakpoint-hit\"", 0) == 0 && has(line, "func=\"" + std::string(kFunction) + "\""))
      return line;
  }
  return "";
}

// Waits for gdb to exit by itself; its exit code, or nothing on timeout.
std::optional<int> waitExit(GdbProcess& gdb, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto done = gdb.tryWait();
    if (!done.ok()) return std::nullopt;
    if (done->has_value()) return **done;
    // Keep the pty drained so gdb never blocks on output while quitting.
    if (gdb.masterFd() >= 0) readUntil(gdb.masterFd(), [](const std::string& s) { return !s.empty(); }, 0s);
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

// The helper debuggee, optionally as another user; killed and reaped when
// the test ends however it ends.
class Debuggee {
 public:
  explicit Debuggee(const std::string& program, std::optional<uid_t> uid = std::nullopt) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      if (uid && (setgroups(0, nullptr) < 0 || setgid(*uid) < 0 || setuid(*uid) < 0)) _exit(120);
      execl(program.c_str(), program.c_str(), nullptr);
      _exit(121);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    ready_ = has(readUntil(from_, [](const std::string& s) { return has(s, "ready\n"); }, 10s), "ready\n");
  }
  ~Debuggee() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Debuggee(const Debuggee&) = delete;
  Debuggee& operator=(const Debuggee&) = delete;

  // Started, exec'd, and running as the user asked for; else -1.
  pid_t pid() const { return ready_ ? pid_ : -1; }
  // What libnodekeeper does under Yama scope 1: prctl(PR_SET_PTRACER).
  bool nameTracer(pid_t tracer) {
    std::string line = std::to_string(tracer) + "\n";
    if (write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return false;
    return has(readUntil(from_, [](const std::string& s) { return has(s, "ok\n"); }, 10s), "ok\n");
  }
  // Alive and not dead of a stray breakpoint trap.
  bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  bool ready_ = false;
};

// An executable file `name` in `dir` holding `text`.
fs::path script(const test::TempDir& dir, const std::string& name, const std::string& text) {
  fs::path file = dir.writeFile(name, text);
  fs::permissions(file, fs::perms(0755));
  return file;
}

class GdbProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("DEBUGINFOD_URLS"); }  // no network lookups, no question about it
  static bool haveGdb() { return GdbProcess::locate("gdb").ok(); }
};

TEST_F(GdbProcessTest, TerminalArguments) {
  GdbOptions options;
  options.gdb = "/usr/bin/gdb";
  options.target = 4242;
  EXPECT_EQ(GdbProcess::arguments(options), (std::vector<std::string>{"/usr/bin/gdb", "-q", "-p", "4242"}));
  options.breakpoint = "solver::step";
  EXPECT_EQ(GdbProcess::arguments(options), (std::vector<std::string>{"/usr/bin/gdb", "-q", "-p", "4242", "-ex",
                                                                      "break solver::step", "-ex", "continue"}));
}

TEST_F(GdbProcessTest, MiArguments) {
  GdbOptions options;
  options.mode = GdbMode::kMi;
  options.target = 7;
  options.breakpoint = "main";
  EXPECT_EQ(GdbProcess::arguments(options),
            (std::vector<std::string>{"gdb", "-q", "--interpreter=mi3", "-iex", "set confirm off", "-iex",
                                      "set breakpoint pending on", "-p", "7", "-ex", "break main", "-ex", "continue"}));
}

TEST_F(GdbProcessTest, MissingGdbIsReportedBeforeForking) {
  GdbOptions options;
  options.gdb = "/nonexistent/gdb";
  options.target = getpid();
  auto gdb = GdbProcess::start(options);
  ASSERT_FALSE(gdb.ok());
  EXPECT_EQ(gdb.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(has(gdb.error().message, "gdb is not installed")) << gdb.error().message;
  EXPECT_TRUE(has(gdb.error().message, "/nonexistent/gdb")) << gdb.error().message;

  auto by_name = GdbProcess::locate("nk-no-such-gdb");
  ASSERT_FALSE(by_name.ok());
  EXPECT_TRUE(has(by_name.error().message, "PATH")) << by_name.error().message;
}

TEST_F(GdbProcessTest, RejectsBadOptions) {
  GdbOptions options;
  options.gdb = "/bin/true";
  EXPECT_EQ(GdbProcess::start(options).error().code, ErrorCode::kInvalidArgument);  // no target
  options.target = getpid();
  options.breakpoint = "main\nshell id";
  EXPECT_EQ(GdbProcess::start(options).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(GdbProcessTest, ExecFailureComesBackThroughThePipe) {
  test::TempDir dir("gdb");
  // Executable bits but no format the kernel knows: execve fails ENOEXEC
  // in the child, after the check in the parent passed.
  auto fake = script(dir, "gdb", "this is not a program\n");
  GdbOptions options;
  options.gdb = fake.string();
  options.target = getpid();
  auto gdb = GdbProcess::start(options);
  ASSERT_TRUE(gdb.ok()) << gdb.error().message;
  auto released = gdb->release();
  ASSERT_FALSE(released.ok());
  EXPECT_EQ(released.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(has(released.error().message, "cannot execute " + fake.string())) << released.error().message;
  EXPECT_EQ(gdb->pid(), -1);  // reaped
}

TEST_F(GdbProcessTest, ChildIsHeldUntilReleaseAndKeepsItsPid) {
  test::TempDir dir("gdb");
  auto out = dir.path() / "pid";
  auto fake = script(dir, "gdb", "#!/bin/sh\necho $$ > '" + out.string() + "'\nexit 7\n");
  GdbOptions options;
  options.gdb = fake.string();
  options.target = getpid();
  auto gdb = GdbProcess::start(options);
  ASSERT_TRUE(gdb.ok()) << gdb.error().message;
  pid_t pid = gdb->pid();
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(100ms);
  // Still our fork, waiting: not exec'd yet.
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pid) + "/exe"), fs::read_symlink("/proc/self/exe"));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(gdb->wait().error().code, ErrorCode::kFailedPrecondition);  // would wait forever

  ASSERT_TRUE(gdb->release().ok());
  EXPECT_EQ(gdb->wait().valueOr(-1), 7);
  EXPECT_EQ(std::stoi(readFile(out)), pid);  // the pid given out before exec
  EXPECT_EQ(gdb->pid(), -1);
  EXPECT_FALSE(gdb->release().ok());
}

TEST_F(GdbProcessTest, DestructorEndsAChildNeverReleased) {
  pid_t pid = -1;
  {
    GdbOptions options;
    options.gdb = "/bin/true";
    options.target = getpid();
    auto gdb = GdbProcess::start(options);
    ASSERT_TRUE(gdb.ok()) << gdb.error().message;
    pid = gdb->pid();
  }
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(GdbProcessTest, TerminalModeIgnoresSigintInTheCallerOnly) {
  test::TempDir dir("gdb");
  auto args = dir.path() / "args";
  // Records its arguments, then interrupts itself: it dies of SIGINT only
  // if the child put the default disposition back.
  auto fake = script(dir, "gdb", "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + args.string() + "'\nkill -INT $$\nexit 7\n");
  struct sigaction mine {}, before {};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &before), 0);

  GdbOptions options;
  options.gdb = fake.string();
  options.target = 4242;
  options.breakpoint = "compute";
  {
    auto gdb = GdbProcess::start(options);
    ASSERT_TRUE(gdb.ok()) << gdb.error().message;
    EXPECT_TRUE(gdb->endpoint().empty());
    EXPECT_EQ(gdb->masterFd(), -1);
    struct sigaction now {};
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN);
    sigaction(SIGQUIT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN);
    ASSERT_TRUE(gdb->release().ok());
    EXPECT_EQ(gdb->wait().valueOr(-1), 128 + SIGINT);
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, mine.sa_handler);  // given back once gdb is reaped
  }
  EXPECT_EQ(readFile(args), "-q\n-p\n4242\n-ex\nbreak compute\n-ex\ncontinue\n");
  sigaction(SIGINT, &before, nullptr);
}

// The real thing: gdb/MI on a pty, attached to the helper, stops in the
// named function, detaches and quits; the helper runs on.
TEST_F(GdbProcessTest, MiModeStopsAtBreakpoint) {
  ASSERT_TRUE(haveGdb()) << "gdb is needed for this test (apt-get install gdb)";
  Debuggee app(NK_GDB_TARGET_HELPER);
  ASSERT_GT(app.pid(), 0);

  GdbOptions options;
  options.mode = GdbMode::kMi;
  options.target = app.pid();
  options.breakpoint = kFunction;
  auto gdb = GdbProcess::start(options);
  ASSERT_TRUE(gdb.ok()) << gdb.error().message;
  EXPECT_TRUE(gdb->endpoint().rfind("/dev/pts/", 0) == 0) << gdb->endpoint();
  struct stat st {};
  ASSERT_EQ(stat(gdb->endpoint().c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  // Before gdb exists as gdb: the access check, and the app naming it.
  auto tracer = PtraceAccess().currentProcess();
  ASSERT_TRUE(tracer.ok());
  tracer->pid = gdb->pid();
  auto decision = PtraceAccess().check(*tracer, app.pid(), true);
  ASSERT_TRUE(decision.mayAttach()) << decision.explanation;
  ASSERT_TRUE(app.nameTracer(gdb->pid()));
  ASSERT_TRUE(gdb->release().ok());

  auto mi = readUntil(gdb->masterFd(), [](const std::string& s) { return !breakpointStop(s).empty(); }, kGdbTimeout);
  ASSERT_FALSE(breakpointStop(mi).empty()) << "no breakpoint stop in " << kFunction << " within "
                                           << kGdbTimeout.count() << " s; gdb said:\n" << mi;
  EXPECT_EQ(statusField(app.pid(), "TracerPid"), std::to_string(gdb->pid()));
  EXPECT_FALSE(has(mi, "\r\n")) << "pty not raw";

  std::string quit = "-target-detach\n-gdb-exit\n";
  ASSERT_EQ(write(gdb->masterFd(), quit.data(), quit.size()), static_cast<ssize_t>(quit.size()));
  auto code = waitExit(*gdb, 30s);
  ASSERT_TRUE(code.has_value()) << "gdb did not quit after -gdb-exit";
  EXPECT_EQ(*code, 0);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(app.running());
  EXPECT_EQ(statusField(app.pid(), "TracerPid"), "0");
}

// What the daemon does: gdb dropped to the app owner's uid, the pty given
// to that uid. The destructor (SIGTERM) must detach so that the app, which
// keeps hitting the breakpoint, does not die of SIGTRAP.
TEST_F(GdbProcessTest, MiModeAsTheAppOwnerAndDestructorDetaches) {
  if (geteuid() != 0) GTEST_SKIP() << "dropping privileges needs root";
  ASSERT_TRUE(haveGdb()) << "gdb is needed for this test (apt-get install gdb)";
  constexpr uid_t kNobody = 65534;
  // A copy the unprivileged user can surely execute (build dirs may be
  // under a private home).
  test::TempDir dir("gdb");
  fs::permissions(dir.path(), fs::perms(0755));
  auto program = dir.path() / "gdb_target_helper";
  fs::copy_file(NK_GDB_TARGET_HELPER, program);
  fs::permissions(program, fs::perms(0755));
  Debuggee app(program.string(), kNobody);
  ASSERT_GT(app.pid(), 0);

  pid_t gdb_pid = -1;
  {
    GdbOptions options;
    options.mode = GdbMode::kMi;
    options.target = app.pid();
    options.breakpoint = kFunction;
    options.run_as = GdbCredentials{kNobody, kNobody, {}};
    auto gdb = GdbProcess::start(options);
    ASSERT_TRUE(gdb.ok()) << gdb.error().message;
    struct stat st {};
    ASSERT_EQ(stat(gdb->endpoint().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, kNobody);

    PtraceTracer tracer{kNobody, kNobody, false, gdb->pid()};
    auto decision = PtraceAccess().check(tracer, app.pid(), true);
    ASSERT_TRUE(decision.mayAttach()) << decision.explanation;
    ASSERT_TRUE(app.nameTracer(gdb->pid()));
    ASSERT_TRUE(gdb->release().ok());
    gdb_pid = gdb->pid();
    EXPECT_EQ(statusField(gdb_pid, "Uid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(statusField(gdb_pid, "Gid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(statusField(gdb_pid, "Groups"), "");

    auto mi = readUntil(gdb->masterFd(), [](const std::string& s) { return !breakpointStop(s).empty(); }, kGdbTimeout);
    ASSERT_FALSE(breakpointStop(mi).empty()) << "gdb said:\n" << mi;
    // Let it run on into the breakpoint again, so the trap is in memory
    // while gdb is told to go.
    std::string cont = "-exec-continue\n";
    ASSERT_EQ(write(gdb->masterFd(), cont.data(), cont.size()), static_cast<ssize_t>(cont.size()));
    readUntil(gdb->masterFd(), [](const std::string& s) { return has(s, "*running"); }, 10s);
  }
  EXPECT_EQ(kill(gdb_pid, 0), -1);  // gone and reaped
  std::this_thread::sleep_for(1s);  // five ticks of the helper: a trap left behind would have fired
  EXPECT_TRUE(app.running()) << "the app died after gdb was ended: breakpoints left behind";
  EXPECT_EQ(statusField(app.pid(), "TracerPid"), "0");
}

// Ending gdb while the debuggee sits at the breakpoint detaches too (gdb
// must put the original instruction back and rewind the pc).
TEST_F(GdbProcessTest, DestructorDetachesFromAStoppedDebuggee) {
  ASSERT_TRUE(haveGdb()) << "gdb is needed for this test (apt-get install gdb)";
  Debuggee app(NK_GDB_TARGET_HELPER);
  ASSERT_GT(app.pid(), 0);
  {
    GdbOptions options;
    options.mode = GdbMode::kMi;
    options.target = app.pid();
    options.breakpoint = kFunction;
    auto gdb = GdbProcess::start(options);
    ASSERT_TRUE(gdb.ok()) << gdb.error().message;
    ASSERT_TRUE(app.nameTracer(gdb->pid()));
    ASSERT_TRUE(gdb->release().ok());
    auto mi = readUntil(gdb->masterFd(), [](const std::string& s) { return !breakpointStop(s).empty(); }, kGdbTimeout);
    ASSERT_FALSE(breakpointStop(mi).empty()) << "gdb said:\n" << mi;
  }
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(app.running()) << "the app died after gdb was ended at a breakpoint";
  EXPECT_EQ(statusField(app.pid(), "TracerPid"), "0");
}

// The privilege drop is real: gdb as nobody cannot attach to root's process,
// and PtraceAccess says so beforehand.
TEST_F(GdbProcessTest, DroppedGdbCannotAttachToRootsProcess) {
  if (geteuid() != 0) GTEST_SKIP() << "dropping privileges needs root";
  ASSERT_TRUE(haveGdb()) << "gdb is needed for this test (apt-get install gdb)";
  Debuggee app(NK_GDB_TARGET_HELPER);
  ASSERT_GT(app.pid(), 0);
  ASSERT_TRUE(app.nameTracer(0));

  PtraceTracer tracer{65534, 65534, false, std::nullopt};
  auto decision = PtraceAccess().check(tracer, app.pid(), true);
  EXPECT_EQ(decision.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(decision.explanation, "uid 0")) << decision.explanation;

  GdbOptions options;
  options.mode = GdbMode::kMi;
  options.target = app.pid();
  options.run_as = GdbCredentials{65534, 65534, {}};
  auto gdb = GdbProcess::start(options);
  ASSERT_TRUE(gdb.ok()) << gdb.error().message;
  ASSERT_TRUE(gdb->release().ok());
  auto mi = readUntil(gdb->masterFd(), [](const std::string& s) { return has(s, "Operation not permitted"); }, kGdbTimeout);
  EXPECT_TRUE(has(mi, "Operation not permitted")) << "gdb said:\n" << mi;
  EXPECT_EQ(statusField(app.pid(), "TracerPid"), "0");
}

}  // namespace
}  // namespace nk
