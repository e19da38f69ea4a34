#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace nk::cli {

// The output of a program `nodekeeper debug` started, kept apart from the
// console's own: read from a pipe (the program's stdout and stderr) on a
// thread of its own and written to another descriptor line by line, each
// line prefixed ("program: "), in one write each, so that lines from the
// console and the program never interleave within a line. A line longer
// than kMaxLine is passed on in pieces, each prefixed.
class ProgramOutputForwarder {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;

  // Owns `from` (the pipe's read end) and closes it; `to` is borrowed.
  ProgramOutputForwarder(int from, int to, std::string prefix);
  ~ProgramOutputForwarder();
  ProgramOutputForwarder(const ProgramOutputForwarder&) = delete;
  ProgramOutputForwarder& operator=(const ProgramOutputForwarder&) = delete;

  // The program has ended: passes on what is left, up to the pipe's end or
  // until `drain` has passed (a child the program left behind may hold the
  // pipe open), then stops. Idempotent.
  void finish(std::chrono::milliseconds drain);

 private:
  void run();
  void emit(std::string_view line);

  int from_;
  int to_;
  std::string prefix_;
  // steady_clock ns after which the thread stops; max: not yet asked to.
  std::atomic<int64_t> stop_at_ns_;
  std::thread thread_;
};

}  // namespace nk::cli
