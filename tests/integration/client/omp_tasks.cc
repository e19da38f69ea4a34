// OpenMP task programs whose graphs the task-events test checks exactly.
//   omp_tasks fib N      tasks for fib(N) down to fib(2); prints tasks=<count>
//   omp_tasks figure2    the seed's Figure 2: two independent chains of ten
//                        tasks (depend(inout) on one variable each); prints
//                        the two addresses
// Built with -rdynamic so that the tool can name the task functions.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

long fib_task(int n, long* created) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp atomic
  *created += 2;
#pragma omp task shared(a) firstprivate(n, created)
  a = fib_task(n - 1, created);
#pragma omp task shared(b) firstprivate(n, created)
  b = fib_task(n - 2, created);
#pragma omp taskwait
  return a + b;
}

void figure2_left(long* x) { *x = *x + 1; }
void figure2_right(long* y) { *y = *y + 2; }

}

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "fib") == 0) {
    int n = std::atoi(argv[2]);
    long created = 0, result = 0;
#pragma omp parallel
#pragma omp single
    result = fib_task(n, &created);
    std::printf("fib=%ld tasks=%ld\n", result, created);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "figure2") == 0) {
    static long x = 0, y = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 10; ++i) {
#pragma omp task depend(inout : x)
      figure2_left(&x);
#pragma omp task depend(inout : y)
      figure2_right(&y);
    }
    std::printf("x=%ld y=%ld addr_left=%p addr_right=%p\n", x, y, static_cast<void*>(&x), static_cast<void*>(&y));
    return x == 10 && y == 20 ? 0 : 1;
  }
  std::fprintf(stderr, "usage: omp_tasks fib N | omp_tasks figure2\n");
  return 2;
}
