#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "nodekeeper/v1/tasks.pb.h"

namespace nk {

// What a Debug stream's writer sends: the hub's updates come from other
// threads (the app's Publish, the grace ticker), and only the stream's own
// writer thread may write to the stream. Updates leave in the order they
// were pushed.
class Outbox {
 public:
  void push(nodekeeper::v1::DebugUpdate update);
  // No more updates will come; take() hands out what is queued, then ends.
  void close();
  // Waits up to `wait` for updates and moves them all into `out` (which it
  // replaces); false once closed and empty.
  bool take(std::deque<nodekeeper::v1::DebugUpdate>& out, std::chrono::milliseconds wait);

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<nodekeeper::v1::DebugUpdate> queue_;
  bool closed_ = false;
};

}  // namespace nk
