// A small unmodified OpenMP program for the client library's integration
// tests: prints each region's team size and a checksum, nothing else.
// Usage: omp_probe [regions] [pause_us between regions] [stop_file]
// With a stop file it ends early once that file exists (checked every 50
// regions), so a test decides when a long run finishes.

#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include <unistd.h>

int main(int argc, char** argv) {
  int regions = argc > 1 ? std::atoi(argv[1]) : 4;
  int pause_us = argc > 2 ? std::atoi(argv[2]) : 0;
  const char* stop_file = argc > 3 ? argv[3] : nullptr;
  long checksum = 0;
  for (int r = 0; r < regions; ++r) {
    if (stop_file && r % 50 == 0 && access(stop_file, F_OK) == 0) break;
    int team = 0;
    long sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp master
      team = omp_get_num_threads();
      for (int i = omp_get_thread_num(); i < 1000; i += omp_get_num_threads()) sum += i;
    }
    checksum += sum;
    std::printf("region %d threads %d\n", r, team);
    if (pause_us > 0) usleep(static_cast<useconds_t>(pause_us));
  }
  std::printf("checksum %ld\n", checksum);
  return 0;
}
