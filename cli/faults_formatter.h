#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nodekeeper/v1/faults.pb.h"

namespace nk::cli {

// Renders FaultsService replies ("jobs", "symptoms") as text or JSON. Pure;
// times are the local time zone's.
class FaultsFormatter {
 public:
  // A row per rank registered here (the job's columns on its first row
  // only); `now_ns` (CLOCK_REALTIME) gives the age of each last report.
  static std::string jobsText(const nodekeeper::v1::JobList& jobs, int64_t now_ns);
  static std::string jobsJson(const nodekeeper::v1::JobList& jobs);

  // One line per symptom, printed as it arrives (hence no table): time, job,
  // kind, reporter rank@node, suspects, operation, waited, detail.
  static std::string symptomLine(const nodekeeper::v1::Symptom& symptom);
  // One compact JSON object and a newline: a line of NDJSON.
  static std::string symptomJson(const nodekeeper::v1::Symptom& symptom);
  // {"symptoms": [...]}, for the symptoms so far.
  static std::string symptomsJson(const std::vector<nodekeeper::v1::Symptom>& symptoms);

  // "response_timeout", "mpi_error", ...
  static std::string kindName(nodekeeper::v1::SymptomKind kind);
  // "2024-05-01 12:00:01.123", local time.
  static std::string timeText(int64_t realtime_ns);
  // "0.2 s ago", "3 min ago", "never".
  static std::string ageText(int64_t then_ns, int64_t now_ns);
};

}  // namespace nk::cli
