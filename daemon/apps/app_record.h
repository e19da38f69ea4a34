#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nk {

// One registered thread of an app; verified under /proc/<pid>/task/.
struct AppThreadRecord {
  pid_t tid = 0;
  uint32_t omp_thread_num = 0;
  std::vector<uint32_t> affinity;  // host CPUs; empty: not pinned by nodekeeper
  int32_t core = -1;               // node core the energy manager placed it on; -1: none
};

// What the daemon has decided for an app. `seq` grows with every change, so
// a control stream knows whether it has sent the latest one.
struct AppDecisionRecord {
  uint64_t seq = 0;
  uint32_t thread_count = 0;  // D for the next parallel region
  std::vector<AppThreadRecord> threads;  // placements (tid, core, affinity)
  std::vector<std::pair<uint32_t, uint64_t>> core_khz;  // frequencies set on the app's cores
};

// A registered app as the registry holds it (copies are handed out).
struct AppRecord {
  uint64_t id = 0;
  pid_t pid = 0;
  uid_t uid = 0;
  uint64_t start_time = 0;       // of pid, to tell a reused pid apart
  std::string name;
  uint64_t power_budget_mw = 0;  // 0: none
  std::string policy;            // empty: the node's policy
  uint32_t max_threads = 0;
  std::vector<AppThreadRecord> threads;
  AppDecisionRecord decision;
  uint32_t reported_team_size = 0;  // last AppReport
  bool control_attached = false;    // a Control stream is open
  // What the energy manager measured and decided at its last step.
  uint64_t measured_power_mw = 0;
  uint64_t effective_budget_mw = 0;  // after the node cap and sharing; 0: none
  std::string effective_policy;
  // BudgetFloor's estimate of the least the app can draw (0: unknown), and,
  // while its budget is under it, the warning its setter was given.
  uint64_t budget_floor_mw = 0;
  std::string budget_warning;
  // Why the app has stayed over its budget (OverBudgetWatch); "" while not.
  std::string over_budget_reason;
  // A budget or a policy applies: the energy manager drives the app. False
  // only for a tracing-only registration that nothing has enrolled yet.
  bool managed = true;
  int64_t registered_ns = 0;  // CLOCK_REALTIME
  // What the packages spent on it (EnergyAttribution), kept after it ends.
  double energy_j = 0;
  std::string job_id;  // the job it ran in (JobRegistry::jobOfProcess); "" when none
  // Once it left the registry: when, and how ("unregistered": it said so at
  // its exit; "gone": its process ended without saying).
  int64_t ended_ns = 0;
  std::string end_detail;
};

// The energy manager's view of an app after a control step, for `apps`.
struct AppManagedState {
  uint64_t measured_power_mw = 0;
  uint64_t effective_budget_mw = 0;
  std::string effective_policy;
  std::string over_budget_reason;
  struct Placement {
    pid_t tid = 0;
    int32_t core = -1;
    std::vector<uint32_t> affinity;
  };
  std::vector<Placement> placements;
  std::vector<std::pair<uint32_t, uint64_t>> core_khz;
};

// The input of AppRegistry::registerApp; identity comes from the caller's
// credentials, never from here.
struct AppRegistration {
  std::string name;
  uint64_t power_budget_mw = 0;  // 0: none
  uint32_t max_threads = 0;      // 0: the node's core count
  std::string policy;
  bool tracing_only = false;  // task events only: not managed until told
};

}  // namespace nk
