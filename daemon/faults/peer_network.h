#pragma once

#include <string_view>

#include "faults/fault_record.h"
#include "faults/symptom_record.h"

namespace nk {

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
};

}  // namespace nk
