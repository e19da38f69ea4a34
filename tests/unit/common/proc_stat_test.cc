#include "common/proc_stat.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace nk {
namespace {

namespace fs = std::filesystem;

// A pid no process has: above the kernel's pid_max (at most 2^22).
constexpr pid_t kNoSuchPid = (1 << 22) + 17;

// What the kernel reads as the test's own argv[0].
std::string ownProgram() { return fs::read_symlink("/proc/self/exe").filename().string(); }

TEST(ProcStatCommandLineTest, OwnProcessShowsItsProgramAndArguments) {
  std::string line = ProcStat::commandLine(::getpid());
  ASSERT_FALSE(line.empty());
  // argv[0] as the test runner gave it (a path ending in the binary's name).
  std::string first = line.substr(0, line.find(' '));
  EXPECT_EQ(fs::path(first).filename().string(), ownProgram()) << line;
  EXPECT_EQ(line.find('\0'), std::string::npos);
  EXPECT_NE(line.back(), ' ') << "the trailing NUL must not become a space";
}

TEST(ProcStatCommandLineTest, AProcessThatDoesNotExistHasNone) {
  EXPECT_EQ(ProcStat::commandLine(kNoSuchPid), "");
  EXPECT_EQ(ProcStat::commandLine(0), "");
  EXPECT_EQ(ProcStat::commandLine(-1), "");
}

class ProcStatFakeRootTest : public ::testing::Test {
 protected:
  void writeCmdline(pid_t pid, const std::string& bytes) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "cmdline", std::ios::binary) << bytes;
  }

  nk::test::TempDir tmp_{"proc-stat"};
  const fs::path root_ = tmp_.path();
};

TEST_F(ProcStatFakeRootTest, ArgumentsAreJoinedBySpacesWithoutTheTrailingNul) {
  writeCmdline(100, std::string("./solver\0--grid\0a b\0", 21));
  EXPECT_EQ(ProcStat::commandLine(root_, 100), "./solver --grid a b");
}

TEST_F(ProcStatFakeRootTest, AKernelThreadOrZombieHasAnEmptyCommandLine) {
  writeCmdline(101, "");
  EXPECT_EQ(ProcStat::commandLine(root_, 101), "");
  EXPECT_EQ(ProcStat::commandLine(root_, 102), "") << "no directory at all";
}

TEST_F(ProcStatFakeRootTest, OwnerIsTheOwnerOfTheProcessDirectory) {
  writeCmdline(103, std::string("x\0", 2));
  auto owner = ProcStat::owner(root_, 103);
  ASSERT_TRUE(owner);
  EXPECT_EQ(*owner, ::geteuid());
  EXPECT_FALSE(ProcStat::owner(root_, 104));
}

}  // namespace
}  // namespace nk
