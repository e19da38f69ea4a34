// An unbalanced tree search shaped like BOTS UTS: each node hashes its state
// a few times (the work), then with probability q has m children, each a
// task, and waits for them; a depth cap keeps the supercritical tree finite.
// Deterministic: the same arguments give the same tree, so the node count
// is the oracle for what a recording must hold.
//
//   uts_program [ROOTS [Q [WORK [DEPTH]]]]   (default 2000 0.3 8 40: 12.8 M nodes)
//   prints "nodes N time S"; depth 44 gives about 30 M nodes.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double g_q = 0.3;
int g_m = 4, g_work = 8, g_depth = 40;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t visit(uint64_t state, int depth) {
  uint64_t h = state;
  for (int i = 0; i < g_work; ++i) h = mix(h);
  const bool branches = depth < g_depth && static_cast<double>(h >> 11) * 0x1.0p-53 < g_q;
  const int children = branches ? g_m : 0;
  uint64_t counts[8] = {};
  for (int c = 0; c < children; ++c) {
#pragma omp task shared(counts) firstprivate(c)
    counts[c] = visit(mix(h + c + 1), depth + 1);
  }
#pragma omp taskwait
  uint64_t n = 1;
  for (int c = 0; c < children; ++c) n += counts[c];
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const int roots = argc > 1 ? std::atoi(argv[1]) : 2000;
  g_q = argc > 2 ? std::atof(argv[2]) : 0.3;
  g_work = argc > 3 ? std::atoi(argv[3]) : 8;
  g_depth = argc > 4 ? std::atoi(argv[4]) : 40;
  if (roots < 1 || g_q < 0 || g_q > 1 || g_work < 0 || g_depth < 1) {
    std::fprintf(stderr, "usage: uts_program [ROOTS [Q [WORK [DEPTH]]]]\n");
    return 2;
  }
  std::vector<uint64_t> counts(static_cast<size_t>(roots));
  const double start = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  {
    for (int r = 0; r < roots; ++r) {
#pragma omp task shared(counts) firstprivate(r)
      counts[static_cast<size_t>(r)] = visit(mix(static_cast<uint64_t>(r) * 7919), 1);
    }
#pragma omp taskwait
  }
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  std::printf("nodes %llu time %.3f\n", static_cast<unsigned long long>(total), omp_get_wtime() - start);
  return 0;
}
