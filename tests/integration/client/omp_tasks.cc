// OpenMP task programs whose graphs the task-events test checks exactly.
//   omp_tasks fib N      tasks for fib(N) down to fib(2); prints tasks=<count>
//   omp_tasks figure2    Temanejo's Figure 2: two independent chains of ten
//                        tasks (depend(inout) on one variable each); prints
//                        the two addresses
//   omp_tasks steady N US  N tasks that each spin for US microseconds;
//                        prints tasks=<N> when all have run
//   omp_tasks undeferred N  N tasks with if(0), run at once by the one
//                        thread that makes them; prints tasks=<N>
//   omp_tasks until FILE N  fib(N)'s task tree again and again until FILE
//                        exists (at least once); prints rounds=<R> tasks=<count>
//   omp_tasks cholesky   a blocked Cholesky factorisation of 3 x 3 tiles,
//                        tasks with depend(in/inout) on tiles; prints each
//                        tile's address and checks L * L^T = A
// Built with -g and without -rdynamic: the tool names each task construct
// "function (omp_tasks.cc:LINE)" from the symbol table and DWARF.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

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

// Tiles of B x B doubles, row-major, lower triangle used.
constexpr int kTiles = 3, kB = 8, kN = kTiles * kB;
double g_tile[kTiles][kTiles][kB * kB];

void potrf(double* a) {  // a = L * L^T in place, L lower
  for (int j = 0; j < kB; ++j) {
    double d = a[j * kB + j];
    for (int k = 0; k < j; ++k) d -= a[j * kB + k] * a[j * kB + k];
    a[j * kB + j] = std::sqrt(d);
    for (int i = j + 1; i < kB; ++i) {
      double s = a[i * kB + j];
      for (int k = 0; k < j; ++k) s -= a[i * kB + k] * a[j * kB + k];
      a[i * kB + j] = s / a[j * kB + j];
    }
    for (int i = 0; i < j; ++i) a[i * kB + j] = 0;
  }
}
void trsm(const double* l, double* b) {  // b = b * L^-T
  for (int r = 0; r < kB; ++r)
    for (int j = 0; j < kB; ++j) {
      double s = b[r * kB + j];
      for (int k = 0; k < j; ++k) s -= b[r * kB + k] * l[j * kB + k];
      b[r * kB + j] = s / l[j * kB + j];
    }
}
void gemm(const double* a, const double* b, double* c) {  // c -= a * b^T
  for (int i = 0; i < kB; ++i)
    for (int j = 0; j < kB; ++j) {
      double s = 0;
      for (int k = 0; k < kB; ++k) s += a[i * kB + k] * b[j * kB + k];
      c[i * kB + j] -= s;
    }
}

void cholesky_tasks() {
  for (int k = 0; k < kTiles; ++k) {
#pragma omp task depend(inout : g_tile[k][k])
    potrf(g_tile[k][k]);
    for (int i = k + 1; i < kTiles; ++i) {
#pragma omp task depend(in : g_tile[k][k]) depend(inout : g_tile[i][k])
      trsm(g_tile[k][k], g_tile[i][k]);
    }
    for (int i = k + 1; i < kTiles; ++i) {
      for (int j = k + 1; j < i; ++j) {
#pragma omp task depend(in : g_tile[i][k], g_tile[j][k]) depend(inout : g_tile[i][j])
        gemm(g_tile[i][k], g_tile[j][k], g_tile[i][j]);
      }
#pragma omp task depend(in : g_tile[i][k]) depend(inout : g_tile[i][i])
      gemm(g_tile[i][k], g_tile[i][k], g_tile[i][i]);  // syrk: the diagonal tile
    }
  }
}

void figure2_left(long* x) { *x = *x + 1; }
void figure2_right(long* y) { *y = *y + 2; }

}

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "leaves") == 0) {
    // N leaf tasks, each with a taskwait that waits for nothing (as in a
    // recursive tree's leaves), and one taskwait that waits for them.
    int n = std::atoi(argv[2]);
    long done = 0;
#pragma omp parallel
#pragma omp single
    {
      for (int i = 0; i < n; ++i) {
#pragma omp task shared(done)
        {
#pragma omp atomic
          ++done;
#pragma omp taskwait
        }
      }
#pragma omp taskwait
    }
    std::printf("leaves=%ld\n", done);
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "fib") == 0) {
    int n = std::atoi(argv[2]);
    long created = 0, result = 0;
#pragma omp parallel
#pragma omp single
    result = fib_task(n, &created);
    std::printf("fib=%ld tasks=%ld\n", result, created);
    return 0;
  }
  if (argc >= 4 && std::strcmp(argv[1], "until") == 0) {
    // A short program a test ends when it has seen it (the stop file).
    const char* stop_file = argv[2];
    int n = std::atoi(argv[3]);
    long created = 0, rounds = 0, result = 0;
    bool every_round_right = true;
    do {
      long round_result = 0;
#pragma omp parallel
#pragma omp single
      round_result = fib_task(n, &created);
      // The first round's answer is the one to hold the others to.
      if (rounds == 0) result = round_result;
      every_round_right = every_round_right && round_result == result;
      ++rounds;
    } while (access(stop_file, F_OK) != 0);
    std::printf("fib=%ld rounds=%ld tasks=%ld\n", result, rounds, created);
    return every_round_right ? 0 : 1;
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
  if (argc >= 4 && std::strcmp(argv[1], "steady") == 0) {
    long n = std::atol(argv[2]), micros = std::atol(argv[3]), ran = 0;
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < n; ++i) {
#pragma omp task shared(ran)
      {
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
        while (std::chrono::steady_clock::now() < until) {
        }
#pragma omp atomic
        ++ran;
      }
    }
    std::printf("tasks=%ld\n", ran);
    return ran == n ? 0 : 1;
  }
  if (argc >= 3 && std::strcmp(argv[1], "undeferred") == 0) {
    // Tasks the encountering thread must run at once (if(0)): a debugger
    // holds them too, in task_schedule like any other.
    long n = std::atol(argv[2]), ran = 0;
#pragma omp parallel num_threads(1)
    for (long i = 0; i < n; ++i) {
#pragma omp task if (0) shared(ran)
      {
#pragma omp atomic
        ++ran;
      }
    }
    std::printf("tasks=%ld\n", ran);
    return ran == n ? 0 : 1;
  }
  if (argc >= 2 && std::strcmp(argv[1], "cholesky") == 0) {
    // A = M * M^T + N * I with M's entries in [0, 1): symmetric positive definite.
    static double m[kN][kN], a[kN][kN];
    unsigned seed = 7;
    for (auto& row : m)
      for (double& v : row) v = (seed = seed * 1103515245u + 12345u) % 1000 / 1000.0;
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) {
        double s = i == j ? kN : 0;
        for (int k = 0; k < kN; ++k) s += m[i][k] * m[j][k];
        a[i][j] = s;
      }
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) g_tile[i / kB][j / kB][(i % kB) * kB + j % kB] = a[i][j];
#pragma omp parallel
#pragma omp single
    cholesky_tasks();
    double worst = 0;
    auto l = [](int i, int j) { return j > i ? 0.0 : g_tile[i / kB][j / kB][(i % kB) * kB + j % kB]; };
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0;
        for (int k = 0; k < kN; ++k) s += l(i, k) * l(j, k);
        worst = std::fmax(worst, std::fabs(s - a[i][j]));
      }
    for (int i = 0; i < kTiles; ++i)
      for (int j = 0; j <= i; ++j) std::printf("tile %d %d %p\n", i, j, static_cast<void*>(g_tile[i][j]));
    std::printf("cholesky residual %.3g\n", worst);
    return worst < 1e-9 ? 0 : 1;
  }
  std::fprintf(stderr, "usage: omp_tasks fib N | omp_tasks until FILE N | omp_tasks figure2 | omp_tasks cholesky\n");
  return 2;
}
