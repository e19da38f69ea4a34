// Task programs shaped like the Barcelona OpenMP Tasks Suite and KaStORS,
// for the oracle test: `oracle_programs KIND [SIZE]` runs one and prints
// "KIND ok tasks=N" (and a figure or two) when its result checks out.
//   fib N       recursive fib, a task per call and taskwait (BOTS fib)
//   health N    a tree of villages, a task per village per step, each
//               village's patients summed by a task with several `in`
//               items (BOTS health's shape, simplified)
//   sparselu N  blocked sparse LU with depend on blocks (KaStORS sparselu)
//   jacobi N    block Jacobi, copy then compute, with array sections
//               depend(in: V[b - NB][0:BS*BS]) (KaStORS jacobi task-dep)
//   strassen N  Strassen, recursive: splits, sums and products as tasks
//               with several `in` items, each level its own siblings
//   sets N      in, out, inout, mutexinoutset, inoutset (via a depobj:
//               clang 14 does not parse it, libomp 14 runs it) and depobj
//               in a pseudo-random mix on a few addresses, under several
//               parent tasks
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

std::atomic<long> g_tasks{0};
#define COUNT_TASK g_tasks.fetch_add(1, std::memory_order_relaxed)

// ---- fib
long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a)
  {
    COUNT_TASK;
    a = fib(n - 1);
  }
#pragma omp task shared(b)
  {
    COUNT_TASK;
    b = fib(n - 2);
  }
#pragma omp taskwait
  return a + b;
}

int runFib(int n) {
  long result = 0;
#pragma omp parallel
#pragma omp single
  result = fib(n);
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    long c = a + b;
    a = b;
    b = c;
  }
  std::printf("fib=%ld\n", result);
  return result == a ? 0 : 1;
}

// ---- health
struct Village {
  std::vector<std::unique_ptr<Village>> children;
  long patients[4] = {1, 2, 3, 4};
  long total = 0;
};

std::unique_ptr<Village> makeVillage(int depth, int fanout) {
  auto v = std::make_unique<Village>();
  if (depth > 0)
    for (int i = 0; i < fanout; ++i) v->children.push_back(makeVillage(depth - 1, fanout));
  return v;
}

long simulate(Village* v, int step) {
  long below = 0;
  for (auto& child : v->children) {
    Village* c = child.get();
#pragma omp task firstprivate(c, step) shared(below)
    {
      COUNT_TASK;
      long n = simulate(c, step);
#pragma omp atomic
      below += n;
    }
  }
  // The village's own wards: updated, then summed by a task reading all.
  for (int w = 0; w < 4; ++w) {
#pragma omp task firstprivate(v, w, step) depend(inout: v->patients[w])
    {
      COUNT_TASK;
      v->patients[w] = (v->patients[w] * 7 + step) % 13;
    }
  }
#pragma omp task firstprivate(v) depend(in: v->patients[0], v->patients[1], v->patients[2], v->patients[3]) \
    depend(out: v->total)
  {
    COUNT_TASK;
    v->total = v->patients[0] + v->patients[1] + v->patients[2] + v->patients[3];
  }
#pragma omp taskwait
  return below + v->total;
}

int runHealth(int depth) {
  auto root = makeVillage(depth, 4);
  long sum = 0;
#pragma omp parallel
#pragma omp single
  for (int step = 0; step < 3; ++step) sum = simulate(root.get(), step);
  std::printf("health sum=%ld\n", sum);
  return sum > 0 ? 0 : 1;
}

// ---- sparselu
constexpr int kLuBlock = 4;

void lu0(double* d) {
  for (int k = 0; k < kLuBlock; ++k)
    for (int i = k + 1; i < kLuBlock; ++i) {
      d[i * kLuBlock + k] /= d[k * kLuBlock + k];
      for (int j = k + 1; j < kLuBlock; ++j) d[i * kLuBlock + j] -= d[i * kLuBlock + k] * d[k * kLuBlock + j];
    }
}
void fwd(const double* d, double* c) {
  for (int k = 0; k < kLuBlock; ++k)
    for (int i = k + 1; i < kLuBlock; ++i)
      for (int j = 0; j < kLuBlock; ++j) c[i * kLuBlock + j] -= d[i * kLuBlock + k] * c[k * kLuBlock + j];
}
void bdiv(const double* d, double* r) {
  for (int i = 0; i < kLuBlock; ++i)
    for (int k = 0; k < kLuBlock; ++k) {
      r[i * kLuBlock + k] /= d[k * kLuBlock + k];
      for (int j = k + 1; j < kLuBlock; ++j) r[i * kLuBlock + j] -= r[i * kLuBlock + k] * d[k * kLuBlock + j];
    }
}
void bmod(const double* r, const double* c, double* inner) {
  for (int i = 0; i < kLuBlock; ++i)
    for (int j = 0; j < kLuBlock; ++j)
      for (int k = 0; k < kLuBlock; ++k) inner[i * kLuBlock + j] -= r[i * kLuBlock + k] * c[k * kLuBlock + j];
}

int runSparseLu(int nb) {
  // BOTS genmat's pattern of null blocks, with the fill-in allocated up
  // front so that the tasks' addresses are known when they are created.
  std::vector<std::vector<double>> storage(static_cast<size_t>(nb * nb));
  std::vector<double*> m(static_cast<size_t>(nb * nb), nullptr);
  auto at = [&](int i, int j) -> double*& { return m[static_cast<size_t>(i * nb + j)]; };
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      bool null = (i < j && i % 3 != 0) || (i > j && j % 3 != 0) || (i % 2 == 1 && j % 2 == 1 && i != j) ||
                  (i != j && (i + j) % 5 == 0);
      if (null) continue;
      auto& s = storage[static_cast<size_t>(i * nb + j)];
      s.resize(kLuBlock * kLuBlock);
      for (int k = 0; k < kLuBlock * kLuBlock; ++k) s[k] = (i == j && k % (kLuBlock + 1) == 0) ? 50.0 + i : 0.01 * ((i + j + k) % 7);
      at(i, j) = s.data();
    }
  for (int k = 0; k < nb; ++k)
    for (int i = k + 1; i < nb; ++i)
      for (int j = k + 1; j < nb; ++j)
        if (at(i, k) && at(k, j) && !at(i, j)) {
          auto& s = storage[static_cast<size_t>(i * nb + j)];
          s.assign(kLuBlock * kLuBlock, 0.0);
          at(i, j) = s.data();
        }
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < nb; ++k) {
    double* diag = at(k, k);
#pragma omp task firstprivate(diag) depend(inout: diag[0:kLuBlock * kLuBlock])
    {
      COUNT_TASK;
      lu0(diag);
    }
    for (int j = k + 1; j < nb; ++j)
      if (double* c = at(k, j)) {
#pragma omp task firstprivate(diag, c) depend(in: diag[0:kLuBlock * kLuBlock]) depend(inout: c[0:kLuBlock * kLuBlock])
        {
          COUNT_TASK;
          fwd(diag, c);
        }
      }
    for (int i = k + 1; i < nb; ++i)
      if (double* r = at(i, k)) {
#pragma omp task firstprivate(diag, r) depend(in: diag[0:kLuBlock * kLuBlock]) depend(inout: r[0:kLuBlock * kLuBlock])
        {
          COUNT_TASK;
          bdiv(diag, r);
        }
      }
    for (int i = k + 1; i < nb; ++i)
      if (double* r = at(i, k))
        for (int j = k + 1; j < nb; ++j)
          if (double* c = at(k, j)) {
            double* inner = at(i, j);
#pragma omp task firstprivate(r, c, inner) depend(in: r[0:kLuBlock * kLuBlock], c[0:kLuBlock * kLuBlock]) \
    depend(inout: inner[0:kLuBlock * kLuBlock])
            {
              COUNT_TASK;
              bmod(r, c, inner);
            }
          }
  }
  double trace = 0;
  for (int k = 0; k < nb; ++k) trace += at(k, k)[0];
  std::printf("sparselu trace=%g\n", trace);
  return std::isfinite(trace) ? 0 : 1;
}

// ---- jacobi
constexpr int kJacobiBlock = 8;
constexpr int kJacobiCells = kJacobiBlock * kJacobiBlock;

int runJacobi(int nb) {
  const int iterations = 20;
  // U holds the estimate, V the copy each sweep reads; block b = (i, j)
  // is row b of each, its cells contiguous.
  std::vector<double> u_cells(static_cast<size_t>(nb * nb * kJacobiCells), 0.0), v_cells(u_cells.size(), 0.0);
  auto* U = reinterpret_cast<double(*)[kJacobiCells]>(u_cells.data());
  auto* V = reinterpret_cast<double(*)[kJacobiCells]>(v_cells.data());
  for (int b = 0; b < nb * nb; ++b) U[b][0] = b % 3;
#pragma omp parallel
#pragma omp single
  for (int it = 0; it < iterations; ++it) {
    for (int b = 0; b < nb * nb; ++b) {
#pragma omp task firstprivate(b) depend(in: U[b][0:kJacobiCells]) depend(out: V[b][0:kJacobiCells])
      {
        COUNT_TASK;
        std::memcpy(V[b], U[b], sizeof(double) * kJacobiCells);
      }
    }
    for (int b = 0; b < nb * nb; ++b) {
      const int i = b / nb, j = b % nb;
      // A neighbour off the grid reads the block itself again: the same
      // address twice in one task, which libomp merges.
      const int up = i > 0 ? b - nb : b, down = i < nb - 1 ? b + nb : b;
      const int left = j > 0 ? b - 1 : b, right = j < nb - 1 ? b + 1 : b;
#pragma omp task firstprivate(b, up, down, left, right) depend(in: V[b][0:kJacobiCells], V[up][0:kJacobiCells], \
    V[down][0:kJacobiCells], V[left][0:kJacobiCells], V[right][0:kJacobiCells]) depend(out: U[b][0:kJacobiCells])
      {
        COUNT_TASK;
        for (int c = 0; c < kJacobiCells; ++c)
          U[b][c] = 0.2 * (V[b][c] + V[up][c] + V[down][c] + V[left][c] + V[right][c]);
      }
    }
  }
  double sum = 0;
  for (double x : u_cells) sum += x;
  std::printf("jacobi sum=%g\n", sum);
  return std::isfinite(sum) ? 0 : 1;
}

// ---- strassen
using Matrix = std::vector<double>;

void multiplyPlain(const double* a, const double* b, double* c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

void quadrant(const double* m, int n, int q, double* out) {
  const int h = n / 2, r0 = (q / 2) * h, c0 = (q % 2) * h;
  for (int i = 0; i < h; ++i) std::memcpy(out + i * h, m + (r0 + i) * n + c0, sizeof(double) * h);
}

void place(double* m, int n, int q, const double* in) {
  const int h = n / 2, r0 = (q / 2) * h, c0 = (q % 2) * h;
  for (int i = 0; i < h; ++i) std::memcpy(m + (r0 + i) * n + c0, in + i * h, sizeof(double) * h);
}


// c = a * b, n a power of two; children of the calling task.
void strassen(const double* a, const double* b, double* c, int n, int leaf) {
  if (n <= leaf) {
    multiplyPlain(a, b, c, n);
    return;
  }
  const int h = n / 2;
  const size_t q = static_cast<size_t>(h) * h;
  // 0..3 A's quadrants, 4..7 B's, 8..17 the ten sums, 18..24 M1..M7, 25..28 C's.
  std::vector<double> store(29 * q);
  auto part = [&](int k) { return store.data() + k * q; };
  double *A11 = part(0), *A12 = part(1), *A21 = part(2), *A22 = part(3);
  double *B11 = part(4), *B12 = part(5), *B21 = part(6), *B22 = part(7);
  double *S[10], *M[7], *C[4];
  for (int k = 0; k < 10; ++k) S[k] = part(8 + k);
  for (int k = 0; k < 7; ++k) M[k] = part(18 + k);
  for (int k = 0; k < 4; ++k) C[k] = part(25 + k);
#pragma omp task firstprivate(a, n, A11, A12, A21, A22) depend(out: A11[0:q], A12[0:q], A21[0:q], A22[0:q])
  {
    COUNT_TASK;
    quadrant(a, n, 0, A11), quadrant(a, n, 1, A12), quadrant(a, n, 2, A21), quadrant(a, n, 3, A22);
  }
#pragma omp task firstprivate(b, n, B11, B12, B21, B22) depend(out: B11[0:q], B12[0:q], B21[0:q], B22[0:q])
  {
    COUNT_TASK;
    quadrant(b, n, 0, B11), quadrant(b, n, 1, B12), quadrant(b, n, 2, B21), quadrant(b, n, 3, B22);
  }
  // The ten sums: S[k] = x + sign * y.
  struct Sum {
    double *x, *y;
    double sign;
  } sums[10] = {{A11, A22, 1},  {B11, B22, 1},  {A21, A22, 1}, {B12, B22, -1}, {B21, B11, -1},
                {A11, A12, 1},  {A21, A11, -1}, {B11, B12, 1}, {A12, A22, -1}, {B21, B22, 1}};
  for (int k = 0; k < 10; ++k) {
    double *x = sums[k].x, *y = sums[k].y, *s = S[k], sign = sums[k].sign;
#pragma omp task firstprivate(x, y, s, sign, q) depend(in: x[0:q], y[0:q]) depend(out: s[0:q])
    {
      COUNT_TASK;
      for (size_t e = 0; e < q; ++e) s[e] = x[e] + sign * y[e];
    }
  }
  // M1 = S0 S1, M2 = S2 B11, M3 = A11 S3, M4 = A22 S4, M5 = S5 B22,
  // M6 = S6 S7, M7 = S8 S9.
  const double* left[7] = {S[0], S[2], A11, A22, S[5], S[6], S[8]};
  const double* right[7] = {S[1], B11, S[3], S[4], B22, S[7], S[9]};
  for (int k = 0; k < 7; ++k) {
    const double *x = left[k], *y = right[k];
    double* m = M[k];
#pragma omp task firstprivate(x, y, m, h, leaf, q) depend(in: x[0:q], y[0:q]) depend(out: m[0:q])
    {
      COUNT_TASK;
      strassen(x, y, m, h, leaf);
#pragma omp taskwait
    }
  }
  // C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4,
  // C22 = M1 - M2 + M3 + M6: four `in` items for two of them.
  double *m1 = M[0], *m2 = M[1], *m3 = M[2], *m4 = M[3], *m5 = M[4], *m6 = M[5], *m7 = M[6];
  double *c11 = C[0], *c12 = C[1], *c21 = C[2], *c22 = C[3];
#pragma omp task firstprivate(m1, m4, m5, m7, c11, q) depend(in: m1[0:q], m4[0:q], m5[0:q], m7[0:q]) depend(out: c11[0:q])
  {
    COUNT_TASK;
    for (size_t e = 0; e < q; ++e) c11[e] = m1[e] + m4[e] - m5[e] + m7[e];
  }
#pragma omp task firstprivate(m3, m5, c12, q) depend(in: m3[0:q], m5[0:q]) depend(out: c12[0:q])
  {
    COUNT_TASK;
    for (size_t e = 0; e < q; ++e) c12[e] = m3[e] + m5[e];
  }
#pragma omp task firstprivate(m2, m4, c21, q) depend(in: m2[0:q], m4[0:q]) depend(out: c21[0:q])
  {
    COUNT_TASK;
    for (size_t e = 0; e < q; ++e) c21[e] = m2[e] + m4[e];
  }
#pragma omp task firstprivate(m1, m2, m3, m6, c22, q) depend(in: m1[0:q], m2[0:q], m3[0:q], m6[0:q]) depend(out: c22[0:q])
  {
    COUNT_TASK;
    for (size_t e = 0; e < q; ++e) c22[e] = m1[e] - m2[e] + m3[e] + m6[e];
  }
#pragma omp task firstprivate(c, n, c11, c12, c21, c22, q) depend(in: c11[0:q], c12[0:q], c21[0:q], c22[0:q])
  {
    COUNT_TASK;
    place(c, n, 0, c11), place(c, n, 1, c12), place(c, n, 2, c21), place(c, n, 3, c22);
  }
#pragma omp taskwait
}

int runStrassen(int n) {
  Matrix a(static_cast<size_t>(n) * n), b(a.size()), c(a.size(), 0.0), check(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>((i * 7) % 11) - 5;
    b[i] = static_cast<double>((i * 3) % 13) - 6;
  }
#pragma omp parallel
#pragma omp single
  strassen(a.data(), b.data(), c.data(), n, 16);
  multiplyPlain(a.data(), b.data(), check.data(), n);
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - check[i]));
  std::printf("strassen error=%g\n", worst);
  return worst < 1e-6 ? 0 : 1;
}

// ---- sets
// libomp's kmp_depend_info: what a depobj points at. clang 14 rejects
// depend(inoutset: ...), so an inoutset depobj is made as inout and its
// flag set to libomp's inoutset bit, as a newer compiler would store it.
struct KmpDependInfo {
  intptr_t base_addr;
  size_t len;
  unsigned char flag;
};
constexpr unsigned char kKmpInoutset = 0x8;

uint64_t nextRandom(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

int runSets(int per_parent) {
  constexpr int kAddresses = 6, kKinds = 5;  // in, out, inout, mutexinoutset, inoutset
  static long x[kAddresses];
  long checksum = 0;
#pragma omp parallel
#pragma omp single
  {
    // Three parents share the addresses: no edge may cross between them.
    for (int parent = 0; parent < 3; ++parent) {
#pragma omp task firstprivate(parent) shared(checksum)
      {
        COUNT_TASK;
        omp_depend_t o[kAddresses][kKinds];
        for (int a = 0; a < kAddresses; ++a) {
#pragma omp depobj(o[a][0]) depend(in: x[a])
#pragma omp depobj(o[a][1]) depend(out: x[a])
#pragma omp depobj(o[a][2]) depend(inout: x[a])
#pragma omp depobj(o[a][3]) depend(mutexinoutset: x[a])
#pragma omp depobj(o[a][4]) depend(inout: x[a])
          reinterpret_cast<KmpDependInfo*>(o[a][4])->flag = kKmpInoutset;
        }
        uint64_t random = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(parent);
        for (int t = 0; t < per_parent; ++t) {
          const int shape = static_cast<int>(nextRandom(random) % 8);
          const int a1 = static_cast<int>(nextRandom(random) % kAddresses);
          const int a2 = static_cast<int>(nextRandom(random) % kAddresses);
          // Long runs of one kind make sets; a skewed pick gives them.
          const int k1 = static_cast<int>(nextRandom(random) % 16 < 10 ? (t / 7) % kKinds : nextRandom(random) % kKinds);
          const int k2 = static_cast<int>(nextRandom(random) % kKinds);
          long* p = &x[a1];
          switch (shape) {
            case 0:
#pragma omp task depend(depobj: o[a1][k1])
              COUNT_TASK;
              break;
            case 1:
              // Possibly one address twice, with two kinds.
#pragma omp task depend(depobj: o[a1][k1], o[a2][k2])
              COUNT_TASK;
              break;
            case 2:
#pragma omp task depend(mutexinoutset: p[0])
              COUNT_TASK;
              break;
            case 3:
#pragma omp task depend(in: p[0]) depend(depobj: o[a2][k2])
              COUNT_TASK;
              break;
            case 4:
#pragma omp task depend(inout: p[0])
              {
                COUNT_TASK;
                ++*p;
              }
              break;
            case 5:
#pragma omp task depend(out: p[0]) depend(in: x[(a1 + 1) % kAddresses])
              COUNT_TASK;
              break;
            case 6:
#pragma omp task depend(depobj: o[a1][4], o[(a1 + 2) % kAddresses][3])
              COUNT_TASK;
              break;
            default:
#pragma omp task depend(mutexinoutset: p[0], x[(a1 + 3) % kAddresses])
              COUNT_TASK;
              break;
          }
        }
#pragma omp taskwait
        for (int a = 0; a < kAddresses; ++a)
          for (int k = 0; k < kKinds; ++k) {
#pragma omp depobj(o[a][k]) destroy
          }
#pragma omp atomic
        checksum += 1;
      }
    }
  }
  std::printf("sets parents=%ld\n", checksum);
  return checksum == 3 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s fib|health|sparselu|jacobi|strassen|sets [SIZE]\n", argv[0]);
    return 2;
  }
  const std::string kind = argv[1];
  const int size = argc > 2 ? std::atoi(argv[2]) : 0;
  int rc = 2;
  if (kind == "fib") rc = runFib(size ? size : 20);
  else if (kind == "health") rc = runHealth(size ? size : 5);
  else if (kind == "sparselu") rc = runSparseLu(size ? size : 30);
  else if (kind == "jacobi") rc = runJacobi(size ? size : 16);
  else if (kind == "strassen") rc = runStrassen(size ? size : 256);
  else if (kind == "sets") rc = runSets(size ? size : 3000);
  else std::fprintf(stderr, "unknown program %s\n", kind.c_str());
  if (rc == 0) std::printf("%s ok tasks=%ld\n", kind.c_str(), g_tasks.load());
  return rc;
}
