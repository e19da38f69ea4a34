#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nodekeeper/v1/faults.pb.h"

namespace nk::cli {

// Renders FaultsService replies ("jobs", "symptoms", "faults") as text or
// JSON. Pure; times are the local time zone's.
class FaultsFormatter {
 public:
  // A row per rank registered here (the job's columns on its first row
  // only); `now_ns` (CLOCK_REALTIME) gives the age of each last report.
  static std::string jobsText(const nodekeeper::v1::JobList& jobs, int64_t now_ns);
  static std::string jobsJson(const nodekeeper::v1::JobList& jobs);

  // The reporter_rank of a symptom a daemon raised itself (a rank it saw
  // exit or stop, a lost heartbeat, a thermal alarm), not one of the ranks.
  static constexpr uint32_t kDaemonReporter = UINT32_MAX;

  // One line per symptom, printed as it arrives (hence no table): time, job,
  // kind, reporter (rank@node, or daemon@node), suspects, operation, waited,
  // detail. The JSON says the source too: "reporter": "rank" or "daemon".
  static std::string symptomLine(const nodekeeper::v1::Symptom& symptom);
  // One compact JSON object and a newline: a line of NDJSON.
  static std::string symptomJson(const nodekeeper::v1::Symptom& symptom);
  // {"symptoms": [...]}, for the symptoms so far.
  static std::string symptomsJson(const std::vector<nodekeeper::v1::Symptom>& symptoms);

  // The faults so far as a table: ID, JOB, KIND, NODE, RANKS ("0-3,7"),
  // AFTER (seconds from the first symptom to the localisation), BY (the node
  // that localised it), EVIDENCE (the first line; the JSON has them all).
  // With none, "No faults reported." (naming `job_id` when it is set).
  static std::string faultsText(const std::vector<nodekeeper::v1::FaultReport>& faults,
                                const std::string& job_id = "");
  // One line per fault, printed as it arrives (faults --watch): the time it
  // was localised, then the table's columns.
  static std::string faultLine(const nodekeeper::v1::FaultReport& fault);
  // One compact JSON object and a newline: a line of NDJSON.
  static std::string faultJson(const nodekeeper::v1::FaultReport& fault);
  // A JSON array of those objects, for the faults so far.
  static std::string faultsJson(const std::vector<nodekeeper::v1::FaultReport>& faults);
  // Seconds from the first symptom to the localisation; 0 when either time
  // is missing (or they are the wrong way round).
  static double detectedAfterS(const nodekeeper::v1::FaultReport& fault);

  // "response_timeout", "mpi_error", ...
  static std::string kindName(nodekeeper::v1::SymptomKind kind);
  // "node_down", "process_hang", "process_crash", "network_degraded",
  // "overheating" (the daemon's and the rule file's words).
  static std::string faultKindName(nodekeeper::v1::FaultKind kind);
  // "2024-05-01 12:00:01.123", local time.
  static std::string timeText(int64_t realtime_ns);
  // "0.2 s ago", "3 min ago", "never".
  static std::string ageText(int64_t then_ns, int64_t now_ns);
};

}  // namespace nk::cli
