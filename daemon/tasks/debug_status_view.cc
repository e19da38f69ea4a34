#include "tasks/debug_status_view.h"

#include <vector>

#include "tasks/worker_stall.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

uint64_t countOf(const std::array<uint64_t, 5>& by_state, TaskState state) {
  return by_state[static_cast<size_t>(state)];
}

void setCounts(const TaskReadiness::Counts& c, v1::DebugStatus* status) {
  status->set_not_queued(c.not_queued);
  status->set_queued(c.queued);
  status->set_running(c.running);
  status->set_finished(c.finished);
}

}  // namespace

DebugStatusView::DebugStatusView(const SessionRegistry& sessions) : sessions_(sessions) {}

bool DebugStatusView::functionBlocked(std::string_view function, const std::set<std::string>& blocked) {
  return !function.empty() && blocked.find(std::string(function)) != blocked.end();
}

void DebugStatusView::cutBlockedList(v1::DebugStatus* status) {
  status->set_blocked_total(static_cast<uint64_t>(status->blocked_size()));
  if (static_cast<size_t>(status->blocked_size()) > kMaxListed)
    status->mutable_blocked()->Truncate(static_cast<int>(kMaxListed));
}

// Sessions are few; an ended one's readiness (its unfinished tasks, its
// pending edges) is let go the next time any status is filled.
void DebugStatusView::forgetEnded(uint64_t asked) {
  for (auto it = readiness_.begin(); it != readiness_.end();) {
    if (it->first == asked) {
      ++it;
      continue;
    }
    auto info = sessions_.info(it->first);
    it = info && info->live ? std::next(it) : readiness_.erase(it);
  }
}

void DebugStatusView::fill(uint64_t session, v1::DebugStatus* status) {
  std::lock_guard lock(mutex_);
  forgetEnded(session);
  auto info = sessions_.info(session);
  if (info && info->live) {
    TaskReadiness& readiness = readiness_[session];
    if (sessions_.inspect(session, [&](const TaskGraph& graph) { fillLive(graph, readiness, status); })) return;
  }
  readiness_.erase(session);
  cutBlockedList(status);
  if (!info) return;
  // Ended: its graph is freed; the registry kept the raw counts.
  status->set_not_queued(countOf(info->by_state, TaskState::kNotQueued));
  status->set_queued(countOf(info->by_state, TaskState::kQueued));
  status->set_running(countOf(info->by_state, TaskState::kRunning));
  status->set_finished(countOf(info->by_state, TaskState::kFinished));
}

void DebugStatusView::fillLive(const TaskGraph& graph, TaskReadiness& readiness, v1::DebugStatus* status) {
  const std::set<uint64_t> blocked_ids(status->blocked().begin(), status->blocked().end());
  const std::set<std::string> blocked_names(status->blocked_functions().begin(), status->blocked_functions().end());
  const auto& names = graph.functions();
  TaskReadiness::Blocked blocked{&blocked_ids, std::vector<bool>(names.size(), false)};
  if (!blocked_names.empty())
    for (size_t f = 0; f < names.size(); ++f) blocked.functions[f] = functionBlocked(names[f], blocked_names);

  TaskReadiness::View view = readiness.refresh(graph, blocked, kMaxListed);
  setCounts(view.total, status);
  status->clear_functions();
  for (size_t f = 0; f < view.by_function.size(); ++f) {
    const TaskReadiness::Counts& c = view.by_function[f];
    // Index 0 is "unknown": shown only when some task has no name.
    if (f == 0 && c.not_queued + c.queued + c.running + c.finished == 0) continue;
    v1::FunctionCount* out = status->add_functions();
    out->set_function(f == 0 || f >= names.size() || names[f].empty() ? "(unnamed)" : names[f]);
    out->set_not_queued(c.not_queued);
    out->set_queued(c.queued);
    out->set_running(c.running);
    out->set_finished(c.finished);
  }
  status->clear_ready();
  for (uint64_t id : view.ready) status->add_ready(id);
  status->set_ready_total(view.ready_total);

  WorkerStall::Input stall;
  stall.held = status->held();
  stall.steps_left = status->steps_left();
  stall.parked_workers = status->parked_workers();
  stall.workers = view.workers;
  stall.started_since_report = view.last_start_ns > status->gate_reported_ns();
  for (size_t f = 0; f < blocked.functions.size(); ++f)
    if (blocked.functions[f] && view.blocked_waiting[f] > 0)
      stall.blocked_functions.push_back({names[f], view.blocked_waiting[f]});
  for (uint64_t id : blocked_ids) {
    const TaskGraph::Task* t = graph.find(id);
    if (!t || t->state == TaskState::kRunning || t->state == TaskState::kFinished) continue;
    if (t->function < blocked.functions.size() && blocked.functions[t->function]) continue;  // named above
    stall.blocked_tasks.push_back(id);
  }
  status->set_stall(WorkerStall::explain(stall));
  cutBlockedList(status);
}

}  // namespace nk
