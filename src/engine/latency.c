/* latency.c: exact latency percentiles (numpy's linear definition). */
#include "engine/latency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The p-th percentile reads the order statistics i and j (i + 1, or n - 1)
 * and mixes them by t. */
static void percentile_place(size_t n, double p, size_t *i, size_t *j, double *t)
{
  const double h = (double)(n - 1) * (p / 100.0), lo = floor(h);
  *i = (size_t)lo, *j = *i + 1 < n ? *i + 1 : n - 1, *t = h - lo;
}

static double percentile_mix(double a, double b, double t)
{
  const double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

double rs__percentile_sorted(const double *sorted, size_t n, double p)
{
  size_t i, j;
  double t;
  percentile_place(n, p, &i, &j, &t);
  return percentile_mix(sorted[i], sorted[j], t);
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

/* Order statistics by buckets, for long columns: a non-negative double's
 * bits rise with its value, so its bits past the column's smallest, cut
 * to 2^14 buckets, put the values in order by bucket (the 80 KB of counts
 * and marks stay under malloc's mmap threshold, so they are reused, not
 * faulted in afresh for each run).  One pass counts the buckets, which
 * names the bucket of each rank; a second gathers the few values of those
 * buckets, sorted there.  Three branch-light passes where quickselect
 * partitions with a branch per value it cannot predict (1M latencies: 20
 * ms -> 3.2-3.4 ms, a stall of the thread beside the reader).  val[k] is
 * the value of rank[k] (ascending, distinct); x is not touched.  Zeros
 * (a cached answer) have bucket 0 to themselves, so that the range cut
 * into buckets is that of the positive values.  0 when it does not apply: a -0.0 (its bits do not
 * order), values bunched in a few buckets (quantised latencies: more than
 * 1/8 of them to sort), or no memory; the caller then selects in place. */
enum { SELECT_BUCKET_BITS = 14, SELECT_BUCKETS = 1 << SELECT_BUCKET_BITS, SELECT_BY_BUCKETS_MIN = 1 << 14 };

static inline uint64_t bits_of(double v)
{
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

static inline size_t bucket_of(uint64_t k, uint64_t lo, unsigned shift)
{
  return (size_t)(k != 0) * (1 + (size_t)((k - lo) >> shift));
}

static int select_by_buckets(const double *x, size_t n, const size_t *rank, size_t n_rank, double *val)
{
  uint64_t lo = UINT64_MAX, hi = 0, any = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t k = bits_of(x[i]);
    any |= k;
    lo = k && k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  if (any >> 63) return 0;
  if (hi == 0) lo = 0; /* all zeros */
  unsigned shift = 0;
  while (((hi - lo) >> shift) >= SELECT_BUCKETS - 1) shift++;
  uint32_t *count = calloc(SELECT_BUCKETS, sizeof *count);
  uint8_t *slot = calloc(SELECT_BUCKETS, 1); /* 1 + index among the buckets wanted, or 0 */
  double *buf = NULL;
  int ok = 0;
  if (!count || !slot) goto done;
  for (size_t i = 0; i < n; i++) count[bucket_of(bits_of(x[i]), lo, shift)]++;
  /* the buckets of the ranks (at most n_rank of them, in order) */
  size_t first[2 * 8], size[2 * 8], at[2 * 8], n_want = 0, total = 0, below = 0, r = 0;
  if (n_rank > sizeof first / sizeof *first) goto done;
  for (size_t b = 0; b < SELECT_BUCKETS && r < n_rank; below += count[b], b++) {
    if (rank[r] >= below + count[b]) continue;
    slot[b] = (uint8_t)(n_want + 1);
    first[n_want] = below, size[n_want] = count[b], at[n_want] = total;
    total += count[b], n_want++;
    while (r < n_rank && rank[r] < below + count[b]) r++;
  }
  if (total > n / 8 + 64 || !(buf = malloc(total * sizeof *buf))) goto done;
  size_t fill[2 * 8] = {0};
  for (size_t i = 0; i < n; i++) {
    const unsigned w = slot[bucket_of(bits_of(x[i]), lo, shift)];
    if (w) buf[at[w - 1] + fill[w - 1]++] = x[i];
  }
  for (size_t w = 0; w < n_want; w++) qsort(buf + at[w], size[w], sizeof *buf, cmp_double);
  for (size_t k = 0, w = 0; k < n_rank; k++) {
    while (rank[k] >= first[w] + size[w]) w++;
    val[k] = buf[at[w] + (rank[k] - first[w])];
  }
  ok = 1;
done:
  free(count);
  free(slot);
  free(buf);
  return ok;
}

/* The value of order statistic i, one of rank[0..n_rank). */
static double value_of_rank(const size_t *rank, const double *val, size_t n_rank, size_t i)
{
  size_t k = 0;
  while (k + 1 < n_rank && rank[k] != i) k++;
  return val[k];
}

static double percentile_of(const size_t *rank, const double *val, size_t n_rank, size_t n, double p)
{
  size_t i, j;
  double t;
  percentile_place(n, p, &i, &j, &t);
  return percentile_mix(value_of_rank(rank, val, n_rank, i), value_of_rank(rank, val, n_rank, j), t);
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
    double t;
    percentile_place(n, pct[k], &rank[n_rank], &rank[n_rank + 1], &t);
    n_rank += 2;
  }
  qsort(rank, n_rank, sizeof *rank, cmp_size);
  size_t u = 0;
  for (size_t k = 0; k < n_rank; k++)
    if (u == 0 || rank[u - 1] != rank[k]) rank[u++] = rank[k];
  double val[2 * N_PCT];
  if (n < SELECT_BY_BUCKETS_MIN || !select_by_buckets(x, n, rank, u, val)) {
    int depth = 8;
    for (size_t m = n; m > 1; m /= 2) depth += 2;
    select_ranks(x, 0, n - 1, rank, u, depth);
    for (size_t k = 0; k < u; k++) val[k] = x[rank[k]];
  }
  out->mean = sum / (double)n;
  out->p50 = percentile_of(rank, val, u, n, 50.0);
  out->p90 = percentile_of(rank, val, u, n, 90.0);
  out->p95 = percentile_of(rank, val, u, n, 95.0);
  out->p99 = percentile_of(rank, val, u, n, 99.0);
  out->p999 = percentile_of(rank, val, u, n, 99.9);
  out->max = value_of_rank(rank, val, u, n - 1);
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
