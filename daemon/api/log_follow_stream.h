#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "api/pumped_stream.h"

namespace nk {

// A server stream over an append-only log read by id (symptoms, fault
// reports): what the log holds after id 0, in order, then, with `follow`,
// what is appended until the caller leaves. `fetch(after, out)` appends the
// caller's next entries after id `after` to `out` and returns the newest id
// it looked at (the next call's `after`); it must not block.
template <class Message>
class LogFollowStream final : public PumpedStream<grpc::ServerWriteReactor<Message>, Message> {
 public:
  using Fetch = std::function<uint64_t(uint64_t after, std::deque<Message>& out)>;
  using Base = PumpedStream<grpc::ServerWriteReactor<Message>, Message>;

  LogFollowStream(StreamHost& host, StreamHost::Slot slot, Fetch fetch, bool follow)
      : Base(host, std::move(slot)), fetch_(std::move(fetch)), follow_(follow) {}

  // A watcher is a person or a script: a tenth of a second late is nothing
  // to it, and a fifth of the pump's work for thousands of idle watches.
  void begin() { this->start(follow_ ? Base::Polling::kEveryPeriod : Base::Polling::kWhenWoken, kPeriodsPerLook); }

 private:
  typename Base::Step next(Message& out, grpc::Status& status) override {
    while (pending_.empty()) {
      const uint64_t before = after_;
      after_ = fetch_(after_, pending_);
      if (pending_.empty() && after_ == before) {  // nothing newer (what was newer was not the caller's)
        if (follow_) return Base::Step::kWait;
        status = grpc::Status::OK;
        return Base::Step::kFinish;
      }
    }
    out = std::move(pending_.front());
    pending_.pop_front();
    return Base::Step::kSend;
  }

  static constexpr uint32_t kPeriodsPerLook = 5;

  Fetch fetch_;
  const bool follow_;
  uint64_t after_ = 0;
  std::deque<Message> pending_;
};

}  // namespace nk
