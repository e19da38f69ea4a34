#include "tasks/outbox.h"

#include <utility>

namespace nk {

void Outbox::push(nodekeeper::v1::DebugUpdate update) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(update));
  }
  wake_.notify_one();
}

void Outbox::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  wake_.notify_one();
}

bool Outbox::take(std::deque<nodekeeper::v1::DebugUpdate>& out, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, wait, [&] { return closed_ || !queue_.empty(); });
  out.clear();
  out.swap(queue_);
  return !(closed_ && out.empty());
}

}  // namespace nk
