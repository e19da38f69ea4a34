#include "cli/program_output_forwarder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <string>

namespace nk::cli {
namespace {

using namespace std::chrono_literals;

// A pipe the forwarder reads and one it writes to; what arrived.
class ProgramOutputForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe2(program_, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(out_, O_CLOEXEC), 0);
    fcntl(out_[0], F_SETFL, O_NONBLOCK);
  }
  void TearDown() override {
    for (int fd : {program_[1], out_[0], out_[1]})
      if (fd >= 0) close(fd);
  }
  void say(const std::string& text) { ASSERT_EQ(write(program_[1], text.data(), text.size()), ssize_t(text.size())); }
  void programGone() {
    close(program_[1]);
    program_[1] = -1;
  }
  std::string arrived() {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = read(out_[0], buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(n));
    return text;
  }

  int program_[2] = {-1, -1};
  int out_[2] = {-1, -1};
};

TEST_F(ProgramOutputForwarderTest, EveryLineIsPrefixedAndALastLineWithoutNewlineToo) {
  ProgramOutputForwarder forwarder(program_[0], out_[1], "program: ");
  say("one\ntw");
  say("o\n\nthree");
  programGone();
  forwarder.finish(10s);
  EXPECT_EQ(arrived(), "program: one\nprogram: two\nprogram: \nprogram: three\n");
}

TEST_F(ProgramOutputForwarderTest, AHugeLineComesInPiecesEachPrefixed) {
  ProgramOutputForwarder forwarder(program_[0], out_[1], "p: ");
  std::thread writer([&] {
    say(std::string(ProgramOutputForwarder::kMaxLine + 10, 'x') + "\n");
    programGone();
  });
  std::string text;
  // Read while it writes (the pipe holds less than a piece), until both
  // pieces are here (or long past when they would be).
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (std::count(text.begin(), text.end(), '\n') < 2 && std::chrono::steady_clock::now() < give_up) {
    text += arrived();
    std::this_thread::sleep_for(1ms);
  }
  writer.join();
  forwarder.finish(10s);
  EXPECT_EQ(text, "p: " + std::string(ProgramOutputForwarder::kMaxLine, 'x') + "\np: " + std::string(10, 'x') + "\n");
}

TEST_F(ProgramOutputForwarderTest, APipeLeftOpenDoesNotHoldFinish) {
  ProgramOutputForwarder forwarder(program_[0], out_[1], "program: ");
  say("still open\n");
  forwarder.finish(2s);  // returns although the write end stays open
  EXPECT_EQ(arrived(), "program: still open\n");
}

}  // namespace
}  // namespace nk::cli
