#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app_record.h"
#include "base/result.h"
#include "budget_floor.h"
#include "node/access_policy.h"
#include "process_inspector.h"

namespace nk {

// The apps taking part in energy management: registration from the caller's
// kernel credentials, verified threads, power budgets, the decision D that
// the app's control stream carries, and liveness. Thread safe.
class AppRegistry {
 public:
  struct Options {
    // The node's power cap in mW (sum of the package caps), read at each
    // check because the admin may change it; nullopt: no cap known.
    std::function<std::optional<uint64_t>()> node_power_cap_mw;
    // max_threads of an app that does not say.
    uint32_t default_max_threads = 1;
    // Called (outside the lock) for every app that leaves the registry, by
    // whatever path, so that its controls can be restored.
    std::function<void(const AppRecord&)> on_removed;
    // Energy policies an app may ask for by name; empty: any name.
    std::vector<std::string> policies;
    // What an app can get down to: a budget under it is taken with a warning.
    BudgetFloor budget_floor;
    // Ended apps kept for `apps --ended`, the oldest making room first.
    size_t max_ended_apps = 256;
  };

  // What the energy accounting has seen of the packages since the daemon
  // started, and what of it went to no app.
  struct EnergyTotals {
    double packages_j = 0;      // the packages' counters (wrap-corrected) at the last accounted sample
    double accounted_j = 0;     // energy over the accounted intervals
    double unattributed_j = 0;  // of accounted_j
  };

  AppRegistry(const AccessPolicy& access, std::unique_ptr<ProcessInspector> inspector, Options options);
  ~AppRegistry();
  AppRegistry(const AppRegistry&) = delete;
  AppRegistry& operator=(const AppRegistry&) = delete;

  Result<AppRecord> registerApp(const PeerCredentials& caller, const AppRegistration& registration);
  Result<AppRecord> unregisterApp(const PeerCredentials& caller, uint64_t app_id);
  Status registerThread(const PeerCredentials& caller, uint64_t app_id, pid_t tid, uint32_t omp_thread_num = 0);
  Status unregisterThread(const PeerCredentials& caller, uint64_t app_id, pid_t tid);
  // Signed so that a negative request is told apart from a huge one. A
  // budget under the app's floor is taken; the record's budget_warning says
  // it cannot be met (the same on registration).
  Result<AppRecord> setPowerBudget(const PeerCredentials& caller, uint64_t app_id, int64_t power_budget_mw);

  // An empty name returns the app to the node's policy.
  Result<AppRecord> setPolicy(const PeerCredentials& caller, uint64_t app_id, const std::string& policy);
  // Puts a tracing-only app under energy management (a node policy the admin
  // set now applies to it). False if there is no such app or it was managed.
  bool enrol(uint64_t app_id);
  // The energy manager's last step, shown by list(); placements of threads
  // that are no longer registered are ignored.
  void updateManaged(uint64_t app_id, const AppManagedState& state);

  // Adds energy to the app, live or ended (an app may leave between the
  // measurement and the charge); `job_id` is the job it runs in, if any.
  void chargeEnergy(uint64_t app_id, double joules, const std::string& job_id);
  void setEnergyTotals(const EnergyTotals& totals);
  EnergyTotals energyTotals() const;

  std::vector<AppRecord> list() const;
  // Apps that left, oldest first, with their energy and how they ended.
  std::vector<AppRecord> listEnded() const;
  std::optional<AppRecord> find(uint64_t app_id) const;
  std::optional<AppRecord> findByPid(pid_t pid) const;

  // Removes apps whose process is gone (or whose pid now names another
  // process) and returns them. The daemon calls it periodically.
  std::vector<AppRecord> reapDead();

  // Sets D (the energy manager's decision), 1 <= D <= max_threads, and wakes
  // the app's control stream.
  Status setThreadCount(uint64_t app_id, uint32_t thread_count);

  // Control stream. Only the app's own process may attach, once at a time.
  Result<AppRecord> attachControl(const PeerCredentials& caller, uint64_t app_id);
  // Blocks until the app's decision is newer than `after_seq` (returns it),
  // or the app is gone or detached, or `timeout` passes (returns nullopt;
  // then `gone` tells whether the stream should end).
  std::optional<AppDecisionRecord> waitDecision(uint64_t app_id, uint64_t after_seq,
                                                std::chrono::milliseconds timeout, bool* gone);
  // The app's report: the size of its last parallel region.
  Status report(uint64_t app_id, uint32_t team_size);
  // The stream ended: the app is unregistered (that is how the daemon learns
  // of its death at once). Returns the removed app, if it was still there.
  std::optional<AppRecord> endControl(uint64_t app_id);

 private:
  Status checkBudget(int64_t power_budget_mw, bool zero_allowed) const;
  Status checkPolicy(const std::string& policy) const;
  void judgeBudget(AppRecord& app) const;
  // OK for the owner (same uid) or an admin; PERMISSION_DENIED naming `action`.
  Status requireOwnerOrAdmin(const PeerCredentials& caller, const AppRecord& app, const std::string& action) const;
  void notifyRemoved(const std::vector<AppRecord>& removed) const;
  // Under mutex_; true when the app was not managed before (then the caller
  // notifies changed_, so that its control stream sends the first D).
  static bool enrolLocked(AppRecord& app);
  // Keeps a copy of an app that left, for listEnded().
  void retireLocked(const AppRecord& app, std::string how);

  const AccessPolicy& access_;
  std::unique_ptr<ProcessInspector> inspector_;
  Options options_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, AppRecord> apps_;
  std::deque<AppRecord> ended_;
  EnergyTotals energy_totals_;
  uint64_t next_id_ = 1;
};

}  // namespace nk
