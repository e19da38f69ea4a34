#include "apps/proc_process_inspector.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace nk {
namespace {

namespace fs = std::filesystem;

class ProcProcessInspectorTest : public ::testing::Test {
 protected:

  // A process whose comm holds spaces and a parenthesis, as the kernel allows.
  void addProcess(pid_t pid, char state, uint64_t start, std::initializer_list<pid_t> tids) {
    fs::create_directories(root_ / std::to_string(pid) / "task");
    std::ofstream(root_ / std::to_string(pid) / "stat")
        << pid << " (my app) x) " << state << " 1 " << pid << " " << pid
        << " 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 3 0 " << start << " 1000000 200 18446744073709551615\n";
    for (pid_t tid : tids) fs::create_directories(root_ / std::to_string(pid) / "task" / std::to_string(tid));
  }

  test::TempDir root_{"proc"};
};

TEST_F(ProcProcessInspectorTest, ReadsStartTimeAfterTheCommField) {
  addProcess(42, 'S', 123456, {42, 43});
  ProcProcessInspector inspector(root_.path());
  EXPECT_EQ(inspector.startTime(42), std::optional<uint64_t>(123456));
  EXPECT_FALSE(inspector.startTime(41));
  EXPECT_FALSE(inspector.startTime(0));
  EXPECT_FALSE(inspector.startTime(-1));
}

TEST_F(ProcProcessInspectorTest, ZombiesAreDead) {
  addProcess(50, 'Z', 77, {50});
  EXPECT_FALSE(ProcProcessInspector(root_.path()).startTime(50));
}

TEST_F(ProcProcessInspectorTest, ThreadsAreThoseUnderTask) {
  addProcess(42, 'R', 1, {42, 43});
  addProcess(60, 'R', 1, {60, 61});
  ProcProcessInspector inspector(root_.path());
  EXPECT_TRUE(inspector.hasThread(42, 42));
  EXPECT_TRUE(inspector.hasThread(42, 43));
  EXPECT_FALSE(inspector.hasThread(42, 61));
  EXPECT_FALSE(inspector.hasThread(42, 0));
  EXPECT_FALSE(inspector.hasThread(99, 99));
}

TEST_F(ProcProcessInspectorTest, RealProcSeesThisProcess) {
  ProcProcessInspector inspector;
  EXPECT_TRUE(inspector.startTime(getpid()));
  EXPECT_TRUE(inspector.hasThread(getpid(), gettid()));
  EXPECT_FALSE(inspector.hasThread(getpid(), 1));
}

}  // namespace
}  // namespace nk
