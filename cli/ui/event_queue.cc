#include "cli/ui/event_queue.h"

namespace nk::ui {

std::string EventQueue::frame(std::string_view event, const nlohmann::json& data) {
  // dump() puts no newline inside: the data is one line, as SSE needs.
  return "event: " + std::string(event) + "\ndata: " +
         data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

void EventQueue::push(std::string frame) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (cursors_.empty()) {
      // Nobody would read it: new readers start from the end anyway.
      base_ += 1;
      return;
    }
    frames_.push_back(std::move(frame));
  }
  pushed_.notify_all();
}

void EventQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  pushed_.notify_all();
}

bool EventQueue::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

uint64_t EventQueue::subscribe() {
  std::lock_guard lock(mutex_);
  uint64_t reader = next_reader_++;
  cursors_[reader] = base_ + frames_.size();
  return reader;
}

void EventQueue::unsubscribe(uint64_t reader) {
  std::lock_guard lock(mutex_);
  cursors_.erase(reader);
  trim();
}

size_t EventQueue::readers() const {
  std::lock_guard lock(mutex_);
  return cursors_.size();
}

EventQueue::Read EventQueue::read(uint64_t reader, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  auto cursor = cursors_.find(reader);
  if (cursor == cursors_.end()) return {"", true};
  auto unread = [&] { return cursor->second < base_ + frames_.size(); };
  pushed_.wait_for(lock, wait, [&] { return unread() || closed_; });
  Read out;
  while (unread()) out.text += frames_[cursor->second++ - base_];
  out.ended = closed_ && !unread();
  trim();
  return out;
}

void EventQueue::trim() {
  uint64_t oldest = base_ + frames_.size();
  for (const auto& [reader, next] : cursors_) oldest = std::min(oldest, next);
  while (base_ < oldest) {
    frames_.pop_front();
    ++base_;
  }
}

}  // namespace nk::ui
