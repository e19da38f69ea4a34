#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
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
//
// A rank that ends by a signal that cancels (RankEnding: its agent said so
// before it ended) ends the job here as cancelled, said once; the ends of
// the other ranks here that follow are the job going away, not faults. A
// rank that ends otherwise without MPI_Finalize before that is a crash, and
// the job is not taken for cancelled after it (mpirun ending the other
// ranks with SIGTERM after a crash is part of the crash).
class LocalRankWatch {
 public:
  struct Cancellation {
    int signal = 0;
    uint32_t rank = 0;  // the first rank seen ended by it
  };
  struct Outcome {
    std::vector<SymptomRecord> symptoms;
    bool all_finalized = false;  // every rank here called MPI_Finalize: the node leaves the tree
    std::optional<Cancellation> cancelled;  // the job was found cancelled by this check
  };

  explicit LocalRankWatch(std::chrono::milliseconds stall_after) : stall_after_(stall_after) {}
  void setStallAfter(std::chrono::milliseconds stall_after) { stall_after_ = stall_after; }
  // stall_after grows by this factor on a busy host (SchedulingDelay).
  void setDelayFactor(double factor) { delay_factor_ = factor; }
  bool cancelled() const { return cancelled_.has_value(); }

  Outcome check(const std::string& job_id, uid_t uid, const std::string& self, std::span<const RankStatus> ranks,
                bool thermal_alarm, double max_temperature_c, int64_t now_ns);

 private:
  struct Raised {
    bool exited = false, stopped = false, stalled = false;
  };
  std::chrono::milliseconds stall_after_;
  double delay_factor_ = 1.0;
  std::map<uint32_t, Raised> raised_;
  bool thermal_raised_ = false;
  bool crashed_ = false;
  std::optional<Cancellation> cancelled_;
};

}  // namespace nk
