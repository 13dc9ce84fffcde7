/* sched.c: the only `#pragma omp parallel` of the library. */
#define _POSIX_C_SOURCE 200809L
#include "engine/sched.h"

#include <time.h>

#ifdef _OPENMP
#include <omp.h>
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

void rs__parallel_for(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx)
{
  if (chunk == 0) chunk = 1;
  if (threads <= 1 || n <= chunk) {
    for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
#ifdef _OPENMP
  /* Items are claimed in chunks from a shared counter; every item is done
   * exactly once and only writes its own outputs. */
  long long nn = (long long)n;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) default(none) shared(fn, ctx, nn, chunk)
  for (long long c = 0; c < (nn + (long long)chunk - 1) / (long long)chunk; c++) {
    int tid = omp_get_thread_num();
    size_t a = (size_t)c * chunk, b = a + chunk < (size_t)nn ? a + chunk : (size_t)nn;
    for (size_t i = a; i < b; i++) fn(ctx, i, tid);
  }
#else
  for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
#endif
}

void rs__parallel_for_beside(size_t n, int threads, size_t chunk, rs__item_fn fn, void *ctx, void (*side)(void *),
                             void *side_ctx)
{
  if (chunk == 0) chunk = 1;
#ifdef _OPENMP
  if (threads > 1) {
    /* One thread runs `side` (the next block's I/O) first; the others start
     * on the items at once, and the side thread joins them when done.
     * Items still go to whoever claims them, so outputs do not depend on
     * who ran what. */
    long long nn = (long long)n, n_chunks = (nn + (long long)chunk - 1) / (long long)chunk;
#pragma omp parallel num_threads(threads) default(none) shared(fn, ctx, side, side_ctx, nn, n_chunks, chunk)
    {
#pragma omp single nowait
      side(side_ctx);
#pragma omp for schedule(dynamic, 1) nowait
      for (long long c = 0; c < n_chunks; c++) {
        int tid = omp_get_thread_num();
        size_t a = (size_t)c * chunk, b = a + chunk < (size_t)nn ? a + chunk : (size_t)nn;
        for (size_t i = a; i < b; i++) fn(ctx, i, tid);
      }
    }
    return;
  }
#endif
  (void)threads;
  side(side_ctx);
  for (size_t i = 0; i < n; i++) fn(ctx, i, 0);
}
