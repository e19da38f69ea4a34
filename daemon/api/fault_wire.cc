#include "api/fault_wire.h"

namespace v1 = nodekeeper::v1;

namespace nk {

void FaultWire::toProto(const SymptomRecord& s, v1::Symptom* out) {
  out->set_symptom_id(s.symptom_id);
  out->set_job_id(s.job_id);
  out->set_kind(static_cast<v1::SymptomKind>(s.kind));
  out->set_reporter_node(s.reporter_node);
  out->set_reporter_rank(s.reporter_rank);
  out->set_suspect_node(s.suspect_node);
  for (uint32_t r : s.suspect_ranks) out->add_suspect_ranks(r);
  out->set_operation(s.operation);
  out->set_error_code(s.error_code);
  out->set_timestamp_ns(s.timestamp_ns);
  out->set_detail(s.detail);
  out->set_communicator(s.communicator);
  out->set_collective_seq(s.collective_seq);
  for (uint32_t r : s.communicator_members) out->add_communicator_members(r);
  out->set_waited_s(s.waited_s);
}

SymptomRecord FaultWire::fromProto(const v1::Symptom& in) {
  SymptomRecord s;
  s.symptom_id = in.symptom_id();
  s.job_id = in.job_id();
  s.kind = static_cast<SymptomKind>(in.kind());
  s.reporter_node = in.reporter_node();
  s.reporter_rank = in.reporter_rank();
  s.suspect_node = in.suspect_node();
  s.suspect_ranks.assign(in.suspect_ranks().begin(), in.suspect_ranks().end());
  s.operation = in.operation();
  s.error_code = in.error_code();
  s.timestamp_ns = in.timestamp_ns();
  s.detail = in.detail();
  s.communicator = in.communicator();
  s.collective_seq = in.collective_seq();
  s.communicator_members.assign(in.communicator_members().begin(), in.communicator_members().end());
  s.waited_s = in.waited_s();
  return s;
}

void FaultWire::toProto(const FaultRecord& f, v1::FaultReport* out) {
  out->set_fault_id(f.fault_id);
  out->set_job_id(f.job_id);
  out->set_uid(f.uid);
  out->set_kind(static_cast<v1::FaultKind>(f.kind));
  out->set_node(f.node);
  for (uint32_t r : f.ranks) out->add_ranks(r);
  for (const auto& e : f.evidence) out->add_evidence(e);
  out->set_first_symptom_ns(f.first_symptom_ns);
  out->set_localised_ns(f.localised_ns);
  out->set_localised_by(f.localised_by);
}

FaultRecord FaultWire::fromProto(const v1::FaultReport& in) {
  FaultRecord f;
  f.fault_id = in.fault_id();
  f.job_id = in.job_id();
  f.uid = in.uid();
  f.kind = static_cast<FaultKind>(in.kind());
  f.node = in.node();
  f.ranks.assign(in.ranks().begin(), in.ranks().end());
  f.evidence.assign(in.evidence().begin(), in.evidence().end());
  f.first_symptom_ns = in.first_symptom_ns();
  f.localised_ns = in.localised_ns();
  f.localised_by = in.localised_by();
  return f;
}

void FaultWire::toProto(const StatusFindings& s, v1::StatusProbeResponse* out) {
  out->set_load(s.load);
  out->set_overloaded(s.overloaded);
  out->set_max_temperature_c(s.max_temperature_c);
  out->set_thermal_alarm(s.thermal_alarm);
  for (const RankStatus& r : s.ranks) {
    v1::ProbedRank* rank = out->add_ranks();
    rank->set_rank(r.rank);
    rank->set_process_state(std::string(processStateName(r.state)));
    rank->set_finalized(r.finalized);
    rank->set_ending_signal(r.ending_signal);
    rank->set_report_age_ms(r.report_age ? r.report_age->count() : -1);
    rank->set_current_operation(r.current_operation);
    rank->set_cpu_time_us(r.cpu_time ? r.cpu_time->count() : -1);
    rank->set_cpu_grew_ago_ms(r.cpu_grew_ago ? r.cpu_grew_ago->count() : -1);
  }
}

StatusFindings FaultWire::fromProto(const v1::StatusProbeResponse& in) {
  StatusFindings s;
  s.answered = true;
  s.load = in.load();
  s.overloaded = in.overloaded();
  s.max_temperature_c = in.max_temperature_c();
  s.thermal_alarm = in.thermal_alarm();
  for (const v1::ProbedRank& r : in.ranks()) {
    RankStatus rank;
    rank.rank = r.rank();
    rank.state = processStateFromName(r.process_state());
    rank.finalized = r.finalized();
    rank.ending_signal = r.ending_signal();
    if (r.report_age_ms() >= 0) rank.report_age = std::chrono::milliseconds(r.report_age_ms());
    rank.current_operation = r.current_operation();
    // A peer from before these fields sends 0 for both: unknown, not "grew just now".
    if (r.cpu_time_us() > 0) rank.cpu_time = std::chrono::microseconds(r.cpu_time_us());
    if (r.cpu_time_us() > 0 && r.cpu_grew_ago_ms() >= 0)
      rank.cpu_grew_ago = std::chrono::milliseconds(r.cpu_grew_ago_ms());
    s.ranks.push_back(std::move(rank));
  }
  return s;
}

ProcessState FaultWire::processStateFromName(std::string_view name) {
  for (ProcessState state : {ProcessState::kRunning, ProcessState::kSleeping, ProcessState::kStopped,
                             ProcessState::kZombie, ProcessState::kGone})
    if (processStateName(state) == name) return state;
  return ProcessState::kGone;
}

}  // namespace nk
