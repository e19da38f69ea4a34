#include "testlib/daemon_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testlib/files.h"
#include "testlib/temp_dir.h"

namespace nk::test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A stand-in for nodekeeperd, written into `dir`.
std::string fakeDaemon(const TempDir& dir, const std::string& name, const std::string& body) {
  fs::path script = dir.writeFile(name, "#!/bin/sh\n" + body);
  fs::permissions(script, fs::perms(0755));
  return script.string();
}

// Records its arguments, makes the socket file where --socket says, then
// runs until signalled.
constexpr const char* kServingDaemon =
    "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n"
    "while [ $# -gt 0 ]; do [ \"$1\" = --socket ] && : > \"$2\"; shift; done\n"
    "exec sleep 60\n";

TEST(DaemonProcess, AProgramThatDoesNotExistIsAClearError) {
  TempDir dir("testlib-missing");
  DaemonProcess daemon("/nonexistent/nodekeeperd");
  EXPECT_FALSE(daemon.start(dir.path()));
  EXPECT_TRUE(has(daemon.lastError(), "cannot run the daemon /nonexistent/nodekeeperd: No such file or directory"))
      << daemon.lastError();
  EXPECT_EQ(daemon.pid(), -1);
  EXPECT_EQ(daemon.stop(), -1);
}

TEST(DaemonProcess, ADaemonThatExitsFirstIsAnErrorWithItsStderr) {
  TempDir programs("testlib-programs"), dir("testlib-exits");
  DaemonProcess daemon(fakeDaemon(programs, "exits", "echo 'no such flag' >&2\nexit 3\n"));
  EXPECT_FALSE(daemon.start(dir.path()));
  const std::string error = daemon.lastError();
  EXPECT_TRUE(has(error, "exited with 3 before its socket " + (dir / "nk.sock").string() + " appeared")) << error;
  EXPECT_TRUE(has(error, "no such flag")) << error;
  EXPECT_EQ(daemon.pid(), -1);
}

TEST(DaemonProcess, StartsWithItsDirectoryAndSocketAndStopsWithSigterm) {
  TempDir programs("testlib-programs"), dir("testlib-serving");
  DaemonProcess daemon(fakeDaemon(programs, "serving", kServingDaemon));
  ASSERT_TRUE(daemon.start(dir.path(), {"--dct-interval-ms", "250"}, "tiny")) << daemon.lastError();
  EXPECT_GT(daemon.pid(), 0);
  EXPECT_EQ(daemon.socket(), dir / "nk.sock");
  EXPECT_EQ(daemon.stateDir(), dir.path());
  EXPECT_EQ(daemon.sysfs(), dir / "sysfs/sys");
  EXPECT_EQ(readFile(programs / "args"), "--emulate\ntiny\n--state-dir\n" + dir.path().string() + "\n--socket\n" +
                                             (dir / "nk.sock").string() + "\n--config\n/dev/null\n" +
                                             "--dct-interval-ms\n250\n");
  EXPECT_EQ(daemon.stop(), 128 + 15);
  EXPECT_EQ(daemon.pid(), -1);
}

TEST(DaemonProcess, ASocketLeftByAKilledDaemonIsNotTakenForTheNextOne) {
  TempDir programs("testlib-programs"), dir("testlib-restart");
  {
    DaemonProcess crashed(fakeDaemon(programs, "serving", kServingDaemon));
    ASSERT_TRUE(crashed.start(dir.path())) << crashed.lastError();
    crashed.kill9();
  }
  ASSERT_TRUE(fs::exists(dir / "nk.sock"));
  DaemonProcess next(fakeDaemon(programs, "quits", "exit 0\n"));
  EXPECT_FALSE(next.start(dir.path()));
  EXPECT_TRUE(has(next.lastError(), "exited with 0 before its socket")) << next.lastError();
}

}  // namespace
}  // namespace nk::test
