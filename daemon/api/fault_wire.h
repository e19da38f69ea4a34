#pragma once

#include "faults/fault_record.h"
#include "faults/prober.h"
#include "faults/symptom_record.h"
#include "nodekeeper/v1/faults.pb.h"

namespace nk {

// The fault side's domain records and their wire messages, both ways, in
// one place for the services and the peer network.
class FaultWire {
 public:
  static void toProto(const SymptomRecord& symptom, nodekeeper::v1::Symptom* out);
  static SymptomRecord fromProto(const nodekeeper::v1::Symptom& symptom);
  static void toProto(const FaultRecord& fault, nodekeeper::v1::FaultReport* out);
  static FaultRecord fromProto(const nodekeeper::v1::FaultReport& fault);
  static void toProto(const StatusFindings& status, nodekeeper::v1::StatusProbeResponse* out);
  static StatusFindings fromProto(const nodekeeper::v1::StatusProbeResponse& status);
  // "running" ... "gone" back to the state; unknown words are "gone".
  static ProcessState processStateFromName(std::string_view name);
};

}  // namespace nk
