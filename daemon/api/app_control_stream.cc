#include "api/app_control_stream.h"

#include <chrono>

#include "api/app_wire.h"
#include "api/status_mapping.h"
#include "apps/app_registry.h"

namespace v1 = nodekeeper::v1;

namespace nk {

AppControlStream::AppControlStream(StreamHost& host, StreamHost::Slot slot, AppRegistry& apps, PeerCredentials peer)
    : PumpedStream(host, std::move(slot)), apps_(apps), peer_(std::move(peer)) {}

void AppControlStream::begin() { StartRead(&report_); }

void AppControlStream::OnReadDone(bool ok) {
  if (!ok) {
    // The app ended the stream (or it broke): OK first, so that the writer
    // seeing the app gone cannot call it cancelled.
    finish(grpc::Status::OK);
    if (attached_) (void)apps_.endControl(app_id_);
    return;
  }
  if (!attached_) {
    if (Status attached = attach(); !attached) {
      finish(toGrpcStatus(attached));
      return;
    }
  } else if (report_.team_size() > 0) {
    (void)apps_.report(app_id_, report_.team_size());
  }
  readNext(&report_, "Apps.Control");
}

Status AppControlStream::attach() {
  app_id_ = report_.app_id();
  if (app_id_ == 0) {
    auto own = apps_.findByPid(peer_.pid);
    if (!own)
      return notFound("process " + std::to_string(peer_.pid) + " has no registered app; call RegisterApp first");
    app_id_ = own->id;
  }
  auto attached = apps_.attachControl(peer_, app_id_);
  if (!attached) return attached.error();
  attached_ = true;
  if (report_.team_size() > 0) (void)apps_.report(app_id_, report_.team_size());
  start(Polling::kEveryPeriod);
  return {};
}

AppControlStream::Step AppControlStream::next(v1::AppDecision& out, grpc::Status& status) {
  bool gone = false;
  auto decision = apps_.waitDecision(app_id_, sent_seq_, std::chrono::milliseconds(0), &gone);
  if (gone) {
    // Unregistered (UnregisterApp, reaping): ending the stream also ends the
    // read side, whose end then finds nothing left to unregister.
    status = streamCancelled("control stream of app " + std::to_string(app_id_) + " ended: unregistered");
    return Step::kFinish;
  }
  if (!decision) return Step::kWait;
  AppWire::toProto(app_id_, *decision, &out);
  sent_seq_ = decision->seq;
  return Step::kSend;
}

}  // namespace nk
