#include "app_registry.h"

#include <algorithm>
#include <limits>

namespace nk {

namespace {

int64_t realtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string appLabel(const AppRecord& app) {
  return "app " + std::to_string(app.id) + " ('" + app.name + "', pid " + std::to_string(app.pid) + ", uid " +
         std::to_string(app.uid) + ")";
}

Error noSuchApp(uint64_t app_id) { return notFound("no app with id " + std::to_string(app_id)); }

}  // namespace

AppRegistry::AppRegistry(const AccessPolicy& access, std::unique_ptr<ProcessInspector> inspector, Options options)
    : access_(access), inspector_(std::move(inspector)), options_(std::move(options)) {
  if (options_.default_max_threads == 0) options_.default_max_threads = 1;
}

AppRegistry::~AppRegistry() {
  // Wake every waiting stream so that none outlives the registry.
  {
    std::lock_guard lock(mutex_);
    apps_.clear();
  }
  changed_.notify_all();
}

Status AppRegistry::checkBudget(int64_t power_budget_mw, bool zero_allowed) const {
  if (power_budget_mw == 0 && zero_allowed) return {};
  if (power_budget_mw <= 0)
    return invalidArgument("power budget must be positive (got " + std::to_string(power_budget_mw) + " mW)");
  std::optional<uint64_t> cap = options_.node_power_cap_mw ? options_.node_power_cap_mw() : std::nullopt;
  if (cap && static_cast<uint64_t>(power_budget_mw) > *cap)
    return invalidArgument("power budget " + std::to_string(power_budget_mw) + " mW is above the node's power cap of " +
                           std::to_string(*cap) + " mW (sum of the package caps)");
  return {};
}

void AppRegistry::judgeBudget(AppRecord& app) const {
  app.budget_floor_mw = options_.budget_floor.floorMw(app.max_threads).value_or(0);
  app.budget_warning = BudgetFloor::warning(app.power_budget_mw, app.budget_floor_mw);
}

Status AppRegistry::checkPolicy(const std::string& policy) const {
  if (policy.empty() || options_.policies.empty()) return {};
  if (std::find(options_.policies.begin(), options_.policies.end(), policy) != options_.policies.end()) return {};
  std::string list;
  for (const auto& name : options_.policies) list += (list.empty() ? "" : ", ") + name;
  return notFound("unknown policy '" + policy + "' (available: " + list + ")");
}

Status AppRegistry::requireOwnerOrAdmin(const PeerCredentials& caller, const AppRecord& app,
                                        const std::string& action) const {
  if (access_.roleOf(caller, app.uid) != Role::kAnyone) return {};
  return permissionDenied("permission denied: " + action + " of " + appLabel(app) +
                          " needs its owner or the admin role; you are uid " + std::to_string(caller.uid));
}

void AppRegistry::notifyRemoved(const std::vector<AppRecord>& removed) const {
  if (!options_.on_removed) return;
  for (const auto& app : removed) options_.on_removed(app);
}

Result<AppRecord> AppRegistry::registerApp(const PeerCredentials& caller, const AppRegistration& registration) {
  if (caller.pid <= 0) return permissionDenied("registering an app needs a local caller with a known pid");
  if (registration.power_budget_mw > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return invalidArgument("power budget must be positive (got " +
                           std::to_string(static_cast<int64_t>(registration.power_budget_mw)) + " mW)");
  if (Status s = checkBudget(static_cast<int64_t>(registration.power_budget_mw), true); !s) return s.error();
  if (Status s = checkPolicy(registration.policy); !s) return s.error();
  std::optional<uint64_t> start = inspector_->startTime(caller.pid);
  if (!start) return failedPrecondition("process " + std::to_string(caller.pid) + " is not running");

  const std::string name = registration.name.empty() ? "pid " + std::to_string(caller.pid) : registration.name;
  const uint32_t max_threads = registration.max_threads == 0 ? options_.default_max_threads : registration.max_threads;
  std::lock_guard lock(mutex_);
  for (const auto& [id, app] : apps_) {
    if (app.pid != caller.pid || app.start_time != *start) continue;
    // The same request again from the same process: its first answer came
    // after the client's deadline on a busy node, and it asked again. It
    // gets the app it has; refusing would make it run unmanaged.
    if (app.uid == caller.uid && app.name == name && app.power_budget_mw == registration.power_budget_mw &&
        app.policy == registration.policy && app.max_threads == max_threads && app.decision.seq == 1)
      return app;
    return failedPrecondition("process " + std::to_string(caller.pid) + " is registered already as app " +
                                std::to_string(id) + "; unregister it first");
  }
  AppRecord app;
  app.id = next_id_++;
  app.pid = caller.pid;
  app.uid = caller.uid;
  app.start_time = *start;
  app.name = name;
  app.power_budget_mw = registration.power_budget_mw;
  app.policy = registration.policy;
  app.max_threads = max_threads;
  app.decision.seq = 1;
  app.registered_ns = realtimeNs();
  // Tracing alone changes nothing: without a budget or a policy such an app
  // gets no D (0 is "unchanged" on the stream) until something enrols it.
  app.managed = !registration.tracing_only || app.power_budget_mw > 0 || !app.policy.empty();
  app.decision.thread_count = app.managed ? app.max_threads : 0;
  judgeBudget(app);
  apps_.emplace(app.id, app);
  return app;
}

Result<AppRecord> AppRegistry::unregisterApp(const PeerCredentials& caller, uint64_t app_id) {
  AppRecord removed;
  {
    std::lock_guard lock(mutex_);
    auto it = apps_.find(app_id);
    if (it == apps_.end()) return noSuchApp(app_id);
    if (Status s = requireOwnerOrAdmin(caller, it->second, "unregistering"); !s) return s.error();
    removed = std::move(it->second);
    apps_.erase(it);
    retireLocked(removed, "unregistered");
  }
  changed_.notify_all();
  notifyRemoved({removed});
  return removed;
}

Status AppRegistry::registerThread(const PeerCredentials& caller, uint64_t app_id, pid_t tid,
                                   uint32_t omp_thread_num) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  AppRecord& app = it->second;
  if (Status s = requireOwnerOrAdmin(caller, app, "registering a thread"); !s) return s;
  if (tid <= 0) return invalidArgument("thread id must be positive (got " + std::to_string(tid) + ")");
  if (!inspector_->hasThread(app.pid, tid))
    return invalidArgument("thread " + std::to_string(tid) + " is not a thread of process " + std::to_string(app.pid) +
                           " (no /proc/" + std::to_string(app.pid) + "/task/" + std::to_string(tid) + ")");
  auto thread = std::find_if(app.threads.begin(), app.threads.end(), [&](const auto& t) { return t.tid == tid; });
  if (thread != app.threads.end()) {
    thread->omp_thread_num = omp_thread_num;  // registering again updates it
    return {};
  }
  app.threads.push_back({tid, omp_thread_num, {}});
  return {};
}

Status AppRegistry::unregisterThread(const PeerCredentials& caller, uint64_t app_id, pid_t tid) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  AppRecord& app = it->second;
  if (Status s = requireOwnerOrAdmin(caller, app, "unregistering a thread"); !s) return s;
  auto thread = std::find_if(app.threads.begin(), app.threads.end(), [&](const auto& t) { return t.tid == tid; });
  if (thread == app.threads.end())
    return notFound("thread " + std::to_string(tid) + " is not registered with app " + std::to_string(app_id));
  app.threads.erase(thread);
  return {};
}

Result<AppRecord> AppRegistry::setPowerBudget(const PeerCredentials& caller, uint64_t app_id,
                                              int64_t power_budget_mw) {
  {
    // Permission first, so that a stranger learns nothing from the checks.
    std::lock_guard lock(mutex_);
    auto it = apps_.find(app_id);
    if (it == apps_.end()) return noSuchApp(app_id);
    if (Status s = requireOwnerOrAdmin(caller, it->second, "setting the power budget"); !s) return s.error();
  }
  // The cap is read outside the lock: it may touch sysfs.
  if (Status s = checkBudget(power_budget_mw, false); !s) return s.error();
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  it->second.power_budget_mw = static_cast<uint64_t>(power_budget_mw);
  judgeBudget(it->second);
  if (enrolLocked(it->second)) changed_.notify_all();
  return it->second;
}

Result<AppRecord> AppRegistry::setPolicy(const PeerCredentials& caller, uint64_t app_id, const std::string& policy) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  if (Status s = requireOwnerOrAdmin(caller, it->second, "setting the policy"); !s) return s.error();
  if (Status s = checkPolicy(policy); !s) return s.error();
  it->second.policy = policy;
  // Naming a policy enrols the app; "the node's policy" (empty) does not by itself.
  if (!policy.empty() && enrolLocked(it->second)) changed_.notify_all();
  return it->second;
}

bool AppRegistry::enrol(uint64_t app_id) {
  {
    std::lock_guard lock(mutex_);
    auto it = apps_.find(app_id);
    if (it == apps_.end() || !enrolLocked(it->second)) return false;
  }
  changed_.notify_all();
  return true;
}

bool AppRegistry::enrolLocked(AppRecord& app) {
  if (app.managed) return false;
  app.managed = true;
  app.decision.thread_count = app.max_threads;
  ++app.decision.seq;
  return true;
}

void AppRegistry::updateManaged(uint64_t app_id, const AppManagedState& state) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return;
  AppRecord& app = it->second;
  app.measured_power_mw = state.measured_power_mw;
  app.effective_budget_mw = state.effective_budget_mw;
  app.effective_policy = state.effective_policy;
  app.over_budget_reason = state.over_budget_reason;
  bool moved = false;
  for (auto& thread : app.threads) {
    int32_t core_before = thread.core;
    thread.core = -1;
    thread.affinity.clear();
    for (const auto& placement : state.placements)
      if (placement.tid == thread.tid) {
        thread.core = placement.core;
        thread.affinity = placement.affinity;
      }
    moved = moved || thread.core != core_before;
  }
  app.decision.core_khz = state.core_khz;
  if (moved) {
    app.decision.threads = app.threads;
    ++app.decision.seq;
  }
  if (moved) changed_.notify_all();
}

void AppRegistry::retireLocked(const AppRecord& app, std::string how) {
  if (options_.max_ended_apps == 0) return;
  while (ended_.size() >= options_.max_ended_apps) ended_.pop_front();
  AppRecord& ended = ended_.emplace_back(app);
  ended.ended_ns = realtimeNs();
  ended.end_detail = std::move(how);
  ended.threads.clear();  // nothing of the running process is left to place
  ended.control_attached = false;
  ended.measured_power_mw = 0;
}

void AppRegistry::chargeEnergy(uint64_t app_id, double joules, const std::string& job_id) {
  if (!(joules > 0)) return;
  std::lock_guard lock(mutex_);
  AppRecord* app = nullptr;
  if (auto it = apps_.find(app_id); it != apps_.end()) {
    app = &it->second;
  } else {
    for (AppRecord& ended : ended_)
      if (ended.id == app_id) app = &ended;
  }
  if (app == nullptr) return;
  app->energy_j += joules;
  if (!job_id.empty()) app->job_id = job_id;
}

void AppRegistry::setEnergyTotals(const EnergyTotals& totals) {
  std::lock_guard lock(mutex_);
  energy_totals_ = totals;
}

AppRegistry::EnergyTotals AppRegistry::energyTotals() const {
  std::lock_guard lock(mutex_);
  return energy_totals_;
}

std::vector<AppRecord> AppRegistry::listEnded() const {
  std::lock_guard lock(mutex_);
  return {ended_.begin(), ended_.end()};
}

std::vector<AppRecord> AppRegistry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<AppRecord> out;
  out.reserve(apps_.size());
  for (const auto& [id, app] : apps_) out.push_back(app);
  return out;
}

std::optional<AppRecord> AppRegistry::find(uint64_t app_id) const {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return std::nullopt;
  return it->second;
}

std::optional<AppRecord> AppRegistry::findByPid(pid_t pid) const {
  std::lock_guard lock(mutex_);
  for (const auto& [id, app] : apps_)
    if (app.pid == pid) return app;
  return std::nullopt;
}

std::vector<AppRecord> AppRegistry::reapDead() {
  // Look at /proc without the lock; an app registered meanwhile is simply
  // looked at next time.
  std::vector<std::pair<uint64_t, pid_t>> snapshot;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, app] : apps_) snapshot.emplace_back(id, app.pid);
  }
  std::vector<std::pair<uint64_t, std::optional<uint64_t>>> seen;
  for (const auto& [id, pid] : snapshot) seen.emplace_back(id, inspector_->startTime(pid));
  std::vector<AppRecord> removed;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, start] : seen) {
      auto it = apps_.find(id);
      if (it == apps_.end()) continue;
      if (start && *start == it->second.start_time) continue;
      removed.push_back(std::move(it->second));
      apps_.erase(it);
      retireLocked(removed.back(), "gone");
    }
  }
  if (!removed.empty()) changed_.notify_all();
  notifyRemoved(removed);
  return removed;
}

Status AppRegistry::setThreadCount(uint64_t app_id, uint32_t thread_count) {
  {
    std::lock_guard lock(mutex_);
    auto it = apps_.find(app_id);
    if (it == apps_.end()) return noSuchApp(app_id);
    AppRecord& app = it->second;
    if (thread_count < 1 || thread_count > app.max_threads)
      return invalidArgument("thread count " + std::to_string(thread_count) + " is outside 1.." +
                             std::to_string(app.max_threads) + " for app " + std::to_string(app_id));
    if (app.decision.thread_count == thread_count) return {};
    app.decision.thread_count = thread_count;
    ++app.decision.seq;
  }
  changed_.notify_all();
  return {};
}

Result<AppRecord> AppRegistry::attachControl(const PeerCredentials& caller, uint64_t app_id) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  AppRecord& app = it->second;
  if (caller.pid != app.pid)
    return permissionDenied("permission denied: opening the control stream of " + appLabel(app) +
                            " is for that process only; you are pid " + std::to_string(caller.pid) + ", uid " +
                            std::to_string(caller.uid));
  if (app.control_attached)
    return failedPrecondition("app " + std::to_string(app_id) + " has a control stream open already");
  app.control_attached = true;
  return app;
}

std::optional<AppDecisionRecord> AppRegistry::waitDecision(uint64_t app_id, uint64_t after_seq,
                                                           std::chrono::milliseconds timeout, bool* gone) {
  std::unique_lock lock(mutex_);
  std::optional<AppDecisionRecord> decision;
  bool ended = false;
  changed_.wait_for(lock, timeout, [&] {
    auto it = apps_.find(app_id);
    if (it == apps_.end() || !it->second.control_attached) {
      ended = true;
      return true;
    }
    if (it->second.decision.seq > after_seq) {
      decision = it->second.decision;
      return true;
    }
    return false;
  });
  if (gone) *gone = ended;
  return decision;
}

Status AppRegistry::report(uint64_t app_id, uint32_t team_size) {
  std::lock_guard lock(mutex_);
  auto it = apps_.find(app_id);
  if (it == apps_.end()) return noSuchApp(app_id);
  it->second.reported_team_size = team_size;
  return {};
}

std::optional<AppRecord> AppRegistry::endControl(uint64_t app_id) {
  std::optional<AppRecord> removed;
  {
    std::lock_guard lock(mutex_);
    auto it = apps_.find(app_id);
    if (it == apps_.end()) return std::nullopt;
    removed = std::move(it->second);
    apps_.erase(it);
    retireLocked(*removed, "gone");
  }
  changed_.notify_all();
  notifyRemoved({*removed});
  return removed;
}

}  // namespace nk
