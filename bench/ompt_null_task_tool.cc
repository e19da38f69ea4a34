// An OMPT tool that registers the task callbacks libnodekeeper registers
// with NODEKEEPER_TASKS on (implicit_task, task_create, dependences,
// task_schedule, sync_region) and does nothing in them. task_events_bench
// runs it as a set-up of its own: what libomp itself spends on reporting
// tasks to any tool, which no task tool can go below; libnodekeeper's own
// cost is what it adds on top.

#include <omp-tools.h>

#include "ompt_task_tool.h"

namespace {

void onImplicitTask(ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t* task, unsigned int, unsigned int, int) {
  task->value = 1;  // as a tool that names its tasks
}
void onTaskCreate(ompt_data_t*, const ompt_frame_t*, ompt_data_t* task, int, int, const void*) { task->value = 1; }
void onDependences(ompt_data_t*, const ompt_dependence_t*, int) {}
void onTaskSchedule(ompt_data_t*, ompt_task_status_t, ompt_data_t*) {}
void onSyncRegion(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, const void*) {}

constexpr nk::bench::TaskCallbacks kCallbacks{&onImplicitTask, &onTaskCreate, &onDependences, &onTaskSchedule,
                                           &onSyncRegion};

}  // namespace

NK_BENCH_TASK_TOOL(kCallbacks)
