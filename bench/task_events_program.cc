// The task-events benchmark's OpenMP program (task_events_bench runs it).
//   task_events_program empty N   N empty tasks from one producer
//   task_events_program chain N   N tasks with depend(inout) on one of 8 addresses
// Prints ns_per_task=<wall time per task, creation to last completion>.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: task_events_program empty|chain N\n");
    return 2;
  }
  const bool chain = std::strcmp(argv[1], "chain") == 0;
  const long n = std::atol(argv[2]);
  static long cells[8 * 8];  // a cache line apart
  long done = 0;
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
#pragma omp taskwait
    done = n;
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  long sum = 0;
  for (int i = 0; i < 8; ++i) sum += cells[i * 8];
  std::printf("ns_per_task=%.1f tasks=%ld sum=%ld\n", ns / static_cast<double>(n), done, sum);
  return 0;
}
