/* latency.c: exact latency percentiles (numpy's linear definition). */
#include "engine/latency.h"

#include <math.h>
#include <stdlib.h>

const double rs__latency_bounds_ms[RS__LATENCY_N_BOUNDS] = {1,   2,    5,    10,   20,   50,  100,
                                                            200, 500, 1000, 2000, 5000, 10000};

void rs__latency_histogram(const double *x, size_t n, double to_ms, uint64_t bucket[RS__LATENCY_N_BOUNDS + 1])
{
  for (size_t b = 0; b <= RS__LATENCY_N_BOUNDS; b++) bucket[b] = 0;
  for (size_t i = 0; i < n; i++) {
    const double ms = x[i] * to_ms;
    /* The first bound ms is at or below, as the count of bounds it is
     * above (they rise): compares without branches, where the search
     * stopped at a data-dependent bound (a mispredicted branch a value). */
    size_t b = 0;
    for (size_t k = 0; k < RS__LATENCY_N_BOUNDS; k++) b += !(ms <= rs__latency_bounds_ms[k]);
    bucket[b]++;
  }
}

double rs__percentile_sorted(const double *sorted, size_t n, double p)
{
  const double h = (double)(n - 1) * (p / 100.0);
  double lo = floor(h);
  size_t i = (size_t)lo, j = i + 1 < n ? i + 1 : n - 1;
  const double t = h - lo, a = sorted[i], b = sorted[j], d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

static int cmp_size(const void *x, const void *y)
{
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  return (a > b) - (a < b);
}

static int cmp_double(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static inline void swap_d(double *x, size_t i, size_t j)
{
  const double t = x[i];
  x[i] = x[j], x[j] = t;
}

/* Puts the order statistics rank[0..n_rank) (ascending) of x[lo..hi] in
 * their sorted places: quickselect on all of them at once, with three-way
 * partitions (latencies repeat, 0 often) and a sort when the recursion runs
 * too deep.  O(n) for the handful of percentiles, against O(n log n) for
 * sorting a million latencies. */
static void select_ranks(double *x, size_t lo, size_t hi, const size_t *rank, size_t n_rank, int depth)
{
  while (n_rank > 0 && lo < hi) {
    if (depth-- <= 0 || hi - lo < 16) {
      qsort(x + lo, hi - lo + 1, sizeof *x, cmp_double);
      return;
    }
    const size_t mid = lo + (hi - lo) / 2; /* median of three */
    if (x[mid] < x[lo]) swap_d(x, mid, lo);
    if (x[hi] < x[lo]) swap_d(x, hi, lo);
    if (x[hi] < x[mid]) swap_d(x, hi, mid);
    const double pivot = x[mid];
    size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, (gt,hi] > pivot */
    while (i <= gt) {
      if (x[i] < pivot) swap_d(x, lt++, i++);
      else if (x[i] > pivot) swap_d(x, i, gt--);
      else i++;
    }
    size_t a = 0, b = n_rank;
    while (a < n_rank && rank[a] < lt) a++;
    while (b > a && rank[b - 1] > gt) b--;
    /* ranks [0, a) lie left, [b, n_rank) right; those between are the pivot */
    if (a > 0 && lt > lo) select_ranks(x, lo, lt - 1, rank, a, depth);
    rank += b, n_rank -= b, lo = gt + 1;
  }
}

rs_code rs__latency_summarize(double *x, size_t n, const char *where, rs__latency *out, rs_error *err)
{
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] >= 0.0) || isinf(x[i]))
      return rs__fail(err, RS_FORMAT, "%s: row %zu: expected a finite latency >= 0 seconds, found %g", where, i, x[i]);
    sum += x[i];
  }
  *out = (rs__latency){.n = n};
  if (n == 0) return RS_OK;
  static const double pct[] = {50.0, 90.0, 95.0, 99.0, 99.9, 100.0};
  enum { N_PCT = sizeof pct / sizeof *pct };
  size_t rank[2 * N_PCT], n_rank = 0;
  for (size_t k = 0; k < N_PCT; k++) { /* the two neighbours each percentile reads */
    const size_t i = (size_t)floor((double)(n - 1) * (pct[k] / 100.0));
    rank[n_rank++] = i;
    rank[n_rank++] = i + 1 < n ? i + 1 : n - 1;
  }
  qsort(rank, n_rank, sizeof *rank, cmp_size);
  size_t u = 0;
  for (size_t k = 0; k < n_rank; k++)
    if (u == 0 || rank[u - 1] != rank[k]) rank[u++] = rank[k];
  int depth = 8;
  for (size_t m = n; m > 1; m /= 2) depth += 2;
  select_ranks(x, 0, n - 1, rank, u, depth);
  out->mean = sum / (double)n;
  out->p50 = rs__percentile_sorted(x, n, 50.0);
  out->p90 = rs__percentile_sorted(x, n, 90.0);
  out->p95 = rs__percentile_sorted(x, n, 95.0);
  out->p99 = rs__percentile_sorted(x, n, 99.0);
  out->p999 = rs__percentile_sorted(x, n, 99.9);
  out->max = x[n - 1];
  return RS_OK;
}

/* Percent of quantile i: an integer for the hundredths, then 99.9 and 100
 * written as rs__latency_summarize writes them. */
static double cdf_percent(size_t i) { return i < 100 ? (double)i : i == 100 ? 99.9 : 100.0; }

double rs__latency_cdf_quantile(size_t i) { return i < 100 ? (double)i / 100.0 : i == 100 ? 0.999 : 1.0; }

void rs__latency_cdf(double *x, size_t n, double *out)
{
  qsort(x, n, sizeof *x, cmp_double);
  for (size_t i = 0; i < RS__LATENCY_CDF_N; i++) out[i] = rs__percentile_sorted(x, n, cdf_percent(i));
}
