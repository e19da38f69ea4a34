// An OMPT tool that reads the time stamp counter where libnodekeeper takes
// an event's time (a task's creation, each switch between tasks, a taskwait
// of a task that created some, at its start and end), keeps the newest
// reading and records nothing. recorder_pace_bench runs it beside the null
// tool: the clock alone, what any task tracer that gives each event a time
// of its own pays at the least; libnodekeeper's recording is what it adds on
// top of this.

#include <omp-tools.h>

#include "ompt_task_tool.h"
#include <x86intrin.h>

#include <cstdint>

namespace {

// Set on a task's data once it has created tasks, as libnodekeeper does: a
// taskwait of a task that created none is no event.
constexpr uint64_t kCreatedChildren = uint64_t{1} << 60;

// Initial-exec, as libnodekeeper's: no __tls_get_addr on the event path.
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_newest_reading = 0;

inline void readClock() { t_newest_reading = __rdtsc(); }

void onImplicitTask(ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t* task, unsigned int, unsigned int, int) {
  if (task && task->value == 0) task->value = 1;
}

void onTaskCreate(ompt_data_t* parent, const ompt_frame_t*, ompt_data_t* task, int flags, int, const void*) {
  if (!parent || !task || (flags & (ompt_task_initial | ompt_task_implicit))) return;
  parent->value |= kCreatedChildren;
  task->value = 1;
  readClock();
}

void onDependences(ompt_data_t*, const ompt_dependence_t*, int) {}

void onTaskSchedule(ompt_data_t*, ompt_task_status_t, ompt_data_t*) { readClock(); }

void onSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
                  const void*) {
  if (kind != ompt_sync_region_taskwait || !task || (task->value & kCreatedChildren) == 0) return;
  if (endpoint == ompt_scope_end) task->value &= ~kCreatedChildren;
  readClock();
}

constexpr nk::bench::TaskCallbacks kCallbacks{&onImplicitTask, &onTaskCreate, &onDependences, &onTaskSchedule,
                                           &onSyncRegion};

}  // namespace

NK_BENCH_TASK_TOOL(kCallbacks)
