#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_record.h"
#include "faults/fault_rule_base.h"
#include "faults/prober.h"
#include "faults/symptom_record.h"

namespace nk {

// TFA, MPFL's Algorithm 2, at the node that holds the symptoms:
// purify (drop duplicates: same kind, reporter, suspect and operation
// within the window), group (by suspect node, a new group after a gap of
// more than the window), reason (each group's candidate faults: the rules
// whose `when` meets the group's kinds, in rule order), probe (the first
// candidate whose conditions the probes confirm is the group's fault; the
// rest are not tried). Each node is probed at most once per kind of probe
// per analysis. A group none of whose candidates is confirmed yields no
// fault: a false alarm costs probes, never a report.
class FaultAnalyser {
 public:
  struct Group {
    std::string node;
    std::vector<SymptomRecord> symptoms;  // purified, oldest first
  };
  struct Analysis {
    std::vector<FaultRecord> faults;
    std::vector<Group> groups;       // what was reasoned about
    size_t duplicates_dropped = 0;
    size_t probes_sent = 0;
  };

  // `delay_factor`: stall_after and slow_rtt grow by it on a busy host
  // (SchedulingDelay); the evidence says so.
  FaultAnalyser(const FaultRuleBase& rules, Prober& prober, double delay_factor = 1.0)
      : rules_(rules), prober_(prober), delay_factor_(delay_factor) {}

  // `symptoms`: those held about nodes this node localises, any order.
  // `self`: this node's name (for localised_by). `now_ns`: localised_ns.
  Analysis analyse(std::vector<SymptomRecord> symptoms, const std::string& self, int64_t now_ns);

  // The purify and group steps alone (tests and the trigger use them).
  std::vector<Group> group(std::vector<SymptomRecord> symptoms, size_t* duplicates_dropped = nullptr) const;

 private:
  const FaultRuleBase& rules_;
  Prober& prober_;
  double delay_factor_;
};

}  // namespace nk
