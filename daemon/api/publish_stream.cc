#include "api/publish_stream.h"

#include <span>

#include "api/status_mapping.h"
#include "tasks/debug_hub.h"
#include "tasks/session_registry.h"

namespace v1 = nodekeeper::v1;

namespace nk {

PublishStream::PublishStream(StreamHost& host, StreamHost::Slot slot, SessionRegistry& sessions, DebugHub& hub,
                             uint64_t session)
    : PumpedStream(host, std::move(slot)), sessions_(sessions), hub_(hub), session_(session) {}

void PublishStream::begin() {
  hub_.appConnected(session_, [this](const v1::TaskControl& control) { return queueControl(control); });
  StartSendInitialMetadata();  // the forms this daemon reads (TasksServiceImpl::Publish)
  StartRead(&batch_);
  start(Polling::kWhenWoken);
}

bool PublishStream::queueControl(const v1::TaskControl& control) {
  if (finishing()) return false;
  {
    std::lock_guard lock(controls_mutex_);
    controls_.push_back(control);
  }
  wake();
  return true;
}

void PublishStream::OnReadDone(bool ok) {
  if (!ok) {
    finish(grpc::Status::OK);  // the app closed its side (or the call is over)
    return;
  }
  if (Status taken = take(); !taken) {
    finish(toGrpcStatus(taken));
    return;
  }
  readNext(&batch_, "Tasks.Publish");
}

Status PublishStream::take() {
  // Nothing of a bad batch is kept, so the recording replays as the graph is.
  if (std::string fault = checker_.check(batch_); !fault.empty()) {
    sessions_.noteRefusedBatch();
    return invalidArgument("task events from pid " + std::to_string(slot().pid()) + ": " + fault);
  }
  batch_.set_session_id(session_);
  if (Status appended = sessions_.append(session_, batch_); !appended) return appended;
  if (batch_.gate_reports_size() > 0) hub_.gateReports(session_, batch_.gate_reports());
  return {};
}

PublishStream::Step PublishStream::next(v1::TaskControl& out, grpc::Status&) {
  std::lock_guard lock(controls_mutex_);
  if (controls_.empty()) return Step::kWait;
  out = std::move(controls_.front());
  controls_.pop_front();
  return Step::kSend;
}

void PublishStream::ended() {
  // Once appGone returns, the hub no longer calls queueControl.
  hub_.appGone(session_);
  sessions_.close(session_);
}

}  // namespace nk
