// burn SECONDS: keeps every OpenMP thread busy for SECONDS, then reports.
// The demo runs it to heat the emulated node: its CPU time lands on the host
// CPUs that the emulated cores map onto.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  if (!(seconds > 0)) {
    std::fprintf(stderr, "usage: burn SECONDS (a positive number)\n");
    return 1;
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double total = 0;
  int threads = 0;
#pragma omp parallel reduction(+ : total)
  {
#pragma omp single
    threads = omp_get_num_threads();
    double x = 1.0;
    while (std::chrono::steady_clock::now() < end) {
      // Converges to 1: bounded work the compiler cannot drop.
      for (int i = 0; i < 100000; ++i) x = x * 0.999999 + 1e-6;
    }
    total += x;
  }
  std::printf("burn: %d threads busy for %.1f s (checksum %.6f)\n", threads, seconds, total);
  return 0;
}
