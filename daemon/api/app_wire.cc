#include "api/app_wire.h"

namespace v1 = nodekeeper::v1;

namespace nk {

void AppWire::toProto(const AppThreadRecord& thread, v1::AppThread* out) {
  out->set_tid(thread.tid);
  out->set_omp_thread_num(thread.omp_thread_num);
  out->set_core(thread.core);
  for (uint32_t cpu : thread.affinity) out->mutable_affinity()->add_cpus(cpu);
}

void AppWire::toProto(const AppRecord& app, v1::App* out) {
  out->set_app_id(app.id);
  out->set_pid(app.pid);
  out->set_uid(app.uid);
  out->set_name(app.name);
  out->set_power_budget_mw(app.power_budget_mw);
  out->set_policy(app.policy);
  out->set_thread_count(app.decision.thread_count);
  out->set_max_threads(app.max_threads);
  out->set_reported_team_size(app.reported_team_size);
  out->set_control_attached(app.control_attached);
  out->set_measured_power_mw(app.measured_power_mw);
  out->set_effective_budget_mw(app.effective_budget_mw);
  out->set_effective_policy(app.effective_policy);
  out->set_budget_floor_mw(app.budget_floor_mw);
  out->set_budget_warning(app.budget_warning);
  out->set_over_budget_reason(app.over_budget_reason);
  out->set_managed(app.managed);
  out->set_energy_j(app.energy_j);
  out->set_job_id(app.job_id);
  out->set_start_ns(app.registered_ns);
  out->set_end_ns(app.ended_ns);
  out->set_end_detail(app.end_detail);
  for (const auto& thread : app.threads) toProto(thread, out->add_threads());
}

void AppWire::toProto(uint64_t app_id, const AppDecisionRecord& decision, v1::AppDecision* out) {
  out->Clear();
  out->set_app_id(app_id);
  out->set_thread_count(decision.thread_count);
  out->set_sequence(decision.seq);
  for (const auto& thread : decision.threads) toProto(thread, out->add_threads());
  for (const auto& [core, khz] : decision.core_khz) {
    auto* f = out->add_frequencies();
    f->set_core(core);
    f->set_khz(khz);
  }
}

}  // namespace nk
