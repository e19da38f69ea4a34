#include "faults/fault_record.h"

#include <array>
#include <cstdio>
#include <utility>

#include "faults/symptom_record.h"

namespace nk {

namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 5> kNames{{
    {FaultKind::kNodeDown, "node_down"},
    {FaultKind::kProcessHang, "process_hang"},
    {FaultKind::kProcessCrash, "process_crash"},
    {FaultKind::kNetworkDegraded, "network_degraded"},
    {FaultKind::kOverheating, "overheating"},
}};

}  // namespace

std::string_view faultKindName(FaultKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unspecified";
}

std::optional<FaultKind> parseFaultKind(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

double FaultRecord::detectedAfterS() const {
  if (first_symptom_ns <= 0 || localised_ns < first_symptom_ns) return 0;
  return static_cast<double>(localised_ns - first_symptom_ns) / 1e9;
}

std::string FaultRecord::describe() const {
  std::string out = "job " + job_id + ": " + std::string(faultKindName(kind)) + " on node " + node;
  if (!ranks.empty()) out += " (rank" + std::string(ranks.size() > 1 ? "s " : " ") + formatRankList(ranks) + ")";
  out += ", localised by " + localised_by;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", detectedAfterS());
  out += std::string(" ") + seconds + " s after the first symptom";
  if (!evidence.empty()) out += ": " + evidence.front();
  return out;
}

}  // namespace nk
