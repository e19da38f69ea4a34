#include "ompt_tool.h"

#include <vector>

#include "client.h"
#include "task_tool.h"

namespace nk::client {

namespace {

void onThreadBegin(ompt_thread_t thread_type, ompt_data_t*) {
  Client::instance().threadBegin(thread_type == ompt_thread_initial);
}

void onThreadEnd(ompt_data_t*) { Client::instance().threadEnd(); }

void onParallelBegin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int requested_parallelism, int,
                     const void*) {
  Client::instance().parallelBegin(requested_parallelism);
}

void onParallelEnd(ompt_data_t*, ompt_data_t*, int, const void*) { Client::instance().parallelEnd(); }

// Task events (registered only when NODEKEEPER_TASKS is on).
void onImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task, unsigned int, unsigned int,
                    int) {
  TaskTool* tool = TaskTool::instance();
  if (!tool || !task) return;
  if (endpoint == ompt_scope_begin)
    tool->implicitTaskBegin(&task->value);
  else if (endpoint == ompt_scope_end)
    tool->implicitTaskEnd(TaskTool::idOf(task->value));
}

void onTaskCreate(ompt_data_t* parent, const ompt_frame_t*, ompt_data_t* task, int flags, int, const void* codeptr) {
  TaskTool* tool = TaskTool::instance();
  if (!tool || !parent || !task || (flags & (ompt_task_initial | ompt_task_implicit))) return;
  tool->taskCreated(&parent->value, &task->value, reinterpret_cast<uint64_t>(codeptr));
}

void onDependences(ompt_data_t* task, const ompt_dependence_t* deps, int count) {
  TaskTool* tool = TaskTool::instance();
  if (!tool || !task || count <= 0) return;
  // On the stack for the usual few (a thread_local vector in a shared
  // library costs a TLS lookup per call). libomp 14 reports in, out (as
  // inout), inout, mutexinoutset and inoutset, a depobj as the kind it holds
  // and an array section by its first element's address; the tracker's
  // header has the rules.
  constexpr int kOnStack = 16;
  Dependence on_stack[kOnStack];
  std::vector<Dependence> on_heap;
  if (count > kOnStack) on_heap.resize(static_cast<size_t>(count));
  Dependence* converted = count > kOnStack ? on_heap.data() : on_stack;
  size_t n = 0;
  for (int i = 0; i < count; ++i) {
    DependenceKind kind;
    switch (deps[i].dependence_type) {
      case ompt_dependence_type_in: kind = DependenceKind::kIn; break;
      case ompt_dependence_type_out: kind = DependenceKind::kOut; break;
      case ompt_dependence_type_inout: kind = DependenceKind::kInout; break;
      case ompt_dependence_type_mutexinoutset: kind = DependenceKind::kMutexinoutset; break;
      case ompt_dependence_type_inoutset: kind = DependenceKind::kInoutset; break;
      default: continue;  // doacross source/sink: not task dependences
    }
    converted[n++] = {reinterpret_cast<uint64_t>(deps[i].variable.ptr), kind};
  }
  tool->dependences(TaskTool::idOf(task->value), std::span<const Dependence>(converted, n));
}

void onTaskSchedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  TaskTool* tool = TaskTool::instance();
  if (!tool) return;
  bool done = status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_late_fulfill;
  tool->taskSwitched(prior ? TaskTool::idOf(prior->value) : 0, done, status == ompt_task_cancel,
                     next ? TaskTool::idOf(next->value) : 0);
}

void onSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
                  const void*) {
  TaskTool* tool = TaskTool::instance();
  if (!tool) return;
  uint64_t k = kind == ompt_sync_region_taskwait ? 1 : (kind == ompt_sync_region_taskgroup ? 0 : 2);
  if (k == 0) return;
  tool->sync(task ? &task->value : nullptr, k, endpoint == ompt_scope_end);
}

}  // namespace

// Called by the runtime for ompt_start_tool; the tool always attaches.
ompt_start_tool_result_t* OmptTool::startTool(unsigned int, const char*) {
  static ompt_start_tool_result_t result = {&OmptTool::initialize, &OmptTool::finalize, {0}};
  return &result;
}

// Runs at runtime initialisation; returns nonzero to stay active. Callbacks
// only observe; none calls into the daemon.
int OmptTool::initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  bool task_events = Client::instance().ompInitialized();
  set_callback(ompt_callback_thread_begin, reinterpret_cast<ompt_callback_t>(&onThreadBegin));
  set_callback(ompt_callback_thread_end, reinterpret_cast<ompt_callback_t>(&onThreadEnd));
  set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&onParallelBegin));
  set_callback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(&onParallelEnd));
  if (task_events) {
    set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&onImplicitTask));
    set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(&onTaskCreate));
    set_callback(ompt_callback_dependences, reinterpret_cast<ompt_callback_t>(&onDependences));
    set_callback(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(&onTaskSchedule));
    set_callback(ompt_callback_sync_region, reinterpret_cast<ompt_callback_t>(&onSyncRegion));
  }
  return 1;
}

void OmptTool::finalize(ompt_data_t*) {
  TaskTool::stop();
  Client::instance().ompFinalized();
}

}  // namespace nk::client
