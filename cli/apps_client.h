#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/result.h"
#include "nodekeeper/v1/apps.pb.h"

namespace nk::cli {

// The CLI's side of nodekeeper.v1.AppsService: what an admin or an app's
// owner does with registered apps. Like NodeClient, every call carries a
// deadline and fails with a one-line message meant for the user; the
// daemon's PERMISSION_DENIED and INVALID_ARGUMENT texts pass through as sent.
class AppsClient {
 public:
  AppsClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~AppsClient();
  AppsClient(const AppsClient&) = delete;
  AppsClient& operator=(const AppsClient&) = delete;

  // `ended`: the apps that ended (their energy kept) instead of the running ones.
  Result<nodekeeper::v1::AppList> listApps(bool ended = false);
  Result<nodekeeper::v1::App> setPowerBudget(const nodekeeper::v1::SetPowerBudgetRequest& request);
  Result<nodekeeper::v1::App> setAppPolicy(const nodekeeper::v1::SetAppPolicyRequest& request);

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
