/* latency.c: exact latency percentiles (numpy's linear definition). */
#include "latency.h"

#include <math.h>
#include <stdlib.h>

double rs__percentile_sorted(const double *sorted, size_t n, double p)
{
  const double h = (double)(n - 1) * (p / 100.0);
  double lo = floor(h);
  size_t i = (size_t)lo, j = i + 1 < n ? i + 1 : n - 1;
  const double t = h - lo, a = sorted[i], b = sorted[j], d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

static int cmp_double(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
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
  qsort(x, n, sizeof *x, cmp_double);
  out->mean = sum / (double)n;
  out->p50 = rs__percentile_sorted(x, n, 50.0);
  out->p90 = rs__percentile_sorted(x, n, 90.0);
  out->p95 = rs__percentile_sorted(x, n, 95.0);
  out->p99 = rs__percentile_sorted(x, n, 99.0);
  out->p999 = rs__percentile_sorted(x, n, 99.9);
  out->max = x[n - 1];
  return RS_OK;
}
