#include "api/debug_stream.h"

#include "api/status_mapping.h"
#include "tasks/debug_hub.h"
#include "tasks/session_registry.h"

namespace v1 = nodekeeper::v1;

namespace nk {

DebugStream::DebugStream(StreamHost& host, StreamHost::Slot slot, SessionRegistry& sessions, DebugHub& hub,
                         DebugCommandPolicy& policy, DebugCommandPolicy::Caller caller)
    : PumpedStream(host, std::move(slot)),
      sessions_(sessions),
      hub_(hub),
      policy_(policy),
      caller_(caller) {}

void DebugStream::begin() { StartRead(&command_); }

void DebugStream::OnReadDone(bool ok) {
  if (!ok) {
    if (attached_)
      leave();
    else
      finish(grpc::Status::OK);  // closed before attaching
    return;
  }
  if (!attached_) {
    if (Status attached = attach(); !attached) {
      finish(toGrpcStatus(attached));
      return;
    }
  } else {
    policy_.handle(frontend_, session_, caller_, command_);
  }
  readNext(&command_, "Tasks.Debug");
}

Status DebugStream::attach() {
  if (!command_.has_attach())
    return invalidArgument("a Debug stream's first command must be attach (with a session id)");
  auto info = policy_.sessionFor(caller_, command_.attach().session_id(), "debug");
  if (!info) return info.error();
  if (command_.attach().events()) {
    if (Status recorded = RecordingFollower::checkRecorded(*info); !recorded) return recorded;
    auto opened = RecordingFollower::open(sessions_, *info, false);
    if (!opened) return opened.error();
    follower_.emplace(std::move(*opened));
  }
  session_ = info->id;
  attached_ = true;
  frontend_ = hub_.attach(
      session_, [this](const v1::DebugUpdate& update) { queueUpdate(update); },
      std::chrono::seconds(command_.attach().grace_s()));
  policy_.greet(frontend_, *info, command_.command_id());
  start(follower_ ? Polling::kEveryPeriod : Polling::kWhenWoken);
  return {};
}

void DebugStream::queueUpdate(const v1::DebugUpdate& update) {
  {
    std::lock_guard lock(updates_mutex_);
    updates_.push_back(update);
  }
  wake();
}

void DebugStream::leave() {
  if (!detached_.exchange(true)) hub_.detach(frontend_);
  {
    std::lock_guard lock(updates_mutex_);
    closing_ = true;
  }
  wake();
}

DebugStream::Step DebugStream::next(v1::DebugUpdate& out, grpc::Status& status) {
  {
    std::lock_guard lock(updates_mutex_);
    if (!updates_.empty()) {
      out = std::move(updates_.front());
      updates_.pop_front();
      return Step::kSend;
    }
    if (closing_) {
      status = grpc::Status::OK;
      return Step::kFinish;
    }
  }
  if (!follower_) return Step::kWait;
  out.Clear();
  auto progress = follower_->next(*out.mutable_events());
  if (!progress) {
    out = DebugCommandPolicy::refusal(0, progress.error().message);
    follower_.reset();  // nothing more to follow
    return Step::kSend;
  }
  if (*progress == RecordingFollower::Progress::kFrame) return Step::kSend;
  if (*progress == RecordingFollower::Progress::kEnded) follower_.reset();
  return Step::kWait;
}

void DebugStream::ended() {
  if (attached_ && !detached_.exchange(true)) hub_.detach(frontend_);
}

}  // namespace nk
