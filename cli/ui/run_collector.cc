#include "cli/ui/run_collector.h"

namespace v1 = nodekeeper::v1;

namespace nk::ui {

void RunCollector::add(int32_t thread, uint64_t task, const char* kind, int64_t start_ns, int64_t end_ns) {
  runs_.push_back({task, start_ns, end_ns, thread < 0 ? 0 : thread, kind});
  ++pending_;
}

nlohmann::json RunCollector::toJson(const Interval& run) {
  return {{"thread", run.thread}, {"task", run.task}, {"kind", run.kind}, {"start_ns", run.start_ns},
          {"end_ns", run.end_ns}};
}

void RunCollector::end(const Run& run, const End& end, std::span<const uint64_t>) {
  // A run closed only because the stream ended did not finish: not shown.
  if (end.unfinished) return;
  add(run.thread, run.task, "task", run.start_ns, end.end_ns);
}

void RunCollector::noteSync(const v1::TaskEventBatch& batch) {
  for (const v1::TaskEvent& e : batch.events()) {
    if (!e.has_sync()) continue;
    const v1::TaskSync& sync = e.sync();
    int kind = sync.kind();
    if (kind != v1::TaskSync::KIND_TASKWAIT && kind != v1::TaskSync::KIND_BARRIER) continue;
    auto& stack = open_[{e.thread(), kind}];
    if (!sync.end()) {
      stack.emplace_back(sync.task_id(), e.timestamp_ns());
      continue;
    }
    if (stack.empty()) continue;  // its begin was lost
    auto [task, start] = stack.back();
    stack.pop_back();
    add(static_cast<int32_t>(e.thread()), task, kind == v1::TaskSync::KIND_TASKWAIT ? "taskwait" : "barrier", start,
        e.timestamp_ns());
  }
}

nlohmann::json RunCollector::take() {
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i = runs_.size() - pending_; i < runs_.size(); ++i) runs.push_back(toJson(runs_[i]));
  pending_ = 0;
  return {{"runs", std::move(runs)}};
}

std::vector<nlohmann::json> RunCollector::everything(size_t per_event) const {
  std::vector<nlohmann::json> out;
  nlohmann::json runs = nlohmann::json::array();
  // The pending runs go in the next take(), to every subscriber.
  for (size_t i = 0; i + pending_ < runs_.size(); ++i) {
    runs.push_back(toJson(runs_[i]));
    if (runs.size() == per_event) out.push_back({{"runs", std::exchange(runs, nlohmann::json::array())}});
  }
  if (!runs.empty()) out.push_back({{"runs", std::move(runs)}});
  return out;
}

}  // namespace nk::ui
