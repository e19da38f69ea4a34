#pragma once

#include "api/stream_host.h"
#include "nodekeeper/v1/apps.grpc.pb.h"

namespace nk {

class AppRegistry;
class JobAppTerms;
class AccessPolicy;

// AppsService: translates requests to AppRegistry calls; the caller's pid and
// uid come from SO_PEERCRED (PeerIdentity), never from the request. Control
// streams use gRPC's callback API (AppControlStream, held by the StreamHost).
class AppsServiceImpl final
    : public nodekeeper::v1::AppsService::WithCallbackMethod_Control<nodekeeper::v1::AppsService::Service> {
 public:
  // `job_terms`: registrations go through it (an app of a scheduler's job
  // gets the job's budget and policy); without it, straight to `apps`.
  AppsServiceImpl(AppRegistry& apps, const AccessPolicy& access, StreamHost& streams,
                  JobAppTerms* job_terms = nullptr);

  grpc::Status RegisterApp(grpc::ServerContext*, const nodekeeper::v1::RegisterAppRequest*,
                           nodekeeper::v1::App*) override;
  grpc::Status UnregisterApp(grpc::ServerContext*, const nodekeeper::v1::UnregisterAppRequest*,
                             nodekeeper::v1::UnregisterAppResponse*) override;
  grpc::Status RegisterThread(grpc::ServerContext*, const nodekeeper::v1::RegisterThreadRequest*,
                              nodekeeper::v1::RegisterThreadResponse*) override;
  grpc::Status SetPowerBudget(grpc::ServerContext*, const nodekeeper::v1::SetPowerBudgetRequest*,
                              nodekeeper::v1::App*) override;
  grpc::Status SetAppPolicy(grpc::ServerContext*, const nodekeeper::v1::SetAppPolicyRequest*,
                            nodekeeper::v1::App*) override;
  grpc::Status ListApps(grpc::ServerContext*, const nodekeeper::v1::ListAppsRequest*,
                        nodekeeper::v1::AppList*) override;
  grpc::ServerBidiReactor<nodekeeper::v1::AppReport, nodekeeper::v1::AppDecision>* Control(
      grpc::CallbackServerContext*) override;

 private:
  AppRegistry& apps_;
  const AccessPolicy& access_;
  StreamHost& streams_;
  JobAppTerms* job_terms_;
};

}  // namespace nk
