// LTTng-UST tracepoints (provider nk_omp) for ompt_lttng_tool: the task
// events libnodekeeper captures, one tracepoint each, every payload field
// 64 bits wide as in libnodekeeper's TaskEventRecord (a, b, c), so the two
// carry the same bytes of payload. LTTng adds its own event header (id
// and timestamp) as libnodekeeper's record has its type and timestamp.
// One difference by design: a dependence is traced as OpenMP declares it
// (task, address, kind); libnodekeeper works out the predecessor on the
// app thread and records the edge, LTTng leaves that to the analysis.
//
// This header is read several times by <lttng/tracepoint-event.h> (the
// provider's multi-read scheme), so it has no #pragma once.
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER nk_omp

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "nk_lttng_tracepoints.h"

#if !defined(NK_LTTNG_TRACEPOINTS_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define NK_LTTNG_TRACEPOINTS_H

#include <lttng/tracepoint.h>

#include <stdint.h>

// A task created: its id, its parent's, the task function's code address
// (OMPT's codeptr_ra) and its priority.
LTTNG_UST_TRACEPOINT_EVENT(nk_omp, task_create,
  LTTNG_UST_TP_ARGS(uint64_t, task, uint64_t, parent, uint64_t, function, int64_t, priority),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
    lttng_ust_field_integer(uint64_t, parent, parent)
    lttng_ust_field_integer_hex(uint64_t, function, function)
    lttng_ust_field_integer(int64_t, priority, priority)
  )
)

// One depend clause item: kind as in tasks.proto (1 in, 2 out, 3 inout).
LTTNG_UST_TRACEPOINT_EVENT(nk_omp, dependence,
  LTTNG_UST_TP_ARGS(uint64_t, task, uint64_t, address, uint64_t, kind),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
    lttng_ust_field_integer_hex(uint64_t, address, address)
    lttng_ust_field_integer(uint64_t, kind, kind)
  )
)

LTTNG_UST_TRACEPOINT_EVENT(nk_omp, task_start,
  LTTNG_UST_TP_ARGS(uint64_t, task, uint64_t, thread),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
    lttng_ust_field_integer(uint64_t, thread, thread)
  )
)

LTTNG_UST_TRACEPOINT_EVENT(nk_omp, task_finish,
  LTTNG_UST_TP_ARGS(uint64_t, task),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
  )
)

LTTNG_UST_TRACEPOINT_EVENT(nk_omp, task_cancel,
  LTTNG_UST_TP_ARGS(uint64_t, task),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
  )
)

// A taskwait (kind 1) or barrier (kind 2) begins or ends; task 0 is an
// implicit task.
LTTNG_UST_TRACEPOINT_EVENT(nk_omp, sync_begin,
  LTTNG_UST_TP_ARGS(uint64_t, task, uint64_t, kind),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
    lttng_ust_field_integer(uint64_t, kind, kind)
  )
)

LTTNG_UST_TRACEPOINT_EVENT(nk_omp, sync_end,
  LTTNG_UST_TP_ARGS(uint64_t, task, uint64_t, kind),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint64_t, task, task)
    lttng_ust_field_integer(uint64_t, kind, kind)
  )
)

#endif  // NK_LTTNG_TRACEPOINTS_H

#include <lttng/tracepoint-event.h>
