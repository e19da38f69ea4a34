#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nk {

// The kinds of nodekeeper.v1.SymptomKind, with the same numbers.
enum class SymptomKind : int {
  kUnspecified = 0,
  kResponseTimeout = 1,
  kMpiError = 2,
  kHeartbeatLost = 3,
  kThermalAlarm = 4,
  kPowerAlarm = 5,
  // A rank's process ended without MPI_Finalize (its node's daemon saw it).
  kRankExited = 6,
};

// The reporter_rank of a symptom a daemon raised itself (a lost heartbeat,
// a rank it saw die or stop, a thermal alarm), not one of the job's ranks.
inline constexpr uint32_t kDaemonReporter = UINT32_MAX;

// "response_timeout", "mpi_error", ...; "unspecified" for anything else.
std::string_view symptomKindName(SymptomKind kind);
bool isKnownSymptomKind(int value);

// A symptom as the daemon keeps it: nodekeeper.v1.Symptom's fields, plus the
// uid of the job it belongs to (who besides an admin may see it).
struct SymptomRecord {
  uint64_t symptom_id = 0;
  std::string job_id;
  uid_t uid = 0;
  SymptomKind kind = SymptomKind::kUnspecified;
  std::string reporter_node;
  uint32_t reporter_rank = 0;
  std::string suspect_node;  // one node, or several comma-joined
  std::vector<uint32_t> suspect_ranks;
  std::string operation;
  int32_t error_code = 0;
  int64_t timestamp_ns = 0;  // CLOCK_REALTIME
  std::string detail;
  std::string communicator;
  uint64_t collective_seq = 0;
  std::vector<uint32_t> communicator_members;
  double waited_s = 0;

  // What it costs to keep, roughly: the store bounds its memory with this,
  // since one symptom of a large job may list many thousand members.
  size_t approximateBytes() const;
  // One line for the daemon's log: job, kind, reporter, suspects, operation.
  std::string describe() const;
};

// "0-3,7" for {0,1,2,3,7}: rank lists stay short in logs and tables.
std::string formatRankList(const std::vector<uint32_t>& ranks);

}  // namespace nk
