/* The MPI workloads pmpi_overhead_bench runs with and without the PMPI
   agent. Each times its measured loop only (MPI_Wtime, after a warm-up,
   between barriers), takes the slowest rank, and rank 0 prints one line:
     pingpong N BYTES  ranks 0 and 1 exchange N round trips of BYTES (the
                       other ranks wait in the final barrier):
                       us_per_roundtrip=X
     alltoall N BYTES  N MPI_Alltoall of BYTES per peer: us_per_call=X
     ft N              NAS FT's shape, scaled down: per iteration a local
                       FFT phase (forward FFT, a phase shift, inverse FFT on
                       64 rows of 256 complex points, three times: a few ms)
                       then an MPI_Alltoall transposing 256 KiB per rank and
                       a checksum MPI_Allreduce: seconds=X
     is N              NAS IS's shape, scaled down: per iteration 2^17 keys
                       per rank bucketed locally, MPI_Allreduce of the 1024
                       bucket counts, MPI_Alltoall of the send counts,
                       MPI_Alltoallv of the keys, then a local counting
                       rank of the keys received: seconds=X
     init              MPI_Init alone, timed around it: ms_init=X
   ft and is check their results after the timed loop (MPI_Abort if wrong).

   Run on this machine (2 cores, as root) with:
     export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./pmpi_bench_program pingpong 2000 8
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./pmpi_bench_program alltoall 500 1024
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./pmpi_bench_program ft 100
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./pmpi_bench_program is 100 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_rank, g_size;

static void die(const char* what) {
  fprintf(stderr, "pmpi_bench_program: rank %d: %s\n", g_rank, what);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static void* xmalloc(size_t n) {
  void* p = calloc(n ? n : 1, 1);
  if (!p) die("out of memory");
  return p;
}

static double slowest(double seconds) {
  double max = 0;
  MPI_Reduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return max;
}

static void pingpong_loop(char* buf, int bytes, int iters) {
  if (g_rank > 1) return;
  for (int it = 0; it < iters; ++it) {
    if (g_rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
}

static void mode_pingpong(int iters, int bytes) {
  if (g_size < 2) die("pingpong needs at least 2 ranks");
  char* buf = xmalloc((size_t)bytes);
  pingpong_loop(buf, bytes, iters / 10 > 10 ? iters / 10 : 10);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  pingpong_loop(buf, bytes, iters);
  double elapsed = MPI_Wtime() - start;
  /* Only ranks 0 and 1 time the loop; the others' zero never wins. */
  elapsed = slowest(g_rank < 2 ? elapsed : 0.0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) printf("us_per_roundtrip=%.3f\n", elapsed * 1e6 / (iters ? iters : 1));
  free(buf);
}

static void mode_alltoall(int iters, int bytes) {
  char* out = xmalloc((size_t)bytes * (size_t)g_size);
  char* in = xmalloc((size_t)bytes * (size_t)g_size);
  for (size_t i = 0; i < (size_t)bytes * (size_t)g_size; ++i) out[i] = (char)(i + (size_t)g_rank);
  for (int it = 0; it < (iters / 10 > 10 ? iters / 10 : 10); ++it)
    MPI_Alltoall(out, bytes, MPI_BYTE, in, bytes, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int it = 0; it < iters; ++it) MPI_Alltoall(out, bytes, MPI_BYTE, in, bytes, MPI_BYTE, MPI_COMM_WORLD);
  double elapsed = slowest(MPI_Wtime() - start);
  if (g_rank == 0) printf("us_per_call=%.3f\n", elapsed * 1e6 / (iters ? iters : 1));
  free(out);
  free(in);
}

/* ft: 64 rows of 256 complex doubles per rank (256 KiB), interleaved. */
enum { FT_N = 256, FT_LOG2N = 8, FT_ROWS = 64, FT_PASSES = 3 };
#define FT_POINTS (FT_N * FT_ROWS)

typedef struct {
  double* data;
  double* other;
  double tw[FT_N];        /* cos, sin pairs for the first half of the circle */
  double shift[FT_N * 2]; /* exp(i theta_k): keeps the norm, so no denormals */
  int rev[FT_N];
} ft_t;

static void fft_row(double* x, const ft_t* ft, int inverse) {
  for (int i = 0; i < FT_N; ++i) {
    int j = ft->rev[i];
    if (j > i) {
      double tr = x[2 * i], ti = x[2 * i + 1];
      x[2 * i] = x[2 * j];
      x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = tr;
      x[2 * j + 1] = ti;
    }
  }
  for (int len = 2; len <= FT_N; len <<= 1) {
    int step = FT_N / len;
    for (int start = 0; start < FT_N; start += len)
      for (int k = 0; k < len / 2; ++k) {
        double wr = ft->tw[2 * k * step], wi = inverse ? -ft->tw[2 * k * step + 1] : ft->tw[2 * k * step + 1];
        double* a = x + 2 * (start + k);
        double* b = x + 2 * (start + k + len / 2);
        double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br;
        b[1] = a[1] - bi;
        a[0] += br;
        a[1] += bi;
      }
  }
  if (inverse)
    for (int i = 0; i < 2 * FT_N; ++i) x[i] *= 1.0 / FT_N;
}

static void ft_init(ft_t* ft) {
  const double pi = 3.14159265358979323846;
  ft->data = xmalloc(sizeof(double) * 2 * FT_POINTS);
  ft->other = xmalloc(sizeof(double) * 2 * FT_POINTS);
  for (int k = 0; k < FT_N / 2; ++k) {
    ft->tw[2 * k] = cos(-2 * pi * k / FT_N);
    ft->tw[2 * k + 1] = sin(-2 * pi * k / FT_N);
  }
  for (int k = 0; k < FT_N; ++k) {
    ft->shift[2 * k] = cos(1e-3 * k * k);
    ft->shift[2 * k + 1] = sin(1e-3 * k * k);
    int r = 0;
    for (int b = 0; b < FT_LOG2N; ++b)
      if (k & (1 << b)) r |= 1 << (FT_LOG2N - 1 - b);
    ft->rev[k] = r;
  }
  uint64_t seed = 314159265u + 2718281u * (uint64_t)g_rank;
  for (int i = 0; i < 2 * FT_POINTS; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    ft->data[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
  }
}

static void ft_iteration(ft_t* ft, double* checksum) {
  for (int pass = 0; pass < FT_PASSES; ++pass)
    for (int row = 0; row < FT_ROWS; ++row) {
      double* x = ft->data + 2 * FT_N * row;
      fft_row(x, ft, 0);
      for (int k = 0; k < FT_N; ++k) {
        double re = x[2 * k] * ft->shift[2 * k] - x[2 * k + 1] * ft->shift[2 * k + 1];
        double im = x[2 * k] * ft->shift[2 * k + 1] + x[2 * k + 1] * ft->shift[2 * k];
        x[2 * k] = re;
        x[2 * k + 1] = im;
      }
      fft_row(x, ft, 1);
    }
  /* The transpose: every rank sends an equal share of its slab to every
     rank. */
  int per_peer = 2 * FT_POINTS / g_size;
  MPI_Alltoall(ft->data, per_peer, MPI_DOUBLE, ft->other, per_peer, MPI_DOUBLE, MPI_COMM_WORLD);
  double* t = ft->data;
  ft->data = ft->other;
  ft->other = t;
  double local[2] = {0, 0};
  for (int i = 0; i < 2 * FT_POINTS; i += 2 * 97) {
    local[0] += ft->data[i];
    local[1] += ft->data[i + 1];
  }
  MPI_Allreduce(local, checksum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* The sum of |x|^2 over all ranks: the FFT round trip, the unit phase
   shift and the transpose all keep it. */
static double ft_energy(const ft_t* ft) {
  double local = 0, all = 0;
  for (int i = 0; i < 2 * FT_POINTS; ++i) local += ft->data[i] * ft->data[i];
  MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

static void mode_ft(int iters) {
  if ((2 * FT_POINTS) % g_size != 0) die("ft needs a rank count that divides 32768");
  ft_t* ft = xmalloc(sizeof *ft);
  ft_init(ft);
  double energy = ft_energy(ft), checksum[2];
  for (int it = 0; it < 2; ++it) ft_iteration(ft, checksum);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int it = 0; it < iters; ++it) ft_iteration(ft, checksum);
  double elapsed = slowest(MPI_Wtime() - start);
  if (!isfinite(checksum[0]) || !isfinite(checksum[1])) die("ft: checksum is not finite");
  if (fabs(ft_energy(ft) - energy) > 1e-9 * energy) die("ft: the transform lost energy");
  if (g_rank == 0) printf("seconds=%.6f\n", elapsed);
  free(ft->data);
  free(ft->other);
  free(ft);
}

/* is: keys in [0, 2^19), 1024 buckets of 512 keys each. */
enum { IS_KEYS = 1 << 17, IS_LOG2_MAX_KEY = 19, IS_LOG2_BUCKETS = 10 };
#define IS_MAX_KEY (1 << IS_LOG2_MAX_KEY)
#define IS_BUCKETS (1 << IS_LOG2_BUCKETS)
#define IS_SHIFT (IS_LOG2_MAX_KEY - IS_LOG2_BUCKETS)

typedef struct {
  int *keys, *sorted, *received, *key_count;
  int local_counts[IS_BUCKETS], global_counts[IS_BUCKETS], bucket_start[IS_BUCKETS];
  int *owner_first, *send_counts, *send_displs, *recv_counts, *recv_displs;
  int received_total, lo, hi; /* this rank's keys are in [lo, hi) */
} is_t;

static void is_init(is_t* is) {
  const size_t n = (size_t)g_size;
  is->keys = xmalloc(sizeof(int) * IS_KEYS);
  is->sorted = xmalloc(sizeof(int) * IS_KEYS);
  is->received = xmalloc(sizeof(int) * IS_KEYS * n);
  is->key_count = xmalloc(sizeof(int) * IS_MAX_KEY);
  is->owner_first = xmalloc(sizeof(int) * (n + 1));
  is->send_counts = xmalloc(sizeof(int) * n);
  is->send_displs = xmalloc(sizeof(int) * n);
  is->recv_counts = xmalloc(sizeof(int) * n);
  is->recv_displs = xmalloc(sizeof(int) * n);
  /* Roughly Gaussian keys, as NAS IS draws them: the mean of four uniforms. */
  uint64_t seed = 271828183u + 1000003u * (uint64_t)g_rank;
  for (int i = 0; i < IS_KEYS; ++i) {
    uint64_t sum = 0;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      sum += (seed >> 33) & (IS_MAX_KEY - 1);
    }
    is->keys[i] = (int)(sum / 4);
  }
}

static void is_iteration(is_t* is, int it) {
  const int n = g_size;
  /* NAS IS changes two keys per iteration. */
  is->keys[it % IS_KEYS] = it % IS_MAX_KEY;
  is->keys[(it + IS_KEYS / 2) % IS_KEYS] = IS_MAX_KEY - 1 - it % IS_MAX_KEY;

  memset(is->local_counts, 0, sizeof is->local_counts);
  for (int i = 0; i < IS_KEYS; ++i) ++is->local_counts[is->keys[i] >> IS_SHIFT];
  MPI_Allreduce(is->local_counts, is->global_counts, IS_BUCKETS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  /* Contiguous bucket ranges, balanced by the global counts. */
  long long total = 0, cumulative = 0;
  for (int b = 0; b < IS_BUCKETS; ++b) total += is->global_counts[b];
  int owner = 0;
  is->owner_first[0] = 0;
  for (int b = 0; b < IS_BUCKETS; ++b) {
    while (owner < n - 1 && cumulative >= total * (owner + 1) / n) is->owner_first[++owner] = b;
    cumulative += is->global_counts[b];
  }
  while (owner < n - 1) is->owner_first[++owner] = IS_BUCKETS;
  is->owner_first[n] = IS_BUCKETS;

  int offset = 0;
  for (int b = 0; b < IS_BUCKETS; ++b) {
    is->bucket_start[b] = offset;
    offset += is->local_counts[b];
  }
  for (int i = 0; i < IS_KEYS; ++i) is->sorted[is->bucket_start[is->keys[i] >> IS_SHIFT]++] = is->keys[i];
  offset = 0;
  for (int p = 0; p < n; ++p) {
    int count = 0;
    for (int b = is->owner_first[p]; b < is->owner_first[p + 1]; ++b) count += is->local_counts[b];
    is->send_counts[p] = count;
    is->send_displs[p] = offset;
    offset += count;
  }

  MPI_Alltoall(is->send_counts, 1, MPI_INT, is->recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
  offset = 0;
  for (int p = 0; p < n; ++p) {
    is->recv_displs[p] = offset;
    offset += is->recv_counts[p];
  }
  is->received_total = offset;
  MPI_Alltoallv(is->sorted, is->send_counts, is->send_displs, MPI_INT, is->received, is->recv_counts,
                is->recv_displs, MPI_INT, MPI_COMM_WORLD);

  /* The keys' ranks: a counting pass over this rank's key range. */
  is->lo = is->owner_first[g_rank] << IS_SHIFT;
  is->hi = is->owner_first[g_rank + 1] << IS_SHIFT;
  memset(is->key_count + is->lo, 0, sizeof(int) * (size_t)(is->hi - is->lo));
  for (int i = 0; i < is->received_total; ++i) {
    int k = is->received[i];
    if (k < is->lo || k >= is->hi) die("is: a key arrived at the wrong rank");
    ++is->key_count[k];
  }
  for (int k = is->lo + 1; k < is->hi; ++k) is->key_count[k] += is->key_count[k - 1];
}

static void mode_is(int iters) {
  is_t* is = xmalloc(sizeof *is);
  is_init(is);
  for (int it = 0; it < 2; ++it) is_iteration(is, it);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int it = 0; it < iters; ++it) is_iteration(is, it);
  double elapsed = slowest(MPI_Wtime() - start);
  /* Verification, as NAS IS's full verify: every key once, in rank order. */
  long long mine = is->received_total, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (all != (long long)IS_KEYS * g_size) die("is: keys lost or duplicated");
  if (is->hi > is->lo && is->key_count[is->hi - 1] != is->received_total) die("is: counting rank is wrong");
  if (g_rank == 0) printf("seconds=%.6f\n", elapsed);
  free(is->keys);
  free(is->sorted);
  free(is->received);
  free(is->key_count);
  free(is->owner_first);
  free(is->send_counts);
  free(is->send_displs);
  free(is->recv_counts);
  free(is->recv_displs);
  free(is);
}

static int parse_count(const char* s, int* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 100000000) return 0;
  *out = (int)v;
  return 1;
}

int main(int argc, char** argv) {
  int iters = 0, bytes = 0;
  const char* mode = argc > 1 ? argv[1] : "";
  int with_bytes = strcmp(mode, "pingpong") == 0 || strcmp(mode, "alltoall") == 0;
  int without_bytes = strcmp(mode, "ft") == 0 || strcmp(mode, "is") == 0;
  int init_only = strcmp(mode, "init") == 0 && argc == 2;
  if (!(with_bytes && argc == 4 && parse_count(argv[2], &iters) && parse_count(argv[3], &bytes)) &&
      !(without_bytes && argc == 3 && parse_count(argv[2], &iters)) && !init_only) {
    fprintf(stderr, "usage: pmpi_bench_program pingpong N BYTES | alltoall N BYTES | ft N | is N | init\n");
    return 2;
  }
  struct timespec before, after;
  clock_gettime(CLOCK_MONOTONIC, &before);
  MPI_Init(&argc, &argv);
  clock_gettime(CLOCK_MONOTONIC, &after);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (init_only) {
    /* The slowest rank's MPI_Init: the agent's part of it (its daemon's
       PeerInfo, the PMIx fence or the PMPI_Allgather) is collective. */
    double mine = (double)(after.tv_sec - before.tv_sec) * 1e3 + (double)(after.tv_nsec - before.tv_nsec) / 1e6, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) printf("ms_init=%.3f\n", slowest);
  } else if (strcmp(mode, "pingpong") == 0) mode_pingpong(iters, bytes);
  else if (strcmp(mode, "alltoall") == 0) mode_alltoall(iters, bytes);
  else if (strcmp(mode, "ft") == 0) mode_ft(iters);
  else mode_is(iters);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
