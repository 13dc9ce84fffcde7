/* sched.c: the only file of the library with a `#pragma omp parallel`. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "engine/sched.h"

#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(_OPENMP) && defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#define RS_PLACE_THREADS 1
#endif

int rs__threads(int requested)
{
#ifdef _OPENMP
  if (requested >= 1) return requested;
  int n = omp_get_max_threads();
  return n >= 1 ? n : 1;
#else
  (void)requested;
  return 1;
#endif
}

void rs__threads_set_default(int n)
{
#ifdef _OPENMP
  if (n >= 1) omp_set_num_threads(n);
#else
  (void)n;
#endif
}

double rs__seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- where a team's threads run ------------------------------------------
 *
 * A team that uses every CPU the process may run on puts thread k on the
 * k-th of them for the length of a region.  Left to itself, the kernel
 * of the 2-vCPU bench guest (its command line has sched_vcpu_pack=15)
 * ran both threads of a team on one vCPU for milliseconds at a time while
 * the other idled: 10k x 100 text at two threads took 34-43 ms, and 26 ms
 * with the threads bound (OMP_PROC_BIND=true gave 23 ms).  A smaller team is
 * left alone, since other processes may be using the other CPUs, as is a
 * loop nested in a parallel region (a team of one, on its thread), and so
 * is any process whose user chose a binding (OMP_PROC_BIND, OMP_PLACES,
 * GOMP_CPU_AFFINITY).  The calling thread gets its CPU set back when the
 * region ends; the runtime's worker threads keep their CPUs, so that
 * while they wait for the next region they are not moved onto the
 * caller's (giving theirs back too: 27-29 ms). */
#ifdef RS_PLACE_THREADS
static pthread_once_t place_once = PTHREAD_ONCE_INIT;
static int place_cpu[CPU_SETSIZE]; /* the process's CPUs, ascending */
static int place_n;                /* how many; 0: threads are not placed */

static void place_init(void)
{
  if (getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY")) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &allowed)) place_cpu[n++] = c;
  place_n = n > 1 ? n : 0; /* one CPU: nothing to place */
}

/* A failure leaves the thread where it was: placement is only a speed-up. */
static int set_cpus(const cpu_set_t *cpus)
{
  return pthread_setaffinity_np(pthread_self(), sizeof *cpus, cpus) == 0;
}

/* Each thread's pin, so that a thread already on its CPU is not pinned
 * again: a pin is a system call (about 1.9 µs here), and so are the
 * caller's look at its CPU set and its unpin, which rs__sched_hold saves
 * for a run of regions (one region of two threads, nothing in it: 7.9 µs
 * with a pin and unpin each time, 2.5 µs with OMP_PROC_BIND=true). */
static _Thread_local int pinned_cpu = -1; /* -1: the thread's own CPU set */
static _Thread_local int hold_depth;      /* rs__sched_hold's, on this thread */
static _Thread_local int hold_saved;      /* held and pinned: the CPU set to give back is in hold_cpus */
static _Thread_local cpu_set_t hold_cpus;

typedef struct {
  int placed;
  int give_back;         /* the caller gets caller_cpus back after the region (not while held) */
  cpu_set_t caller_cpus; /* to give back */
} placement;

/* The caller, before a region of `threads` threads. */
static void place_enter(placement *p, int threads)
{
  p->placed = p->give_back = 0;
  (void)pthread_once(&place_once, place_init);
  if (place_n == 0 || threads != place_n || omp_in_parallel()) return; /* nested: a team of one */
  if (hold_saved) { /* held: already pinned, its own set kept */
    p->placed = 1;
    return;
  }
  p->placed = pthread_getaffinity_np(pthread_self(), sizeof p->caller_cpus, &p->caller_cpus) == 0;
  if (p->placed && hold_depth) hold_cpus = p->caller_cpus, hold_saved = 1;
  p->give_back = p->placed && !hold_depth;
}

/* Each thread of the team, as the region starts. */
static void place_thread(const placement *p, int tid)
{
  if (!p->placed || omp_get_num_threads() != place_n) return; /* the runtime may give fewer (OMP_THREAD_LIMIT) */
  if (pinned_cpu == place_cpu[tid]) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(place_cpu[tid], &one);
  pinned_cpu = set_cpus(&one) ? place_cpu[tid] : -1;
}

/* The caller, after the region. */
static void place_leave(const placement *p)
{
  if (!p->give_back) return;
  (void)set_cpus(&p->caller_cpus);
  pinned_cpu = -1;
}

void rs__sched_hold(void) { hold_depth++; }

void rs__sched_release(void)
{
  if (hold_depth == 0 || --hold_depth > 0 || !hold_saved) return;
  (void)set_cpus(&hold_cpus);
  pinned_cpu = -1;
  hold_saved = 0;
}

/* Before the first placed team a thread makes, the runtime has no threads
 * to give it and starts them in that region.  libgomp's caller then spins
 * (300000 rounds, about 3 ms here) until they arrive, and on the bench
 * guest the kernel queues a new thread on its creator's vCPU: it starts
 * only when the spinning ends.  An empty region of one thread more than
 * there are CPUs starts the threads instead: with more threads than CPUs
 * libgomp spins 100 rounds (GOMP_SPINCOUNT in its manual), so its caller
 * soon sleeps and the new threads run; the next region lets the extra one
 * go.  First region of two threads, empty: 2.8-8.3 ms before, 0.3 ms with
 * this (6 runs each).  Each thread that calls in has a pool of its own. */
static _Thread_local int pool_started;

static void start_pool(const placement *p, int threads)
{
  if (!p->placed || pool_started) return;
  pool_started = 1;
  volatile int sink = 0;
#pragma omp parallel num_threads(threads + 1) default(none) shared(sink)
  {
    if (omp_get_thread_num() == 0) sink = omp_get_num_threads(); /* (an empty region may be left out) */
  }
  (void)sink;
}
#else /* threads are not placed */
void rs__sched_hold(void) {}
void rs__sched_release(void) {}
#endif
#if defined(_OPENMP) && !defined(RS_PLACE_THREADS) /* OpenMP off Linux */
typedef int placement;
static void place_enter(placement *p, int threads)
{
  (void)p, (void)threads;
}
static void place_thread(const placement *p, int tid)
{
  (void)p, (void)tid;
}
static void place_leave(const placement *p)
{
  (void)p;
}
static void start_pool(const placement *p, int threads)
{
  (void)p, (void)threads;
}
#endif

#ifdef _OPENMP
/* The one parallel region: items are claimed in chunks from a shared
 * counter, every item is done exactly once and only writes its own
 * outputs.  With a side task, one thread runs it first (the next block's
 * I/O) while the others start on the items, and it joins them when done;
 * items still go to whoever claims them, so outputs do not depend on who
 * ran what. */
static void run_team(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx, void (*side)(void *),
                     void *side_ctx, rs__thread_busy *busy)
{
  long long nn = (long long)n, n_chunks = (nn + (long long)chunk - 1) / (long long)chunk;
  placement place;
  place_enter(&place, threads);
  start_pool(&place, threads);
#pragma omp parallel num_threads(threads) default(none) shared(fn, ctx, side, side_ctx, nn, n_chunks, chunk, place, busy)
  {
    const int tid = omp_get_thread_num();
    place_thread(&place, tid);
    if (side) {
#pragma omp single nowait
      side(side_ctx);
    }
    double busy_s = 0.0;
    unsigned long long busy_items = 0;
#pragma omp for schedule(dynamic, 1) nowait
    for (long long c = 0; c < n_chunks; c++) {
      size_t a = (size_t)c * chunk, b = a + chunk < (size_t)nn ? a + chunk : (size_t)nn;
      const double t0 = busy ? rs__seconds() : 0.0;
      for (size_t i = a; i < b; i++) fn(ctx, i, tid);
      if (busy) busy_s += rs__seconds() - t0, busy_items += b - a;
    }
    if (busy) busy[tid].seconds += busy_s, busy[tid].items += busy_items;
  }
  place_leave(&place);
}
#endif

#ifdef _OPENMP
/* Chunks of a share claimed so far, in a cache line of its own: each
 * thread claims from its own share's counter, and counters side by side
 * made every claim move the line between CPUs (about 200 ns on the bench
 * guest, a claim each 64 rows). */
typedef struct {
  _Alignas(64) size_t claimed;
} share_counter;

/* Thread tid's part of rs__parallel_for_shares: the chunks of its own
 * shares, then what is left of every share. */
static void claim_shares(size_t n_shares, const size_t *cut, int threads, size_t chunk, rs__item_fn fn, void *ctx,
                         share_counter *next, int tid, rs__thread_busy *busy)
{
  double busy_s = 0.0;
  unsigned long long busy_items = 0;
  for (int pass = 0; pass < 2; pass++) {
    const size_t first = pass == 0 ? (size_t)tid : 0, step = pass == 0 ? (size_t)threads : 1;
    for (size_t s = first; s < n_shares; s += step) {
      const size_t a0 = cut[s], b0 = cut[s + 1];
      for (;;) {
        const size_t c = __atomic_fetch_add(&next[s].claimed, 1, __ATOMIC_RELAXED);
        if (c >= (b0 - a0 + chunk - 1) / chunk) break;
        const size_t a = a0 + c * chunk, b = a + chunk < b0 ? a + chunk : b0;
        const double t0 = busy ? rs__seconds() : 0.0;
        for (size_t i = a; i < b; i++) fn(ctx, i, tid);
        if (busy) busy_s += rs__seconds() - t0, busy_items += b - a;
      }
    }
  }
  if (busy) busy[tid].seconds += busy_s, busy[tid].items += busy_items;
}
#endif

void rs__parallel_for_shares(size_t n_shares, const size_t *cut, int threads, size_t chunk, rs__item_fn fn,
                             void *ctx, void (*own)(void *, int, int), void (*side)(void *), void *side_ctx,
                             rs__thread_busy *busy)
{
  if (chunk == 0) chunk = 1;
  if (n_shares > RS__SHARES_MAX) n_shares = RS__SHARES_MAX; /* (callers keep within it) */
#ifdef _OPENMP
  if (threads > 1) {
    share_counter next[RS__SHARES_MAX];
    for (size_t s = 0; s < n_shares; s++) next[s].claimed = 0;
    placement place;
    place_enter(&place, threads);
    start_pool(&place, threads);
#pragma omp parallel num_threads(threads) default(none) \
    shared(n_shares, cut, threads, chunk, fn, ctx, own, side, side_ctx, busy, next, place)
    {
      const int tid = omp_get_thread_num();
      place_thread(&place, tid);
      const int team = omp_get_num_threads();
      own(side_ctx, tid, team);
#pragma omp single nowait
      side(side_ctx);
      claim_shares(n_shares, cut, team, chunk, fn, ctx, next, tid, busy);
    }
    place_leave(&place);
    return;
  }
#endif
  (void)threads;
  own(side_ctx, 0, 1);
  side(side_ctx);
  const size_t n = n_shares ? cut[n_shares] : 0, a = n_shares ? cut[0] : 0;
  const double t0 = busy ? rs__seconds() : 0.0;
  for (size_t i = a; i < n; i++) fn(ctx, i, 0);
  if (busy) busy[0].seconds += rs__seconds() - t0, busy[0].items += n - a;
}

void rs__parallel_for(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx)
{
  if (chunk == 0) chunk = 1;
  if (threads <= 1 || n <= chunk) {
    for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
#ifdef _OPENMP
  run_team(n, threads, chunk, fn, ctx, NULL, NULL, NULL);
#else
  for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
#endif
}

void rs__parallel_for_beside(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx, void (*side)(void *),
                             void *side_ctx, rs__thread_busy *busy)
{
  if (chunk == 0) chunk = 1;
#ifdef _OPENMP
  if (threads > 1) {
    run_team(n, threads, chunk, fn, ctx, side, side_ctx, busy);
    return;
  }
#endif
  (void)threads;
  side(side_ctx);
  const double t0 = busy ? rs__seconds() : 0.0;
  for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
  if (busy) busy[0].seconds += rs__seconds() - t0, busy[0].items += n;
}
