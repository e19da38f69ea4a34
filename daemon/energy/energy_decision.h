#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk {

enum class Governor {
  kUnchanged,
  kUserspace,
  kPerformance,
  kPowersave,
};

struct ThreadDecision {
  int32_t tid = 0;
  int32_t core = -1;       // pin to this core; -1 = leave the affinity alone
  double budget_w = 0.0;   // per-thread budget (eq. 4, 5); 0 = none
};

struct AppDecision {
  std::string id;
  uint32_t threads = 0;    // D the app should run its next parallel region with
  double budget_w = 0.0;   // effective budget after the node cap and sharing; 0 = none
  std::vector<ThreadDecision> thread_decisions;
};

// Frequency 0 means "leave to the governor".
struct CoreDecision {
  uint32_t core = 0;
  uint64_t target_khz = 0;
  Governor governor = Governor::kUnchanged;
};

// A complete desired state, not a delta: applying it twice is harmless,
// which keeps the daemon's apply loop and a simulator trivial.
struct EnergyDecision {
  std::vector<AppDecision> apps;
  std::vector<CoreDecision> cores;
  std::string reason;
};

}  // namespace nk
