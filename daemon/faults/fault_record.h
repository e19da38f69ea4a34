#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nk {

// The kinds of nodekeeper.v1.FaultKind, with the same numbers.
enum class FaultKind : int {
  kUnspecified = 0,
  kNodeDown = 1,
  kProcessHang = 2,
  kProcessCrash = 3,
  kNetworkDegraded = 4,
  kOverheating = 5,
};

// "node_down", "process_hang", "process_crash", "network_degraded",
// "overheating": the words of the rule file, the CLI and the journal.
std::string_view faultKindName(FaultKind kind);
std::optional<FaultKind> parseFaultKind(std::string_view name);

// A fault that TFA confirmed by probing, as the root publishes it.
struct FaultRecord {
  uint64_t fault_id = 0;  // set by the root's FaultReportLog
  std::string job_id;
  uid_t uid = 0;
  FaultKind kind = FaultKind::kUnspecified;
  std::string node;
  std::vector<uint32_t> ranks;
  std::vector<std::string> evidence;  // the symptoms and probe results, one line each
  int64_t first_symptom_ns = 0;       // CLOCK_REALTIME of the group's earliest symptom
  int64_t localised_ns = 0;           // when the probe confirmed it
  std::string localised_by;           // the node whose TFA confirmed it

  double detectedAfterS() const;
  std::string describe() const;
};

}  // namespace nk
