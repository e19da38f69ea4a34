// daemon_loss_bench's OpenMP program: parallel regions every PAUSE_US
// microseconds until STOP_FILE exists, one line per region:
//   <CLOCK_MONOTONIC ns> <team size> <fewest CPUs any team thread may run on>
// so the bench sees, with a timestamp, when the team is the program's own
// size again and no thread is pinned any more.
//   team_watch_program PAUSE_US STOP_FILE
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: team_watch_program PAUSE_US STOP_FILE\n");
    return 2;
  }
  const int pause_us = std::atoi(argv[1]);
  const char* stop_file = argv[2];
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the bench reads lines as they come
  for (long region = 0;; ++region) {
    if (region % 20 == 0 && access(stop_file, F_OK) == 0) break;
    int team = 0, fewest_cpus = INT_MAX;
    long sum = 0;
#pragma omp parallel reduction(+ : sum) reduction(min : fewest_cpus)
    {
#pragma omp master
      team = omp_get_num_threads();
      cpu_set_t mask;
      CPU_ZERO(&mask);
      if (sched_getaffinity(0, sizeof mask, &mask) == 0) fewest_cpus = std::min(fewest_cpus, CPU_COUNT(&mask));
      for (int i = omp_get_thread_num(); i < 100000; i += omp_get_num_threads()) sum += i;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count();
    std::printf("%lld %d %d %ld\n", static_cast<long long>(ns), team, fewest_cpus, sum % 7);
    usleep(static_cast<useconds_t>(pause_us));
  }
  return 0;
}
