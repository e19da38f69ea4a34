// The agent's chained handlers for SIGINT, SIGTERM and SIGHUP: the report
// goes out, and the program sees its signals as it would without the agent.
#include "ending_signals.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <new>
#include <mutex>
#include <vector>

namespace nk::pmpi {
namespace {

using namespace std::chrono_literals;

std::atomic<int> program_handler_calls{0};
std::atomic<int> program_handler_signal{0};
std::atomic<int> program_saw_value{0};
std::atomic<int> ending_seen_by_program{-1};
std::atomic<int32_t> ending_mark{0};  // as in a rank's message log
std::atomic<int> mark_seen_by_program{-1};

void programHandler(int signal) {
  program_handler_calls.fetch_add(1);
  program_handler_signal.store(signal);
  ending_seen_by_program.store(EndingSignals::ending());
  mark_seen_by_program.store(ending_mark.load());
}

void programInfoHandler(int signal, siginfo_t* info, void*) {
  program_handler_calls.fetch_add(1);
  program_handler_signal.store(signal);
  if (info && info->si_code == SI_QUEUE) program_saw_value.store(info->si_value.sival_int);
}

struct Reports {
  std::mutex mutex;
  std::vector<int> signals;
  EndingSignals::Report report() {
    return [this](int signal) {
      std::lock_guard lock(mutex);
      signals.push_back(signal);
    };
  }
  std::vector<int> taken() {
    std::lock_guard lock(mutex);
    return signals;
  }
};

class EndingSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_handler_calls = 0;
    program_handler_signal = 0;
    program_saw_value = 0;
    ending_seen_by_program = -1;
    for (int signal : EndingSignals::kSignals) ::sigaction(signal, nullptr, &saved_[signal]);
  }
  void TearDown() override {
    for (int signal : EndingSignals::kSignals) ::sigaction(signal, &saved_[signal], nullptr);
  }
  static void setHandler(int signal, void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(::sigaction(signal, &action, nullptr), 0);
  }
  struct sigaction saved_[NSIG] {};
};

TEST_F(EndingSignalsTest, AProgramHandlerInstalledBeforeStillRunsAfterTheReport) {
  setHandler(SIGINT, &programHandler);
  Reports reports;
  {
    auto signals = EndingSignals::install(reports.report(), 2000ms);
    ASSERT_NE(signals, nullptr);
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_EQ(program_handler_calls.load(), 1);
    EXPECT_EQ(program_handler_signal.load(), SIGINT);
    // The report was out before the program's handler ran.
    EXPECT_EQ(reports.taken(), std::vector<int>{SIGINT});
    EXPECT_EQ(ending_seen_by_program.load(), SIGINT);
    // The program's handler returned: the process is not ending after all.
    EXPECT_EQ(EndingSignals::ending(), 0);
  }
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, &programHandler) << "uninstalling puts the program's handler back";
}

// The mark in the message log says the signal while the process is ending
// by it, and nothing once the program's handler returned.
TEST_F(EndingSignalsTest, TheSignalIsMarkedWhereTheDaemonCanReadItAfterwards) {
  setHandler(SIGHUP, &programHandler);
  Reports reports;
  {
    auto signals = EndingSignals::install(reports.report(), 2000ms);
    ASSERT_NE(signals, nullptr);
    EndingSignals::markInto(&ending_mark);
    ASSERT_EQ(::raise(SIGHUP), 0);
    EXPECT_EQ(mark_seen_by_program.load(), SIGHUP);
    EXPECT_EQ(ending_mark.load(), 0);
  }
  // Uninstalled: the word is no longer written.
  ending_mark = 77;
  setHandler(SIGHUP, &programHandler);
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_EQ(ending_mark.load(), 77);
}

TEST_F(EndingSignalsTest, ASiginfoHandlerGetsItsSiginfo) {
  struct sigaction action {};
  action.sa_sigaction = &programInfoHandler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(::sigaction(SIGTERM, &action, nullptr), 0);
  Reports reports;
  auto signals = EndingSignals::install(reports.report(), 2000ms);
  ASSERT_NE(signals, nullptr);
  sigval value{};
  value.sival_int = 4242;
  // To this thread: the only one that does not block the signal is the
  // agent's, and it blocks it.
  ASSERT_EQ(::pthread_sigqueue(::pthread_self(), SIGTERM, value), 0);
  EXPECT_EQ(program_handler_calls.load(), 1);
  EXPECT_EQ(program_saw_value.load(), 4242);
  EXPECT_EQ(reports.taken(), std::vector<int>{SIGTERM});
}

TEST_F(EndingSignalsTest, AnIgnoredSignalStaysIgnoredAndIsNotReported) {
  setHandler(SIGHUP, SIG_IGN);
  Reports reports;
  auto signals = EndingSignals::install(reports.report(), 2000ms);
  ASSERT_NE(signals, nullptr);
  struct sigaction now {};
  ::sigaction(SIGHUP, nullptr, &now);
  EXPECT_FALSE(now.sa_flags & SA_SIGINFO);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_TRUE(reports.taken().empty());
}

TEST_F(EndingSignalsTest, AHandlerTheProgramInstallsAfterwardsReplacesTheAgentsAndStays) {
  Reports reports;
  {
    auto signals = EndingSignals::install(reports.report(), 2000ms);
    ASSERT_NE(signals, nullptr);
    setHandler(SIGTERM, &programHandler);
    ASSERT_EQ(::raise(SIGTERM), 0);
    EXPECT_EQ(program_handler_calls.load(), 1);
  }
  EXPECT_TRUE(reports.taken().empty());
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, &programHandler);
}

TEST_F(EndingSignalsTest, ASlowReportDelaysTheProgramsHandlerOnlyUntilTheDeadline) {
  setHandler(SIGINT, &programHandler);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> reported{0};
  {
    auto signals = EndingSignals::install(
        [&, released](int signal) {
          reported = signal;
          released.wait();  // a daemon that never answers
        },
        100ms);
    ASSERT_NE(signals, nullptr);
    ASSERT_EQ(::raise(SIGINT), 0);  // returns: the handler did not wait for the report
    EXPECT_EQ(program_handler_calls.load(), 1);
    release.set_value();
  }
  EXPECT_EQ(reported.load(), SIGINT);
}

// Without a handler of the program's, the process still ends by the signal
// (its parent sees it killed by it), after the report.
TEST_F(EndingSignalsTest, WithTheDefaultActionTheProcessEndsByTheSignalAfterTheReport) {
  // Shared with the child: the mark it leaves behind, as in its message log.
  void* shared = ::mmap(nullptr, sizeof(std::atomic<int32_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* mark = new (shared) std::atomic<int32_t>(0);
  for (int signal : EndingSignals::kSignals) {
    mark->store(0);
    int report_pipe[2];
    ASSERT_EQ(::pipe(report_pipe), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(report_pipe[0]);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(signal, &dfl, nullptr);
      int out = report_pipe[1];
      auto signals = EndingSignals::install(
          [out](int s) {
            const char byte = static_cast<char>(s);
            if (::write(out, &byte, 1) != 1) ::_exit(3);
          },
          5000ms);
      if (!signals) ::_exit(2);
      EndingSignals::markInto(mark);
      ::raise(signal);
      ::_exit(0);  // survived the signal: wrong
    }
    ::close(report_pipe[1]);
    char byte = 0;
    EXPECT_EQ(::read(report_pipe[0], &byte, 1), 1);
    ::close(report_pipe[0]);
    EXPECT_EQ(byte, signal);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status)) << "signal " << signal << ": exit status " << status;
    // The mark outlives the process: the daemon reads it when the report
    // was overtaken by a SIGKILL.
    EXPECT_EQ(mark->load(), signal);
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), signal);
    }
  }
  ::munmap(shared, sizeof(std::atomic<int32_t>));
}

TEST_F(EndingSignalsTest, OnlyOneIsInstalledAtATime) {
  Reports reports;
  auto first = EndingSignals::install(reports.report(), 100ms);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(EndingSignals::install(reports.report(), 100ms), nullptr);
  first.reset();
  EXPECT_NE(EndingSignals::install(reports.report(), 100ms), nullptr);
}

}  // namespace
}  // namespace nk::pmpi
