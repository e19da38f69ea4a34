#include "api/stream_pump.h"

#include <pthread.h>

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

StreamPump::Id StreamPump::add(std::function<void()> poll, uint32_t every) {
  std::lock_guard lock(mutex_);
  Id id = next_id_++;
  every = every == 0 ? 1 : every;
  polls_.emplace(id, Poll{std::move(poll), every, static_cast<uint32_t>(id % every)});
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
  pthread_setname_np(pthread_self(), "nk-streams");
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period_, [&] { return stopping_; })) {
    ++tick_;
    for (auto& [id, entry] : polls_)
      if (tick_ % entry.every == entry.phase) entry.poll();
  }
}

}  // namespace nk
