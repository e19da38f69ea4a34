#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "faults/prober.h"
#include "faults/symptom_record.h"

namespace nk {

// A daemon's own watch over one job's ranks on its node and over the
// node's temperature: the symptoms no MPI call reports (a rank that died,
// was stopped or stopped reporting; the node overheating), each raised once
// per episode, about this node, for TFD to send to its FLN.
class LocalRankWatch {
 public:
  struct Outcome {
    std::vector<SymptomRecord> symptoms;
    bool all_finalized = false;  // every rank here called MPI_Finalize: the node leaves the tree
  };

  explicit LocalRankWatch(std::chrono::milliseconds stall_after) : stall_after_(stall_after) {}
  void setStallAfter(std::chrono::milliseconds stall_after) { stall_after_ = stall_after; }

  Outcome check(const std::string& job_id, uid_t uid, const std::string& self, std::span<const RankStatus> ranks,
                bool thermal_alarm, double max_temperature_c, int64_t now_ns);

 private:
  struct Raised {
    bool exited = false, stopped = false, stalled = false;
  };
  std::chrono::milliseconds stall_after_;
  std::map<uint32_t, Raised> raised_;
  bool thermal_raised_ = false;
};

}  // namespace nk
