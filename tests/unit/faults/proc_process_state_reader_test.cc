#include "faults/proc_process_state_reader.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace nk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ProcProcessStateReaderTest : public ::testing::Test {
 protected:

  // A comm with spaces and a parenthesis, as the kernel allows.
  void addProcess(pid_t pid, char state, uint64_t start) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "stat")
        << pid << " (my rank) x) " << state << " 1 " << pid << " " << pid
        << " 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 3 0 " << start << " 1000000 200 18446744073709551615\n";
  }

  test::TempDir root_{"procstate"};
};

TEST_F(ProcProcessStateReaderTest, ReadsTheStateLetterAndStartTimeAfterTheComm) {
  addProcess(42, 'S', 123456);
  ProcProcessStateReader reader(root_.path());
  auto status = reader.read(42);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, ProcessState::kSleeping);
  EXPECT_EQ(status->start_time, 123456u);
  EXPECT_FALSE(reader.read(43));
  EXPECT_FALSE(reader.read(0));
  EXPECT_FALSE(reader.read(-1));
}

TEST_F(ProcProcessStateReaderTest, ReadsTheCpuTimeOfAllThreadsAsUtimePlusStime) {
  addProcess(42, 'R', 123456);  // utime 5, stime 3 ticks
  ProcProcessStateReader reader(root_.path());
  auto status = reader.read(42);
  ASSERT_TRUE(status);
  ASSERT_TRUE(status->cpu_time);
  EXPECT_EQ(*status->cpu_time, std::chrono::microseconds(8 * 1000000 / sysconf(_SC_CLK_TCK)));
  EXPECT_EQ(reader.statusOf(42, 123456).cpu_time, status->cpu_time);
  EXPECT_FALSE(reader.statusOf(42, 999).cpu_time) << "a reused pid is another process";
}

TEST_F(ProcProcessStateReaderTest, MapsEveryStateLetter) {
  const std::pair<char, ProcessState> letters[] = {
      {'R', ProcessState::kRunning}, {'S', ProcessState::kSleeping}, {'D', ProcessState::kSleeping},
      {'I', ProcessState::kSleeping}, {'T', ProcessState::kStopped}, {'t', ProcessState::kStopped},
      {'Z', ProcessState::kZombie},  {'X', ProcessState::kZombie},   {'W', ProcessState::kSleeping}};
  for (auto [letter, state] : letters) EXPECT_EQ(ProcProcessStateReader::fromLetter(letter), state) << letter;
  EXPECT_EQ(processStateName(ProcessState::kRunning), "running");
  EXPECT_EQ(processStateName(ProcessState::kSleeping), "sleeping");
  EXPECT_EQ(processStateName(ProcessState::kStopped), "stopped");
  EXPECT_EQ(processStateName(ProcessState::kZombie), "zombie");
  EXPECT_EQ(processStateName(ProcessState::kGone), "gone");
}

TEST_F(ProcProcessStateReaderTest, AnotherStartTimeMeansThePidWasReused) {
  addProcess(42, 'R', 500);
  ProcProcessStateReader reader(root_.path());
  EXPECT_EQ(reader.stateOf(42, 500), ProcessState::kRunning);
  EXPECT_EQ(reader.stateOf(42, 0), ProcessState::kRunning);
  EXPECT_EQ(reader.stateOf(42, 499), ProcessState::kGone);
  EXPECT_EQ(reader.stateOf(77, 500), ProcessState::kGone);
}

// The real /proc: a child stopped, then dead and reaped.
TEST(ProcProcessStateReaderRealProc, SeesAChildStopAndGo) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    while (true) pause();
  }
  ProcProcessStateReader reader;
  auto started = reader.read(child);
  ASSERT_TRUE(started);
  EXPECT_GT(started->start_time, 0u);
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  ProcessState state = ProcessState::kRunning;
  for (int i = 0; i < 200 && state != ProcessState::kStopped; ++i) {
    std::this_thread::sleep_for(10ms);
    state = reader.stateOf(child, started->start_time);
  }
  EXPECT_EQ(state, ProcessState::kStopped);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(reader.stateOf(child, started->start_time), ProcessState::kGone);
  EXPECT_NE(reader.stateOf(getpid(), 0), ProcessState::kGone);
}

}  // namespace
}  // namespace nk
