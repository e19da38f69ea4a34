// An OMPT tool that registers the task callbacks libnodekeeper registers
// with NODEKEEPER_TASKS on (implicit_task, task_create, dependences,
// task_schedule, sync_region) and does nothing in them. task_events_bench
// runs it as a set-up of its own: what libomp itself spends on reporting
// tasks to any tool, which no task tool can go below; libnodekeeper's own
// cost is what it adds on top.

#include <omp-tools.h>

namespace {

void onImplicitTask(ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t* task, unsigned int, unsigned int, int) {
  task->value = 1;  // as a tool that names its tasks
}
void onTaskCreate(ompt_data_t*, const ompt_frame_t*, ompt_data_t* task, int, int, const void*) { task->value = 1; }
void onDependences(ompt_data_t*, const ompt_dependence_t*, int) {}
void onTaskSchedule(ompt_data_t*, ompt_task_status_t, ompt_data_t*) {}
void onSyncRegion(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, const void*) {}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&onImplicitTask));
  set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(&onTaskCreate));
  set_callback(ompt_callback_dependences, reinterpret_cast<ompt_callback_t>(&onDependences));
  set_callback(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(&onTaskSchedule));
  set_callback(ompt_callback_sync_region, reinterpret_cast<ompt_callback_t>(&onSyncRegion));
  return 1;
}

void finalize(ompt_data_t*) {}

}  // namespace

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int,
                                                                                             const char*) {
  static ompt_start_tool_result_t result = {&initialize, &finalize, {0}};
  return &result;
}
