#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "app_record.h"
#include "base/result.h"
#include "node/access_policy.h"

namespace nk {

class AppRegistry;

// What a scheduler's job asked for its apps (srun --nk-budget, --nk-policy).
struct JobTerms {
  std::string job_id;
  uint64_t power_budget_mw = 0;  // 0: none
  std::string policy;            // "": none
};

// Registers apps with their job's terms: an app that asks for no budget and
// no policy of its own, and whose process belongs to a job with terms, gets
// the job's policy and an equal share of the job's budget; the job's other
// apps here are set to the same share, so the job's apps on this node
// together keep to its budget. When one of them leaves (appLeft), the
// others here split the budget again among themselves.
// When the registry refuses the job's terms (a policy it does not know, a
// budget over the node's cap) the app registers as it asked, with a
// warning: a job never fails for nodekeeper.
class JobAppTerms {
 public:
  using Lookup = std::function<std::optional<JobTerms>(pid_t)>;

  JobAppTerms(AppRegistry& apps, Lookup terms_of_process, std::function<void(const std::string&)> log_warning);

  Result<AppRecord> registerApp(const PeerCredentials& caller, AppRegistration registration);
  // The registry's on_removed: an app registered with its job's terms hands
  // its share back to the job's apps still here.
  void appLeft(const AppRecord& app);

 private:
  AppRegistry& apps_;
  Lookup terms_of_process_;
  std::function<void(const std::string&)> log_warning_;
  std::mutex mutex_;  // one job-terms registration at a time: shares are computed from the others
  std::map<uint64_t, std::string> job_of_app_;  // apps registered with a job's terms
  std::map<std::string, uint64_t> budget_of_job_;  // mW, as its latest app registered it
};

}  // namespace nk
