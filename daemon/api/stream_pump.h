#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace nk {

// One thread that looks, every `period`, whether any of the daemon's
// streams has something new to send (a decision, a symptom, a recorded
// frame, the next telemetry sample). A stream that is sending is driven by
// gRPC's completions; the pump only wakes those that wait. Thousands of
// waiting streams then cost one thread, not one each.
class StreamPump {
 public:
  using Id = uint64_t;

  explicit StreamPump(std::chrono::milliseconds period);
  ~StreamPump();
  StreamPump(const StreamPump&) = delete;
  StreamPump& operator=(const StreamPump&) = delete;

  // `poll` must not block: it runs on the pump's one thread, with every
  // other stream waiting behind it. It runs every `every` periods (a watch
  // that may wait a little costs the pump less), the streams of one
  // cadence spread over its periods.
  Id add(std::function<void()> poll, uint32_t every = 1);
  // Once this returns, `id`'s poll is not running and never runs again.
  // Not from within a poll.
  void remove(Id id);

  size_t size() const;
  std::chrono::milliseconds period() const { return period_; }

 private:
  void run();

  const std::chrono::milliseconds period_;
  // Held for a whole pass, so that remove() waits out a running poll.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  struct Poll {
    std::function<void()> poll;
    uint32_t every = 1;
    uint32_t phase = 0;
  };
  std::map<Id, Poll> polls_;
  Id next_id_ = 1;
  uint64_t tick_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nk
