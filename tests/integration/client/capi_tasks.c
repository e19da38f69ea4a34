/* A task runtime of its own, reporting through libnodekeeper's task C API,
   for the integration test: a root task (on the main thread) creates a
   3x4 wavefront of tasks, each reading its upper and left neighbour's cell
   of a static array; three worker threads run them from a ready queue,
   asking nk_task_select which to run. Prints what it did, for the test to
   compare with the recording:
     tasks=13 edges=17 workers=3
     function <name> <id as 0x hex>
     task <id> parent <id> function <name> priority <p>
     edge <from> <to> <address as 0x hex> <kind>
     ran <task> worker <w>        (worker 0: the main thread)
     result=<cell at the far corner, C(5,2)=10>
   Exit 1 if a call failed or the result is wrong. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <nodekeeper/tasks.h>

enum { kRows = 3, kCols = 4, kTasks = kRows * kCols, kWorkers = 3, kMaxEdges = 2 * kTasks };

static const uint64_t kRootId = 1;
static long cells[kRows][kCols];

static uint64_t taskId(int i, int j) { return 100 + (uint64_t)(i * kCols + j); }

struct Edge {
  uint64_t from, to;
  const void* address;
  int kind;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static uint64_t ready[kTasks];
static size_t ready_count;
static int pending[kRows][kCols];  /* predecessors not yet finished */
static int done[kRows][kCols];
static int finished_count;
static int ran_on[kRows][kCols];
static atomic_int failures;

static void check(int rc, const char* what) {
  if (rc != 0) {
    fprintf(stderr, "capi_tasks: %s returned %d\n", what, rc);
    atomic_fetch_add(&failures, 1);
  }
}

static void expectError(int rc, int want, const char* what) {
  if (rc != want) {
    fprintf(stderr, "capi_tasks: %s returned %d, not %d\n", what, rc, want);
    atomic_fetch_add(&failures, 1);
  }
}

/* Under lock. */
static void makeReady(int i, int j) {
  ready[ready_count++] = taskId(i, j);
  check(nk_task_queued(taskId(i, j)), "nk_task_queued");
  pthread_cond_broadcast(&changed);
}

static void runCell(int i, int j) {
  long up = i > 0 ? cells[i - 1][j] : 0, left = j > 0 ? cells[i][j - 1] : 0;
  cells[i][j] = (i == 0 || j == 0) ? 1 : up + left;
}

static void* worker(void* arg) {
  uint32_t w = (uint32_t)(uintptr_t)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (ready_count == 0 && finished_count < kTasks) pthread_cond_wait(&changed, &lock);
    if (ready_count == 0) break;
    size_t chosen = ready_count;
    check(nk_task_select(ready, ready_count, &chosen), "nk_task_select");
    if (chosen >= ready_count) chosen = 0;
    uint64_t id = ready[chosen];
    if (nk_task_may_start(id) != 0) {  /* not yet: a later version's debugger holds it */
      pthread_cond_wait(&changed, &lock);
      continue;
    }
    for (size_t k = chosen + 1; k < ready_count; ++k) ready[k - 1] = ready[k];
    --ready_count;
    pthread_mutex_unlock(&lock);

    int i = (int)(id - 100) / kCols, j = (int)(id - 100) % kCols;
    check(nk_task_start(id, w), "nk_task_start");
    runCell(i, j);
    ran_on[i][j] = (int)w;
    check(nk_task_end(id, 0), "nk_task_end");

    pthread_mutex_lock(&lock);
    done[i][j] = 1;
    ++finished_count;
    if (i + 1 < kRows && --pending[i + 1][j] == 0) makeReady(i + 1, j);
    if (j + 1 < kCols && --pending[i][j + 1] == 0) makeReady(i, j + 1);
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  /* Bad arguments are refused the same whether task events are on or off. */
  uint64_t bad_id = 0;
  size_t bad_index = 0;
  expectError(nk_task_register_function(NULL, &bad_id), -EINVAL, "register(NULL)");
  expectError(nk_task_register_function("", &bad_id), -EINVAL, "register(\"\")");
  expectError(nk_task_create(0, 0, 0, 0), -EINVAL, "create(0)");
  expectError(nk_task_create(5, 0, 12345, 0), -EINVAL, "create(function 12345)");
  expectError(nk_task_depend(1, 2, NULL, 7), -EINVAL, "depend(kind 7)");
  expectError(nk_task_depend(2, 2, NULL, NK_DEPEND_IN), -EINVAL, "depend(2 -> 2)");
  expectError(nk_task_start(0, 0), -EINVAL, "start(0)");
  expectError(nk_task_select(NULL, 1, &bad_index), -EINVAL, "select(NULL)");
  expectError(nk_task_select(&kRootId, 0, &bad_index), -EINVAL, "select(count 0)");

  uint64_t f_root = 0, f_boundary = 0, f_interior = 0, again = 0;
  check(nk_task_register_function("wave_root", &f_root), "register");
  check(nk_task_register_function("wave_boundary", &f_boundary), "register");
  check(nk_task_register_function("wave_interior", &f_interior), "register");
  check(nk_task_register_function("wave_boundary", &again), "register");
  if (again != f_boundary || f_root == f_boundary || f_boundary == f_interior) {
    fprintf(stderr, "capi_tasks: function ids 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 "\n", f_root,
            f_boundary, f_interior, again);
    ++failures;
  }
  printf("function wave_root 0x%" PRIx64 "\nfunction wave_boundary 0x%" PRIx64 "\nfunction wave_interior 0x%" PRIx64
         "\n",
         f_root, f_boundary, f_interior);

  /* The root runs on the main thread and creates the wavefront while the
     workers already run what is ready. */
  check(nk_task_create(kRootId, 0, f_root, 0), "nk_task_create(root)");
  check(nk_task_queued(kRootId), "nk_task_queued(root)");
  check(nk_task_start(kRootId, 0), "nk_task_start(root)");
  printf("task %" PRIu64 " parent 0 function wave_root priority 0\n", kRootId);

  pthread_t threads[kWorkers];
  for (int w = 0; w < kWorkers; ++w) pthread_create(&threads[w], NULL, worker, (void*)(uintptr_t)(w + 1));

  struct Edge edges[kMaxEdges];
  int edge_count = 0;
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) {
      int interior = i > 0 && j > 0;
      int32_t priority = i + j;  /* the wave it belongs to */
      pthread_mutex_lock(&lock);
      check(nk_task_create(taskId(i, j), kRootId, interior ? f_interior : f_boundary, priority), "nk_task_create");
      int waits = 0;
      if (i > 0) {
        edges[edge_count++] = (struct Edge){taskId(i - 1, j), taskId(i, j), &cells[i - 1][j], NK_DEPEND_IN};
        waits += !done[i - 1][j];
      }
      if (j > 0) {
        /* The kinds are the runtime's to say; two rows use the set kinds so
         * that every kind goes through the library to the graph. */
        const int kind = i == 1 ? NK_DEPEND_MUTEXINOUTSET : i == 2 ? NK_DEPEND_INOUTSET : NK_DEPEND_IN;
        edges[edge_count++] = (struct Edge){taskId(i, j - 1), taskId(i, j), &cells[i][j - 1], kind};
        waits += !done[i][j - 1];
      }
      for (int e = edge_count - (i > 0) - (j > 0); e < edge_count; ++e)
        check(nk_task_depend(edges[e].from, edges[e].to, edges[e].address, edges[e].kind), "nk_task_depend");
      pending[i][j] = waits;
      if (waits == 0) makeReady(i, j);
      pthread_mutex_unlock(&lock);
      printf("task %" PRIu64 " parent %" PRIu64 " function %s priority %d\n", taskId(i, j), kRootId,
             interior ? "wave_interior" : "wave_boundary", priority);
    }

  pthread_mutex_lock(&lock);
  while (finished_count < kTasks) pthread_cond_wait(&changed, &lock);
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  for (int w = 0; w < kWorkers; ++w) pthread_join(threads[w], NULL);
  check(nk_task_end(kRootId, 0), "nk_task_end(root)");

  printf("tasks=%d edges=%d workers=%d\n", kTasks + 1, edge_count, kWorkers);
  for (int e = 0; e < edge_count; ++e)
    printf("edge %" PRIu64 " %" PRIu64 " 0x%" PRIxPTR " %d\n", edges[e].from, edges[e].to,
           (uintptr_t)edges[e].address, edges[e].kind);
  printf("ran %" PRIu64 " worker 0\n", kRootId);
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) printf("ran %" PRIu64 " worker %d\n", taskId(i, j), ran_on[i][j]);
  printf("result=%ld\n", cells[kRows - 1][kCols - 1]);
  fflush(stdout);

  /* Explicitly, though the library would at exit too: flushes the events. */
  check(nk_finalize(), "nk_finalize");
  return failures == 0 && cells[kRows - 1][kCols - 1] == 10 ? 0 : 1;
}
