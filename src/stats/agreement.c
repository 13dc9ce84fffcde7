/* agreement.c: Cohen's kappa (plain and weighted), Kendall's tau-b,
 * confusion counts and Krippendorff's interval alpha (see agreement.h for
 * the contracts). */
#include "stats/agreement.h"

#include <math.h>
#include <stdlib.h>

/* The weight of a pair of categories; weights == -1 means unweighted
 * (0 on the diagonal, 1 elsewhere). */
static double weight(int i, int j, int weights)
{
  const double d = (double)(i > j ? i - j : j - i);
  switch (weights) {
  case RS_KAPPA_LINEAR: return d;
  case RS_KAPPA_QUADRATIC: return d * d;
  default: return i == j ? 0.0 : 1.0;
  }
}

/* 1 - n W_O / W_E (see agreement.h); weights as in weight(). */
static double kappa(const int *a, const int *b, size_t n, int n_levels, int weights)
{
  if (n == 0 || n_levels < 1) return NAN;
  const size_t L = (size_t)n_levels;
  uint64_t *row = calloc(2 * L, sizeof *row);
  if (!row) return NAN;
  uint64_t *col = row + L;
  double w_obs = 0.0; /* integer-valued: exact while below 2^53 */
  double result = NAN;
  for (size_t k = 0; k < n; k++) {
    if (a[k] < 0 || a[k] >= n_levels || b[k] < 0 || b[k] >= n_levels) goto done;
    row[a[k]]++;
    col[b[k]]++;
    w_obs += weight(a[k], b[k], weights);
  }
  /* W_E = sum_ij w_ij r_i c_j, in row-major order; every term and partial
   * sum is an integer, so the order would not matter while exact. */
  double w_exp = 0.0;
  for (size_t i = 0; i < L; i++) {
    if (!row[i]) continue;
    double s = 0.0;
    for (size_t j = 0; j < L; j++) s += weight((int)i, (int)j, weights) * (double)col[j];
    w_exp += (double)row[i] * s;
  }
  /* W_E == 0: every expected count off the zero-weight diagonal is 0, i.e.
   * pe == 1 (sklearn's 0/0 -> NaN). */
  if (w_exp > 0.0) result = (w_exp - (double)n * w_obs) / w_exp;
done:
  free(row);
  return result;
}

double rs__cohen_kappa(const int *a, const int *b, size_t n, int n_levels)
{
  return kappa(a, b, n, n_levels, -1);
}

double rs__weighted_kappa(const int *a, const int *b, size_t n, int n_levels, rs__kappa_weights w)
{
  if (w != RS_KAPPA_LINEAR && w != RS_KAPPA_QUADRATIC) return NAN;
  return kappa(a, b, n, n_levels, (int)w);
}

double rs__kendall_tau_b(const double *x, const double *y, size_t n)
{
  if (n < 2) return NAN;
  for (size_t i = 0; i < n; i++)
    if (isnan(x[i]) || isnan(y[i])) return NAN;
  /* Integer pair counts: P - Q, pairs tied in x, pairs tied in y. */
  int64_t s = 0;
  uint64_t tx = 0, ty = 0;
  for (size_t i = 0; i + 1 < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      const int sx = (x[i] > x[j]) - (x[i] < x[j]), sy = (y[i] > y[j]) - (y[i] < y[j]);
      s += sx * sy;
      tx += sx == 0;
      ty += sy == 0;
    }
  const uint64_t n0 = (uint64_t)n * (uint64_t)(n - 1) / 2;
  if (tx == n0 || ty == n0) return NAN; /* a constant vector: tau is 0/0 */
  /* scipy's order of operations: two square roots, two divisions. */
  double tau = (double)s / sqrt((double)(n0 - tx)) / sqrt((double)(n0 - ty));
  return tau > 1.0 ? 1.0 : tau < -1.0 ? -1.0 : tau;
}

void rs__confusion(const int *a, int n_levels_a, const int *b, int n_levels_b, size_t n, uint64_t *conf)
{
  for (size_t k = 0; k < n; k++)
    if (a[k] >= 0 && a[k] < n_levels_a && b[k] >= 0 && b[k] < n_levels_b)
      conf[(size_t)a[k] * (size_t)n_levels_b + (size_t)b[k]]++;
}

double rs__krippendorff_alpha_interval(const double *v, size_t n_units, size_t n_coders, size_t *n_pairable)
{
  /* Pass 1: how many values are pairable, and their sum. */
  size_t n = 0;
  double sum = 0.0;
  for (size_t u = 0; u < n_units; u++) {
    const double *row = v + u * n_coders;
    size_t m = 0;
    double s = 0.0;
    for (size_t c = 0; c < n_coders; c++)
      if (!isnan(row[c])) {
        m++;
        s += row[c];
      }
    if (m >= 2) {
      n += m;
      sum += s;
    }
  }
  if (n_pairable) *n_pairable = n;
  if (n < 2) return NAN;
  const double mean = sum / (double)n;
  /* Pass 2: SS about the overall mean, and sum_u m_u SS_u / (m_u - 1)
   * (each unit's own two passes: its mean, then its deviations). */
  double ss = 0.0, within = 0.0;
  for (size_t u = 0; u < n_units; u++) {
    const double *row = v + u * n_coders;
    size_t m = 0;
    double s = 0.0;
    for (size_t c = 0; c < n_coders; c++)
      if (!isnan(row[c])) {
        m++;
        s += row[c];
      }
    if (m < 2) continue;
    const double unit_mean = s / (double)m;
    double ss_u = 0.0;
    for (size_t c = 0; c < n_coders; c++)
      if (!isnan(row[c])) {
        const double d = row[c] - mean, e = row[c] - unit_mean;
        ss += d * d;
        ss_u += e * e;
      }
    within += (double)m * ss_u / (double)(m - 1);
  }
  /* ss == 0: one value throughout, no variation to agree on (0/0).  An
   * infinite value makes ss infinite or NaN: NaN either way. */
  if (!(ss > 0.0) || !isfinite(ss)) return NAN;
  return 1.0 - ((double)(n - 1) / (double)n) * within / ss;
}
