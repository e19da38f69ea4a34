#pragma once

#include <chrono>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "faults/fault_record.h"
#include "faults/symptom_record.h"

namespace nk {

// What a probe must show for a rule to hold (the words of the rule file).
enum class ProbeCondition {
  kUnreachable,    // response probe: the node's daemon did not answer any attempt
  kReachable,      // response probe: it answered
  kSlow,           // response probe: answered, but an attempt was lost or the best round trip exceeded slow_rtt
  kRankGone,       // status probe: a suspect rank's process is gone (or a zombie) without MPI_Finalize
  kRankStopped,    // status probe: a suspect rank's process is stopped (SIGSTOP, a tracer)
  kRankStalled,    // status probe: a suspect rank's process exists but has not reported for stall_after
  kRanksHealthy,   // status probe: every rank of the job there runs and reports
  kHot,            // status probe: the node's sensors are at or above their alarm temperature
  kLogPending,     // log probe: messages to or from the suspects that did not complete in the window
};
std::string_view probeConditionName(ProbeCondition condition);

// One rule: IF the group holds a symptom of one of `when` THEN hypothesis
// `fault`, confirmed when every condition in `confirm` holds.
struct FaultRule {
  FaultKind fault = FaultKind::kUnspecified;
  std::set<SymptomKind> when;
  std::vector<ProbeCondition> confirm;
  size_t line = 0;  // in the rule file, for messages
};

// The rule base TFA reasons with, and the trigger and probe settings that
// come with it. Rules are hypotheses in the order the file gives them: the
// first confirmed one per symptom group wins (MPFL's Algorithm 2).
struct FaultRuleBase {
  // Symptoms about one node closer than this belong to one group, and a
  // trigger counts symptoms within it.
  std::chrono::milliseconds window{2000};
  // TFA runs at the FLN when this many distinct symptoms about a node are
  // held within `window`...
  size_t trigger_count = 2;
  // ...or at once for a symptom of these kinds.
  std::set<SymptomKind> trigger_now{SymptomKind::kHeartbeatLost, SymptomKind::kRankExited,
                                    SymptomKind::kThermalAlarm};
  // A rank whose agent has not reported for this long is stalled.
  std::chrono::milliseconds stall_after{2000};
  // A response probe's round trip above this counts as slow.
  std::chrono::milliseconds slow_rtt{50};
  // Response probe attempts before a node counts as unreachable.
  size_t probe_attempts = 2;
  std::vector<FaultRule> rules;
  std::string source;  // the file it came from, or "built-in"
};

}  // namespace nk
