#include "cli/faults_formatter.h"

#include <time.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.h"
#include "cli/value_formatter.h"
#include "base/signal_name.h"
#include "base/units.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

namespace {

// The nodes a job spans, short enough for a table cell.
std::string nodeNames(const pb::Job& job) {
  if (job.nodes().empty()) return "-";
  constexpr int kShown = 4;
  std::string out;
  for (int i = 0; i < job.nodes_size() && i < kShown; ++i) out += (i ? "," : "") + job.nodes(i).node();
  if (job.nodes_size() > kShown) out += " +" + std::to_string(job.nodes_size() - kShown);
  return out;
}

std::vector<uint32_t> ranksOf(const google::protobuf::RepeatedField<uint32_t>& ranks) {
  return std::vector<uint32_t>(ranks.begin(), ranks.end());
}

std::string dump(const Json& json, int indent) { return json.dump(indent, ' ', false, Json::error_handler_t::replace); }

Json symptomObject(const pb::Symptom& s) {
  return {{"symptom_id", s.symptom_id()},
          {"job_id", s.job_id()},
          {"kind", FaultsFormatter::kindName(s.kind())},
          {"timestamp_ns", s.timestamp_ns()},
          {"reporter_node", s.reporter_node()},
          {"reporter_rank", s.reporter_rank()},
          {"reporter", s.reporter_rank() == FaultsFormatter::kDaemonReporter ? "daemon" : "rank"},
          {"suspect_node", s.suspect_node()},
          {"suspect_ranks", ranksOf(s.suspect_ranks())},
          {"operation", s.operation()},
          {"error_code", s.error_code()},
          {"communicator", s.communicator()},
          {"collective_seq", s.collective_seq()},
          {"communicator_members", ranksOf(s.communicator_members())},
          {"waited_s", s.waited_s()},
          {"detail", s.detail()}};
}

Json faultObject(const pb::FaultReport& f) {
  return {{"fault_id", f.fault_id()},
          {"job_id", f.job_id()},
          {"kind", FaultsFormatter::faultKindName(f.kind())},
          {"node", f.node()},
          {"ranks", ranksOf(f.ranks())},
          {"evidence", std::vector<std::string>(f.evidence().begin(), f.evidence().end())},
          {"detected_after_s", FaultsFormatter::detectedAfterS(f)},
          {"first_symptom_ns", f.first_symptom_ns()},
          {"localised_ns", f.localised_ns()},
          {"localised_by", f.localised_by()}};
}

// A table cell or a line's field: never empty, never more than one line.
std::string oneLine(std::string text) {
  if (text.empty()) return "-";
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string afterText(const pb::FaultReport& f) {
  if (f.first_symptom_ns() <= 0 || f.localised_ns() <= 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3fs", FaultsFormatter::detectedAfterS(f));
  return buffer;
}

std::string evidenceText(const pb::FaultReport& f) {
  if (f.evidence().empty()) return "-";
  std::string text = oneLine(f.evidence(0));
  if (f.evidence_size() > 1) text += " (+" + std::to_string(f.evidence_size() - 1) + " more)";
  return text;
}

std::string rankText(const pb::FaultReport& f) {
  return f.ranks().empty() ? "-" : formatCpuList(ranksOf(f.ranks()));
}

}  // namespace

std::string FaultsFormatter::faultKindName(pb::FaultKind kind) {
  switch (kind) {
    case pb::FAULT_KIND_NODE_DOWN: return "node_down";
    case pb::FAULT_KIND_PROCESS_HANG: return "process_hang";
    case pb::FAULT_KIND_PROCESS_CRASH: return "process_crash";
    case pb::FAULT_KIND_NETWORK_DEGRADATION: return "network_degraded";
    case pb::FAULT_KIND_OVERHEATING: return "overheating";
    default: return "unspecified";
  }
}

double FaultsFormatter::detectedAfterS(const pb::FaultReport& f) {
  if (f.first_symptom_ns() <= 0 || f.localised_ns() <= 0 || f.localised_ns() < f.first_symptom_ns()) return 0;
  return static_cast<double>(f.localised_ns() - f.first_symptom_ns()) / 1e9;
}

std::string FaultsFormatter::kindName(pb::SymptomKind kind) {
  switch (kind) {
    case pb::SYMPTOM_KIND_RESPONSE_TIMEOUT: return "response_timeout";
    case pb::SYMPTOM_KIND_MPI_ERROR: return "mpi_error";
    case pb::SYMPTOM_KIND_HEARTBEAT_LOST: return "heartbeat_lost";
    case pb::SYMPTOM_KIND_THERMAL_ALARM: return "thermal_alarm";
    case pb::SYMPTOM_KIND_POWER_ALARM: return "power_alarm";
    case pb::SYMPTOM_KIND_RANK_EXITED: return "rank_exited";
    default: return "unspecified";
  }
}

std::string FaultsFormatter::timeText(int64_t realtime_ns) {
  if (realtime_ns <= 0) return "-";
  time_t seconds = static_cast<time_t>(realtime_ns / 1000000000);
  int millis = static_cast<int>((realtime_ns % 1000000000) / 1000000);
  tm local{};
  localtime_r(&seconds, &local);
  char buffer[64];
  size_t n = strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &local);
  std::snprintf(buffer + n, sizeof buffer - n, ".%03d", millis);
  return buffer;
}

std::string FaultsFormatter::ageText(int64_t then_ns, int64_t now_ns) {
  if (then_ns <= 0) return "never";
  double seconds = static_cast<double>(std::max<int64_t>(now_ns - then_ns, 0)) / 1e9;
  char buffer[32];
  if (seconds < 60) std::snprintf(buffer, sizeof buffer, "%.1f s ago", seconds);
  else if (seconds < 3600) std::snprintf(buffer, sizeof buffer, "%.0f min ago", seconds / 60);
  else std::snprintf(buffer, sizeof buffer, "%.1f h ago", seconds / 3600);
  return buffer;
}

namespace {

// "cancelled (SIGINT)" for a job its ranks' daemon found cancelled; "" else.
std::string jobEnding(const pb::Job& job) {
  const int signal = job.cancelled_by_signal();
  if (signal == 0) return "";
  return "cancelled (" + signalName(signal) + ")";
}

// "running", "completed", ...: the proto's JobEnd without its prefix.
std::string_view jobEndName(pb::JobEnd end) {
  switch (end) {
    case pb::JOB_END_RUNNING: return "running";
    case pb::JOB_END_COMPLETED: return "completed";
    case pb::JOB_END_FAILED: return "failed";
    case pb::JOB_END_CANCELLED: return "cancelled";
    case pb::JOB_END_ABORTED: return "aborted";
    default: return "unknown";
  }
}

// How the job ended, with the detail when there is one: "completed (exit 0)".
std::string endText(const pb::Job& job) {
  std::string text(jobEndName(job.end()));
  if (!job.end_detail().empty()) text += " (" + job.end_detail() + ")";
  return text;
}

// A rank's process state, or how its job ended once the process is gone.
std::string rankState(const pb::Job& job, const pb::JobRank& rank) {
  if (rank.process_state().empty()) return "-";
  const bool ended = rank.process_state() == "gone" || rank.process_state() == "zombie";
  if (ended && job.cancelled_by_signal() != 0) return jobEnding(job);
  return rank.process_state();
}

}  // namespace

std::string FaultsFormatter::jobsText(const pb::JobList& jobs, int64_t now_ns) {
  if (jobs.jobs().empty()) return "No MPI jobs (their ranks register through the PMPI agent).\n";
  Table table({{"JOB", Table::Align::kLeft},
               {"UID", Table::Align::kRight},
               {"SIZE", Table::Align::kRight},
               {"PROGRAM", Table::Align::kLeft},
               {"START", Table::Align::kLeft},
               {"END", Table::Align::kLeft},
               {"HOW", Table::Align::kLeft},
               {"ENERGY", Table::Align::kRight},
               {"NODES", Table::Align::kLeft}});
  for (const auto& job : jobs.jobs())
    table.addRow({job.job_id(), std::to_string(job.uid()), std::to_string(job.size()),
                  job.program().empty() ? "-" : job.program(), ValueFormatter::timestamp(job.start_ns()),
                  ValueFormatter::timestamp(job.end_ns()), endText(job), ValueFormatter::energy(job.energy_j()), nodeNames(job)});
  // The ranks of this node go under their job, lined up among themselves.
  std::istringstream rows(table.render());
  std::string out;
  std::string line;
  std::getline(rows, line);
  out += line + "\n";
  for (const auto& job : jobs.jobs()) {
    std::getline(rows, line);
    out += line + "\n";
    Table ranks({{""}, {""}, {""}, {""}, {""}});
    for (const auto& rank : job.ranks())
      ranks.addRow({"rank " + std::to_string(rank.rank()), rank.node().empty() ? "-" : rank.node(),
                    "pid " + std::to_string(rank.pid()), rankState(job, rank),
                    "reported " + ageText(rank.last_report_ns(), now_ns)});
    if (!ranks.empty()) out += ranks.render("    ", false);
  }
  return out;
}

std::string FaultsFormatter::jobsJson(const pb::JobList& jobs) {
  Json list = Json::array();
  for (const auto& job : jobs.jobs()) {
    Json nodes = Json::array();
    for (const auto& n : job.nodes())
      nodes.push_back({{"node", n.node()}, {"endpoint", n.endpoint()}, {"ranks", ranksOf(n.ranks())}});
    Json ranks = Json::array();
    for (const auto& r : job.ranks())
      ranks.push_back({{"rank", r.rank()},
                       {"node", r.node()},
                       {"pid", r.pid()},
                       {"process_state", r.process_state()},
                       {"last_report_ns", r.last_report_ns()}});
    list.push_back({{"job_id", job.job_id()},
                    {"uid", job.uid()},
                    {"size", job.size()},
                    {"program", job.program()},
                    {"start_ns", job.start_ns()},
                    {"end_ns", job.end_ns()},
                    {"end", std::string(jobEndName(job.end()))},
                    {"end_detail", job.end_detail()},
                    {"energy_j", job.energy_j()},
                    {"source", job.source()},
                    {"nodes_from", job.nodes_from()},
                    {"settings",
                     {{"power_budget_mw", job.settings().power_budget_mw()},
                      {"policy", job.settings().policy()},
                      {"tasks", job.settings().tasks()},
                      {"debug", job.settings().debug()}}},
                    {"ending", jobEnding(job)},
                    {"cancelled_by_signal", job.cancelled_by_signal()},
                    {"nodes", nodes},
                    {"ranks", ranks}});
  }
  return dump(Json{{"jobs", list}}, 2) + "\n";
}

std::string FaultsFormatter::symptomLine(const pb::Symptom& s) {
  const std::string reporter =
      s.reporter_rank() == kDaemonReporter ? std::string("daemon") : "rank " + std::to_string(s.reporter_rank());
  std::string line = timeText(s.timestamp_ns()) + "  " + s.job_id() + "  " + kindName(s.kind()) + "  " + reporter +
                     "@" + (s.reporter_node().empty() ? "?" : s.reporter_node());
  if (s.suspect_ranks().empty()) {
    line += "  suspects -";
  } else {
    line += "  suspect" + std::string(s.suspect_ranks_size() > 1 ? "s " : " ") +
            formatCpuList(ranksOf(s.suspect_ranks()));
    if (!s.suspect_node().empty()) line += "@" + s.suspect_node();
  }
  if (!s.operation().empty()) line += "  " + s.operation();
  if (!s.communicator().empty() && s.collective_seq() > 0)
    line += " (" + s.communicator() + " #" + std::to_string(s.collective_seq()) + ")";
  if (s.error_code() != 0) line += "  error " + std::to_string(s.error_code());
  if (s.waited_s() > 0) {
    char waited[32];
    std::snprintf(waited, sizeof waited, "  waited %.1f s", s.waited_s());
    line += waited;
  }
  if (!s.detail().empty()) line += "  " + s.detail();
  // One symptom, one line, whatever the agent put in its detail.
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line + "\n";
}

std::string FaultsFormatter::symptomJson(const pb::Symptom& symptom) { return dump(symptomObject(symptom), -1) + "\n"; }

std::string FaultsFormatter::symptomsJson(const std::vector<pb::Symptom>& symptoms) {
  Json list = Json::array();
  for (const auto& s : symptoms) list.push_back(symptomObject(s));
  return dump(Json{{"symptoms", list}}, 2) + "\n";
}

std::string FaultsFormatter::faultsText(const std::vector<pb::FaultReport>& faults, const std::string& job_id) {
  if (faults.empty()) return "No faults reported" + (job_id.empty() ? std::string() : " for job " + job_id) + ".\n";
  Table table({{"ID", Table::Align::kRight},
               {"JOB", Table::Align::kLeft},
               {"KIND", Table::Align::kLeft},
               {"NODE", Table::Align::kLeft},
               {"RANKS", Table::Align::kLeft},
               {"AFTER", Table::Align::kRight},
               {"BY", Table::Align::kLeft},
               {"EVIDENCE", Table::Align::kLeft}});
  for (const auto& f : faults)
    table.addRow({std::to_string(f.fault_id()), oneLine(f.job_id()), faultKindName(f.kind()), oneLine(f.node()),
                  rankText(f), afterText(f), oneLine(f.localised_by()), evidenceText(f)});
  return table.render();
}

std::string FaultsFormatter::faultLine(const pb::FaultReport& f) {
  return timeText(f.localised_ns()) + "  fault " + std::to_string(f.fault_id()) + "  " + oneLine(f.job_id()) + "  " +
         faultKindName(f.kind()) + "  node " + oneLine(f.node()) + "  ranks " + rankText(f) + "  after " +
         afterText(f) + "  by " + oneLine(f.localised_by()) + "  " + evidenceText(f) + "\n";
}

std::string FaultsFormatter::faultJson(const pb::FaultReport& fault) { return dump(faultObject(fault), -1) + "\n"; }

std::string FaultsFormatter::faultsJson(const std::vector<pb::FaultReport>& faults) {
  Json list = Json::array();
  for (const auto& f : faults) list.push_back(faultObject(f));
  return dump(list, 2) + "\n";
}

}  // namespace nk::cli
