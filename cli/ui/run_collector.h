#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_run_sink.h"

namespace nk::ui {

// The `runs` events of a session's SSE stream: finished intervals per
// thread for the page's timeline. Task runs come from TaskRunTracker (this
// is its sink); taskwaits and barriers from the batches' sync events,
// which the graph leaves out.
class RunCollector : public TaskRunSink {
 public:
  void sessionStart(int64_t) override {}
  void nameFunction(uint32_t, std::string_view) override {}
  void begin(const Run&, std::span<const Dependence>, std::span<const uint64_t>) override {}
  void end(const Run& run, const End& end, std::span<const uint64_t> flows_out) override;

  // A batch's sync events (structured, as toStructured makes them).
  void noteSync(const nodekeeper::v1::TaskEventBatch& batch);

  bool pending() const { return pending_ > 0; }
  // The runs finished since the last take, as one `runs` event's data.
  nlohmann::json take();
  // Every run taken so far, for a new subscriber, at most `per_event` per event.
  std::vector<nlohmann::json> everything(size_t per_event) const;

 private:
  // Kept compact (a big session has a run per task); JSON when sent.
  struct Interval {
    uint64_t task = 0;
    int64_t start_ns = 0, end_ns = 0;
    int32_t thread = 0;
    const char* kind = "task";
  };
  void add(int32_t thread, uint64_t task, const char* kind, int64_t start_ns, int64_t end_ns);
  static nlohmann::json toJson(const Interval& run);

  std::vector<Interval> runs_;
  size_t pending_ = 0;  // the last pending_ of runs_ were not taken yet
  // Open taskwaits and barriers per (thread, kind): the task and start.
  std::map<std::pair<uint32_t, int>, std::vector<std::pair<uint64_t, int64_t>>> open_;
};

}  // namespace nk::ui
