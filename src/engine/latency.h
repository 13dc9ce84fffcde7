/* latency.h: latency percentiles of a run (internal).
 *
 * Percentiles are exact, with numpy's default ("linear") definition: on
 * the sorted values x[0..n-1], the p-th percentile sits at h = (n-1)·p/100;
 * with i = floor(h) and t = h - i it is x[i] + (x[i+1] - x[i])·t, computed
 * as x[i+1] - (x[i+1] - x[i])·(1 - t) when t >= 0.5, as numpy does, so the
 * bits match numpy.percentile. */
#ifndef RAGSWEEP_LATENCY_H
#define RAGSWEEP_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* The histogram's upper bounds, in milliseconds: bucket i counts the
 * latencies in (bound[i-1], bound[i]] (the first from 0), and a last bucket
 * those above the last bound: RS__LATENCY_N_BOUNDS + 1 buckets.  Fixed, so
 * histograms of different runs and days add up (as Prometheus's and
 * OpenTelemetry's explicit-bucket histograms need); 1 ms to 10 s covers a
 * retriever and an LLM call. */
#define RS__LATENCY_N_BOUNDS 13
extern const double rs__latency_bounds_ms[RS__LATENCY_N_BOUNDS];

typedef struct rs__latency {
  size_t n;
  double mean, p50, p90, p95, p99, p999, max; /* seconds */
  uint64_t bucket[RS__LATENCY_N_BOUNDS + 1];  /* counts per bucket (rs__latency_histogram) */
} rs__latency;

/* The p-th percentile (0 <= p <= 100) of sorted[0..n-1], n >= 1 (only
 * the two order statistics it reads need to be in place). */
double rs__percentile_sorted(const double *sorted, size_t n, double p);

/* The quantiles of a latency CDF (eval --report's latency_cdf.csv):
 * 0, 0.01, ..., 0.99, then 0.999 and 1.  Quantile q is the percentile
 * 100·q with the definition above, and the percentile is passed as the
 * same double rs__latency_summarize uses (50.0, 95.0, 99.9), so the
 * CDF's 0.5, 0.95 and 0.999 equal p50, p95 and p999 bit for bit. */
#define RS__LATENCY_CDF_N 102
/* Quantile i (0 <= i < RS__LATENCY_CDF_N) as a fraction in [0, 1]. */
double rs__latency_cdf_quantile(size_t i);

/* Sorts x[0..n) (n >= 1) and fills out[RS__LATENCY_CDF_N] with its
 * quantiles, in x's unit. */
void rs__latency_cdf(double *x, size_t n, double *out);

/* Summarises x, reordering it in place (the order statistics the
 * percentiles need are selected, not the whole array sorted).  Every value must be finite and >= 0:
 * otherwise RS_FORMAT naming `where` and the row. */
rs_code rs__latency_summarize(double *x, size_t n, const char *where, rs__latency *out, rs_error *err);

/* Counts x[0..n) (any order) into bucket[0..RS__LATENCY_N_BOUNDS] by
 * x * to_ms (1000 for seconds, 1 for milliseconds) against
 * rs__latency_bounds_ms; bucket is overwritten. */
void rs__latency_histogram(const double *x, size_t n, double to_ms, uint64_t bucket[RS__LATENCY_N_BOUNDS + 1]);

#endif
