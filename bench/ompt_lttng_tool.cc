// An OMPT tool that traces the task events libnodekeeper captures as
// LTTng-UST tracepoints (nk_lttng_tracepoints.h): the published yardstick
// task_events_bench puts beside libnodekeeper. It registers the same
// callbacks as libnodekeeper with NODEKEEPER_TASKS on, and names tasks the
// same way (a per-thread counter under the thread's slot, kept in the
// task's ompt_data_t), so the two differ only in where the events go:
// libnodekeeper's per-thread ring and shipper, or LTTng's per-CPU buffers
// and consumer daemon. With no LTTng session listening, each tracepoint is
// one load and a not-taken branch.

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "nk_lttng_tracepoints.h"

#include <omp-tools.h>

#include "ompt_task_tool.h"

#include <atomic>
#include <cstdint>

namespace {

// As libnodekeeper's TaskCapture: the thread's slot in the high bits, its
// own serial number in the low 40; implicit tasks are parents, not graph
// nodes, and carry the top bit.
constexpr int kSerialBits = 40;
constexpr uint64_t kImplicitBit = uint64_t{1} << 63;

std::atomic<uint64_t> g_next_slot{0};
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_slot = 0;
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_serial = 0;

uint64_t slot() {
  if (t_slot == 0) t_slot = g_next_slot.fetch_add(1, std::memory_order_relaxed) + 1;
  return t_slot;
}

uint64_t newId(bool implicit) {
  return (slot() << kSerialBits) | ++t_serial | (implicit ? kImplicitBit : 0);
}

bool isImplicit(uint64_t id) { return (id & kImplicitBit) != 0; }

void onImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task, unsigned int, unsigned int,
                    int) {
  if (task && endpoint == ompt_scope_begin && task->value == 0) task->value = newId(true);
}

void onTaskCreate(ompt_data_t* parent, const ompt_frame_t*, ompt_data_t* task, int flags, int,
                  const void* codeptr) {
  if (!parent || !task || (flags & (ompt_task_initial | ompt_task_implicit))) return;
  if (parent->value == 0) parent->value = newId(true);  // e.g. the initial task, seen first here
  task->value = newId(false);
  // OMPT 5.0 gives no priority here; libnodekeeper records 0 as well.
  lttng_ust_tracepoint(nk_omp, task_create, task->value, parent->value, reinterpret_cast<uint64_t>(codeptr), 0);
}

void onDependences(ompt_data_t* task, const ompt_dependence_t* deps, int count) {
  if (!task || task->value == 0) return;
  for (int i = 0; i < count; ++i) {
    uint64_t kind;
    switch (deps[i].dependence_type) {
      case ompt_dependence_type_in: kind = 1; break;
      case ompt_dependence_type_out: kind = 2; break;
      case ompt_dependence_type_inout:
      case ompt_dependence_type_mutexinoutset:
      case ompt_dependence_type_inoutset: kind = 3; break;
      default: continue;  // doacross source/sink: not task dependences
    }
    lttng_ust_tracepoint(nk_omp, dependence, task->value, reinterpret_cast<uint64_t>(deps[i].variable.ptr), kind);
  }
}

void onTaskSchedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  const bool done = status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_late_fulfill;
  if (prior && prior->value != 0 && !isImplicit(prior->value) && done) {
    if (status == ompt_task_cancel)
      lttng_ust_tracepoint(nk_omp, task_cancel, prior->value);
    else
      lttng_ust_tracepoint(nk_omp, task_finish, prior->value);
  }
  if (next && next->value != 0 && !isImplicit(next->value)) lttng_ust_tracepoint(nk_omp, task_start, next->value, slot());
}

void onSyncRegion(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
                  const void*) {
  if (kind == ompt_sync_region_taskgroup) return;  // as libnodekeeper: taskwaits and barriers
  const uint64_t k = kind == ompt_sync_region_taskwait ? 1 : 2;
  const uint64_t id = task && !isImplicit(task->value) ? task->value : 0;
  if (endpoint == ompt_scope_end)
    lttng_ust_tracepoint(nk_omp, sync_end, id, k);
  else
    lttng_ust_tracepoint(nk_omp, sync_begin, id, k);
}

constexpr nk::bench::TaskCallbacks kCallbacks{&onImplicitTask, &onTaskCreate, &onDependences, &onTaskSchedule,
                                           &onSyncRegion};

}  // namespace

NK_BENCH_TASK_TOOL(kCallbacks)
