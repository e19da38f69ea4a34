#include "apps_service_impl.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "apps/app_registry.h"
#include "peer_identity.h"
#include "status_mapping.h"

namespace nk {

namespace v1 = nodekeeper::v1;

namespace {

void toProto(const AppThreadRecord& thread, v1::AppThread* out) {
  out->set_tid(thread.tid);
  out->set_omp_thread_num(thread.omp_thread_num);
  out->set_core(thread.core);
  for (uint32_t cpu : thread.affinity) out->mutable_affinity()->add_cpus(cpu);
}

void toProto(const AppRecord& app, v1::App* out) {
  out->set_app_id(app.id);
  out->set_pid(app.pid);
  out->set_uid(app.uid);
  out->set_name(app.name);
  out->set_power_budget_mw(app.power_budget_mw);
  out->set_policy(app.policy);
  out->set_thread_count(app.decision.thread_count);
  out->set_max_threads(app.max_threads);
  out->set_reported_team_size(app.reported_team_size);
  out->set_control_attached(app.control_attached);
  out->set_measured_power_mw(app.measured_power_mw);
  out->set_effective_budget_mw(app.effective_budget_mw);
  out->set_effective_policy(app.effective_policy);
  out->set_budget_floor_mw(app.budget_floor_mw);
  out->set_budget_warning(app.budget_warning);
  out->set_over_budget_reason(app.over_budget_reason);
  out->set_managed(app.managed);
  for (const auto& thread : app.threads) toProto(thread, out->add_threads());
}

// A uint64 above INT64_MAX is what a negative number sent as unsigned looks
// like; the registry then rejects it as not positive.
int64_t toSignedMw(uint64_t mw) { return static_cast<int64_t>(mw); }

// How long a control stream waits for a decision before it looks at
// cancellation again; decisions themselves wake it at once.
constexpr std::chrono::milliseconds kControlWakeup{500};

}  // namespace

AppsServiceImpl::AppsServiceImpl(AppRegistry& apps, const AccessPolicy& access) : apps_(apps), access_(access) {}

grpc::Status AppsServiceImpl::RegisterApp(grpc::ServerContext* context, const v1::RegisterAppRequest* request,
                                          v1::App* out) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  AppRegistration registration;
  registration.name = request->name();
  registration.power_budget_mw = request->power_budget_mw();
  registration.max_threads = request->max_threads();
  registration.policy = request->policy();
  registration.tracing_only = request->tracing_only();
  auto app = apps_.registerApp(*peer, registration);
  if (!app) return toGrpcStatus(app.error());
  toProto(*app, out);
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::UnregisterApp(grpc::ServerContext* context, const v1::UnregisterAppRequest* request,
                                            v1::UnregisterAppResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto removed = apps_.unregisterApp(*peer, request->app_id());
  if (!removed) return toGrpcStatus(removed.error());
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::RegisterThread(grpc::ServerContext* context, const v1::RegisterThreadRequest* request,
                                             v1::RegisterThreadResponse*) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  if (request->end()) return toGrpcStatus(apps_.unregisterThread(*peer, request->app_id(), request->tid()));
  return toGrpcStatus(apps_.registerThread(*peer, request->app_id(), request->tid(), request->omp_thread_num()));
}

grpc::Status AppsServiceImpl::SetPowerBudget(grpc::ServerContext* context, const v1::SetPowerBudgetRequest* request,
                                             v1::App* out) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto app = apps_.setPowerBudget(*peer, request->app_id(), toSignedMw(request->power_budget_mw()));
  if (!app) return toGrpcStatus(app.error());
  toProto(*app, out);
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::SetAppPolicy(grpc::ServerContext* context, const v1::SetAppPolicyRequest* request,
                                           v1::App* out) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto app = apps_.setPolicy(*peer, request->app_id(), request->policy());
  if (!app) return toGrpcStatus(app.error());
  toProto(*app, out);
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::ListApps(grpc::ServerContext*, const v1::ListAppsRequest*, v1::AppList* out) {
  for (const auto& app : apps_.list()) toProto(app, out->add_apps());
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::Control(grpc::ServerContext* context,
                                      grpc::ServerReaderWriter<v1::AppDecision, v1::AppReport>* stream) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  v1::AppReport first;
  if (!stream->Read(&first)) return grpc::Status::OK;  // closed before saying who it is
  uint64_t app_id = first.app_id();
  if (app_id == 0) {
    auto own = apps_.findByPid(peer->pid);
    if (!own)
      return toGrpcStatus(
          notFound("process " + std::to_string(peer->pid) + " has no registered app; call RegisterApp first"));
    app_id = own->id;
  }
  auto attached = apps_.attachControl(*peer, app_id);
  if (!attached) return toGrpcStatus(attached.error());
  if (first.team_size() > 0) (void)apps_.report(app_id, first.team_size());

  // One thread reads reports; the end of the stream (the app closed it or
  // died) unregisters the app, which wakes the writer below at once.
  std::atomic<bool> reader_done{false};
  std::thread reader([&] {
    v1::AppReport report;
    while (stream->Read(&report))
      if (report.team_size() > 0) (void)apps_.report(app_id, report.team_size());
    reader_done = true;
    (void)apps_.endControl(app_id);
  });

  uint64_t sent_seq = 0;
  while (true) {
    bool gone = false;
    auto decision = apps_.waitDecision(app_id, sent_seq, kControlWakeup, &gone);
    if (gone) break;
    if (context->IsCancelled()) break;
    if (!decision) continue;
    v1::AppDecision message;
    message.set_app_id(app_id);
    message.set_thread_count(decision->thread_count);
    message.set_sequence(decision->seq);
    for (const auto& thread : decision->threads) toProto(thread, message.add_threads());
    for (const auto& [core, khz] : decision->core_khz) {
      auto* f = message.add_frequencies();
      f->set_core(core);
      f->set_khz(khz);
    }
    if (!stream->Write(message)) break;
    sent_seq = decision->seq;
  }
  // Unless the app ended the stream, it was unregistered by someone else
  // (UnregisterApp, reaping) or a write failed: cancel, so that the reader's
  // Read returns (and unregisters the app if it is still there).
  bool ended_by_app = reader_done;
  if (!ended_by_app) context->TryCancel();
  reader.join();
  if (ended_by_app) return grpc::Status::OK;
  return streamCancelled("control stream of app " + std::to_string(app_id) +
                         " ended: unregistered, or the stream broke");
}

}  // namespace nk
