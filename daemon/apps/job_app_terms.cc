#include "job_app_terms.h"

#include <vector>

#include "app_registry.h"

namespace nk {

JobAppTerms::JobAppTerms(AppRegistry& apps, Lookup terms_of_process,
                         std::function<void(const std::string&)> log_warning)
    : apps_(apps), terms_of_process_(std::move(terms_of_process)), log_warning_(std::move(log_warning)) {}

Result<AppRecord> JobAppTerms::registerApp(const PeerCredentials& caller, AppRegistration registration) {
  if (registration.power_budget_mw != 0 || !registration.policy.empty() || caller.pid <= 0 || !terms_of_process_)
    return apps_.registerApp(caller, registration);
  std::optional<JobTerms> terms = terms_of_process_(caller.pid);
  if (!terms || (terms->power_budget_mw == 0 && terms->policy.empty())) return apps_.registerApp(caller, registration);

  std::lock_guard lock(mutex_);
  std::vector<uint64_t> siblings;
  for (auto it = job_of_app_.begin(); it != job_of_app_.end();) {
    std::optional<AppRecord> app = apps_.find(it->first);
    if (!app) {
      it = job_of_app_.erase(it);
      continue;
    }
    // The same process asking again (its first answer came late) gets the
    // app it has: the registry answers a repeated request with it.
    if (app->pid == caller.pid) {
      registration.power_budget_mw = app->power_budget_mw;
      registration.policy = app->policy;
      return apps_.registerApp(caller, registration);
    }
    if (it->second == terms->job_id) siblings.push_back(it->first);
    ++it;
  }
  const uint64_t share = terms->power_budget_mw / (siblings.size() + 1);
  AppRegistration with_terms = registration;
  with_terms.power_budget_mw = share;
  with_terms.policy = terms->policy;
  Result<AppRecord> app = apps_.registerApp(caller, with_terms);
  if (!app) {
    if (log_warning_)
      log_warning_("job " + terms->job_id + ": its terms do not apply to pid " + std::to_string(caller.pid) + " (" +
                   app.error().message + "); it registers with its own");
    return apps_.registerApp(caller, registration);
  }
  job_of_app_[app->id] = terms->job_id;
  budget_of_job_[terms->job_id] = terms->power_budget_mw;
  if (share != 0)
    for (uint64_t sibling : siblings)
      if (auto set = apps_.setPowerBudget(caller, sibling, static_cast<int64_t>(share)); !set && log_warning_)
        log_warning_("job " + terms->job_id + ": app " + std::to_string(sibling) + " keeps its budget (" +
                     set.error().message + ")");
  return app;
}

void JobAppTerms::appLeft(const AppRecord& app) {
  std::lock_guard lock(mutex_);
  auto left = job_of_app_.find(app.id);
  if (left == job_of_app_.end()) return;
  const std::string job_id = std::move(left->second);
  job_of_app_.erase(left);
  std::vector<uint64_t> siblings;
  for (const auto& [id, job] : job_of_app_)
    if (job == job_id && apps_.find(id)) siblings.push_back(id);
  auto budget = budget_of_job_.find(job_id);
  if (siblings.empty()) {
    if (budget != budget_of_job_.end()) budget_of_job_.erase(budget);
    return;
  }
  if (budget == budget_of_job_.end() || budget->second == 0) return;
  const uint64_t share = budget->second / siblings.size();
  // As the owner the apps share with the one that left (one job, one user).
  PeerCredentials owner;
  owner.pid = app.pid;
  owner.uid = app.uid;
  for (uint64_t sibling : siblings)
    if (auto set = apps_.setPowerBudget(owner, sibling, static_cast<int64_t>(share)); !set && log_warning_)
      log_warning_("job " + job_id + ": app " + std::to_string(sibling) + " keeps its budget (" + set.error().message +
                   ")");
}

}  // namespace nk
