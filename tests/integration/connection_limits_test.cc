// One unprivileged user (uid 65534) opens connection after connection to the
// daemon's Unix socket: those over the per-user limit are closed at once,
// root's `nodekeeper status` still answers, and a daemon out of descriptors
// says so once and recovers. The same user's thousands of streams cost the
// daemon no thread each; streams over the user's limit, a stream that sends
// too fast and a message too large end with RESOURCE_EXHAUSTED.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>
#include <string>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/processes.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

namespace nk::test {
namespace {

using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;
constexpr size_t kMostConnections = 1000;

// What the child reports: connections made and failed, and of those made,
// how many the daemon has closed.
struct Tally {
  int connected = 0;
  int failed = 0;
  int closed_by_daemon = 0;
};

// A child process, uid 65534, holding up to `count` connections to `socket`.
// Made with the syscalls alone after fork (the test process has threads).
class NobodyConnections {
 public:
  NobodyConnections(const std::filesystem::path& socket, size_t count, bool wait_when_backlog_full) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    signal(SIGPIPE, SIG_IGN);  // a child that died is seen in the tally
    if (pipe(commands_) != 0 || pipe(reports_) != 0) return;
    pid_ = fork();
    if (pid_ == 0) runChild(address, count, wait_when_backlog_full);
    close(commands_[0]);
    close(reports_[1]);
  }
  ~NobodyConnections() {
    if (pid_ <= 0) return;
    send('q');
    int status = 0;
    waitpid(pid_, &status, 0);
  }

  bool started() const { return pid_ > 0; }

  // The child's tally once it has made every attempt; then on each call.
  bool tally(Tally& out) {
    if (!send('t')) return false;
    return read(reports_[0], &out, sizeof out) == static_cast<ssize_t>(sizeof out);
  }

  // Closes every connection and waits for the child to end.
  void closeAll() {
    if (pid_ <= 0) return;
    send('q');
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  bool send(char command) { return write(commands_[1], &command, 1) == 1; }

  [[noreturn]] void runChild(const sockaddr_un& address, size_t count, bool wait_when_backlog_full) {
    close(commands_[1]);
    close(reports_[0]);
    // Room for every connection, set as root before the privileges go.
    rlimit room{count + 1024, count + 1024};
    if (setrlimit(RLIMIT_NOFILE, &room) != 0) _exit(10);
    if (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
        setresuid(kNobody, kNobody, kNobody) != 0)
      _exit(11);
    static std::array<int, kMostConnections> fds;
    Tally tally;
    for (size_t i = 0; i < count && i < fds.size(); ++i) {
      int fd = socket(AF_UNIX, SOCK_STREAM | (wait_when_backlog_full ? 0 : SOCK_NONBLOCK), 0);
      if (fd < 0) _exit(12);
      // A blocking connect waits while the backlog is full, but not forever.
      timeval patience{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
      if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
        fds[tally.connected++] = fd;
      } else {
        ++tally.failed;
        close(fd);
      }
    }
    char command = 0;
    while (read(commands_[0], &command, 1) == 1 && command == 't') {
      tally.closed_by_daemon = 0;
      for (int i = 0; i < tally.connected; ++i) {
        pollfd p{fds[i], POLLRDHUP, 0};
        if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP))) ++tally.closed_by_daemon;
      }
      if (write(reports_[1], &tally, sizeof tally) != sizeof tally) _exit(13);
    }
    for (int i = 0; i < tally.connected; ++i) close(fds[i]);
    _exit(0);
  }

  pid_t pid_ = -1;
  int commands_[2] = {-1, -1};
  int reports_[2] = {-1, -1};
};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// "Threads: N  VmRSS: M kB" of a process, for the test's output.
std::string threadsAndMemory(pid_t pid) {
  return "Threads: " + std::to_string(statusNumber(pid, "Threads:")) +
         "  VmRSS: " + std::to_string(statusNumber(pid, "VmRSS:")) + " kB";
}

ProcessResult statusOf(const DaemonProcess& daemon) {
  return runProgram({cliPath(), "--socket", daemon.socket().string(), "status"});
}

TEST(ConnectionLimits, OneUserWithAThousandConnectionsIsHeldToTheLimitAndStatusAnswers) {
  TempDir dir("connection-limits", TempDir::Access::kShared);
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--connections-per-user", "64"})) << daemon.lastError();

  NobodyConnections nobody(daemon.socket(), kMostConnections, /*wait_when_backlog_full=*/true);
  ASSERT_TRUE(nobody.started());
  Tally tally;
  ASSERT_TRUE(nobody.tally(tally));
  EXPECT_EQ(tally.connected, static_cast<int>(kMostConnections)) << tally.failed << " connects failed";
  // The daemon closes each one over the limit as it accepts it.
  EXPECT_TRUE(waitFor([&] { return nobody.tally(tally) && tally.connected - tally.closed_by_daemon <= 64; }, 20s))
      << tally.connected - tally.closed_by_daemon << " of " << tally.connected << " still open";
  EXPECT_EQ(tally.connected - tally.closed_by_daemon, 64);

  std::cout << "daemon with uid 65534 holding " << tally.connected - tally.closed_by_daemon << " of "
            << tally.connected << " connections: " << threadsAndMemory(daemon.pid()) << "\n";
  EXPECT_LT(statusNumber(daemon.pid(), "Threads:"), 500);

  ProcessResult status = statusOf(daemon);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;

  std::string log = readFile(daemon.stderrPath());
  EXPECT_EQ(occurrences(log, "refusing Unix socket connections from uid 65534"), 1u) << log;

  // Connections that close give their slots back (soon, not at once: the
  // daemon notices within a second or so).
  nobody.closeAll();
  bool all_kept = false;
  for (int attempt = 0; attempt < 40 && !all_kept; ++attempt) {
    NobodyConnections again(daemon.socket(), 64, true);
    ASSERT_TRUE(again.started());
    ASSERT_TRUE(again.tally(tally));
    // A refusal shows as a hang-up; give one time to come.
    std::this_thread::sleep_for(500ms);
    ASSERT_TRUE(again.tally(tally));
    all_kept = tally.connected == 64 && tally.closed_by_daemon == 0;
  }
  EXPECT_TRUE(all_kept) << tally.closed_by_daemon << " of " << tally.connected << " refused";
}

TEST(ConnectionLimits, ADaemonOutOfDescriptorsSaysSoOnceAndRecovers) {
  // UBSan's vptr check probes memory through a pipe(2); in a process out of
  // descriptors that fails and every dynamic-type check reports an "invalid
  // vptr", which ends the daemon (seen in gRPC's ~Channel).
  if (!envOr("NK_SANITIZE").empty()) GTEST_SKIP() << "UBSan's vptr check cannot run out of file descriptors";
  TempDir dir("connection-limits-emfile", TempDir::Access::kShared);
  DaemonProcess daemon;
  // The daemon inherits a small descriptor limit; the limits themselves
  // would allow every connection.
  rlimit before{};
  getrlimit(RLIMIT_NOFILE, &before);
  rlimit small = before;
  small.rlim_cur = 160;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &small), 0);
  bool started = daemon.start(dir.path(), {"--connections-per-user", "1000", "--connections-total", "1000"});
  setrlimit(RLIMIT_NOFILE, &before);
  ASSERT_TRUE(started) << daemon.lastError();

  {
    NobodyConnections nobody(daemon.socket(), 400, /*wait_when_backlog_full=*/false);
    ASSERT_TRUE(nobody.started());
    Tally tally;
    ASSERT_TRUE(nobody.tally(tally));
    EXPECT_TRUE(waitFor([&] { return readFile(daemon.stderrPath()).find("out of file descriptors") != std::string::npos; },
                        20s))
        << readFile(daemon.stderrPath());
    std::cout << "daemon out of descriptors (" << tally.connected << " connected, " << tally.failed
              << " refused by a full backlog): " << threadsAndMemory(daemon.pid()) << "\n";
    // Some time out of descriptors, with connections still coming; the CPU
    // the daemon spends meanwhile is printed (a spinning accept loop showed
    // as most of a core), not asserted.
    double cpu_before = cpuSecondsOf(daemon.pid());
    NobodyConnections more(daemon.socket(), 50, false);
    std::this_thread::sleep_for(3s);
    std::cout << "daemon CPU over 3 s out of descriptors: " << cpuSecondsOf(daemon.pid()) - cpu_before << " s\n";
  }
  // Every connection closed: the daemon answers again.
  EXPECT_TRUE(waitFor([&] { return statusOf(daemon).exit_code == 0; }, 30s));
  ProcessResult status = statusOf(daemon);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  std::string log = readFile(daemon.stderrPath());
  EXPECT_EQ(occurrences(log, "out of file descriptors"), 1u) << log;
  EXPECT_NE(log.find("file descriptors available again"), std::string::npos) << log;
}

// The stream_holder program (tests/integration/stream_holder.cc) as uid
// 65534, its stdout in `out`.
std::vector<std::string> holderArgs(const std::vector<std::string>& args) {
  const char* holder = std::getenv("NK_STREAM_HOLDER");
  std::vector<std::string> argv{holder ? holder : "stream_holder", std::to_string(kNobody)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// "settled admitted=A refused=R other=O [other_code_C=N ...]" from a
// holder's stdout; `line` is all of it, the codes included.
struct Settled {
  int admitted = -1, refused = -1, other = -1;
  std::string line;
};
std::optional<Settled> settledLine(const std::string& out) {
  size_t at = out.find("settled ");
  if (at == std::string::npos) return std::nullopt;
  Settled settled;
  if (std::sscanf(out.c_str() + at, "settled admitted=%d refused=%d other=%d", &settled.admitted, &settled.refused,
                  &settled.other) != 3)
    return std::nullopt;
  settled.line = out.substr(at, out.find('\n', at) - at);
  return settled;
}

TEST(StreamLimits, OneUserHoldingAThousandConnectionsAndThreeThousandStreamsCostsNoThreadEach) {
  TempDir dir("stream-limits", TempDir::Access::kShared);
  DaemonProcess daemon;
  // Limits raised so that the user really holds them all: what is measured
  // is the cost of a stream, not the limit.
  ASSERT_TRUE(daemon.start(dir.path(), {"--connections-per-user", "2000", "--connections-total", "4000",
                                        "--streams-per-user", "4000", "--streams-total", "8000"}))
      << daemon.lastError();
  ASSERT_TRUE(waitFor([&] { return statusOf(daemon).exit_code == 0; }, 20s));
  const long idle_threads = statusNumber(daemon.pid(), "Threads:");
  const long idle_rss = statusNumber(daemon.pid(), "VmRSS:");

  BackgroundProgram holder;
  ASSERT_TRUE(holder.start(holderArgs({"hold", daemon.socket().string(), "1000", "3", "1000"}), dir.path() / "holder.out",
                           dir.path() / "holder.err"));
  std::optional<Settled> settled;
  ASSERT_TRUE(waitFor([&] { return (settled = settledLine(holder.out())).has_value(); }, 240s))
      << holder.out() << holder.err();
  EXPECT_EQ(settled->admitted, 3000) << settled->line;

  const long held_threads = statusNumber(daemon.pid(), "Threads:");
  const long held_rss = statusNumber(daemon.pid(), "VmRSS:");
  // What 3,000 waiting streams cost while nothing happens (printed).
  const double cpu_before = cpuSecondsOf(daemon.pid());
  std::this_thread::sleep_for(3s);
  const double held_cpu = cpuSecondsOf(daemon.pid()) - cpu_before;
  const auto asked = std::chrono::steady_clock::now();
  ProcessResult status = statusOf(daemon);
  const auto answered_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked).count();
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  // Bounded: gRPC's own pollers and executor, not a thread per stream (the
  // sync API took 3,023 for 3,000 streams).
  EXPECT_LT(held_threads, idle_threads + 64) << "idle " << idle_threads << ", holding " << held_threads;

  holder.kill();
  EXPECT_TRUE(waitFor([&] { return statusOf(daemon).exit_code == 0; }, 30s));
  std::this_thread::sleep_for(2s);
  const long after_threads = statusNumber(daemon.pid(), "Threads:");
  const long after_rss = statusNumber(daemon.pid(), "VmRSS:");
  std::cout << "daemon, idle: " << idle_threads << " threads, " << idle_rss / 1024 << " MiB RSS\n"
            << "holding uid 65534's 1000 connections and " << settled->admitted << " streams: " << held_threads
            << " threads, " << held_rss / 1024 << " MiB RSS, " << held_cpu << " s of CPU over 3 s; root's status answered in "
            << answered_ms << " ms\n"
            << "after the holder was killed: " << after_threads << " threads, " << after_rss / 1024 << " MiB RSS\n";
  EXPECT_LT(after_threads, idle_threads + 64);
}

TEST(StreamLimits, StreamsOverTheUsersLimitEndResourceExhaustedAndAreLoggedOnce) {
  TempDir dir("stream-limits-default", TempDir::Access::kShared);
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--streams-per-user", "100"})) << daemon.lastError();
  BackgroundProgram holder;
  ASSERT_TRUE(holder.start(holderArgs({"hold", daemon.socket().string(), "30", "5", "1000"}), dir.path() / "holder.out",
                           dir.path() / "holder.err"));
  std::optional<Settled> settled;
  ASSERT_TRUE(waitFor([&] { return (settled = settledLine(holder.out())).has_value(); }, 120s))
      << holder.out() << holder.err();
  EXPECT_EQ(settled->admitted, 100);
  EXPECT_EQ(settled->refused, 50);
  EXPECT_EQ(settled->other, 0);
  // Root is exempt and still served.
  ProcessResult status = statusOf(daemon);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  std::string log = readFile(daemon.stderrPath());
  EXPECT_EQ(occurrences(log, "refusing Node.StreamTelemetry streams of uid 65534"), 1u) << log;
  EXPECT_NE(log.find("streams_per_user 100"), std::string::npos) << log;
  // Stopped while the streams are held: they are cancelled and it exits
  // cleanly (DaemonProcess would SIGKILL it after 10 s).
  EXPECT_EQ(daemon.stop(), 0) << readFile(daemon.stderrPath());
  holder.kill();
}

// A stream faster than the rate is slowed to it, not ended: its client
// waits in flow control and the daemon takes every message. One too big is
// refused (gRPC's own limit).
TEST(StreamLimits, AStreamThatSendsTooFastIsSlowedAndOneTooBigEndsResourceExhausted) {
  TempDir dir("stream-limits-rate", TempDir::Access::kShared);
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--stream-messages-per-second", "200", "--max-message-bytes", "65536"}))
      << daemon.lastError();
  // Three times the burst: the last 400 are read at 200 a second.
  ProcessResult flood = runProgram(holderArgs({"flood", daemon.socket().string(), "600"}));
  EXPECT_NE(flood.out.find("ended 0 sent=600 "), std::string::npos) << flood.out << flood.err;
  std::string log = readFile(daemon.stderrPath());
  EXPECT_EQ(occurrences(log, "holding a Tasks.Publish stream of uid " + std::to_string(kNobody)), 1u) << log;
  EXPECT_NE(log.find("to 200 messages a second (stream_messages_per_second)"), std::string::npos) << log;

  ProcessResult big = runProgram(holderArgs({"big", daemon.socket().string(), "100000"}));
  EXPECT_NE(big.out.find("ended 8 "), std::string::npos) << big.out << big.err;
  ProcessResult small = runProgram(holderArgs({"big", daemon.socket().string(), "30000"}));
  EXPECT_NE(small.out.find("ended 0 "), std::string::npos) << small.out << small.err;
  // The daemon is unharmed.
  ProcessResult status = statusOf(daemon);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
}

}  // namespace
}  // namespace nk::test
