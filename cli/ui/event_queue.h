#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace nk::ui {

// Server-sent events one producer makes and several SSE responses read,
// each at its own pace from its own cursor. Frames are formatted once;
// a frame every subscriber has read is dropped.
class EventQueue {
 public:
  // "event: NAME\ndata: JSON\n\n"
  static std::string frame(std::string_view event, const nlohmann::json& data);

  void push(std::string frame);
  void push(std::string_view event, const nlohmann::json& data) { push(frame(event, data)); }
  // No more frames: readers get what is left, then the end.
  void close();
  bool closed() const;

  // A reader starting at the current end (so it gets the frames pushed
  // from now on); its id for read() and unsubscribe().
  uint64_t subscribe();
  void unsubscribe(uint64_t reader);
  size_t readers() const;

  struct Read {
    std::string text;  // frames, concatenated; empty when none came in time
    bool ended = false;  // closed and everything read
  };
  // The reader's unread frames, waiting up to `wait` for one.
  Read read(uint64_t reader, std::chrono::milliseconds wait);

 private:
  void trim();  // with mutex_ held

  mutable std::mutex mutex_;
  std::condition_variable pushed_;
  std::deque<std::string> frames_;
  uint64_t base_ = 0;  // the sequence number of frames_[0]
  std::map<uint64_t, uint64_t> cursors_;  // reader -> next frame's sequence number
  uint64_t next_reader_ = 1;
  bool closed_ = false;
};

}  // namespace nk::ui
