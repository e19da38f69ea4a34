#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "api/connection_limits.h"
#include "api/message_rate_limit.h"
#include "api/stream_pump.h"
#include "base/result.h"
#include "common/log_rate_limit.h"
#include "node/access_policy.h"

namespace nk {

// Where the daemon's streams (every server-streaming and bidirectional RPC)
// live: who may open one more (per user and in all, root exempt, as
// ConnectionLimits counts them), the one pump thread that wakes those
// waiting for something to send, and the ownership of each stream's reactor
// from the call's start until gRPC is done with it. Refusals are logged at
// most once a minute per user.
class StreamHost {
 public:
  struct Settings {
    ConnectionLimits::Settings streams{.per_user = 256, .total = 4096};
    // What one stream's client may send; past it the stream is read no
    // faster (PumpedStream::readNext).
    uint32_t messages_per_second = 10000;
    std::chrono::milliseconds pump_period{20};
  };

  // A stream's place in the counts; given back when it is destroyed.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept { *this = std::move(other); }
    Slot& operator=(Slot&& other) noexcept;
    ~Slot();
    uid_t uid() const { return uid_; }
    pid_t pid() const { return pid_; }

   private:
    friend class StreamHost;
    Slot(StreamHost* host, uid_t uid, pid_t pid) : host_(host), uid_(uid), pid_(pid) {}
    StreamHost* host_ = nullptr;
    uid_t uid_ = 0;
    pid_t pid_ = 0;
  };

  StreamHost(Settings settings, std::function<void(const std::string&)> log_warning);
  StreamHost(const StreamHost&) = delete;
  StreamHost& operator=(const StreamHost&) = delete;

  // One more stream for `peer` calling `method`, or RESOURCE_EXHAUSTED.
  Result<Slot> admit(const PeerCredentials& peer, std::string_view method);

  // Keeps `stream` until release(stream); returns it.
  template <class T>
  T* adopt(std::unique_ptr<T> stream) {
    T* raw = stream.get();
    std::lock_guard lock(mutex_);
    streams_.emplace(dynamic_cast<const void*>(raw), std::shared_ptr<void>(std::move(stream)));
    return raw;
  }
  // Destroys the stream (its most derived object); from its OnDone.
  template <class T>
  void release(T* stream) {
    releaseObject(dynamic_cast<const void*>(stream));
  }

  // A client of `uid` sent faster than the per-stream rate and its stream's
  // reads are held back to it: says so, at most once a minute per user.
  void heldToRate(uid_t uid, pid_t pid, std::string_view method);

  MessageRateLimit rateLimit() const { return MessageRateLimit(settings_.messages_per_second); }
  StreamPump& pump() { return pump_; }
  size_t open() const;
  const Settings& settings() const { return settings_; }

 private:
  void releaseSlot(uid_t uid);
  void releaseObject(const void* stream);
  bool mayLog(uid_t uid);

  const Settings settings_;
  std::function<void(const std::string&)> log_warning_;
  mutable std::mutex mutex_;
  ConnectionLimits limits_;
  std::map<uid_t, LogRateLimit> rate_logs_;
  std::map<const void*, std::shared_ptr<void>> streams_;
  static constexpr uint64_t kReleasesPerTrim = 1000;
  uint64_t released_since_trim_ = 0;
  // Last: its thread stops before the streams it polls are gone.
  StreamPump pump_;
};

}  // namespace nk
