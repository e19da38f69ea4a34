#pragma once

/* libnodekeeper: task events from any task runtime (energy manager,
   debugger). A runtime that is not OpenMP (or an OpenMP runtime without
   OMPT) reports its tasks here; the library streams them to nodekeeperd,
   which records the task graph for `nodekeeper tasks` and debugger
   frontends.

   On and off. NODEKEEPER_TASKS=lossless|lossy|off sets the mode. Unset, a
   program that calls these functions (or AYU_event) has asked for task
   events: they start with the first call, lossless (OpenMP tasks stay
   uncaptured, as without these calls). NODEKEEPER_TASKS=off: every call
   still checks its arguments, returns 0 and records nothing.

   The calls never wait for the daemon: without one, the events are counted
   as lost and that is said once on stderr. In lossless mode a thread waits
   only while its own buffer (NODEKEEPER_TASK_BUFFER events) is full and the
   library's shipper empties it. Any thread may call any function; the event
   calls take no lock. Events from different threads may arrive in any
   order (an edge before its task's creation, say): the daemon's graph
   takes them so.

   Ids. Task ids are the runtime's own: nonzero, unique in the process.
   Every call returns 0 or a negative errno and never throws.

   Ayudame 1. The library also exports Temanejo's entry point,
       void AYU_event(enum ayu_event_t event, int64_t task_id, void* data);
   so a runtime built with Ayudame support (StarPU, Nanos++, PaRSEC) is
   recorded with no change; declare it from Ayudame's own header. Bad events
   are ignored, with one stderr line the first time. */

#include <stddef.h>
#include <stdint.h>

#include "nodekeeper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a task uses a dependence's address: tasks.proto's DependenceKind. */
#define NK_DEPEND_IN 1
#define NK_DEPEND_OUT 2
#define NK_DEPEND_INOUT 3
/* OpenMP 5.1's: writers in any order but one at a time (mutexinoutset), or
   any number at once, ordered against other kinds only (inoutset). */
#define NK_DEPEND_MUTEXINOUTSET 4
#define NK_DEPEND_INOUTSET 5

/* Names a task function (a codelet, a kernel) for the graph; `function_id`
   receives the id to pass to nk_task_create. The same name gives the same
   id. -EINVAL for a NULL or empty name or a NULL function_id. */
NK_EXPORT int nk_task_register_function(const char* name, uint64_t* function_id);

/* A new task, not yet ready. `task_id`: nonzero, chosen by the runtime;
   `parent_id`: the task that created it, 0 for none; `function_id`: from
   nk_task_register_function, 0 for unknown. -EINVAL for a task_id of 0, a
   parent_id equal to task_id, or a function_id the library did not give. */
NK_EXPORT int nk_task_create(uint64_t task_id, uint64_t parent_id, uint64_t function_id, int32_t priority);

/* An edge: `to_task` waits for `from_task`, through `address` (the data
   they share; NULL for an edge without one), which `to_task` uses as `kind`
   (NK_DEPEND_*). The runtime works out its edges: none are inferred here.
   -EINVAL for a task id of 0, a self-edge or another kind. */
NK_EXPORT int nk_task_depend(uint64_t from_task, uint64_t to_task, const void* address, int kind);

/* The task is ready: in a ready queue. -EINVAL for 0. */
NK_EXPORT int nk_task_queued(uint64_t task_id);
/* The task starts running on the calling thread, the runtime's worker
   number `worker`. The graph shows which thread ran each task. -EINVAL for 0. */
NK_EXPORT int nk_task_start(uint64_t task_id, uint32_t worker);
/* The task ended; nonzero `failed`: it failed (or was cancelled).
   -EINVAL for 0. */
NK_EXPORT int nk_task_end(uint64_t task_id, int failed);

/* The scheduler's question to a debugger: of the `count` ready tasks in
   `ready`, which to run next; `chosen` receives its index. With no debugger
   attached it is index 0: the scheduler's own order. With one: the first of
   the highest debugger priority ("priority TASK LEVEL") among those not
   blocked. -EAGAIN: none of them may run now (blocked, or the program is in
   break): wait and ask again; the debugger's continue, step or unblock
   changes the answer. -EINVAL for a NULL ready or chosen, or a count of 0. */
NK_EXPORT int nk_task_select(const uint64_t* ready, size_t count, size_t* chosen);

/* The check a scheduler makes right before it starts `task_id`: 0, it may
   start; -EAGAIN while a debugger holds it (blocked, or the program is in
   break with no step left). nk_task_start of a task that may not start
   waits until it may, holding the calling worker. -EINVAL for 0. */
NK_EXPORT int nk_task_may_start(uint64_t task_id);

#ifdef __cplusplus
}
#endif
