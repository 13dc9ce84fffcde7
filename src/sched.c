/* sched.c: the only `#pragma omp parallel` of the library. */
#include "sched.h"

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
