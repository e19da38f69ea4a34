#include "energy_manager.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "app_registry.h"
#include "budget_floor.h"
#include "energy/policy_registry.h"
#include "node/node_controller.h"
#include "node/telemetry_sample.h"
#include "platform/thread_priority.h"

namespace nk {

namespace {

using Clock = std::chrono::steady_clock;

double finiteOr(double value, double fallback) { return std::isfinite(value) ? value : fallback; }

double secondsSince(Clock::time_point origin) {
  return std::chrono::duration<double>(Clock::now() - origin).count();
}

std::string governorName(Governor governor) {
  switch (governor) {
    case Governor::kUserspace: return "userspace";
    case Governor::kPerformance: return "performance";
    case Governor::kPowersave: return "powersave";
    case Governor::kUnchanged: break;
  }
  return {};
}

bool isEnergyPolicy(std::string_view name) {
  auto names = PolicyRegistry::names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

const Clock::time_point kEpoch = Clock::now();

// The cores an app's threads run on: where the policy placed them, and for
// threads it left unplaced (performance, powersave, ondemand), the ones the
// snapshot charged them to. Without the latter such a policy steered no
// core at all and its apps ran under whatever governor the node had (found
// by the simulator validation).
std::set<uint32_t> coresInUse(const AppManagedState& managed, const AppSample& sample) {
  std::set<uint32_t> cores;
  for (const auto& placement : managed.placements)
    if (placement.core >= 0) cores.insert(static_cast<uint32_t>(placement.core));
  for (const ThreadSample& ts : sample.thread_samples)
    if (ts.core >= 0 && std::none_of(managed.placements.begin(), managed.placements.end(),
                                     [&](const auto& p) { return p.tid == ts.tid && p.core >= 0; }))
      cores.insert(static_cast<uint32_t>(ts.core));
  return cores;
}

// A policy steers the cores its apps run on, nothing else; where two
// policies share a core the lower frequency wins (budgets over speed).
void mergeCoreDecisions(const std::vector<CoreDecision>& decided, const std::set<uint32_t>& group_cores,
                        std::map<uint32_t, CoreDecision>& merged) {
  for (const CoreDecision& cd : decided) {
    if (!group_cores.contains(cd.core)) continue;
    auto [it, inserted] = merged.emplace(cd.core, cd);
    if (!inserted && cd.target_khz > 0 && (it->second.target_khz == 0 || cd.target_khz < it->second.target_khz))
      it->second = cd;
  }
}

}  // namespace

EnergyManager::EnergyManager(AppRegistry& apps, NodeController& node, std::unique_ptr<ThreadAffinity> affinity,
                             Options options)
    : apps_(apps), node_(node), affinity_(std::move(affinity)), options_(std::move(options)),
      schedstat_(options_.proc_root) {
  if (options_.use_perf) {
    std::string why = PerfCycleCounter::probe();
    if (why.empty()) {
      perf_ = std::make_unique<PerfCycleCounter>();
      workload_source_ = "perf cycles";
    } else {
      workload_source_ = "schedstat (" + why + ")";
    }
  } else {
    workload_source_ = "schedstat (emulated node: host cycles do not count)";
  }
}

EnergyManager::~EnergyManager() { stop(); }

void EnergyManager::start() {
  if (options_.log_info)
    options_.log_info("energy manager: dT_DCT " + std::to_string(options_.config.dct_interval_s) + " s, " +
                      std::to_string(options_.config.dvfs_per_dct) + " DVFS steps per DCT step; workload from " +
                      workload_source_);
  thread_ = std::thread([this] { run(); });
}

void EnergyManager::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (active_) releaseAll();
}

void EnergyManager::run() {
  pthread_setname_np(pthread_self(), "nk-energy");
  ThreadPriority::raiseLatencyBound("nk-energy");
  auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(0.001, options_.config.dvfsIntervalS())));
  uint32_t per_dct = std::max<uint32_t>(1, options_.config.dvfs_per_dct);
  uint64_t tick = 0;
  auto next = Clock::now();
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
    }
    // How late this step runs against its schedule: on a busy node the
    // scheduler's delay shows here first (busy_node_bench reads these lines).
    if (options_.log_debug)
      options_.log_debug("energy loop: step late by " +
                         std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - next).count()) +
                         " us");
    // With no app to manage, look for one only every N-th tick: a node
    // without apps keeps the daemon's idle cost where it was.
    next += active_ ? interval : interval * per_dct;
    // After a stall (suspend, debugger) start afresh instead of catching up.
    if (Clock::now() > next + 4 * interval * per_dct) next = Clock::now() + interval;
    bool dct = active_ && tick % per_dct == per_dct - 1;
    ++tick;
    step(dct);
  }
}

void EnergyManager::warnOnce(const std::string& key, const std::string& message) {
  if (warned_[key]) return;
  warned_[key] = true;
  if (options_.log_warning) options_.log_warning(message);
}

void EnergyManager::refreshPolicies() {
  auto policies = node_.frequencyPolicies();
  if (!policies) {
    warnOnce("cpufreq", "energy manager: reading cpufreq failed: " + policies.error().message);
    return;
  }
  freq_policies_ = std::move(*policies);
  const auto& cores = node_.topology().cores;
  policy_of_core_.assign(cores.size(), -1);
  for (size_t c = 0; c < cores.size(); ++c)
    for (size_t p = 0; p < freq_policies_.size() && policy_of_core_[c] < 0; ++p)
      for (uint32_t cpu : cores[c].cpus)
        if (std::find(freq_policies_[p].affected_cpus.begin(), freq_policies_[p].affected_cpus.end(), cpu) !=
            freq_policies_[p].affected_cpus.end())
          policy_of_core_[c] = static_cast<int>(p);
}

std::string EnergyManager::effectivePolicy(const AppRecord& app, const std::string& node_default) const {
  if (!app.policy.empty()) return app.policy;
  return node_default;
}

std::vector<uint32_t> EnergyManager::hostCpusOf(uint32_t core) const {
  const auto& cores = node_.topology().cores;
  if (core >= cores.size()) return {};
  return cores[core].host_cpus.empty() ? cores[core].cpus : cores[core].host_cpus;
}

EnergySnapshot EnergyManager::baseSnapshot(const TelemetrySample& telemetry) const {
  EnergySnapshot snapshot;
  snapshot.time_s = secondsSince(kEpoch);
  snapshot.workload_unit = perf_ ? WorkloadUnit::kCycles : WorkloadUnit::kCpuSeconds;
  for (const auto& core : telemetry.cores) {
    CoreReading out;
    out.id = core.id;
    out.cur_khz = core.cur_khz;
    out.min_khz = core.min_khz;
    out.max_khz = core.max_khz;
    int p = core.id < policy_of_core_.size() ? policy_of_core_[core.id] : -1;
    if (p >= 0) {
      out.cpuinfo_min_khz = freq_policies_[p].cpuinfo_min_khz;
      out.cpuinfo_max_khz = freq_policies_[p].cpuinfo_max_khz;
      // While the manager holds a core its own writes move the limits it
      // reads; the policy must see the range the admin left.
      if (auto held = held_cores_.find(core.id); held != held_cores_.end() && held->second.original_max_khz)
        out.max_khz = *held->second.original_max_khz;
    }
    out.temp_c = core.temperature_c;
    out.util = finiteOr(core.utilisation, 0.0);
    snapshot.cores.push_back(out);
  }
  if (!freq_policies_.empty()) snapshot.freq_table_khz = freq_policies_.front().available_khz;
  std::sort(snapshot.freq_table_khz.begin(), snapshot.freq_table_khz.end());
  double cap = 0.0;
  for (const auto& package : telemetry.packages) {
    snapshot.package_power_w.push_back(finiteOr(package.power_w, 0.0));
    if (package.power_limit_enabled && package.power_limit_w > 0) cap += package.power_limit_w;
  }
  snapshot.power_cap_w = cap;
  return snapshot;
}

void EnergyManager::step(bool dct) {
  if (dct) (void)apps_.reapDead();  // apps without a control stream die silently
  std::vector<AppRecord> apps = apps_.list();
  // A tracing-only app is left alone until a budget or a policy applies: its
  // own, or a node policy the admin set (the fallback is not one). One
  // enrolled here is managed from the next step.
  const bool node_policy_set = isEnergyPolicy(node_.policy());
  std::erase_if(apps, [&](const AppRecord& app) {
    if (!app.managed && node_policy_set) (void)apps_.enrol(app.id);
    return !app.managed;
  });
  if (apps.empty()) {
    if (active_) releaseAll();
    return;
  }
  activateOrRefresh(dct);
  auto telemetry = telemetryForStep(dct);
  if (!telemetry) return;
  Measurement measured = measureApps(apps, *telemetry);
  attributeEnergy(apps, measured, *telemetry, dct);
  Decisions decisions = decide(apps, measured, dct);
  steerCores(decisions.cores);
  releaseThreadsExcept(decisions.decided_tids);
  publishManaged(apps, decisions.managed);
}

void EnergyManager::activateOrRefresh(bool dct) {
  if (!active_) {
    active_ = true;
    refreshPolicies();
    if (options_.on_active) options_.on_active(true);
  } else if (dct) {
    refreshPolicies();  // the admin may have changed limits or governors
  }
}

// ILC must see each power reading once: a DVFS step on a reading it has
// already corrected for would correct the same error twice. (With the
// sampler slower than dT_DVFS, DVFS then runs at the sampler's pace.)
std::shared_ptr<const TelemetrySample> EnergyManager::telemetryForStep(bool dct) {
  auto telemetry = node_.telemetry().latest();
  if (!telemetry) return nullptr;
  if (!dct && telemetry->seq == last_telemetry_seq_) return nullptr;
  last_telemetry_seq_ = telemetry->seq;
  return telemetry;
}

EnergyManager::Measurement EnergyManager::measureApps(const std::vector<AppRecord>& apps,
                                                      const TelemetrySample& telemetry) {
  const size_t core_count = node_.topology().cores.size();
  double now_s = secondsSince(kEpoch);
  Measurement measured;
  measured.base = baseSnapshot(telemetry);
  measured.samples.resize(apps.size());
  std::vector<double> core_load(core_count, 0.0);
  std::vector<double> app_busy(apps.size(), 0.0);
  std::vector<pid_t> live_tids;
  measured.app_core_cpu_s.assign(apps.size(), std::vector<double>(core_count, 0.0));
  measured.interval_s = last_measure_s_ ? std::max(0.0, now_s - *last_measure_s_) : 0.0;
  last_measure_s_ = now_s;
  for (size_t a = 0; a < apps.size(); ++a)
    app_busy[a] = measureApp(apps[a], now_s, measured.samples[a], core_load, measured.app_core_cpu_s[a], live_tids);
  accounting_.forgetExcept(live_tids);
  if (perf_) perf_->forgetExcept(live_tids);
  measured.foreign_load.assign(core_count, 0.0);
  for (const auto& core : measured.base.cores)
    if (options_.foreign_load_counts && core.id < core_count)
      measured.foreign_load[core.id] = std::max(0.0, core.util - core_load[core.id]);
  if (options_.report_core_load) {
    for (size_t c = 0; c < core_count; ++c) options_.report_core_load(static_cast<uint32_t>(c), core_load[c]);
    for (auto& core : measured.base.cores)
      if (core.id < core_count) core.util = core_load[core.id];
  }
  std::vector<double> app_power = AppLoadAccounting::apportionPower(finiteOr(telemetry.node_power_w, 0.0), app_busy);
  for (size_t a = 0; a < apps.size(); ++a) measured.samples[a].power_w = app_power[a];
  return measured;
}

void EnergyManager::attributeEnergy(const std::vector<AppRecord>& apps, const Measurement& measured,
                                    const TelemetrySample& telemetry, bool dct) {
  std::vector<PackageCounter> counters;
  counters.reserve(telemetry.packages.size());
  for (const auto& package : telemetry.packages)
    counters.push_back({package.id, package.raw_energy_uj, package.max_energy_range_uj});
  std::vector<uint32_t> package_of_core(measured.foreign_load.size(), 0);
  for (const auto& core : telemetry.cores)
    if (core.id < package_of_core.size()) package_of_core[core.id] = core.package;
  std::vector<AppPackageUse> uses;
  for (size_t a = 0; a < apps.size(); ++a)
    for (size_t c = 0; c < measured.app_core_cpu_s[a].size(); ++c)
      if (measured.app_core_cpu_s[a][c] > 0) uses.push_back({apps[a].id, package_of_core[c], measured.app_core_cpu_s[a][c]});
  std::map<uint32_t, double> other_cpu_s;
  if (options_.attribute_foreign_use)
    for (size_t c = 0; c < measured.foreign_load.size(); ++c)
      other_cpu_s[package_of_core[c]] += measured.foreign_load[c] * measured.interval_s;
  EnergySplit split = attribution_.account(telemetry.seq, counters, uses, other_cpu_s);
  std::erase_if(job_of_app_, [&](const auto& entry) {
    return std::none_of(apps.begin(), apps.end(), [&](const AppRecord& app) { return app.id == entry.first; });
  });
  if (options_.job_of_process) {
    // Descendants come and go without telling the registry: a DCT step
    // looks again anyway.
    bool membership_changed = false;
    if (options_.job_membership_generation) {
      const uint64_t generation = options_.job_membership_generation();
      membership_changed = generation != job_membership_seen_;
      job_membership_seen_ = generation;
    }
    for (const AppRecord& app : apps)
      if (dct || membership_changed || !job_of_app_.contains(app.id))
        job_of_app_[app.id] = options_.job_of_process(app.pid);
  }
  for (const auto& [charged_id, joules] : split.app_j) {
    const uint64_t app_id = charged_id;  // clang 14 cannot capture a structured binding
    auto app = std::find_if(apps.begin(), apps.end(), [&](const AppRecord& a) { return a.id == app_id; });
    if (app == apps.end()) continue;
    auto known = job_of_app_.find(app_id);
    const std::string job = known != job_of_app_.end() ? known->second : std::string();
    if (!job.empty() && options_.charge_job) options_.charge_job(job, app->name, joules);
    apps_.chargeEnergy(app_id, joules, job);
  }
  apps_.setEnergyTotals({telemetry.node_energy_j, attribution_.packagesJ(), attribution_.unattributedJ()});
}

double EnergyManager::measureApp(const AppRecord& app, double now_s, AppSample& sample, std::vector<double>& core_load,
                                 std::vector<double>& core_cpu_s, std::vector<pid_t>& live_tids) {
  const size_t core_count = core_load.size();
  sample.id = std::to_string(app.id);
  sample.budget_w = static_cast<double>(app.power_budget_mw) / 1000.0;
  sample.max_threads = app.max_threads;
  sample.threads = app.decision.thread_count;
  double busy = 0.0;
  for (size_t index = 0; index < app.threads.size(); ++index) {
    const AppThreadRecord& thread = app.threads[index];
    auto times = schedstat_.read(app.pid, thread.tid);
    if (!times) continue;  // exited between list() and here
    live_tids.push_back(thread.tid);
    ThreadReading reading{thread.tid, times->run_ns, times->wait_ns, std::nullopt};
    if (perf_) reading.cycles = perf_->read(thread.tid);
    auto activity = accounting_.observe(reading, now_s);
    int32_t core = -1;
    if (auto placed = placed_core_.find(thread.tid); placed != placed_core_.end()) core = placed->second;
    // A thread no policy placed is counted where the scheduler would most
    // likely spread it: one core per thread, in registration order.
    if (core < 0 && core_count > 0) core = static_cast<int32_t>(index % core_count);
    ThreadSample ts;
    ts.tid = thread.tid;
    ts.core = core;
    if (activity) {
      ts.workload = perf_ && activity->cycles ? *activity->cycles
                    : options_.waiting_is_work    ? activity->busy * activity->interval_s
                                                  : activity->cpu_s;
      busy += activity->busy;
      if (core >= 0) {
        core_load[core] = std::min(1.0, core_load[core] + activity->busy);
        // The same CPU time the emulated model is driven by there.
        core_cpu_s[core] += options_.waiting_is_work ? activity->busy * activity->interval_s : activity->cpu_s;
      }
    }
    sample.thread_samples.push_back(ts);
  }
  return busy;
}

// One policy instance per policy in use; each sees its own apps.
std::map<std::string, std::vector<size_t>> EnergyManager::groupByPolicy(const std::vector<AppRecord>& apps) const {
  std::string node_policy = node_.policy();
  std::string node_default = isEnergyPolicy(node_policy) ? node_policy : options_.fallback_policy;
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t a = 0; a < apps.size(); ++a) groups[effectivePolicy(apps[a], node_default)].push_back(a);
  return groups;
}

EnergyPolicy* EnergyManager::policyNamed(const std::string& name) {
  auto& policy = policies_[name];
  if (!policy) {
    auto made = makePolicy(name, options_.config);
    if (!made) {
      warnOnce("policy:" + name, "energy manager: " + made.error().message + "; apps asking for it are left alone");
      policies_.erase(name);
      return nullptr;
    }
    policy = std::move(*made);
  }
  return policy.get();
}

EnergyDecision EnergyManager::runPolicy(EnergyPolicy& policy, const Measurement& measured,
                                        const std::vector<size_t>& members, bool dct) {
  EnergySnapshot snapshot = measured.base;
  for (size_t a : members) snapshot.apps.push_back(measured.samples[a]);
  EnergyDecision decision = policy.stepDvfs(snapshot);
  if (dct) decision = policy.stepDct(snapshot);
  if (dct && options_.log_debug && !decision.reason.empty()) options_.log_debug(decision.reason);
  return decision;
}

EnergyManager::Decisions EnergyManager::decide(const std::vector<AppRecord>& apps, const Measurement& measured,
                                               bool dct) {
  auto groups = groupByPolicy(apps);
  std::erase_if(policies_, [&](const auto& entry) { return !groups.contains(entry.first); });
  std::erase_if(over_budget_, [&](const auto& entry) {
    return std::none_of(apps.begin(), apps.end(), [&](const AppRecord& app) { return app.id == entry.first; });
  });
  Decisions decisions;
  decisions.managed.resize(apps.size());
  for (const auto& [name, members] : groups) {
    EnergyPolicy* policy = policyNamed(name);
    if (policy == nullptr) continue;
    EnergyDecision decision = runPolicy(*policy, measured, members, dct);
    std::set<uint32_t> group_cores;
    for (size_t a : members) {
      AppManagedState& managed = decisions.managed[a];
      managed.effective_policy = name;
      if (!applyAppDecision(apps[a], measured.samples[a], decision, managed)) continue;
      explainOverBudget(apps[a], measured, a, managed, dct);
      for (const auto& placement : managed.placements) decisions.decided_tids.push_back(placement.tid);
      group_cores.merge(coresInUse(managed, measured.samples[a]));
    }
    mergeCoreDecisions(decision.cores, group_cores, decisions.cores);
  }
  return decisions;
}

bool EnergyManager::applyAppDecision(const AppRecord& app, const AppSample& sample, const EnergyDecision& decision,
                                     AppManagedState& managed) {
  managed.measured_power_mw = static_cast<uint64_t>(std::llround(sample.power_w * 1000.0));
  auto it = std::find_if(decision.apps.begin(), decision.apps.end(),
                         [&](const AppDecision& d) { return d.id == sample.id; });
  if (it == decision.apps.end()) return false;
  managed.effective_budget_mw = static_cast<uint64_t>(std::llround(std::max(0.0, it->budget_w) * 1000.0));
  if (it->threads > 0) {
    uint32_t d = std::clamp<uint32_t>(it->threads, 1, std::max<uint32_t>(1, app.max_threads));
    if (Status s = apps_.setThreadCount(app.id, d); !s && s.error().code != ErrorCode::kNotFound)
      warnOnce("d:" + std::to_string(app.id), "energy manager: " + s.error().message);
  }
  applyThreads(app, *it, managed);
  return true;
}

void EnergyManager::explainOverBudget(const AppRecord& app, const Measurement& measured, size_t index,
                                      AppManagedState& managed, bool dct) {
  OverBudget& entry = over_budget_[app.id];
  if (dct) {
    const AppSample& sample = measured.samples[index];
    OverBudgetWatch::Step step;
    step.power_w = sample.power_w;
    step.budget_w = sample.budget_w;
    step.effective_budget_w = static_cast<double>(managed.effective_budget_mw) / 1000.0;
    step.threads = sample.threads;
    step.floor_threads = BudgetFloor::floorThreads(app.max_threads);
    std::set<uint32_t> cores;
    // The cores its working threads ran on: an idle thread's core may sit
    // at any clock without costing the app anything.
    for (const ThreadSample& thread : sample.thread_samples)
      if (thread.core >= 0 && thread.workload > 0) cores.insert(static_cast<uint32_t>(thread.core));
    step.at_lowest_clock = !cores.empty();
    for (const CoreReading& core : measured.base.cores) {
      if (!cores.contains(core.id)) continue;
      // The lowest clock the app may get: the policy's minimum.
      const uint64_t lowest = core.min_khz > 0 ? core.min_khz : core.cpuinfo_min_khz;
      if (core.cur_khz > lowest) step.at_lowest_clock = false;
      if (core.id < measured.foreign_load.size()) step.foreign_load_cores += measured.foreign_load[core.id];
    }
    entry.reason = entry.watch.observe(step);
  }
  managed.over_budget_reason = entry.reason;
}

void EnergyManager::steerCores(const std::map<uint32_t, CoreDecision>& core_decisions) {
  for (const auto& [core, cd] : core_decisions) applyCore(core, cd);
  std::vector<uint32_t> to_release;
  for (const auto& [core, held] : held_cores_) {
    auto it = core_decisions.find(core);
    if (it == core_decisions.end() || (it->second.target_khz == 0 && it->second.governor == Governor::kUnchanged))
      to_release.push_back(core);
  }
  for (uint32_t core : to_release) releaseCore(core);
}

// Tells the registry what the manager did for each app, with the frequency
// it wrote on each core the app's threads are placed on.
void EnergyManager::publishManaged(const std::vector<AppRecord>& apps, std::vector<AppManagedState>& managed) {
  for (size_t a = 0; a < apps.size(); ++a) {
    std::set<uint32_t> cores;
    for (const auto& placement : managed[a].placements)
      if (placement.core >= 0) cores.insert(static_cast<uint32_t>(placement.core));
    for (uint32_t core : cores) {
      auto held = held_cores_.find(core);
      if (held != held_cores_.end() && held->second.written_khz > 0)
        managed[a].core_khz.emplace_back(core, held->second.written_khz);
    }
    apps_.updateManaged(apps[a].id, managed[a]);
  }
}

void EnergyManager::applyThreads(const AppRecord& app, const AppDecision& decision, AppManagedState& managed) {
  for (const ThreadDecision& td : decision.thread_decisions) {
    bool registered = std::any_of(app.threads.begin(), app.threads.end(),
                                  [&](const AppThreadRecord& t) { return t.tid == td.tid; });
    if (!registered) continue;  // only threads the registry verified under /proc/<pid>/task
    AppManagedState::Placement placement{td.tid, td.core, {}};
    if (td.core >= 0) {
      std::vector<uint32_t> cpus = hostCpusOf(static_cast<uint32_t>(td.core));
      auto pinned = pinned_.find(td.tid);
      if (!cpus.empty() && (pinned == pinned_.end() || pinned->second.current != cpus)) {
        PinnedThread record;
        if (pinned != pinned_.end()) {
          record = pinned->second;
        } else {
          auto original = affinity_->get(td.tid);
          if (!original) continue;  // gone
          record.pid = app.pid;
          record.original = std::move(*original);
        }
        if (Status s = affinity_->set(td.tid, cpus); !s) {
          if (s.error().code != ErrorCode::kNotFound)
            warnOnce("pin:" + std::to_string(app.id), "energy manager: pinning app " + std::to_string(app.id) +
                                                          "'s threads failed: " + s.error().message);
          continue;
        }
        record.current = cpus;
        pinned_[td.tid] = std::move(record);
      }
      placed_core_[td.tid] = td.core;
      if (auto it = pinned_.find(td.tid); it != pinned_.end()) placement.affinity = it->second.current;
    }
    managed.placements.push_back(std::move(placement));
  }
}

void EnergyManager::applyCore(uint32_t core, const CoreDecision& decision) {
  const auto& cores = node_.topology().cores;
  if (core >= cores.size() || core >= policy_of_core_.size() || policy_of_core_[core] < 0) return;
  CpuFreqPolicy& policy = freq_policies_[policy_of_core_[core]];
  const std::vector<uint32_t>& cpus = cores[core].cpus;
  auto [it, first] = held_cores_.try_emplace(core);
  HeldCore& held = it->second;
  if (first) {
    held.original_governor = policy.governor;
    if (policy.intel_pstate_active) held.original_max_khz = policy.max_khz;
  }
  auto fail = [&](const std::string& what, const Error& error) {
    warnOnce("core:" + what, "energy manager: " + what + " on core " + std::to_string(core) + " failed: " +
                                 error.message);
  };
  std::string governor = governorName(decision.governor);
  if (decision.target_khz > 0) {
    if (policy.intel_pstate_active) {
      // No userspace governor in active mode: the ceiling is the lever.
      if (held.written_khz != decision.target_khz) {
        FrequencyRequest request{cpus, std::nullopt, decision.target_khz, std::nullopt};
        if (auto r = node_.setFrequencyLimits(request); !r) return fail("setting scaling_max_freq", r.error());
        held.written_khz = decision.target_khz;
        policy.max_khz = decision.target_khz;
      }
      return;
    }
    if (held.written_governor != "userspace") {
      if (auto r = node_.setGovernor(cpus, "userspace"); !r) return fail("selecting the userspace governor", r.error());
      held.written_governor = "userspace";
      // Keep the cache true between refreshes: a core given back and taken
      // again before the next refresh must record the governor it really had.
      policy.governor = held.written_governor;
      held.written_khz = 0;
    }
    if (held.written_khz != decision.target_khz) {
      FrequencyRequest request{cpus, std::nullopt, std::nullopt, decision.target_khz};
      if (auto r = node_.setFrequencyLimits(request); !r) return fail("setting scaling_setspeed", r.error());
      held.written_khz = decision.target_khz;
    }
    return;
  }
  if (!governor.empty() && held.written_governor != governor) {
    if (auto r = node_.setGovernor(cpus, governor); !r) return fail("selecting the " + governor + " governor", r.error());
    held.written_governor = governor;
    policy.governor = governor;
    held.written_khz = 0;
  }
}

void EnergyManager::releaseCore(uint32_t core) {
  auto it = held_cores_.find(core);
  if (it == held_cores_.end()) return;
  const auto& cores = node_.topology().cores;
  HeldCore held = it->second;
  held_cores_.erase(it);
  if (core >= cores.size()) return;
  const std::vector<uint32_t>& cpus = cores[core].cpus;
  if (held.original_max_khz && held.written_khz > 0) {
    FrequencyRequest request{cpus, std::nullopt, *held.original_max_khz, std::nullopt};
    if (auto r = node_.setFrequencyLimits(request); !r)
      warnOnce("restore-max", "energy manager: restoring scaling_max_freq on core " + std::to_string(core) +
                                  " failed: " + r.error().message);
    else if (core < policy_of_core_.size() && policy_of_core_[core] >= 0)
      freq_policies_[policy_of_core_[core]].max_khz = *held.original_max_khz;
  }
  if (!held.written_governor.empty() && !held.original_governor.empty() &&
      held.written_governor != held.original_governor) {
    if (auto r = node_.setGovernor(cpus, held.original_governor); !r)
      warnOnce("restore-governor", "energy manager: restoring governor " + held.original_governor + " on core " +
                                       std::to_string(core) + " failed: " + r.error().message);
    else if (core < policy_of_core_.size() && policy_of_core_[core] >= 0)
      freq_policies_[policy_of_core_[core]].governor = held.original_governor;
  }
}

void EnergyManager::releaseThreadsExcept(const std::vector<pid_t>& live_tids) {
  for (auto it = pinned_.begin(); it != pinned_.end();) {
    if (std::find(live_tids.begin(), live_tids.end(), it->first) != live_tids.end()) {
      ++it;
      continue;
    }
    // A thread that left management but still runs (its app unregistered)
    // gets its own affinity back; a dead one needs nothing.
    if (schedstat_.read(it->second.pid, it->first) && !it->second.original.empty())
      (void)affinity_->set(it->first, it->second.original);
    it = pinned_.erase(it);
  }
  std::erase_if(placed_core_, [&](const auto& entry) {
    return std::find(live_tids.begin(), live_tids.end(), entry.first) == live_tids.end();
  });
}

void EnergyManager::releaseAll() {
  std::vector<uint32_t> cores;
  for (const auto& [core, held] : held_cores_) cores.push_back(core);
  size_t released = cores.size();
  for (uint32_t core : cores) releaseCore(core);
  size_t threads = pinned_.size();
  releaseThreadsExcept({});
  policies_.clear();
  accounting_.forgetExcept({});
  if (perf_) perf_->forgetExcept({});
  if (options_.report_core_load)
    for (size_t c = 0; c < node_.topology().cores.size(); ++c) options_.report_core_load(static_cast<uint32_t>(c), 0.0);
  if (options_.on_active) options_.on_active(false);
  active_ = false;
  if (options_.log_info)
    options_.log_info("energy manager: no app left; gave back " + std::to_string(released) + " cores and " +
                      std::to_string(threads) + " thread pinnings");
}

}  // namespace nk
