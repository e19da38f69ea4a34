#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app_load_accounting.h"
#include "app_record.h"
#include "energy_attribution.h"
#include "over_budget_watch.h"
#include "energy/energy_policy.h"
#include "energy/policy_config.h"
#include "platform/cpu_freq.h"
#include "platform/perf_cycle_counter.h"
#include "platform/thread_affinity.h"
#include "platform/thread_schedstat.h"

namespace nk {

class AppRegistry;
class NodeController;
struct TelemetrySample;

// The control loop between the apps, the policies and the hardware: every
// dT_DVFS it measures the apps' threads, hands a snapshot to each app's
// policy (stepDct every N-th tick), and applies the decisions: D through
// the registry (the app's control stream), affinity with sched_setaffinity
// on verified threads, frequencies through the node controller (userspace
// governor and scaling_setspeed, or scaling_max_freq on intel_pstate).
// Whatever it changed it gives back when no app needs it any more.
class EnergyManager {
 public:
  struct Options {
    PolicyConfig config;
    // Policy of apps that name none while the node's policy is not an energy
    // policy.
    std::string fallback_policy = "thermal-aware";
    // Per-thread workload from perf cycles when the kernel allows. An
    // emulated node turns it off: host cycles say nothing of emulated clocks.
    bool use_perf = true;
    std::filesystem::path proc_root = "/proc";
    // Count the time a thread waited for a CPU as work it did. An emulated
    // node has more cores than its host: a thread that waited for one of
    // the host's CPUs would have run all along on its own emulated core.
    bool waiting_is_work = false;
    // Other processes' load on an app's cores raises what it is measured
    // to draw (a cause `apps` names); false on an emulated node that
    // leaves host load out.
    bool foreign_load_counts = true;
    // Other processes' CPU time on a package's cores keeps its share of the
    // package's energy from the apps (EnergyAttribution). False on an
    // emulated node, whose packages only the app loads it reports drive.
    bool attribute_foreign_use = true;
    // The job process `pid` belongs to ("" for none), asked at DCT steps
    // and for an app not seen before: a process may join a job after it
    // registered, but the lookup need not run at every DVFS step.
    std::function<std::string(pid_t pid)> job_of_process;
    // Changes when job_of_process' answers may have (JobRegistry::
    // membershipGeneration): apps are looked up again at the next step, not
    // at the next DCT step only, so a job is charged from its first step.
    std::function<uint64_t()> job_membership_generation;
    // Adds joules to a job (named by `program` when it has no name yet).
    std::function<void(const std::string& job, const std::string& program, double joules)> charge_job;
    // Emulated node: the load of app threads on each core drives the model.
    std::function<void(uint32_t core, double utilisation)> report_core_load;
    // Called when the first app arrives and after the last one left.
    std::function<void(bool active)> on_active;
    std::function<void(const std::string&)> log_info;
    std::function<void(const std::string&)> log_warning;
    std::function<void(const std::string&)> log_debug;  // every DCT decision
  };

  EnergyManager(AppRegistry& apps, NodeController& node, std::unique_ptr<ThreadAffinity> affinity, Options options);
  ~EnergyManager();
  EnergyManager(const EnergyManager&) = delete;
  EnergyManager& operator=(const EnergyManager&) = delete;

  void start();
  // Stops the loop and gives back every core and thread it holds.
  void stop();

 private:
  struct HeldCore {
    std::string original_governor;
    std::optional<uint64_t> original_max_khz;  // intel_pstate: steered through max
    uint64_t written_khz = 0;
    std::string written_governor;
  };
  struct PinnedThread {
    pid_t pid = 0;
    std::vector<uint32_t> original;
    std::vector<uint32_t> current;
  };

  // What one step measured: the node, and each app in the registry's order.
  struct Measurement {
    EnergySnapshot base;  // without apps: each policy adds its own
    std::vector<AppSample> samples;
    // Per core: busy time that no managed app's threads account for.
    std::vector<double> foreign_load;
    // Per app, per core: CPU seconds since the previous step.
    std::vector<std::vector<double>> app_core_cpu_s;
    double interval_s = 0;
  };
  struct OverBudget {
    OverBudgetWatch watch;
    std::string reason;  // as of the last DCT step
  };
  // What the policies decided in one step, merged over the policies in use.
  struct Decisions {
    std::map<uint32_t, CoreDecision> cores;
    std::vector<AppManagedState> managed;  // per app, as Measurement::samples
    std::vector<pid_t> decided_tids;       // threads the policies placed
  };

  void run();
  // One tick: measure, let the policies decide, apply, report.
  void step(bool dct);
  void activateOrRefresh(bool dct);
  std::shared_ptr<const TelemetrySample> telemetryForStep(bool dct);
  Measurement measureApps(const std::vector<AppRecord>& apps, const TelemetrySample& telemetry);
  // Fills `sample`, adds the app's threads to `core_load` and `live_tids`;
  // returns the app's busy cores.
  double measureApp(const AppRecord& app, double now_s, AppSample& sample, std::vector<double>& core_load,
                    std::vector<double>& core_cpu_s, std::vector<pid_t>& live_tids);
  // Splits the packages' energy since the previous step over the apps
  // (EnergyAttribution) and charges them and their jobs.
  void attributeEnergy(const std::vector<AppRecord>& apps, const Measurement& measured,
                       const TelemetrySample& telemetry, bool dct);
  std::map<std::string, std::vector<size_t>> groupByPolicy(const std::vector<AppRecord>& apps) const;
  // Made on first use; nullptr (warned once) for a policy that cannot be made.
  EnergyPolicy* policyNamed(const std::string& name);
  EnergyDecision runPolicy(EnergyPolicy& policy, const Measurement& measured, const std::vector<size_t>& members,
                           bool dct);
  Decisions decide(const std::vector<AppRecord>& apps, const Measurement& measured, bool dct);
  // False if the decision leaves the app out.
  bool applyAppDecision(const AppRecord& app, const AppSample& sample, const EnergyDecision& decision,
                        AppManagedState& managed);
  // Why the app stays over its budget, judged at DCT steps (several of
  // them before it says anything), into `managed`.
  void explainOverBudget(const AppRecord& app, const Measurement& measured, size_t index, AppManagedState& managed,
                         bool dct);
  void steerCores(const std::map<uint32_t, CoreDecision>& core_decisions);
  void publishManaged(const std::vector<AppRecord>& apps, std::vector<AppManagedState>& managed);
  void refreshPolicies();
  std::string effectivePolicy(const AppRecord& app, const std::string& node_default) const;
  EnergySnapshot baseSnapshot(const TelemetrySample& telemetry) const;
  void applyThreads(const AppRecord& app, const AppDecision& decision, AppManagedState& managed);
  void applyCore(uint32_t core, const CoreDecision& decision);
  void releaseCore(uint32_t core);
  void releaseThreadsExcept(const std::vector<pid_t>& live_tids);
  void releaseAll();
  std::vector<uint32_t> hostCpusOf(uint32_t core) const;
  void warnOnce(const std::string& key, const std::string& message);

  AppRegistry& apps_;
  NodeController& node_;
  std::unique_ptr<ThreadAffinity> affinity_;
  Options options_;
  ThreadSchedstat schedstat_;
  std::unique_ptr<PerfCycleCounter> perf_;
  AppLoadAccounting accounting_;
  EnergyAttribution attribution_;
  std::optional<double> last_measure_s_;
  std::map<uint64_t, std::string> job_of_app_;  // by app id, as of the last lookup
  uint64_t job_membership_seen_ = 0;
  std::string workload_source_;  // for the start-up log line

  // Owned by the loop thread.
  std::map<std::string, std::unique_ptr<EnergyPolicy>> policies_;
  std::vector<CpuFreqPolicy> freq_policies_;
  std::vector<int> policy_of_core_;  // index into freq_policies_, -1: none
  std::map<uint32_t, HeldCore> held_cores_;
  std::map<pid_t, PinnedThread> pinned_;
  std::map<pid_t, int32_t> placed_core_;
  std::map<std::string, bool> warned_;
  std::map<uint64_t, OverBudget> over_budget_;  // by app id
  bool active_ = false;
  uint64_t last_telemetry_seq_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace nk
