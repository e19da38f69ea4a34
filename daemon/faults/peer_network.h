#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "faults/fault_record.h"
#include "faults/job_registry.h"
#include "faults/symptom_record.h"

namespace nk {

// One rank of a job as the daemon of its node described it (RankProgress).
struct PeerRankProgress {
  uint32_t rank = 0;
  std::string node;  // "" when that daemon did not say
  std::vector<CommProgressRecord> communicators;
  int64_t last_report_ns = 0;  // by that daemon's clock; 0 before the first report
  std::string process_state;   // "running", "stopped", ...
};

// What one node's daemon said of a job's ranks it holds.
struct PeerProgress {
  int64_t now_ns = 0;  // that daemon's clock when it answered; 0 when it did not say
  std::vector<PeerRankProgress> ranks;
};

// How the daemons of a job's fault tree reach each other. The daemon sends
// over gRPC (TCP, with the peer token); the simulation delivers in its
// model of the network. Every call returns within its own deadline and says
// whether the other node took the message.
class PeerNetwork {
 public:
  enum class Delivery {
    kAccepted,
    kOverloaded,   // the node answered but takes no more symptoms
    kUnreachable,  // no answer in time
  };

  virtual ~PeerNetwork() = default;
  virtual Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom) = 0;
  virtual Delivery publishFault(std::string_view node, const FaultRecord& fault) = 0;
  virtual Delivery heartbeat(std::string_view node, std::string_view job_id, std::string_view from, bool leaving) = 0;
  // How far the job's ranks on each of `nodes` got, asked of all of them at
  // once and answered within one `deadline`: a collective's timeout must
  // not wait for the nodes one after the other. One result per node, in
  // their order; an error says why that node gave no answer. A node's own
  // endpoint (from the job's node list) is where it is asked, since
  // another job may have named a node the same.
  virtual std::vector<Result<PeerProgress>> rankProgress(std::string_view job_id, std::span<const JobNodeRecord> nodes,
                                                         std::chrono::milliseconds deadline) = 0;
};

}  // namespace nk
