#pragma once

// What the bench's OMPT tools that stand beside libnodekeeper's task events
// share (the null tool, the clock alone, LTTng-UST): they take the task
// callbacks libnodekeeper takes with NODEKEEPER_TASKS on, and nothing else,
// so that they differ from it only in what they do in them. A tool defines
// the five and names them once with NK_BENCH_TASK_TOOL.

#include <omp-tools.h>

namespace nk::bench {

struct TaskCallbacks {
  ompt_callback_implicit_task_t implicit_task;
  ompt_callback_task_create_t task_create;
  ompt_callback_dependences_t dependences;
  ompt_callback_task_schedule_t task_schedule;
  ompt_callback_sync_region_t sync_region;
};

// A tool's initialize: nonzero to stay attached.
inline int registerTaskCallbacks(ompt_function_lookup_t lookup, const TaskCallbacks& callbacks) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(callbacks.implicit_task));
  set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(callbacks.task_create));
  set_callback(ompt_callback_dependences, reinterpret_cast<ompt_callback_t>(callbacks.dependences));
  set_callback(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(callbacks.task_schedule));
  set_callback(ompt_callback_sync_region, reinterpret_cast<ompt_callback_t>(callbacks.sync_region));
  return 1;
}

}  // namespace nk::bench

// The tool's entry point, which libomp looks up by name: `callbacks`, an
// nk::bench::TaskCallbacks with static storage.
#define NK_BENCH_TASK_TOOL(callbacks)                                                                       \
  extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int, \
                                                                                               const char*) { \
    static ompt_start_tool_result_t result = {                                                              \
        [](ompt_function_lookup_t lookup, int, ompt_data_t*) {                                              \
          return nk::bench::registerTaskCallbacks(lookup, callbacks);                                       \
        },                                                                                                  \
        [](ompt_data_t*) {}, {0}};                                                                          \
    return &result;                                                                                         \
  }
