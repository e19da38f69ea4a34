#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <mutex>
#include <optional>
#include <string_view>

#include "api/message_rate_limit.h"
#include "api/stream_host.h"

namespace nk {

// The writing half of a callback-API stream (Reactor is
// grpc::ServerWriteReactor<Response> or grpc::ServerBidiReactor<Request,
// Response>), with no thread of its own: next() is asked for a message
// whenever the previous write has completed, when the stream is woken
// (wake(), from whatever produced something to send), and every period of
// the host's pump. gRPC allows one write in flight; the "writer role" below
// is whoever may call next() and StartWrite, so next() never runs twice at
// once. The stream is the host's until gRPC is done with it (OnDone).
template <class Reactor, class Response>
class PumpedStream : public Reactor {
 public:
  enum class Step { kSend, kWait, kFinish };

  explicit PumpedStream(StreamHost& host, StreamHost::Slot slot)
      : host_(host), slot_(std::move(slot)), rate_(host.rateLimit()) {}

  // kEveryPeriod: next() may find something without being woken (a new
  // decision, sample or recorded frame), so the pump asks every period;
  // kWhenWoken: whatever it sends comes through wake().
  enum class Polling { kEveryPeriod, kWhenWoken };

  // Looks for a first message; once, after construction (next() is
  // virtual). With kEveryPeriod, `every` pump periods.
  void start(Polling polling, uint32_t every = 1) {
    if (polling == Polling::kEveryPeriod) pump_id_ = host_.pump().add([this] { wake(); }, every);
    wake();
  }

  // Something to send may have arrived. Any thread.
  void wake() {
    {
      std::lock_guard lock(state_mutex_);
      if (finish_called_) return;
      if (writing_) {
        again_ = true;
        return;
      }
      writing_ = true;
    }
    writeNext();
  }

  // Ends the stream with `status` once the write in flight (if any) is done;
  // the first status given wins. Any thread.
  void finish(grpc::Status status) {
    {
      std::lock_guard lock(state_mutex_);
      if (finish_called_ || finish_wanted_) return;
      finish_wanted_ = std::move(status);
      if (writing_) return;  // the writer finishes when its write is done
      writing_ = true;
    }
    writeNext();
  }

  bool finishing() const {
    std::lock_guard lock(state_mutex_);
    return finish_wanted_.has_value();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) finish(grpc::Status(grpc::StatusCode::CANCELLED, "the stream's reader went away"));
    writeNext();  // still the writer: writing_ stayed set while the write was in flight
  }

  void OnCancel() override { finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client")); }

  void OnDone() override {
    if (pump_id_ != 0) host_.pump().remove(pump_id_);
    StreamPump::Id held_pump_id = 0;
    {
      std::lock_guard lock(state_mutex_);
      held_pump_id = held_pump_id_;
    }
    if (held_pump_id != 0) host_.pump().remove(held_pump_id);
    ended();
    host_.release(this);  // destroys this stream: nothing may follow
  }

 protected:
  // The next message into `out` (kSend), nothing yet (kWait), or the end of
  // the stream with `status` (kFinish). Must not block.
  virtual Step next(Response& out, grpc::Status& status) = 0;
  // After gRPC's last reaction, before the stream is destroyed.
  virtual void ended() {}

  const StreamHost::Slot& slot() const { return slot_; }

  // Counts the message the client just sent on `method`'s stream and reads
  // the next into `request`: at once within the host's rate, or else once
  // the rate allows (the pump looks each period). A client that sends
  // faster is slowed, as a full socket slows it, and loses nothing: ending
  // its stream instead punished an honest one whose messages the daemon,
  // stalled for a while on a busy node, then found in a clump. What waits
  // meanwhile is bounded by gRPC's flow-control window. Logged at most once
  // a minute per user.
  template <class Request>
  void readNext(Request* request, std::string_view method) {
    const auto now = MessageRateLimit::Clock::now();
    const auto wait = rate_.take(now);
    if (wait <= wait.zero()) {
      this->StartRead(request);
      return;
    }
    host_.heldToRate(slot_.uid(), slot_.pid(), method);
    bool watch = false;
    {
      std::lock_guard lock(state_mutex_);
      if (finish_called_) return;
      held_read_ = [this, request] { this->StartRead(request); };
      held_until_ = now + wait;
      watch = held_pump_id_ == 0;
      if (watch) held_pump_id_ = kAddingPoll;
    }
    // Once for the stream's life (a poll may not remove itself); OnDone
    // removes it. Added outside the lock: the pump holds its own while a
    // poll runs, and the poll takes this one.
    if (watch) {
      const StreamPump::Id id = host_.pump().add([this] { resumeHeldRead(); });
      std::lock_guard lock(state_mutex_);
      held_pump_id_ = id;
    }
  }
  StreamHost& host() { return host_; }

 private:
  // Called by the writer role's holder; hands it on to OnWriteDone (a write
  // started), to nobody (nothing to send), or ends the stream.
  void writeNext() {
    while (true) {
      std::optional<grpc::Status> final_status;
      {
        std::lock_guard lock(state_mutex_);
        if (finish_called_) return;
        if (finish_wanted_) {
          finish_called_ = true;
          final_status = *finish_wanted_;
        }
        again_ = false;
      }
      if (final_status) {
        this->Finish(*final_status);
        return;
      }
      grpc::Status status;
      switch (next(message_, status)) {
        case Step::kSend:
          this->StartWrite(&message_);
          return;
        case Step::kFinish: {
          std::lock_guard lock(state_mutex_);
          if (!finish_wanted_) finish_wanted_ = std::move(status);
          continue;
        }
        case Step::kWait: {
          std::lock_guard lock(state_mutex_);
          if (again_ || finish_wanted_) continue;
          writing_ = false;
          return;
        }
      }
    }
  }

  // From the pump: a read held for the rate starts once it is due. Under
  // the state lock, so that it starts before Finish or not at all
  // (writeNext marks finish_called_ under the same lock first); gRPC runs
  // the OnReadDone it leads to on its own threads, never inside StartRead.
  void resumeHeldRead() {
    std::lock_guard lock(state_mutex_);
    if (!held_read_ || finish_called_ || MessageRateLimit::Clock::now() < held_until_) return;
    std::function<void()> read = std::move(held_read_);
    held_read_ = nullptr;
    read();
  }

  // held_pump_id_ while readNext adds the poll, so that only one is added.
  static constexpr StreamPump::Id kAddingPoll = ~StreamPump::Id{0};

  StreamHost& host_;
  StreamHost::Slot slot_;
  MessageRateLimit rate_;  // of what the client sends (reading streams only)
  StreamPump::Id pump_id_ = 0;
  mutable std::mutex state_mutex_;
  bool writing_ = false;  // someone holds the writer role
  bool again_ = false;    // woken while the role was held: look once more
  std::optional<grpc::Status> finish_wanted_;
  bool finish_called_ = false;
  std::function<void()> held_read_;  // the next read, held for the rate
  MessageRateLimit::Clock::time_point held_until_;
  StreamPump::Id held_pump_id_ = 0;  // the poll that resumes held reads
  Response message_;
};

}  // namespace nk
