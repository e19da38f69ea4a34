#include "apps_service_impl.h"

#include "api/app_control_stream.h"
#include "api/app_wire.h"
#include "api/refused_stream.h"
#include "apps/app_registry.h"
#include "apps/job_app_terms.h"
#include "peer_identity.h"
#include "status_mapping.h"

namespace nk {

namespace v1 = nodekeeper::v1;

namespace {

// A uint64 above INT64_MAX is what a negative number sent as unsigned looks
// like; the registry then rejects it as not positive.
int64_t toSignedMw(uint64_t mw) { return static_cast<int64_t>(mw); }

}  // namespace

AppsServiceImpl::AppsServiceImpl(AppRegistry& apps, const AccessPolicy& access, StreamHost& streams,
                                 JobAppTerms* job_terms)
    : apps_(apps), access_(access), streams_(streams), job_terms_(job_terms) {}

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
  auto app = job_terms_ ? job_terms_->registerApp(*peer, registration) : apps_.registerApp(*peer, registration);
  if (!app) return toGrpcStatus(app.error());
  AppWire::toProto(*app, out);
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
  AppWire::toProto(*app, out);
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::SetAppPolicy(grpc::ServerContext* context, const v1::SetAppPolicyRequest* request,
                                           v1::App* out) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  auto app = apps_.setPolicy(*peer, request->app_id(), request->policy());
  if (!app) return toGrpcStatus(app.error());
  AppWire::toProto(*app, out);
  return grpc::Status::OK;
}

grpc::Status AppsServiceImpl::ListApps(grpc::ServerContext*, const v1::ListAppsRequest* request, v1::AppList* out) {
  for (const auto& app : request->ended() ? apps_.listEnded() : apps_.list()) AppWire::toProto(app, out->add_apps());
  AppRegistry::EnergyTotals totals = apps_.energyTotals();
  out->set_packages_energy_j(totals.packages_j);
  out->set_accounted_energy_j(totals.accounted_j);
  out->set_unattributed_energy_j(totals.unattributed_j);
  return grpc::Status::OK;
}

grpc::ServerBidiReactor<v1::AppReport, v1::AppDecision>* AppsServiceImpl::Control(grpc::CallbackServerContext* context) {
  using Refused = RefusedStream<grpc::ServerBidiReactor<v1::AppReport, v1::AppDecision>>;
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  auto slot = streams_.admit(*peer, "Apps.Control");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto* stream = streams_.adopt(std::make_unique<AppControlStream>(streams_, std::move(*slot), apps_, *peer));
  stream->begin();
  return stream;
}

}  // namespace nk
