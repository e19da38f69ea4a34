#include "faults/symptom_record.h"

#include <algorithm>
#include <cstdio>

#include "base/units.h"

namespace nk {

std::string_view symptomKindName(SymptomKind kind) {
  switch (kind) {
    case SymptomKind::kResponseTimeout: return "response_timeout";
    case SymptomKind::kMpiError: return "mpi_error";
    case SymptomKind::kHeartbeatLost: return "heartbeat_lost";
    case SymptomKind::kThermalAlarm: return "thermal_alarm";
    case SymptomKind::kPowerAlarm: return "power_alarm";
    case SymptomKind::kRankExited: return "rank_exited";
    case SymptomKind::kUnspecified: break;
  }
  return "unspecified";
}

bool isKnownSymptomKind(int value) {
  return value >= static_cast<int>(SymptomKind::kResponseTimeout) &&
         value <= static_cast<int>(SymptomKind::kRankExited);
}

size_t SymptomRecord::approximateBytes() const {
  return sizeof(SymptomRecord) + job_id.size() + reporter_node.size() + suspect_node.size() + operation.size() +
         detail.size() + communicator.size() + (suspect_ranks.size() + communicator_members.size()) * sizeof(uint32_t);
}

std::string formatRankList(const std::vector<uint32_t>& ranks) {
  std::vector<uint32_t> distinct = ranks;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return formatCpuList(distinct);
}

std::string SymptomRecord::describe() const {
  std::string text = "symptom " + std::to_string(symptom_id) + " of job " + job_id + ": " +
                     std::string(symptomKindName(kind)) + " reported by rank " + std::to_string(reporter_rank);
  if (!reporter_node.empty()) text += " on " + reporter_node;
  if (!operation.empty()) text += " in " + operation;
  if (!communicator.empty() && collective_seq > 0)
    text += " (collective " + std::to_string(collective_seq) + " of " + communicator + ")";
  if (waited_s > 0) {
    char waited[32];
    std::snprintf(waited, sizeof waited, "%.1f", waited_s);
    text += " after " + std::string(waited) + " s";
  }
  if (suspect_ranks.empty()) {
    text += "; no suspects";
  } else {
    text += "; suspects: rank" + std::string(suspect_ranks.size() > 1 ? "s " : " ") + formatRankList(suspect_ranks);
    if (!suspect_node.empty()) text += " on " + suspect_node;
  }
  if (error_code != 0) text += "; error code " + std::to_string(error_code);
  if (!detail.empty()) text += "; " + detail;
  return text;
}

}  // namespace nk
