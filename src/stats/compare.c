/* compare.c: the statistics of paired comparisons, one family per call. */
#include "stats/compare.h"

#include <math.h>
#include <stdlib.h>

static double mean_of(const double *v, size_t n)
{
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return n ? s / (double)n : NAN;
}

rs_code rs__compare(const rs__compare_cfg *cfg, const double *const *values, size_t n, rs__comparison *cmp,
                    size_t n_cmp, rs_error *err)
{
  rs_code rc = RS_OK;
  double *diffs = rs__malloc(rs__mul(n_cmp, rs__mul(n, sizeof *diffs)));
  const double **d = rs__calloc(n_cmp, sizeof *d);
  double *p = rs__calloc(3 * n_cmp, sizeof *p), *lo = p + n_cmp, *hi = lo + n_cmp;
  if (!diffs || !d || !p) {
    rc = rs__fail(err, RS_NOMEM, "out of memory (%zu comparisons of %zu queries)", n_cmp, n);
    goto done;
  }
  for (size_t c = 0; c < n_cmp; c++) {
    rs__comparison *x = &cmp[c];
    const double *a = values[x->run], *b = values[x->base];
    double *dc = diffs + c * n;
    for (size_t i = 0; i < n; i++) dc[i] = a[i] - b[i];
    d[c] = dc;
    x->n = n;
    x->mean = mean_of(a, n);
    x->base_mean = mean_of(b, n);
    x->diff = x->mean - x->base_mean;
    rs__ttest t;
    rs__ttest_paired(dc, n, &t);
    x->t = t.t, x->p_ttest = t.p, x->effect = t.effect;
  }
  if ((rc = rs__resample(&cfg->resample, d, n_cmp, n, p, lo, hi, err))) goto done;
  /* Few queries: every sign pattern fits in the permutation budget, so the
   * exact p-value costs no more than its estimate. */
  const int exact = n <= 30 && cfg->resample.n_perm && ((size_t)1 << n) <= cfg->resample.n_perm;
  for (size_t c = 0; c < n_cmp; c++) {
    cmp[c].p_perm = exact ? rs__perm_p_exact(d[c], n) : p[c];
    cmp[c].perm_exact = exact;
    cmp[c].ci_low = lo[c], cmp[c].ci_high = hi[c];
    p[c] = cmp[c].p_ttest;
    lo[c] = cmp[c].p_perm;
  }
  if ((rc = rs__p_adjust(p, n_cmp, cfg->adjust, hi, err))) goto done;
  for (size_t c = 0; c < n_cmp; c++) cmp[c].p_ttest_adj = hi[c];
  if ((rc = rs__p_adjust(lo, n_cmp, cfg->adjust, hi, err))) goto done;
  for (size_t c = 0; c < n_cmp; c++) cmp[c].p_perm_adj = hi[c];
done:
  free(p);
  free(d);
  free(diffs);
  return rc;
}
