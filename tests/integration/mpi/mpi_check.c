/* MPI programs for the PMPI agent's integration tests. The agent must change
   nothing in what they compute, so each mode checks every value it receives
   against the value it must be (a failed check prints the reason on stderr
   and calls MPI_Abort), and the modes that print a checksum print the same
   lines with and without the agent.

     mpi_check correctness    every call the agent wraps (point to point,
                              nonblocking completion, persistent requests,
                              probes, collectives blocking and nonblocking,
                              communicators (splits, groups, an
                              intercommunicator and its merge), an error
                              returned under MPI_ERRORS_RETURN). Rank 0
                              prints "rank R checksum X" for every rank, in
                              rank order (gathered, so that the output does
                              not depend on how mpirun interleaves ranks),
                              then "ok".
     mpi_check threads        MPI_THREAD_MULTIPLE: two threads per rank in
                              send/recv rings on distinct tags, one in
                              allreduces on a duplicate of MPI_COMM_WORLD;
                              prints as correctness does, or "skip threads"
                              if the library does not provide the level.
     mpi_check alltoall N     N checked MPI_Alltoall calls, 1 KiB per peer;
                              rank 0 prints "ok N".
     mpi_check hang STEPS MS  STEPS rounds of MS ms of local work (a sleep)
                              then a checked MPI_Allreduce of the step; rank
                              0 prints "step K" after each (flushed) and
                              "done". The test stops one rank (SIGSTOP)
                              during a round, so the others wait in the
                              allreduce, then continues it.
     mpi_check ihang STEPS MS as hang, the allreduce an MPI_Iallreduce
                              completed by MPI_Wait.
     mpi_check pingpong N     N checked round trips of 8 bytes between ranks
                              0 and 1 (the others wait in a barrier); rank 0
                              prints "us_per_roundtrip=X" and "ok N".
     mpi_check fpsum          floating-point sums (allreduce, reduce,
                              reduce_scatter_block, scan) checked against
                              the exact sum within rounding; rank 0 prints
                              "rank R fpsum X", X a hash of the result bits,
                              and "ok". The bits depend on the order of
                              reduction, so they change if the agent swaps
                              a blocking collective for its nonblocking form
                              (Open MPI reduces MPI_Iallreduce differently
                              from MPI_Allreduce at 3 and 5 ranks): compare
                              the output with and without the agent.
   correctness, threads and pingpong need at least 2 ranks.

   Run on this machine (2 cores, as root) with:
     export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check correctness
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check threads
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check alltoall 200
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check hang 5 200
     mpirun --oversubscribe -np 4 --bind-to none --mca btl self,vader ./mpi_check pingpong 1000
     mpirun --oversubscribe -np 3 --bind-to none --mca btl self,vader ./mpi_check fpsum
   (also with --mca btl tcp,self, with -np 2 and -np 3, and as two
   emulated nodes: mpirun --oversubscribe --bind-to none --mca btl self,vader
     -np 2 -x NODEKEEPER_NODE=a ./mpi_check correctness :
     -np 2 -x NODEKEEPER_NODE=b ./mpi_check correctness) */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_rank = -1, g_size = 0;

static void fail(int line, const char* cond, const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "mpi_check: rank %d: line %d: check failed (%s): ", g_rank, line, cond);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

#define CHECK(cond, ...) ((cond) ? (void)0 : fail(__LINE__, #cond, __VA_ARGS__))

/* FNV-1a over the values received, in an order that does not depend on
   timing (buffers whose arrival order varies are mixed after completion,
   in rank order). */
typedef struct {
  uint64_t h;
} sum_t;

static void sum_init(sum_t* s) { s->h = 1469598103934665603ULL; }
static void mix(sum_t* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    s->h ^= (v >> (8 * i)) & 0xff;
    s->h *= 1099511628211ULL;
  }
}
static void mix_ints(sum_t* s, const int* a, int n) {
  for (int i = 0; i < n; ++i) mix(s, (uint32_t)a[i]);
}

/* The value element i of a message from src to dst under tag must hold. */
static int val(int src, int dst, int tag, int i) { return src * 1000003 + dst * 10007 + tag * 101 + i; }

static void fill(int* buf, int n, int src, int dst, int tag) {
  for (int i = 0; i < n; ++i) buf[i] = val(src, dst, tag, i);
}

static void expect_ints(int line, const char* what, const int* got, int n, int src, int dst, int tag) {
  for (int i = 0; i < n; ++i)
    if (got[i] != val(src, dst, tag, i))
      fail(line, what, "element %d (from %d to %d, tag %d) is %d, expected %d", i, src, dst, tag, got[i],
           val(src, dst, tag, i));
}
#define EXPECT_INTS(what, got, n, src, dst, tag) expect_ints(__LINE__, what, got, n, src, dst, tag)

static void expect_status(int line, const char* what, const MPI_Status* st, int source, int tag, int count) {
  int got = -1;
  MPI_Get_count(st, MPI_INT, &got);
  if (st->MPI_SOURCE != source || st->MPI_TAG != tag || got != count)
    fail(line, what, "status source %d tag %d count %d, expected %d %d %d", st->MPI_SOURCE, st->MPI_TAG, got,
         source, tag, count);
}
#define EXPECT_STATUS(what, st, source, tag, count) expect_status(__LINE__, what, st, source, tag, count)

static void* xmalloc(size_t n) {
  void* p = calloc(n ? n : 1, 1);
  CHECK(p != NULL, "out of memory");
  return p;
}

static int left_of(int r) { return (r + g_size - 1) % g_size; }
static int right_of(int r) { return (r + 1) % g_size; }

/* Rank 0 sends first and the others receive first, so a ring of blocking
   sends cannot deadlock whether the send is eager, rendezvous or the
   agent's nonblocking send and test loop. */
enum { RING_SEND, RING_SSEND };
static void token_ring(sum_t* s, int kind, int tag) {
  const int r = g_rank, left = left_of(r), right = right_of(r);
  int sbuf[64], rbuf[64];
  MPI_Status st;
  fill(sbuf, 8 + r % 32, r, right, tag);
  for (int turn = 0; turn < 2; ++turn) {
    if ((turn == 0) == (r == 0)) {
      if (kind == RING_SEND) MPI_Send(sbuf, 8 + r % 32, MPI_INT, right, tag, MPI_COMM_WORLD);
      else MPI_Ssend(sbuf, 8 + r % 32, MPI_INT, right, tag, MPI_COMM_WORLD);
    } else {
      MPI_Recv(rbuf, 64, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
    }
  }
  EXPECT_STATUS("token ring", &st, left, tag, 8 + left % 32);
  EXPECT_INTS("token ring", rbuf, 8 + left % 32, left, r, tag);
  mix_ints(s, rbuf, 8 + left % 32);
}

static void test_blocking(sum_t* s) {
  const int r = g_rank, n = g_size, left = left_of(r), right = right_of(r);
  int sbuf[64], rbuf[64];
  MPI_Status st;

  token_ring(s, RING_SEND, 10);

  /* MPI_ANY_SOURCE and MPI_ANY_TAG: every rank sends to rank 0, which takes
     the messages in whatever order they come. */
  if (r != 0) {
    fill(sbuf, r % 32 + 1, r, 0, 1000 + r);
    MPI_Send(sbuf, r % 32 + 1, MPI_INT, 0, 1000 + r, MPI_COMM_WORLD);
  } else {
    int* got = xmalloc(sizeof(int) * 64 * (size_t)n);
    int* seen = xmalloc(sizeof(int) * (size_t)n);
    for (int k = 1; k < n; ++k) {
      MPI_Recv(rbuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int src = st.MPI_SOURCE;
      CHECK(src > 0 && src < n && !seen[src], "any source: unexpected or repeated source %d", src);
      EXPECT_STATUS("any source", &st, src, 1000 + src, src % 32 + 1);
      seen[src] = 1;
      memcpy(got + 64 * src, rbuf, sizeof(int) * 64);
    }
    for (int src = 1; src < n; ++src) {
      EXPECT_INTS("any source", got + 64 * src, src % 32 + 1, src, 0, 1000 + src);
      mix_ints(s, got + 64 * src, src % 32 + 1);
    }
    free(got);
    free(seen);
  }

  /* MPI_PROC_NULL: completes at once, with the status the standard gives. */
  MPI_Send(sbuf, 4, MPI_INT, MPI_PROC_NULL, 11, MPI_COMM_WORLD);
  rbuf[0] = -5;
  MPI_Recv(rbuf, 4, MPI_INT, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &st);
  EXPECT_STATUS("recv from MPI_PROC_NULL", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
  CHECK(rbuf[0] == -5, "recv from MPI_PROC_NULL wrote the buffer");

  /* MPI_STATUS_IGNORE, the ring the other way round. */
  fill(sbuf, 16, r, left, 12);
  if (r == 0) {
    MPI_Send(sbuf, 16, MPI_INT, left, 12, MPI_COMM_WORLD);
    MPI_Recv(rbuf, 16, MPI_INT, right, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(rbuf, 16, MPI_INT, right, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(sbuf, 16, MPI_INT, left, 12, MPI_COMM_WORLD);
  }
  EXPECT_INTS("status ignore", rbuf, 16, right, r, 12);
  mix_ints(s, rbuf, 16);

  token_ring(s, RING_SSEND, 13);

  /* MPI_Rsend is correct only once the receive is posted: the barrier
     guarantees it. */
  {
    MPI_Request req;
    MPI_Irecv(rbuf, 64, MPI_INT, left, 14, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    fill(sbuf, 20, r, right, 14);
    MPI_Rsend(sbuf, 20, MPI_INT, right, 14, MPI_COMM_WORLD);
    MPI_Wait(&req, &st);
    CHECK(req == MPI_REQUEST_NULL, "rsend: request not freed by MPI_Wait");
    EXPECT_STATUS("rsend", &st, left, 14, 20);
    EXPECT_INTS("rsend", rbuf, 20, left, r, 14);
    mix_ints(s, rbuf, 20);
  }

  /* MPI_Bsend: both sends return before any receive is posted. */
  {
    int packed = 0;
    MPI_Pack_size(24, MPI_INT, MPI_COMM_WORLD, &packed);
    int size = 2 * (packed + MPI_BSEND_OVERHEAD);
    char* buffer = xmalloc((size_t)size);
    MPI_Buffer_attach(buffer, size);
    int to_right[24], to_left[24], from_left[24], from_right[24];
    fill(to_right, 24, r, right, 15);
    fill(to_left, 24, r, left, 16);
    MPI_Bsend(to_right, 24, MPI_INT, right, 15, MPI_COMM_WORLD);
    MPI_Bsend(to_left, 24, MPI_INT, left, 16, MPI_COMM_WORLD);
    MPI_Recv(from_left, 24, MPI_INT, left, 15, MPI_COMM_WORLD, &st);
    EXPECT_STATUS("bsend", &st, left, 15, 24);
    MPI_Recv(from_right, 24, MPI_INT, right, 16, MPI_COMM_WORLD, &st);
    EXPECT_STATUS("bsend", &st, right, 16, 24);
    EXPECT_INTS("bsend", from_left, 24, left, r, 15);
    EXPECT_INTS("bsend", from_right, 24, right, r, 16);
    mix_ints(s, from_left, 24);
    mix_ints(s, from_right, 24);
    void* detached = NULL;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    CHECK(detached == buffer && detached_size == size, "bsend: detached another buffer");
    free(buffer);
  }

  /* MPI_Sendrecv, a shift that is not periodic: the ends talk to
     MPI_PROC_NULL. */
  {
    int dest = r + 1 < n ? r + 1 : MPI_PROC_NULL, source = r > 0 ? r - 1 : MPI_PROC_NULL;
    fill(sbuf, 10, r, dest, 17);
    for (int i = 0; i < 64; ++i) rbuf[i] = -7;
    MPI_Sendrecv(sbuf, 10, MPI_INT, dest, 17, rbuf, 64, MPI_INT, source, 17, MPI_COMM_WORLD, &st);
    if (source == MPI_PROC_NULL) {
      EXPECT_STATUS("sendrecv from MPI_PROC_NULL", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      CHECK(rbuf[0] == -7, "sendrecv from MPI_PROC_NULL wrote the buffer");
    } else {
      EXPECT_STATUS("sendrecv", &st, source, 17, 10);
      EXPECT_INTS("sendrecv", rbuf, 10, source, r, 17);
      mix_ints(s, rbuf, 10);
    }
  }

  /* MPI_Sendrecv_replace, periodic, to the left. */
  {
    int buf[12];
    fill(buf, 12, r, left, 18);
    MPI_Sendrecv_replace(buf, 12, MPI_INT, left, 18, right, 18, MPI_COMM_WORLD, &st);
    EXPECT_STATUS("sendrecv_replace", &st, right, 18, 12);
    EXPECT_INTS("sendrecv_replace", buf, 12, right, r, 18);
    mix_ints(s, buf, 12);
  }
}

/* A receive from and a send to every other rank, each with its own count. */
static int pair_count(int src, int dst) { return 4 + (src + 2 * dst) % 3; }

typedef struct {
  int m, tag;
  MPI_Request* reqs;
  int* peer; /* the source of a receive; -1 for a send */
  int *rbuf, *sbuf;
  int done;
} pairs_t;

static void pairs_post(pairs_t* p, int tag) {
  const int r = g_rank, n = g_size;
  p->m = 2 * (n - 1);
  p->tag = tag;
  p->done = 0;
  p->reqs = xmalloc(sizeof(MPI_Request) * (size_t)p->m);
  p->peer = xmalloc(sizeof(int) * (size_t)p->m);
  p->rbuf = xmalloc(sizeof(int) * 8 * (size_t)n);
  p->sbuf = xmalloc(sizeof(int) * 8 * (size_t)n);
  int k = 0;
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    MPI_Irecv(p->rbuf + 8 * q, 8, MPI_INT, q, tag, MPI_COMM_WORLD, &p->reqs[k]);
    p->peer[k++] = q;
    fill(p->sbuf + 8 * q, pair_count(r, q), r, q, tag);
    MPI_Isend(p->sbuf + 8 * q, pair_count(r, q), MPI_INT, q, tag, MPI_COMM_WORLD, &p->reqs[k]);
    p->peer[k++] = -1;
  }
}

/* Request `index` has completed with `st`. */
static void pairs_completed(pairs_t* p, int line, int index, const MPI_Status* st) {
  if (index < 0 || index >= p->m) fail(line, "completion", "index %d out of range", index);
  if (p->reqs[index] != MPI_REQUEST_NULL) fail(line, "completion", "request %d not freed", index);
  if (st && p->peer[index] >= 0)
    expect_status(line, "completion", st, p->peer[index], p->tag, pair_count(p->peer[index], g_rank));
  ++p->done;
}

static void pairs_finish(pairs_t* p, sum_t* s, int line) {
  if (p->done != p->m) fail(line, "completion", "%d of %d requests completed", p->done, p->m);
  for (int q = 0; q < g_size; ++q) {
    if (q == g_rank) continue;
    expect_ints(line, "completion", p->rbuf + 8 * q, pair_count(q, g_rank), q, g_rank, p->tag);
    mix_ints(s, p->rbuf + 8 * q, pair_count(q, g_rank));
  }
  free(p->reqs);
  free(p->peer);
  free(p->rbuf);
  free(p->sbuf);
}

static void test_nonblocking(sum_t* s) {
  const int r = g_rank, left = left_of(r), right = right_of(r);
  MPI_Status st;
  pairs_t p;

  /* MPI_Wait, one request at a time. */
  {
    int a[16], b[16], to_right[16], to_left[16];
    MPI_Request req[4];
    MPI_Irecv(a, 16, MPI_INT, left, 20, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(b, 16, MPI_INT, right, 21, MPI_COMM_WORLD, &req[1]);
    fill(to_right, 16, r, right, 20);
    fill(to_left, 9, r, left, 21);
    MPI_Isend(to_right, 16, MPI_INT, right, 20, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(to_left, 9, MPI_INT, left, 21, MPI_COMM_WORLD, &req[3]);
    MPI_Wait(&req[0], &st);
    EXPECT_STATUS("wait", &st, left, 20, 16);
    MPI_Wait(&req[1], &st);
    EXPECT_STATUS("wait", &st, right, 21, 9);
    MPI_Wait(&req[2], MPI_STATUS_IGNORE);
    MPI_Wait(&req[3], &st);
    for (int i = 0; i < 4; ++i) CHECK(req[i] == MPI_REQUEST_NULL, "wait: request %d not freed", i);
    EXPECT_INTS("wait", a, 16, left, r, 20);
    EXPECT_INTS("wait", b, 9, right, r, 21);
    mix_ints(s, a, 16);
    mix_ints(s, b, 9);
    /* Nonblocking calls on MPI_PROC_NULL complete at once. */
    MPI_Request null_req;
    MPI_Irecv(a, 4, MPI_INT, MPI_PROC_NULL, 22, MPI_COMM_WORLD, &null_req);
    MPI_Wait(&null_req, &st);
    EXPECT_STATUS("irecv from MPI_PROC_NULL", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    MPI_Isend(a, 4, MPI_INT, MPI_PROC_NULL, 22, MPI_COMM_WORLD, &null_req);
    MPI_Wait(&null_req, &st);
    /* Waiting on MPI_REQUEST_NULL returns at once with an empty status. */
    MPI_Wait(&null_req, &st);
    CHECK(null_req == MPI_REQUEST_NULL, "wait on MPI_REQUEST_NULL changed it");
  }

  /* MPI_Waitall, with statuses and without. */
  {
    MPI_Status* sts = xmalloc(sizeof(MPI_Status) * 2 * (size_t)g_size);
    pairs_post(&p, 23);
    MPI_Waitall(p.m, p.reqs, sts);
    for (int k = 0; k < p.m; ++k) pairs_completed(&p, __LINE__, k, &sts[k]);
    pairs_finish(&p, s, __LINE__);
    pairs_post(&p, 24);
    MPI_Waitall(p.m, p.reqs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < p.m; ++k) pairs_completed(&p, __LINE__, k, NULL);
    pairs_finish(&p, s, __LINE__);
    free(sts);
  }

  /* MPI_Waitany until it reports that no request is active. */
  pairs_post(&p, 25);
  for (;;) {
    int index = -2;
    MPI_Waitany(p.m, p.reqs, &index, &st);
    if (index == MPI_UNDEFINED) break;
    pairs_completed(&p, __LINE__, index, &st);
  }
  pairs_finish(&p, s, __LINE__);

  /* MPI_Waitsome likewise. */
  {
    int* indices = xmalloc(sizeof(int) * 2 * (size_t)g_size);
    MPI_Status* sts = xmalloc(sizeof(MPI_Status) * 2 * (size_t)g_size);
    pairs_post(&p, 26);
    for (;;) {
      int outcount = -2;
      MPI_Waitsome(p.m, p.reqs, &outcount, indices, sts);
      if (outcount == MPI_UNDEFINED) break;
      CHECK(outcount > 0 && outcount <= p.m, "waitsome: outcount %d", outcount);
      for (int k = 0; k < outcount; ++k) pairs_completed(&p, __LINE__, indices[k], &sts[k]);
    }
    pairs_finish(&p, s, __LINE__);

    /* MPI_Testsome, which may complete none. */
    pairs_post(&p, 27);
    for (;;) {
      int outcount = -2;
      MPI_Testsome(p.m, p.reqs, &outcount, indices, sts);
      if (outcount == MPI_UNDEFINED) break;
      CHECK(outcount >= 0 && outcount <= p.m, "testsome: outcount %d", outcount);
      for (int k = 0; k < outcount; ++k) pairs_completed(&p, __LINE__, indices[k], &sts[k]);
    }
    pairs_finish(&p, s, __LINE__);
    free(indices);
    free(sts);
  }

  /* MPI_Test on each request until both have completed. */
  {
    int a[16], out[16], got_recv = 0, got_send = 0;
    MPI_Request recv_req, send_req;
    MPI_Status recv_st;
    MPI_Irecv(a, 16, MPI_INT, left, 28, MPI_COMM_WORLD, &recv_req);
    fill(out, 11, r, right, 28);
    MPI_Isend(out, 11, MPI_INT, right, 28, MPI_COMM_WORLD, &send_req);
    while (!got_recv || !got_send) {
      if (!got_recv) MPI_Test(&recv_req, &got_recv, &recv_st);
      if (!got_send) MPI_Test(&send_req, &got_send, MPI_STATUS_IGNORE);
    }
    CHECK(recv_req == MPI_REQUEST_NULL && send_req == MPI_REQUEST_NULL, "test: requests not freed");
    EXPECT_STATUS("test", &recv_st, left, 28, 11);
    EXPECT_INTS("test", a, 11, left, r, 28);
    mix_ints(s, a, 11);
  }

  /* MPI_Testall until it reports all complete. */
  {
    MPI_Status* sts = xmalloc(sizeof(MPI_Status) * 2 * (size_t)g_size);
    int flag = 0;
    pairs_post(&p, 29);
    while (!flag) MPI_Testall(p.m, p.reqs, &flag, sts);
    for (int k = 0; k < p.m; ++k) pairs_completed(&p, __LINE__, k, &sts[k]);
    pairs_finish(&p, s, __LINE__);
    free(sts);
  }

  /* MPI_Testany until every request has completed, then once more: no
     active request left gives flag true and MPI_UNDEFINED. */
  pairs_post(&p, 30);
  while (p.done < p.m) {
    int index = -2, flag = 0;
    MPI_Testany(p.m, p.reqs, &index, &flag, &st);
    CHECK(!(flag && index == MPI_UNDEFINED), "testany: no active request after %d of %d", p.done, p.m);
    if (flag) pairs_completed(&p, __LINE__, index, &st);
  }
  {
    int index = -2, flag = 0;
    MPI_Testany(p.m, p.reqs, &index, &flag, &st);
    CHECK(flag && index == MPI_UNDEFINED, "testany on inactive requests: flag %d index %d", flag, index);
  }
  pairs_finish(&p, s, __LINE__);
}

static void test_persistent(sum_t* s) {
  const int r = g_rank, left = left_of(r), right = right_of(r);
  int out[16], in[16];
  MPI_Request reqs[2];
  MPI_Status sts[2];
  MPI_Recv_init(in, 16, MPI_INT, left, 40, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(out, 16, MPI_INT, right, 40, MPI_COMM_WORLD, &reqs[1]);
  for (int it = 0; it < 6; ++it) {
    /* The buffers stay; the contents change every round (values under a
       per-round tag). */
    fill(out, 16, r, right, 400 + it);
    for (int i = 0; i < 16; ++i) in[i] = -1;
    switch (it % 3) {
      case 0:
        MPI_Startall(2, reqs);
        MPI_Waitall(2, reqs, sts);
        break;
      case 1:
        MPI_Start(&reqs[0]);
        MPI_Start(&reqs[1]);
        MPI_Wait(&reqs[1], &sts[1]);
        MPI_Wait(&reqs[0], &sts[0]);
        break;
      default: {
        int flag = 0;
        MPI_Startall(2, reqs);
        while (!flag) MPI_Testall(2, reqs, &flag, sts);
      }
    }
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
          "persistent: a completed persistent request was freed (round %d)", it);
    EXPECT_STATUS("persistent", &sts[0], left, 40, 16);
    EXPECT_INTS("persistent", in, 16, left, r, 400 + it);
    mix_ints(s, in, 16);
  }
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "request_free left a request");
}

static void test_probe(sum_t* s) {
  const int r = g_rank, left = left_of(r), right = right_of(r);
  int out[64];
  MPI_Request req;
  MPI_Status st;

  /* MPI_Probe, to size the receive. */
  fill(out, 3 + r % 32, r, right, 50);
  MPI_Isend(out, 3 + r % 32, MPI_INT, right, 50, MPI_COMM_WORLD, &req);
  MPI_Probe(left, 50, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  EXPECT_STATUS("probe", &st, left, 50, 3 + left % 32);
  int* in = xmalloc(sizeof(int) * (size_t)count);
  MPI_Recv(in, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
  EXPECT_STATUS("probe", &st, left, 50, 3 + left % 32);
  EXPECT_INTS("probe", in, count, left, r, 50);
  mix_ints(s, in, count);
  free(in);
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  /* MPI_Iprobe with MPI_ANY_SOURCE, polled until the message is there. */
  fill(out, 5, r, right, 51);
  MPI_Isend(out, 5, MPI_INT, right, 51, MPI_COMM_WORLD, &req);
  int flag = 0;
  while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 51, MPI_COMM_WORLD, &flag, &st);
  EXPECT_STATUS("iprobe", &st, left, 51, 5);
  int in5[5];
  MPI_Recv(in5, 5, MPI_INT, st.MPI_SOURCE, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_INTS("iprobe", in5, 5, left, r, 51);
  mix_ints(s, in5, 5);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  /* Nothing is ever sent under tag 59. */
  MPI_Iprobe(MPI_ANY_SOURCE, 59, MPI_COMM_WORLD, &flag, &st);
  CHECK(!flag, "iprobe found a message never sent");

  /* Matched probes: MPI_Mprobe/MPI_Mrecv and MPI_Improbe/MPI_Imrecv. */
  fill(out, 7, r, right, 52);
  MPI_Isend(out, 7, MPI_INT, right, 52, MPI_COMM_WORLD, &req);
  MPI_Message msg;
  MPI_Mprobe(left, 52, MPI_COMM_WORLD, &msg, &st);
  EXPECT_STATUS("mprobe", &st, left, 52, 7);
  int in7[7];
  MPI_Mrecv(in7, 7, MPI_INT, &msg, &st);
  EXPECT_STATUS("mrecv", &st, left, 52, 7);
  EXPECT_INTS("mrecv", in7, 7, left, r, 52);
  mix_ints(s, in7, 7);
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  fill(out, 6, r, right, 53);
  MPI_Isend(out, 6, MPI_INT, right, 53, MPI_COMM_WORLD, &req);
  flag = 0;
  while (!flag) MPI_Improbe(left, 53, MPI_COMM_WORLD, &flag, &msg, &st);
  MPI_Request mreq;
  int in6[6];
  MPI_Imrecv(in6, 6, MPI_INT, &msg, &mreq);
  MPI_Wait(&mreq, &st);
  EXPECT_STATUS("imrecv", &st, left, 53, 6);
  EXPECT_INTS("imrecv", in6, 6, left, r, 53);
  mix_ints(s, in6, 6);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void test_collectives(sum_t* s, MPI_Comm comm) {
  int r, n;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  const int tri = n * (n - 1) / 2; /* 0 + 1 + ... + n-1 */

  MPI_Barrier(comm);

  /* MPI_Bcast from the first and from the last rank. */
  {
    int buf[100];
    if (r == 0) fill(buf, 100, 0, -1, 60);
    else memset(buf, 0, sizeof buf);
    MPI_Bcast(buf, 100, MPI_INT, 0, comm);
    EXPECT_INTS("bcast", buf, 100, 0, -1, 60);
    mix_ints(s, buf, 100);
    double d[8];
    for (int i = 0; i < 8; ++i) d[i] = r == n - 1 ? 0.5 * i + n : -1.0;
    MPI_Bcast(d, 8, MPI_DOUBLE, n - 1, comm);
    for (int i = 0; i < 8; ++i) CHECK(d[i] == 0.5 * i + n, "bcast double: element %d is %g", i, d[i]);
  }

  /* MPI_Reduce: sum and max to rank 1, sum in place at rank 0. */
  {
    int v[16], res[16];
    for (int i = 0; i < 16; ++i) v[i] = r * 10 + i;
    int root = 1 % n;
    MPI_Reduce(v, res, 16, MPI_INT, MPI_SUM, root, comm);
    if (r == root)
      for (int i = 0; i < 16; ++i) CHECK(res[i] == 10 * tri + n * i, "reduce sum: element %d is %d", i, res[i]);
    MPI_Reduce(v, res, 16, MPI_INT, MPI_MAX, root, comm);
    if (r == root) {
      for (int i = 0; i < 16; ++i) CHECK(res[i] == 10 * (n - 1) + i, "reduce max: element %d is %d", i, res[i]);
      mix_ints(s, res, 16);
    }
    if (r == 0) MPI_Reduce(MPI_IN_PLACE, v, 16, MPI_INT, MPI_SUM, 0, comm);
    else MPI_Reduce(v, NULL, 16, MPI_INT, MPI_SUM, 0, comm);
    if (r == 0) {
      for (int i = 0; i < 16; ++i) CHECK(v[i] == 10 * tri + n * i, "reduce in place: element %d is %d", i, v[i]);
      mix_ints(s, v, 16);
    }
  }

  /* MPI_Allreduce: sums of ints, in place, doubles (whole numbers, exact
     in any order of reduction), MPI_MAXLOC. */
  {
    int v[32], res[32];
    for (int i = 0; i < 32; ++i) v[i] = r + i * 3;
    MPI_Allreduce(v, res, 32, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < 32; ++i) CHECK(res[i] == tri + 3 * n * i, "allreduce: element %d is %d", i, res[i]);
    mix_ints(s, res, 32);
    MPI_Allreduce(MPI_IN_PLACE, v, 32, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < 32; ++i) CHECK(v[i] == tri + 3 * n * i, "allreduce in place: element %d is %d", i, v[i]);
    double d = 2.0 * r + 1.0, dmin = 0;
    MPI_Allreduce(&d, &dmin, 1, MPI_DOUBLE, MPI_MIN, comm);
    CHECK(dmin == 1.0, "allreduce min: %g", dmin);
    MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(d == (double)n * n, "allreduce double sum: %g", d);
    struct {
      int value, rank;
    } in = {(r * 7 + 3) % (n + 1), r}, out = {-1, -1};
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm);
    int best = -1, where = -1;
    for (int q = 0; q < n; ++q)
      if ((q * 7 + 3) % (n + 1) > best) best = (q * 7 + 3) % (n + 1), where = q;
    CHECK(out.value == best && out.rank == where, "allreduce maxloc: %d at %d", out.value, out.rank);
    mix(s, (uint64_t)out.value * 1000 + (uint64_t)out.rank);
  }

  /* MPI_Allgather, MPI_Allgatherv (a gap before each block, which must
     stay untouched). */
  {
    int mine[3];
    fill(mine, 3, r, -1, 61);
    int* all = xmalloc(sizeof(int) * 3 * (size_t)n);
    MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm);
    for (int q = 0; q < n; ++q) EXPECT_INTS("allgather", all + 3 * q, 3, q, -1, 61);
    mix_ints(s, all, 3 * n);
    free(all);

    int* counts = xmalloc(sizeof(int) * (size_t)n);
    int* displs = xmalloc(sizeof(int) * (size_t)n);
    int total = 0;
    for (int q = 0; q < n; ++q) {
      counts[q] = q + 1;
      displs[q] = total + 1;
      total += q + 2;
    }
    int* out = xmalloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < total; ++i) out[i] = -7;
    int* v = xmalloc(sizeof(int) * (size_t)(r + 1));
    fill(v, r + 1, r, -1, 62);
    MPI_Allgatherv(v, r + 1, MPI_INT, out, counts, displs, MPI_INT, comm);
    for (int q = 0; q < n; ++q) {
      CHECK(out[displs[q] - 1] == -7, "allgatherv wrote the gap before block %d", q);
      EXPECT_INTS("allgatherv", out + displs[q], q + 1, q, -1, 62);
    }
    mix_ints(s, out, total);

    /* MPI_Gatherv to rank 0, same layout. */
    for (int i = 0; i < total; ++i) out[i] = -7;
    fill(v, r + 1, r, 0, 63);
    MPI_Gatherv(v, r + 1, MPI_INT, out, counts, displs, MPI_INT, 0, comm);
    if (r == 0) {
      for (int q = 0; q < n; ++q) {
        CHECK(out[displs[q] - 1] == -7, "gatherv wrote the gap before block %d", q);
        EXPECT_INTS("gatherv", out + displs[q], q + 1, q, 0, 63);
      }
      mix_ints(s, out, total);
    }

    /* MPI_Scatterv from the last rank: rank q gets q+2 values. */
    int scatter_total = 0;
    for (int q = 0; q < n; ++q) {
      counts[q] = q + 2;
      displs[q] = scatter_total;
      scatter_total += q + 3;
    }
    int* src = xmalloc(sizeof(int) * (size_t)scatter_total);
    if (r == n - 1)
      for (int q = 0; q < n; ++q) fill(src + displs[q], q + 2, n - 1, q, 64);
    int* got = xmalloc(sizeof(int) * (size_t)(r + 2));
    MPI_Scatterv(src, counts, displs, MPI_INT, got, r + 2, MPI_INT, n - 1, comm);
    EXPECT_INTS("scatterv", got, r + 2, n - 1, r, 64);
    mix_ints(s, got, r + 2);
    free(src);
    free(got);
    free(v);
    free(out);
    free(counts);
    free(displs);
  }

  /* MPI_Gather to the last rank, MPI_Scatter from rank 0. */
  {
    int mine[2];
    fill(mine, 2, r, n - 1, 65);
    int* all = xmalloc(sizeof(int) * 2 * (size_t)n);
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, n - 1, comm);
    if (r == n - 1) {
      for (int q = 0; q < n; ++q) EXPECT_INTS("gather", all + 2 * q, 2, q, n - 1, 65);
      mix_ints(s, all, 2 * n);
    }
    free(all);
    int* src = xmalloc(sizeof(int) * 3 * (size_t)n);
    if (r == 0)
      for (int q = 0; q < n; ++q) fill(src + 3 * q, 3, 0, q, 66);
    int got[3];
    MPI_Scatter(src, 3, MPI_INT, got, 3, MPI_INT, 0, comm);
    EXPECT_INTS("scatter", got, 3, 0, r, 66);
    mix_ints(s, got, 3);
    free(src);
  }

  /* MPI_Alltoall, and MPI_Alltoallv with counts that differ per pair (and a
     gap after each received block). */
  {
    int* out = xmalloc(sizeof(int) * 4 * (size_t)n);
    int* in = xmalloc(sizeof(int) * 4 * (size_t)n);
    for (int q = 0; q < n; ++q) fill(out + 4 * q, 4, r, q, 67);
    MPI_Alltoall(out, 4, MPI_INT, in, 4, MPI_INT, comm);
    for (int q = 0; q < n; ++q) EXPECT_INTS("alltoall", in + 4 * q, 4, q, r, 67);
    mix_ints(s, in, 4 * n);
    free(out);
    free(in);

    int *scounts = xmalloc(sizeof(int) * (size_t)n), *sdispls = xmalloc(sizeof(int) * (size_t)n);
    int *rcounts = xmalloc(sizeof(int) * (size_t)n), *rdispls = xmalloc(sizeof(int) * (size_t)n);
    int stotal = 0, rtotal = 0;
    for (int q = 0; q < n; ++q) {
      scounts[q] = 1 + (r + 2 * q) % 3;
      sdispls[q] = stotal;
      stotal += scounts[q];
      rcounts[q] = 1 + (q + 2 * r) % 3;
      rdispls[q] = rtotal;
      rtotal += rcounts[q] + 1;
    }
    out = xmalloc(sizeof(int) * (size_t)stotal);
    in = xmalloc(sizeof(int) * (size_t)rtotal);
    for (int q = 0; q < n; ++q) fill(out + sdispls[q], scounts[q], r, q, 68);
    for (int i = 0; i < rtotal; ++i) in[i] = -7;
    MPI_Alltoallv(out, scounts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT, comm);
    for (int q = 0; q < n; ++q) {
      EXPECT_INTS("alltoallv", in + rdispls[q], rcounts[q], q, r, 68);
      CHECK(in[rdispls[q] + rcounts[q]] == -7, "alltoallv wrote the gap after block %d", q);
    }
    mix_ints(s, in, rtotal);
    free(out);
    free(in);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
  }

  /* MPI_Reduce_scatter (rank q gets q+1 sums), MPI_Reduce_scatter_block. */
  {
    int total = n * (n + 1) / 2, offset = r * (r + 1) / 2;
    int* counts = xmalloc(sizeof(int) * (size_t)n);
    for (int q = 0; q < n; ++q) counts[q] = q + 1;
    int* v = xmalloc(sizeof(int) * (size_t)total);
    for (int j = 0; j < total; ++j) v[j] = r + j;
    int* res = xmalloc(sizeof(int) * (size_t)(r + 1));
    MPI_Reduce_scatter(v, res, counts, MPI_INT, MPI_SUM, comm);
    for (int k = 0; k <= r; ++k)
      CHECK(res[k] == tri + n * (offset + k), "reduce_scatter: element %d is %d", k, res[k]);
    mix_ints(s, res, r + 1);
    free(v);
    free(res);
    free(counts);

    int* b = xmalloc(sizeof(int) * 2 * (size_t)n);
    for (int j = 0; j < 2 * n; ++j) b[j] = (r + 1) * (j + 1);
    int block[2];
    MPI_Reduce_scatter_block(b, block, 2, MPI_INT, MPI_SUM, comm);
    for (int k = 0; k < 2; ++k)
      CHECK(block[k] == (2 * r + k + 1) * n * (n + 1) / 2, "reduce_scatter_block: element %d is %d", k, block[k]);
    mix_ints(s, block, 2);
    free(b);
  }

  /* MPI_Scan, MPI_Exscan (undefined on rank 0, so not looked at there). */
  {
    int v[2] = {r + 1, 2 * (r + 1)}, res[2] = {0, 0};
    MPI_Scan(v, res, 2, MPI_INT, MPI_SUM, comm);
    CHECK(res[0] == (r + 1) * (r + 2) / 2 && res[1] == (r + 1) * (r + 2), "scan: %d %d", res[0], res[1]);
    mix_ints(s, res, 2);
    MPI_Exscan(v, res, 2, MPI_INT, MPI_SUM, comm);
    if (r > 0) {
      CHECK(res[0] == r * (r + 1) / 2 && res[1] == r * (r + 1), "exscan: %d %d", res[0], res[1]);
      mix_ints(s, res, 2);
    }
  }

  /* Every nonblocking collective, completed by MPI_Wait, MPI_Test loops
     and, several outstanding at once (each matched by the order it was
     started in), MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Waitsome,
     MPI_Testany and MPI_Testsome. */
  {
    MPI_Request req, reqs[4];
    int flag = 0;

    int v = r + 1, res = 0;
    MPI_Iallreduce(&v, &res, 1, MPI_INT, MPI_SUM, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(res == n * (n + 1) / 2 && req == MPI_REQUEST_NULL, "iallreduce: %d", res);
    mix(s, (uint64_t)res);

    MPI_Ibarrier(comm, &req);
    while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    CHECK(req == MPI_REQUEST_NULL, "ibarrier: request not freed by MPI_Test");

    int buf[4];
    if (r == n - 1) fill(buf, 4, n - 1, -1, 69);
    else memset(buf, 0, sizeof buf);
    MPI_Ibcast(buf, 4, MPI_INT, n - 1, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT_INTS("ibcast", buf, 4, n - 1, -1, 69);
    mix_ints(s, buf, 4);

    /* MPI_Ireduce, MPI_Iscan, MPI_Iexscan together, then MPI_Waitall. */
    int rv[3] = {r, 2 * r, 3 * r}, rsum[3] = {0, 0, 0}, sv[2] = {r + 1, 2 * (r + 1)}, sc[2] = {0, 0},
        ex[2] = {-1, -1};
    MPI_Ireduce(rv, rsum, 3, MPI_INT, MPI_SUM, 0, comm, &reqs[0]);
    MPI_Iscan(sv, sc, 2, MPI_INT, MPI_SUM, comm, &reqs[1]);
    MPI_Iexscan(sv, ex, 2, MPI_INT, MPI_SUM, comm, &reqs[2]);
    MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    if (r == 0) {
      for (int k = 0; k < 3; ++k) CHECK(rsum[k] == (k + 1) * tri, "ireduce: element %d is %d", k, rsum[k]);
      mix_ints(s, rsum, 3);
    }
    CHECK(sc[0] == (r + 1) * (r + 2) / 2 && sc[1] == (r + 1) * (r + 2), "iscan: %d %d", sc[0], sc[1]);
    mix_ints(s, sc, 2);
    if (r > 0) {
      CHECK(ex[0] == r * (r + 1) / 2 && ex[1] == r * (r + 1), "iexscan: %d %d", ex[0], ex[1]);
      mix_ints(s, ex, 2);
    }

    /* MPI_Iallgather and MPI_Iallgatherv (a gap before each block), then
       an MPI_Testall loop. */
    int mine[3];
    fill(mine, 3, r, -1, 161);
    int* all = xmalloc(sizeof(int) * 3 * (size_t)n);
    int* counts = xmalloc(sizeof(int) * (size_t)n);
    int* displs = xmalloc(sizeof(int) * (size_t)n);
    int total = 0;
    for (int q = 0; q < n; ++q) {
      counts[q] = q + 1;
      displs[q] = total + 1;
      total += q + 2;
    }
    int* out = xmalloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < total; ++i) out[i] = -7;
    int* vv = xmalloc(sizeof(int) * (size_t)(r + 2));
    fill(vv, r + 1, r, -1, 162);
    MPI_Iallgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm, &reqs[0]);
    MPI_Iallgatherv(vv, r + 1, MPI_INT, out, counts, displs, MPI_INT, comm, &reqs[1]);
    flag = 0;
    while (!flag) MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
    for (int q = 0; q < n; ++q) {
      EXPECT_INTS("iallgather", all + 3 * q, 3, q, -1, 161);
      CHECK(out[displs[q] - 1] == -7, "iallgatherv wrote the gap before block %d", q);
      EXPECT_INTS("iallgatherv", out + displs[q], q + 1, q, -1, 162);
    }
    mix_ints(s, all, 3 * n);
    mix_ints(s, out, total);

    /* MPI_Ialltoall and MPI_Ialltoallv (counts per pair), then MPI_Waitany
       until no request is active. */
    int* a_out = xmalloc(sizeof(int) * 2 * (size_t)n);
    int* a_in = xmalloc(sizeof(int) * 2 * (size_t)n);
    for (int q = 0; q < n; ++q) fill(a_out + 2 * q, 2, r, q, 167);
    int *scounts = xmalloc(sizeof(int) * (size_t)n), *sdispls = xmalloc(sizeof(int) * (size_t)n);
    int *rcounts = xmalloc(sizeof(int) * (size_t)n), *rdispls = xmalloc(sizeof(int) * (size_t)n);
    int stotal = 0, rtotal = 0;
    for (int q = 0; q < n; ++q) {
      scounts[q] = 1 + (r + 2 * q) % 3;
      sdispls[q] = stotal;
      stotal += scounts[q];
      rcounts[q] = 1 + (q + 2 * r) % 3;
      rdispls[q] = rtotal;
      rtotal += rcounts[q];
    }
    int* v_out = xmalloc(sizeof(int) * (size_t)stotal);
    int* v_in = xmalloc(sizeof(int) * (size_t)rtotal);
    for (int q = 0; q < n; ++q) fill(v_out + sdispls[q], scounts[q], r, q, 168);
    MPI_Ialltoall(a_out, 2, MPI_INT, a_in, 2, MPI_INT, comm, &reqs[0]);
    MPI_Ialltoallv(v_out, scounts, sdispls, MPI_INT, v_in, rcounts, rdispls, MPI_INT, comm, &reqs[1]);
    int completed = 0;
    for (;;) {
      int index = -2;
      MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE);
      if (index == MPI_UNDEFINED) break;
      CHECK(index >= 0 && index < 2 && reqs[index] == MPI_REQUEST_NULL, "waitany on collectives: index %d", index);
      ++completed;
    }
    CHECK(completed == 2, "waitany on collectives: %d completed", completed);
    for (int q = 0; q < n; ++q) {
      EXPECT_INTS("ialltoall", a_in + 2 * q, 2, q, r, 167);
      EXPECT_INTS("ialltoallv", v_in + rdispls[q], rcounts[q], q, r, 168);
    }
    mix_ints(s, a_in, 2 * n);
    mix_ints(s, v_in, rtotal);

    /* MPI_Igather to the last rank, MPI_Igatherv to rank 0, MPI_Iscatter
       from rank 0, MPI_Iscatterv from the last rank, then MPI_Waitsome. */
    int gmine[2], sgot[3];
    fill(gmine, 2, r, n - 1, 165);
    int* gall = xmalloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < total; ++i) out[i] = -7;
    fill(vv, r + 1, r, 0, 163);
    int* ssrc = xmalloc(sizeof(int) * 3 * (size_t)n);
    if (r == 0)
      for (int q = 0; q < n; ++q) fill(ssrc + 3 * q, 3, 0, q, 166);
    int* vcounts = xmalloc(sizeof(int) * (size_t)n);
    int* vdispls = xmalloc(sizeof(int) * (size_t)n);
    int vtotal = 0;
    for (int q = 0; q < n; ++q) {
      vcounts[q] = q + 2;
      vdispls[q] = vtotal;
      vtotal += q + 3;
    }
    int* vsrc = xmalloc(sizeof(int) * (size_t)vtotal);
    if (r == n - 1)
      for (int q = 0; q < n; ++q) fill(vsrc + vdispls[q], q + 2, n - 1, q, 164);
    int* vgot = xmalloc(sizeof(int) * (size_t)(r + 2));
    MPI_Igather(gmine, 2, MPI_INT, gall, 2, MPI_INT, n - 1, comm, &reqs[0]);
    MPI_Igatherv(vv, r + 1, MPI_INT, out, counts, displs, MPI_INT, 0, comm, &reqs[1]);
    MPI_Iscatter(ssrc, 3, MPI_INT, sgot, 3, MPI_INT, 0, comm, &reqs[2]);
    MPI_Iscatterv(vsrc, vcounts, vdispls, MPI_INT, vgot, r + 2, MPI_INT, n - 1, comm, &reqs[3]);
    completed = 0;
    for (;;) {
      int outcount = -2, indices[4];
      MPI_Waitsome(4, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
      if (outcount == MPI_UNDEFINED) break;
      CHECK(outcount > 0 && outcount <= 4, "waitsome on collectives: outcount %d", outcount);
      completed += outcount;
    }
    CHECK(completed == 4, "waitsome on collectives: %d completed", completed);
    if (r == n - 1) {
      for (int q = 0; q < n; ++q) EXPECT_INTS("igather", gall + 2 * q, 2, q, n - 1, 165);
      mix_ints(s, gall, 2 * n);
    }
    if (r == 0) {
      for (int q = 0; q < n; ++q) {
        CHECK(out[displs[q] - 1] == -7, "igatherv wrote the gap before block %d", q);
        EXPECT_INTS("igatherv", out + displs[q], q + 1, q, 0, 163);
      }
      mix_ints(s, out, total);
    }
    EXPECT_INTS("iscatter", sgot, 3, 0, r, 166);
    EXPECT_INTS("iscatterv", vgot, r + 2, n - 1, r, 164);
    mix_ints(s, sgot, 3);
    mix_ints(s, vgot, r + 2);

    /* MPI_Ireduce_scatter and MPI_Ireduce_scatter_block: an MPI_Testany
       loop for the one, an MPI_Testsome loop for the other. */
    int offset = r * (r + 1) / 2, ntotal = n * (n + 1) / 2;
    int* rs_in = xmalloc(sizeof(int) * (size_t)ntotal);
    for (int j = 0; j < ntotal; ++j) rs_in[j] = r + j;
    int* rs_out = xmalloc(sizeof(int) * (size_t)(r + 1));
    int* b = xmalloc(sizeof(int) * 2 * (size_t)n);
    for (int j = 0; j < 2 * n; ++j) b[j] = (r + 1) * (j + 1);
    int block[2];
    MPI_Ireduce_scatter(rs_in, rs_out, counts, MPI_INT, MPI_SUM, comm, &reqs[0]);
    MPI_Ireduce_scatter_block(b, block, 2, MPI_INT, MPI_SUM, comm, &reqs[1]);
    for (flag = 0; !flag;) {
      int index = -2;
      MPI_Testany(1, &reqs[0], &index, &flag, MPI_STATUS_IGNORE);
      CHECK(!flag || index == 0, "testany on a collective: index %d", index);
    }
    for (int done = 0; !done;) {
      int outcount = -2, index = -2;
      MPI_Testsome(1, &reqs[1], &outcount, &index, MPI_STATUSES_IGNORE);
      CHECK(outcount == 0 || (outcount == 1 && index == 0), "testsome on a collective: %d, index %d", outcount, index);
      done = outcount == 1;
    }
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "testany/testsome left a request");
    for (int k = 0; k <= r; ++k)
      CHECK(rs_out[k] == tri + n * (offset + k), "ireduce_scatter: element %d is %d", k, rs_out[k]);
    for (int k = 0; k < 2; ++k)
      CHECK(block[k] == (2 * r + k + 1) * n * (n + 1) / 2, "ireduce_scatter_block: element %d is %d", k, block[k]);
    mix_ints(s, rs_out, r + 1);
    mix_ints(s, block, 2);

    free(all);
    free(counts);
    free(displs);
    free(out);
    free(vv);
    free(a_out);
    free(a_in);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(v_out);
    free(v_in);
    free(gall);
    free(ssrc);
    free(vcounts);
    free(vdispls);
    free(vsrc);
    free(vgot);
    free(rs_in);
    free(rs_out);
    free(b);
  }
}

static void test_communicators(sum_t* s) {
  const int r = g_rank, n = g_size, left = left_of(r), right = right_of(r);

  /* MPI_Comm_split by parity, in reverse rank order. */
  {
    int color = r % 2;
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, color, n - r, &sub);
    int last = color + 2 * ((n - 1 - color) / 2), want_size = (n - 1 - color) / 2 + 1;
    int sr, ss;
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &ss);
    CHECK(ss == want_size && sr == (last - r) / 2, "split: rank %d of %d", sr, ss);

    int sum = -1;
    MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, sub);
    CHECK(sum == ss * color + ss * (ss - 1), "split allreduce: %d", sum);
    int b = sr == 0 ? 3 * r + 1 : -1;
    MPI_Bcast(&b, 1, MPI_INT, 0, sub);
    CHECK(b == 3 * last + 1, "split bcast: %d", b);
    int* world_of = xmalloc(sizeof(int) * (size_t)ss);
    MPI_Allgather(&g_rank, 1, MPI_INT, world_of, 1, MPI_INT, sub);
    for (int q = 0; q < ss; ++q) CHECK(world_of[q] == last - 2 * q, "split allgather: %d at %d", world_of[q], q);
    int* out = xmalloc(sizeof(int) * (size_t)ss);
    int* in = xmalloc(sizeof(int) * (size_t)ss);
    for (int q = 0; q < ss; ++q) out[q] = val(r, q, 70, 0);
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, sub);
    for (int q = 0; q < ss; ++q) CHECK(in[q] == val(last - 2 * q, sr, 70, 0), "split alltoall: %d at %d", in[q], q);
    mix_ints(s, in, ss);
    MPI_Barrier(sub);
    /* Point to point in the sub-communicator: ranks and the status source
       are its ranks, not MPI_COMM_WORLD's. */
    int to = (sr + 1) % ss, from = (sr + ss - 1) % ss, msg[3], got[3];
    MPI_Status st;
    fill(msg, 3, sr, to, 71);
    MPI_Sendrecv(msg, 3, MPI_INT, to, 71, got, 3, MPI_INT, from, 71, sub, &st);
    EXPECT_STATUS("split sendrecv", &st, from, 71, 3);
    EXPECT_INTS("split sendrecv", got, 3, from, sr, 71);
    mix_ints(s, got, 3);
    /* The whole collective set on the sub-communicator as well. */
    test_collectives(s, sub);
    free(world_of);
    free(out);
    free(in);
    MPI_Comm_free(&sub);
    CHECK(sub == MPI_COMM_NULL, "comm_free left the communicator");
  }

  /* MPI_UNDEFINED leaves the last rank out. */
  {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, r == n - 1 ? MPI_UNDEFINED : 0, r, &sub);
    if (r == n - 1) {
      CHECK(sub == MPI_COMM_NULL, "split with MPI_UNDEFINED gave a communicator");
    } else {
      int sum = -1;
      MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, sub);
      CHECK(sum == (n - 1) * (n - 2) / 2, "split allreduce without the last rank: %d", sum);
      MPI_Comm_free(&sub);
    }
  }

  /* MPI_Comm_dup: a message on the duplicate never matches a receive on
     the original, even with the same source and tag. */
  {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int result = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK(result == MPI_CONGRUENT, "comm_dup: compare gives %d", result);
    int on_dup[4], on_world[4], got_world[4], got_dup[4];
    MPI_Request reqs[2];
    fill(on_dup, 4, r, right, 720);
    fill(on_world, 4, r, right, 721);
    MPI_Isend(on_dup, 4, MPI_INT, right, 72, dup, &reqs[0]);
    MPI_Isend(on_world, 4, MPI_INT, right, 72, MPI_COMM_WORLD, &reqs[1]);
    MPI_Recv(got_world, 4, MPI_INT, left, 72, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(got_dup, 4, MPI_INT, left, 72, dup, MPI_STATUS_IGNORE);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    EXPECT_INTS("comm_dup isolation", got_world, 4, left, r, 721);
    EXPECT_INTS("comm_dup isolation", got_dup, 4, left, r, 720);
    mix_ints(s, got_world, 4);
    mix_ints(s, got_dup, 4);
    int sum = -1;
    MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    CHECK(sum == n * (n - 1) / 2, "dup allreduce: %d", sum);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "comm_free left the duplicate");
  }

  /* MPI_Comm_create from the group of even ranks. */
  {
    MPI_Group world_group, even_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int m = (n + 1) / 2;
    int* evens = xmalloc(sizeof(int) * (size_t)m);
    for (int k = 0; k < m; ++k) evens[k] = 2 * k;
    MPI_Group_incl(world_group, m, evens, &even_group);
    MPI_Comm even;
    MPI_Comm_create(MPI_COMM_WORLD, even_group, &even);
    if (r % 2 == 0) {
      int er = -1, es = -1, sum = -1;
      CHECK(even != MPI_COMM_NULL, "comm_create: no communicator for a member");
      MPI_Comm_rank(even, &er);
      MPI_Comm_size(even, &es);
      CHECK(er == r / 2 && es == m, "comm_create: rank %d of %d", er, es);
      MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, even);
      CHECK(sum == m * (m - 1), "comm_create allreduce: %d", sum);
      mix(s, (uint64_t)sum);
      MPI_Comm_free(&even);
    } else {
      CHECK(even == MPI_COMM_NULL, "comm_create: a communicator for a non-member");
    }
    MPI_Group_free(&even_group);
    MPI_Group_free(&world_group);
    free(evens);
  }

  /* MPI_Comm_create_group: only the members (the even ranks) call it; a
     creation by every rank afterwards still works. */
  {
    MPI_Group world_group, even_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int m = (n + 1) / 2;
    int* evens = xmalloc(sizeof(int) * (size_t)m);
    for (int k = 0; k < m; ++k) evens[k] = 2 * k;
    MPI_Group_incl(world_group, m, evens, &even_group);
    if (r % 2 == 0) {
      MPI_Comm even;
      MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 73, &even);
      int er = -1, es = -1, sum = -1;
      CHECK(even != MPI_COMM_NULL, "comm_create_group: no communicator for a member");
      MPI_Comm_rank(even, &er);
      MPI_Comm_size(even, &es);
      CHECK(er == r / 2 && es == m, "comm_create_group: rank %d of %d", er, es);
      MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, even);
      CHECK(sum == m * (m - 1), "comm_create_group allreduce: %d", sum);
      mix(s, (uint64_t)sum);
      MPI_Request req;
      int b = er == es - 1 ? 5 * r + 2 : -1;
      MPI_Ibcast(&b, 1, MPI_INT, es - 1, even, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      CHECK(b == 5 * (2 * (m - 1)) + 2, "comm_create_group ibcast: %d", b);
      MPI_Comm_free(&even);
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int sum = -1;
    MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    CHECK(sum == n * (n - 1) / 2, "dup after comm_create_group: %d", sum);
    MPI_Comm_free(&dup);
    MPI_Group_free(&even_group);
    MPI_Group_free(&world_group);
    free(evens);
  }

  /* An intercommunicator between the even and the odd ranks: point to
     point names the remote group's ranks; a collective across gives each
     group the other's values; merged, the odd ranks (high) come last. */
  {
    const int evens = (n + 1) / 2, odds = n / 2, odd = r % 2, lr = r / 2;
    MPI_Comm half, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, odd, r, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd ? 0 : 1, 74, &inter);
    int is_inter = 0, local_size = -1, remote_size = -1;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_size(inter, &local_size);
    MPI_Comm_remote_size(inter, &remote_size);
    CHECK(is_inter && local_size == (odd ? odds : evens) && remote_size == (odd ? evens : odds),
          "intercomm_create: inter %d, sizes %d and %d", is_inter, local_size, remote_size);
    /* Even rank 2k and odd rank 2k+1 pair up: remote rank k either way. */
    if (lr < odds) {
      const int partner = odd ? r - 1 : r + 1;
      int msg[5], got[5], more[3], got_more[3];
      MPI_Status st;
      fill(msg, 5, r, partner, 75);
      MPI_Sendrecv(msg, 5, MPI_INT, lr, 75, got, 5, MPI_INT, lr, 75, inter, &st);
      EXPECT_STATUS("intercomm sendrecv", &st, lr, 75, 5);
      EXPECT_INTS("intercomm sendrecv", got, 5, partner, r, 75);
      mix_ints(s, got, 5);
      MPI_Request reqs[2];
      fill(more, 3, r, partner, 76);
      MPI_Irecv(got_more, 3, MPI_INT, lr, 76, inter, &reqs[0]);
      MPI_Isend(more, 3, MPI_INT, lr, 76, inter, &reqs[1]);
      MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
      EXPECT_INTS("intercomm isend/irecv", got_more, 3, partner, r, 76);
      mix_ints(s, got_more, 3);
      if (odd) {
        MPI_Recv(got, 5, MPI_INT, lr, 77, inter, &st);
        EXPECT_STATUS("intercomm recv", &st, lr, 77, 4);
        EXPECT_INTS("intercomm recv", got, 4, partner, r, 77);
        mix_ints(s, got, 4);
      } else {
        fill(msg, 4, r, partner, 77);
        MPI_Send(msg, 4, MPI_INT, lr, 77, inter);
      }
    }
    int sum = -1, want = odd ? evens * (evens - 1) : odds * odds; /* the other group's world ranks */
    MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == want, "intercomm allreduce: %d, expected %d", sum, want);
    mix(s, (uint64_t)sum);
    MPI_Request req;
    sum = -1;
    MPI_Iallreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, inter, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(sum == want, "intercomm iallreduce: %d, expected %d", sum, want);
    MPI_Ibarrier(inter, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    MPI_Intercomm_merge(inter, odd, &merged);
    int mr = -1, ms = -1;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == n && mr == (odd ? evens + lr : lr), "intercomm_merge: rank %d of %d", mr, ms);
    int* world_of = xmalloc(sizeof(int) * (size_t)n);
    MPI_Allgather(&g_rank, 1, MPI_INT, world_of, 1, MPI_INT, merged);
    for (int q = 0; q < n; ++q) {
      int expected = q < evens ? 2 * q : 2 * (q - evens) + 1;
      CHECK(world_of[q] == expected, "intercomm_merge allgather: %d at %d", world_of[q], q);
    }
    mix_ints(s, world_of, n);
    /* Point to point on the merged communicator uses its own ranks. */
    {
      int to = (mr + 1) % n, from = (mr + n - 1) % n, msg[2], got[2];
      MPI_Status st;
      fill(msg, 2, mr, to, 78);
      MPI_Sendrecv(msg, 2, MPI_INT, to, 78, got, 2, MPI_INT, from, 78, merged, &st);
      EXPECT_STATUS("merged sendrecv", &st, from, 78, 2);
      EXPECT_INTS("merged sendrecv", got, 2, from, mr, 78);
      mix_ints(s, got, 2);
    }
    free(world_of);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
}

/* Under MPI_ERRORS_RETURN, bad arguments come back as error codes; the
   communicator stays usable. */
static void test_errors(sum_t* s) {
  const int n = g_size, right = right_of(g_rank);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int buf[2] = {1, 2}, out[2] = {0, 0}, cls = -1;
  MPI_Status st;
  MPI_Request req = MPI_REQUEST_NULL;
  struct {
    const char* what;
    int rc, want;
  } cases[6];
  cases[0].what = "MPI_Send to an invalid rank";
  cases[0].rc = MPI_Send(buf, 1, MPI_INT, n + 5, 0, comm);
  cases[0].want = MPI_ERR_RANK;
  cases[1].what = "MPI_Recv from an invalid rank";
  cases[1].rc = MPI_Recv(buf, 1, MPI_INT, n + 5, 0, comm, &st);
  cases[1].want = MPI_ERR_RANK;
  cases[2].what = "MPI_Send with a negative count";
  cases[2].rc = MPI_Send(buf, -1, MPI_INT, right, 0, comm);
  cases[2].want = MPI_ERR_COUNT;
  cases[3].what = "MPI_Isend to an invalid rank";
  cases[3].rc = MPI_Isend(buf, 1, MPI_INT, n + 5, 0, comm, &req);
  cases[3].want = MPI_ERR_RANK;
  cases[4].what = "MPI_Bcast from an invalid root";
  cases[4].rc = MPI_Bcast(buf, 1, MPI_INT, n + 5, comm);
  cases[4].want = MPI_ERR_ROOT;
  cases[5].what = "MPI_Allreduce with a negative count";
  cases[5].rc = MPI_Allreduce(buf, out, -1, MPI_INT, MPI_SUM, comm);
  cases[5].want = MPI_ERR_COUNT;
  for (int k = 0; k < 6; ++k) {
    CHECK(cases[k].rc != MPI_SUCCESS, "%s returned MPI_SUCCESS", cases[k].what);
    MPI_Error_class(cases[k].rc, &cls);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(cases[k].rc, text, &len);
    CHECK(cls == cases[k].want && len > 0, "%s: error class %d (%s), expected %d", cases[k].what, cls, text,
          cases[k].want);
    mix(s, (uint64_t)k);
  }
  int sum = -1;
  CHECK(MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && sum == n * (n - 1) / 2,
        "allreduce after the errors: %d", sum);
  MPI_Comm_free(&comm);
}

/* Every rank's checksum, printed by rank 0 in rank order, then "ok". */
static void print_checksums(const sum_t* s) {
  uint64_t mine = s->h;
  uint64_t* all = xmalloc(sizeof(uint64_t) * (size_t)g_size);
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (int q = 0; q < g_size; ++q) printf("rank %d checksum %016" PRIx64 "\n", q, all[q]);
    printf("ok\n");
    fflush(stdout);
  }
  free(all);
}

static int mode_correctness(void) {
  sum_t s;
  sum_init(&s);
  test_blocking(&s);
  test_nonblocking(&s);
  test_persistent(&s);
  test_probe(&s);
  test_collectives(&s, MPI_COMM_WORLD);
  test_communicators(&s);
  test_errors(&s);
  MPI_Barrier(MPI_COMM_WORLD);
  print_checksums(&s);
  return 0;
}

enum { THREAD_ITERS = 200 };

typedef struct {
  int id;
  MPI_Comm comm;
  sum_t sum;
} thread_arg_t;

/* Thread 0: blocking send/recv rings; thread 1: irecv, blocking send, wait;
   each on its own tag of MPI_COMM_WORLD. */
static void* ring_thread(void* p) {
  thread_arg_t* a = p;
  const int r = g_rank, left = left_of(r), right = right_of(r), tag = 90 + a->id;
  int out[8], in[8];
  MPI_Status st;
  for (int it = 0; it < THREAD_ITERS; ++it) {
    fill(out, 8, r, right, 1000 * tag + it);
    if (a->id == 0) {
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn == 0) == (r == 0)) MPI_Send(out, 8, MPI_INT, right, tag, MPI_COMM_WORLD);
        else MPI_Recv(in, 8, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
      }
    } else {
      MPI_Request req;
      MPI_Irecv(in, 8, MPI_INT, left, tag, MPI_COMM_WORLD, &req);
      MPI_Send(out, 8, MPI_INT, right, tag, MPI_COMM_WORLD);
      MPI_Wait(&req, &st);
    }
    EXPECT_STATUS("thread ring", &st, left, tag, 8);
    EXPECT_INTS("thread ring", in, 8, left, r, 1000 * tag + it);
    mix_ints(&a->sum, in, 8);
  }
  return NULL;
}

/* Thread 2: allreduces and a bcast on its own communicator. */
static void* collective_thread(void* p) {
  thread_arg_t* a = p;
  const int n = g_size;
  for (int it = 0; it < THREAD_ITERS; ++it) {
    int v[2] = {g_rank + it, g_rank * it}, res[2];
    MPI_Allreduce(v, res, 2, MPI_INT, MPI_SUM, a->comm);
    CHECK(res[0] == n * (n - 1) / 2 + n * it && res[1] == it * n * (n - 1) / 2, "thread allreduce: %d %d", res[0],
          res[1]);
    mix_ints(&a->sum, res, 2);
    if (it % 20 == 0) {
      int b = g_rank == 0 ? it * 3 : -1;
      MPI_Bcast(&b, 1, MPI_INT, 0, a->comm);
      CHECK(b == it * 3, "thread bcast: %d", b);
    }
  }
  return NULL;
}

static int mode_threads(void) {
  thread_arg_t args[3];
  pthread_t threads[3];
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int t = 0; t < 3; ++t) {
    args[t].id = t;
    args[t].comm = dup;
    sum_init(&args[t].sum);
    int rc = pthread_create(&threads[t], NULL, t < 2 ? ring_thread : collective_thread, &args[t]);
    CHECK(rc == 0, "pthread_create: %s", strerror(rc));
  }
  sum_t s;
  sum_init(&s);
  for (int t = 0; t < 3; ++t) {
    pthread_join(threads[t], NULL);
    mix(&s, args[t].sum.h);
  }
  MPI_Comm_free(&dup);
  MPI_Barrier(MPI_COMM_WORLD);
  print_checksums(&s);
  return 0;
}

static int mode_alltoall(int iters) {
  const int n = g_size, per_peer = 256; /* 1 KiB of ints */
  int* out = xmalloc(sizeof(int) * (size_t)(per_peer * n));
  int* in = xmalloc(sizeof(int) * (size_t)(per_peer * n));
  for (int it = 0; it < iters; ++it) {
    for (int q = 0; q < n; ++q) fill(out + per_peer * q, per_peer, g_rank, q, it % 1000);
    MPI_Alltoall(out, per_peer, MPI_INT, in, per_peer, MPI_INT, MPI_COMM_WORLD);
    for (int q = 0; q < n; ++q) EXPECT_INTS("alltoall", in + per_peer * q, per_peer, q, g_rank, it % 1000);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    printf("ok %d\n", iters);
    fflush(stdout);
  }
  free(out);
  free(in);
  return 0;
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static int mode_hang(int steps, int ms) {
  for (int k = 1; k <= steps; ++k) {
    sleep_ms(ms);
    int v = k, sum = -1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == k * g_size, "hang: step %d sum %d", k, sum);
    if (g_rank == 0) {
      printf("step %d\n", k);
      fflush(stdout);
    }
  }
  if (g_rank == 0) {
    printf("done\n");
    fflush(stdout);
  }
  return 0;
}

/* As mode_hang, through the program's own nonblocking collective. */
static int mode_ihang(int steps, int ms) {
  for (int k = 1; k <= steps; ++k) {
    sleep_ms(ms);
    int v = k, sum = -1;
    MPI_Request req;
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(sum == k * g_size, "ihang: step %d sum %d", k, sum);
    if (g_rank == 0) {
      printf("step %d\n", k);
      fflush(stdout);
    }
  }
  if (g_rank == 0) {
    printf("done\n");
    fflush(stdout);
  }
  return 0;
}

static int mode_pingpong(int iters) {
  int msg[2];
  MPI_Status st;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  if (g_rank < 2) {
    for (int it = 0; it < iters; ++it) {
      if (g_rank == 0) {
        fill(msg, 2, 0, 1, it % 1000);
        MPI_Send(msg, 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(msg, 2, MPI_INT, 1, 8, MPI_COMM_WORLD, &st);
        EXPECT_STATUS("pingpong", &st, 1, 8, 2);
        EXPECT_INTS("pingpong", msg, 2, 1, 0, it % 1000);
      } else {
        MPI_Recv(msg, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
        EXPECT_STATUS("pingpong", &st, 0, 7, 2);
        EXPECT_INTS("pingpong", msg, 2, 0, 1, it % 1000);
        fill(msg, 2, 1, 0, it % 1000);
        MPI_Send(msg, 2, MPI_INT, 0, 8, MPI_COMM_WORLD);
      }
    }
  }
  double elapsed = MPI_Wtime() - start;
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    printf("us_per_roundtrip=%.3f\nok %d\n", iters > 0 ? elapsed * 1e6 / iters : 0.0, iters);
    fflush(stdout);
  }
  return 0;
}

/* Element i of rank src's contribution: magnitudes over 30 binary orders,
   so that the rounding of a sum depends on the order of its terms. */
static double fp_value(int src, int i) {
  uint64_t x = (uint64_t)(src + 1) * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  double unit = (double)(x >> 11) / 9007199254740992.0 - 0.5;
  return unit * (double)(1u << (x % 30));
}

/* The sum over ranks [0, upto] of element i, and a bound on its rounding
   error in any order of summation. */
static void fp_expected(int upto, int i, double* sum, double* bound) {
  long double s = 0, a = 0;
  for (int q = 0; q <= upto; ++q) {
    s += fp_value(q, i);
    a += fabsl((long double)fp_value(q, i));
  }
  *sum = (double)s;
  *bound = (double)(a * (upto + 2) * 2.3e-16L);
}

static void fp_check(int line, const char* what, const double* got, int n, int upto, int first, sum_t* s) {
  for (int i = 0; i < n; ++i) {
    double want, bound;
    fp_expected(upto, first + i, &want, &bound);
    if (!(fabs(got[i] - want) <= bound))
      fail(line, what, "element %d is %.17g, expected %.17g within %.3g", first + i, got[i], want, bound);
    uint64_t bits;
    memcpy(&bits, &got[i], sizeof bits);
    mix(s, bits);
  }
}

static int mode_fpsum(void) {
  const int counts[] = {1, 7, 100, 1000, 10000};
  sum_t s;
  sum_init(&s);
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
    const int m = counts[k];
    double* x = xmalloc(sizeof(double) * (size_t)m * (size_t)g_size);
    double* res = xmalloc(sizeof(double) * (size_t)m * (size_t)g_size);
    for (int i = 0; i < m * g_size; ++i) x[i] = fp_value(g_rank, i);
    MPI_Allreduce(x, res, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    fp_check(__LINE__, "fp allreduce", res, m, g_size - 1, 0, &s);
    MPI_Reduce(x, res, m, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) fp_check(__LINE__, "fp reduce", res, m, g_size - 1, 0, &s);
    MPI_Reduce_scatter_block(x, res, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    fp_check(__LINE__, "fp reduce_scatter_block", res, m, g_size - 1, g_rank * m, &s);
    MPI_Scan(x, res, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    fp_check(__LINE__, "fp scan", res, m, g_rank, 0, &s);
    free(x);
    free(res);
  }
  uint64_t mine = s.h;
  uint64_t* all = xmalloc(sizeof(uint64_t) * (size_t)g_size);
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (int q = 0; q < g_size; ++q) printf("rank %d fpsum %016" PRIx64 "\n", q, all[q]);
    printf("ok\n");
    fflush(stdout);
  }
  free(all);
  return 0;
}

static int parse_count(const char* s, int* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 100000000) return 0;
  *out = (int)v;
  return 1;
}

static int usage(void) {
  fprintf(stderr, "usage: mpi_check correctness | threads | alltoall N | hang STEPS MS | ihang STEPS MS | pingpong N | fpsum\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const char* mode = argv[1];
  int a = 0, b = 0;
  int needs_pair = 1;
  if (strcmp(mode, "correctness") == 0 || strcmp(mode, "threads") == 0) {
    if (argc != 2) return usage();
  } else if (strcmp(mode, "fpsum") == 0) {
    if (argc != 2) return usage();
    needs_pair = 0;
  } else if (strcmp(mode, "alltoall") == 0) {
    if (argc != 3 || !parse_count(argv[2], &a)) return usage();
    needs_pair = 0;
  } else if (strcmp(mode, "hang") == 0 || strcmp(mode, "ihang") == 0) {
    if (argc != 4 || !parse_count(argv[2], &a) || !parse_count(argv[3], &b)) return usage();
    needs_pair = 0;
  } else if (strcmp(mode, "pingpong") == 0) {
    if (argc != 3 || !parse_count(argv[2], &a)) return usage();
  } else {
    return usage();
  }

  int is_threads = strcmp(mode, "threads") == 0, provided = MPI_THREAD_SINGLE;
  if (is_threads) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (needs_pair && g_size < 2) {
    if (g_rank == 0) fprintf(stderr, "mpi_check %s: needs at least 2 ranks\n", mode);
    MPI_Finalize();
    return 2;
  }

  int rc = 0;
  if (is_threads && provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) printf("skip threads\n");
  } else if (is_threads) {
    rc = mode_threads();
  } else if (strcmp(mode, "correctness") == 0) {
    rc = mode_correctness();
  } else if (strcmp(mode, "alltoall") == 0) {
    rc = mode_alltoall(a);
  } else if (strcmp(mode, "hang") == 0) {
    rc = mode_hang(a, b);
  } else if (strcmp(mode, "ihang") == 0) {
    rc = mode_ihang(a, b);
  } else if (strcmp(mode, "fpsum") == 0) {
    rc = mode_fpsum();
  } else {
    rc = mode_pingpong(a);
  }
  MPI_Finalize();
  return rc;
}
