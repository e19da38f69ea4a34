#pragma once

#include "nodekeeper/v1/apps.grpc.pb.h"

namespace nk {

class AppRegistry;
class AccessPolicy;

// AppsService: translates requests to AppRegistry calls; the caller's pid and
// uid come from SO_PEERCRED (PeerIdentity), never from the request.
class AppsServiceImpl final : public nodekeeper::v1::AppsService::Service {
 public:
  AppsServiceImpl(AppRegistry& apps, const AccessPolicy& access);

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
  grpc::Status Control(grpc::ServerContext*,
                       grpc::ServerReaderWriter<nodekeeper::v1::AppDecision, nodekeeper::v1::AppReport>*) override;

 private:
  AppRegistry& apps_;
  const AccessPolicy& access_;
};

}  // namespace nk
