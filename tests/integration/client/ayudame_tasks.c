/* Plays a runtime built with Ayudame 1 support, as StarPU reports to
   Temanejo: AYU_event with StarPU's argument layouts, from the thread that
   submits and from two worker threads. Six tasks on three tiles of a
   static array: init_tile for each tile (1, 2, 3), then update_tile
   4 (tiles 0, 1), 5 (tiles 0, 2), 6 (tiles 1, 2); edges are the last writer
   of each tile. Two bad events (an unknown one, ADDTASK without data) must
   be ignored. Prints, for the test:
     tasks=6 edges=6 workers=2
     task <id> function <name> priority <p>
     edge <from> <to> <address as 0x hex>
     ran <task> worker <w>
     tiles=<a> <b> <c>
   Exit 1 if the tiles are wrong. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

/* Ayudame 1 declares void AYU_event(enum ayu_event_t, const int64_t, void*);
   an enum is an int in the C ABI. */
void AYU_event(int event, int64_t task_id, void* data);

enum {
  AYU_PREINIT = 1,
  AYU_INIT = 2,
  AYU_FINISH = 3,
  AYU_REGISTERFUNCTION = 4,
  AYU_ADDTASK = 5,
  AYU_ADDDEPENDENCY = 7,
  AYU_ADDTASKTOQUEUE = 8,
  AYU_PRERUNTASK = 10,
  AYU_RUNTASK = 11,
  AYU_POSTRUNTASK = 12,
  AYU_REMOVETASK = 14,
  AYU_BARRIER = 16,
};
enum { AYU_RT_STARPU = 4 };

enum { kTasks = 6, kEdges = 6, kWorkers = 2, kInit = 1, kUpdate = 2 };

static long tiles[3];

struct Task {
  int64_t id;
  int64_t function;
  int64_t priority;
  int reads, writes;  /* tiles; reads == writes for init */
};
static const struct Task tasks[kTasks] = {
    {1, kInit, 0, 0, 0}, {2, kInit, 0, 1, 1},   {3, kInit, 0, 2, 2},
    {4, kUpdate, 1, 0, 1}, {5, kUpdate, 1, 0, 2}, {6, kUpdate, 2, 1, 2},
};

struct Edge {
  int64_t from, to;
  const void* address;
};
static struct Edge edges[kEdges];
static int edge_count;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int pending[kTasks + 1];
static int ready[kTasks];
static int ready_count, finished_count;
static int ran_on[kTasks + 1];

static void run(const struct Task* t) {
  if (t->function == kInit)
    tiles[t->writes] = 10 * (t->writes + 1);
  else
    tiles[t->writes] += tiles[t->reads];
}

/* Under lock; StarPU pushes to a scheduler queue and names it. */
static void push(int index, intptr_t queue) {
  ready[ready_count++] = index;
  AYU_event(AYU_ADDTASKTOQUEUE, tasks[index].id, &queue);
  pthread_cond_broadcast(&changed);
}

static void* worker(void* arg) {
  intptr_t workerid = (intptr_t)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (ready_count == 0 && finished_count < kTasks) pthread_cond_wait(&changed, &lock);
    if (ready_count == 0) break;
    int index = ready[0];
    for (int k = 1; k < ready_count; ++k) ready[k - 1] = ready[k];
    --ready_count;
    pthread_mutex_unlock(&lock);

    const struct Task* t = &tasks[index];
    AYU_event(AYU_PRERUNTASK, t->id, &workerid);
    AYU_event(AYU_RUNTASK, t->id, NULL);
    run(t);
    ran_on[t->id] = (int)workerid;
    AYU_event(AYU_POSTRUNTASK, t->id, NULL);
    AYU_event(AYU_REMOVETASK, t->id, NULL);

    pthread_mutex_lock(&lock);
    ++finished_count;
    for (int e = 0; e < edge_count; ++e)
      if (edges[e].from == t->id && --pending[edges[e].to] == 0) push((int)edges[e].to - 1, workerid);
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  int ayu_rt = AYU_RT_STARPU;  /* an enum ayu_runtime_t */
  AYU_event(AYU_PREINIT, 0, &ayu_rt);
  AYU_event(AYU_INIT, 0, NULL);
  AYU_event(AYU_REGISTERFUNCTION, kInit, (void*)"init_tile");
  AYU_event(AYU_REGISTERFUNCTION, kUpdate, (void*)"update_tile");

  /* All submitted before the workers start: StarPU's edges come with the
     task's submission, from the last writer of each handle. */
  int64_t last_writer[3] = {0, 0, 0};
  for (int i = 0; i < kTasks; ++i) {
    const struct Task* t = &tasks[i];
    int64_t data[2] = {t->function, t->priority};
    AYU_event(AYU_ADDTASK, t->id, data);
    int touched[2] = {t->reads, t->writes};
    for (int k = 0; k < (t->reads == t->writes ? 1 : 2); ++k) {
      int tile = touched[k];
      if (last_writer[tile] == 0) continue;
      uintptr_t dep[3] = {(uintptr_t)last_writer[tile], (uintptr_t)&tiles[tile], (uintptr_t)&tiles[tile]};
      AYU_event(AYU_ADDDEPENDENCY, t->id, dep);
      edges[edge_count++] = (struct Edge){last_writer[tile], t->id, &tiles[tile]};
      ++pending[t->id];
    }
    last_writer[t->writes] = t->id;
  }
  AYU_event(99, 7, NULL);                /* no such event: one stderr line */
  AYU_event(AYU_ADDTASK, 999, NULL);     /* needs its data: silently ignored now */

  pthread_t threads[kWorkers];
  pthread_mutex_lock(&lock);
  for (int i = 0; i < kTasks; ++i)
    if (pending[tasks[i].id] == 0) push(i, 0);
  pthread_mutex_unlock(&lock);
  for (intptr_t w = 0; w < kWorkers; ++w) pthread_create(&threads[w], NULL, worker, (void*)w);
  for (int w = 0; w < kWorkers; ++w) pthread_join(threads[w], NULL);
  AYU_event(AYU_BARRIER, 0, NULL);
  AYU_event(AYU_FINISH, 0, NULL);

  printf("tasks=%d edges=%d workers=%d\n", kTasks, edge_count, kWorkers);
  for (int i = 0; i < kTasks; ++i)
    printf("task %" PRId64 " function %s priority %" PRId64 "\n", tasks[i].id,
           tasks[i].function == kInit ? "init_tile" : "update_tile", tasks[i].priority);
  for (int e = 0; e < edge_count; ++e)
    printf("edge %" PRId64 " %" PRId64 " 0x%" PRIxPTR "\n", edges[e].from, edges[e].to, (uintptr_t)edges[e].address);
  for (int i = 0; i < kTasks; ++i) printf("ran %" PRId64 " worker %d\n", tasks[i].id, ran_on[tasks[i].id]);
  printf("tiles=%ld %ld %ld\n", tiles[0], tiles[1], tiles[2]);
  /* init: 10 20 30; 4: t1 += t0 -> 30; 5: t2 += t0 -> 40; 6: t2 += t1 -> 70 */
  return tiles[0] == 10 && tiles[1] == 30 && tiles[2] == 70 ? 0 : 1;
}
