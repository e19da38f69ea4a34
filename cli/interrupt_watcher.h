#pragma once

#include <chrono>
#include <memory>

namespace nk::cli {

// Turns SIGINT and SIGTERM into a flag plus a byte on a self-pipe, so that a
// thread can wait for Ctrl-C with poll() and cancel a gRPC call from there:
// nothing gRPC does is async-signal-safe. One instance at a time; the
// previous handlers come back when it is destroyed.
class InterruptWatcher {
 public:
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  bool valid() const;
  bool interrupted() const;
  // Returns true as soon as a signal has arrived, false after `timeout`.
  bool wait(std::chrono::milliseconds timeout) const;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

}  // namespace nk::cli
