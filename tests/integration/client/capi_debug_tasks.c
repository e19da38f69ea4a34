/* A runtime of its own on the task C API, for the debugging tests: TASKS
   independent tasks (ids 101..100+TASKS, function "debug_work"), made up
   front and queued, then run by WORKERS threads that ask nk_task_select
   which to run and nk_task_may_start whether they may, and wait a little
   when the answer is -EAGAIN (a debugger holds them). Each task spins for
   SPIN_MS. Prints, as they happen:
     started <id> order <k>     (k: 0 for the first task to start)
   and at the end "tasks=<TASKS>". Exit 1 if a call failed.
   Usage: capi_debug_tasks TASKS WORKERS SPIN_MS */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nodekeeper/tasks.h>

enum { kMaxTasks = 1024 };

static int task_count, spin_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int taken[kMaxTasks];
static int taken_count;
static atomic_int order, failures;

static void check(int rc, const char* what) {
  if (rc != 0) {
    fprintf(stderr, "capi_debug_tasks: %s returned %d\n", what, rc);
    atomic_fetch_add(&failures, 1);
  }
}

static void pause_briefly(void) {
  struct timespec t = {0, 200 * 1000};
  nanosleep(&t, NULL);
}

static void spin(int ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

static void* worker(void* arg) {
  uint32_t w = (uint32_t)(uintptr_t)arg;
  uint64_t ready[kMaxTasks];
  for (;;) {
    size_t n = 0;
    pthread_mutex_lock(&lock);
    if (taken_count == task_count) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    for (int i = 0; i < task_count; ++i)
      if (!taken[i]) ready[n++] = (uint64_t)(101 + i);
    pthread_mutex_unlock(&lock);
    if (n == 0) return NULL;
    size_t chosen = 0;
    int rc = nk_task_select(ready, n, &chosen);
    if (rc == -EAGAIN) {
      pause_briefly();
      continue;
    }
    check(rc, "nk_task_select");
    uint64_t id = ready[chosen];
    if (nk_task_may_start(id) == -EAGAIN) {
      pause_briefly();
      continue;
    }
    pthread_mutex_lock(&lock);
    int mine = !taken[id - 101];
    if (mine) {
      taken[id - 101] = 1;
      ++taken_count;
    }
    pthread_mutex_unlock(&lock);
    if (!mine) continue;  /* another worker took it meanwhile */
    check(nk_task_start(id, w), "nk_task_start");
    printf("started %" PRIu64 " order %d\n", id, atomic_fetch_add(&order, 1));
    fflush(stdout);
    spin(spin_ms);
    check(nk_task_end(id, 0), "nk_task_end");
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: capi_debug_tasks TASKS WORKERS SPIN_MS\n");
    return 2;
  }
  task_count = atoi(argv[1]);
  int workers = atoi(argv[2]);
  spin_ms = atoi(argv[3]);
  if (task_count < 1 || task_count > kMaxTasks || workers < 1 || workers > 64 || spin_ms < 0) {
    fprintf(stderr, "capi_debug_tasks: bad arguments\n");
    return 2;
  }
  uint64_t function = 0;
  check(nk_task_register_function("debug_work", &function), "register");
  for (int i = 0; i < task_count; ++i) {
    check(nk_task_create((uint64_t)(101 + i), 0, function, 0), "nk_task_create");
    check(nk_task_queued((uint64_t)(101 + i)), "nk_task_queued");
  }
  pthread_t threads[64];
  for (int w = 0; w < workers; ++w) pthread_create(&threads[w], NULL, worker, (void*)(uintptr_t)(w + 1));
  for (int w = 0; w < workers; ++w) pthread_join(threads[w], NULL);
  printf("tasks=%d\n", task_count);
  fflush(stdout);
  check(nk_finalize(), "nk_finalize");
  return failures == 0 ? 0 : 1;
}
