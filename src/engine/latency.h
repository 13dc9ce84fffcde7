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

#include "internal.h"

typedef struct rs__latency {
  size_t n;
  double mean, p50, p90, p95, p99, p999, max; /* seconds */
} rs__latency;

/* The p-th percentile (0 <= p <= 100) of sorted[0..n-1], n >= 1 (only
 * the two order statistics it reads need to be in place). */
double rs__percentile_sorted(const double *sorted, size_t n, double p);

/* Summarises x, reordering it in place (the order statistics the
 * percentiles need are selected, not the whole array sorted).  Every value must be finite and >= 0:
 * otherwise RS_FORMAT naming `where` and the row. */
rs_code rs__latency_summarize(double *x, size_t n, const char *where, rs__latency *out, rs_error *err);

#endif
