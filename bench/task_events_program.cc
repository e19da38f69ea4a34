// The task-events benchmark's OpenMP program (task_events_bench runs it).
//   task_events_program empty N   N empty tasks from one producer
//   task_events_program chain N   N tasks with depend(inout) on one of 8 addresses
//   task_events_program fib N     a fib-shaped tree (each task makes two and waits
//                                 for them) of about N tasks: the largest tree of
//                                 at most N, at least fib(2)
// Prints ns_per_task=<wall time per task, creation to last completion> and
// tasks=<tasks made>.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Tasks in fib(k)'s tree: two per call with k >= 2.
long fibTasks(int k) { return k < 2 ? 0 : 2 + fibTasks(k - 1) + fibTasks(k - 2); }

long fib(int k) {
  if (k < 2) return k;
  long a = 0, b = 0;
#pragma omp task shared(a)
  a = fib(k - 1);
#pragma omp task shared(b)
  b = fib(k - 2);
#pragma omp taskwait
  return a + b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "empty") != 0 && std::strcmp(argv[1], "chain") != 0 &&
                   std::strcmp(argv[1], "fib") != 0)) {
    std::fprintf(stderr, "usage: task_events_program empty|chain|fib N\n");
    return 2;
  }
  const bool chain = std::strcmp(argv[1], "chain") == 0;
  const bool tree = std::strcmp(argv[1], "fib") == 0;
  long n = std::atol(argv[2]);
  int depth = 2;
  if (tree) {
    while (fibTasks(depth + 1) <= n && depth < 40) ++depth;  // fibTasks grows by ~1.6 per step
    n = fibTasks(depth);
  }
  static long cells[8 * 8];  // a cache line apart
  long done = 0;
  long result = 0;
  // Warm-up: the team, the tool and its buffers exist before the clock runs.
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < 1000; ++i) {
#pragma omp task
    {
    }
  }
  auto start = std::chrono::steady_clock::now();
#pragma omp parallel
#pragma omp single
  {
    if (tree) {
      result = fib(depth);
    } else {
      for (long i = 0; i < n; ++i) {
        if (chain) {
          long* cell = &cells[(i % 8) * 8];
#pragma omp task depend(inout : cell[0]) firstprivate(cell)
          ++cell[0];
        } else {
#pragma omp task
          {
          }
        }
      }
    }
#pragma omp taskwait
    done = n;
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  long sum = result;
  for (int i = 0; i < 8; ++i) sum += cells[i * 8];
  std::printf("ns_per_task=%.1f tasks=%ld sum=%ld\n", ns / static_cast<double>(n), done, sum);
  return 0;
}
