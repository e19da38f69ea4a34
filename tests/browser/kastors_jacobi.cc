// A KaStORS-shaped OpenMP task program (the block Jacobi of KaStORS's
// jacobi-task-dep): an N x N grid of B x B blocks; each sweep copies every
// block (depend out: the old block) and then updates it from its four
// neighbours' old blocks (depend in: their array sections). The browser
// tests, the screenshot and the page's benchmark watch its task graph.
//   kastors_jacobi BLOCKS SWEEPS [SPIN_US [sync]]   prints tasks=<count> and the grid's sum
// SPIN_US makes each update spin that long, so a watcher sees it run; sync
// waits for each sweep before making the next (a convergence test's
// taskwait), so the graph grows as the program runs rather than at once.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kB = 16;  // block edge

struct Grid {
  int blocks;
  std::vector<double> u, old, f;
  explicit Grid(int n) : blocks(n), u(size(n)), old(size(n)), f(size(n), 1.0) {}
  static size_t size(int n) { return static_cast<size_t>(n) * n * kB * kB; }
  double* block(std::vector<double>& a, int i, int j) { return a.data() + (static_cast<size_t>(i) * blocks + j) * kB * kB; }
};

void spin(long micros) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

extern "C" {

void copy_block(const double* from, double* to) {
  for (int k = 0; k < kB * kB; ++k) to[k] = from[k];
}

// One Jacobi step on a block; a neighbour that is off the grid is zero.
void jacobi_block(double* u, const double* old, const double* north, const double* south, const double* west,
                  const double* east, const double* f, long spin_us) {
  auto at = [&](int r, int c) -> double {
    if (r < 0) return north ? north[(kB - 1) * kB + c] : 0.0;
    if (r >= kB) return south ? south[c] : 0.0;
    if (c < 0) return west ? west[r * kB + kB - 1] : 0.0;
    if (c >= kB) return east ? east[r * kB] : 0.0;
    return old[r * kB + c];
  };
  for (int r = 0; r < kB; ++r)
    for (int c = 0; c < kB; ++c)
      u[r * kB + c] = 0.25 * (at(r - 1, c) + at(r + 1, c) + at(r, c - 1) + at(r, c + 1) + f[r * kB + c] / (kB * kB));
  if (spin_us > 0) spin(spin_us);
}

}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kastors_jacobi BLOCKS SWEEPS [SPIN_US]\n");
    return 2;
  }
  const int n = std::atoi(argv[1]), sweeps = std::atoi(argv[2]);
  const long spin_us = argc > 3 ? std::atol(argv[3]) : 0;
  const bool sync = argc > 4 && std::strcmp(argv[4], "sync") == 0;
  if (n < 1 || n > 1000 || sweeps < 1) {
    std::fprintf(stderr, "kastors_jacobi: BLOCKS must be 1 to 1000 and SWEEPS at least 1\n");
    return 2;
  }
  Grid grid(n);
  long tasks = 0;
#pragma omp parallel
#pragma omp single
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double* u = grid.block(grid.u, i, j);
        double* old = grid.block(grid.old, i, j);
#pragma omp task depend(in : u[0:kB * kB]) depend(out : old[0:kB * kB]) firstprivate(u, old)
        copy_block(u, old);
        ++tasks;
      }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double* u = grid.block(grid.u, i, j);
        double* old = grid.block(grid.old, i, j);
        double* north = i > 0 ? grid.block(grid.old, i - 1, j) : nullptr;
        double* south = i + 1 < n ? grid.block(grid.old, i + 1, j) : nullptr;
        double* west = j > 0 ? grid.block(grid.old, i, j - 1) : nullptr;
        double* east = j + 1 < n ? grid.block(grid.old, i, j + 1) : nullptr;
        // Off-grid neighbours name the block itself: a dependence on it adds no edge.
        double* in_n = north ? north : old;
        double* in_s = south ? south : old;
        double* in_w = west ? west : old;
        double* in_e = east ? east : old;
        double* f = grid.block(grid.f, i, j);
#pragma omp task depend(in : old[0:kB * kB], in_n[0:kB * kB], in_s[0:kB * kB], in_w[0:kB * kB], in_e[0:kB * kB]) \
    depend(out : u[0:kB * kB]) firstprivate(u, old, north, south, west, east, f)
        jacobi_block(u, old, north, south, west, east, f, spin_us);
        ++tasks;
      }
    if (sync) {
#pragma omp taskwait
    }
  }
  double sum = 0;
  for (double v : grid.u) sum += v;
  std::printf("tasks=%ld sum=%.6f\n", tasks, sum);
  return std::isfinite(sum) ? 0 : 1;
}
