#include "api/stream_pump.h"

namespace nk {

StreamPump::StreamPump(std::chrono::milliseconds period) : period_(period) {
  thread_ = std::thread([this] { run(); });
}

StreamPump::~StreamPump() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

StreamPump::Id StreamPump::add(std::function<void()> poll) {
  std::lock_guard lock(mutex_);
  Id id = next_id_++;
  polls_.emplace(id, std::move(poll));
  return id;
}

void StreamPump::remove(Id id) {
  std::lock_guard lock(mutex_);
  polls_.erase(id);
}

size_t StreamPump::size() const {
  std::lock_guard lock(mutex_);
  return polls_.size();
}

void StreamPump::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period_, [&] { return stopping_; }))
    for (auto& [id, poll] : polls_) poll();
}

}  // namespace nk
