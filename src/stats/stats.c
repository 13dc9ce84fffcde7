/* stats.c: Student's t tail, paired t-test, Holm / Benjamini-Hochberg
 * adjustment and type-7 quantiles (see stats.h for the contracts). */
#define _DEFAULT_SOURCE /* lgamma_r: plain lgamma writes the global signgam */
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Regularized incomplete beta function I_x(a, b).
 * ------------------------------------------------------------------------- */

/* log Gamma(z) for z > 0, without touching signgam (so it is thread-safe). */
static double lgam(double z)
{
  int sign;
  return lgamma_r(z, &sign);
}

/* Remainder of Stirling's series, delta(z) = lgamma(z) - [(z - 1/2) log z -
 * z + log(2 pi)/2] = sum_k B_2k / (2k (2k-1) z^(2k-1)), for z >= 10.  With
 * eight terms the first omitted one is below 4e-17 * delta(z). */
static double stirling_delta(double z)
{
  const double w = 1.0 / (z * z);
  double s = -3617.0 / 122400.0;
  s = s * w + 1.0 / 156.0;
  s = s * w - 691.0 / 360360.0;
  s = s * w + 1.0 / 1188.0;
  s = s * w - 1.0 / 1680.0;
  s = s * w + 1.0 / 1260.0;
  s = s * w - 1.0 / 360.0;
  s = s * w + 1.0 / 12.0;
  return s / z;
}

#define BIG_ARG 10.0 /* from here on, Stirling's series replaces lgamma */

/* log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), a, b > 0.
 *
 * When the larger argument is big, the lgamma values are large and nearly
 * cancel (lgamma(5e5) is 6e6: its last bit is 1e-9, and the difference
 * would carry that absolute error into every p-value).  Stirling's series
 * lets the large parts cancel analytically:
 *   lgamma(big + small) - lgamma(big)
 *     = (big - 1/2) log1p(small/big) + small log(big + small) - small
 *       + delta(big + small) - delta(big),
 * where every term is computed to a few ulps of its own size.  (The
 * identity holds for any small; it is accurate when small is small, as the
 * 1/2 of Student's t is.) */
static double log_beta(double a, double b)
{
  const double big = a > b ? a : b, small = a > b ? b : a;
  if (big < BIG_ARG) return lgam(a) + lgam(b) - lgam(a + b);
  const double sum = big + small;
  const double diff = (big - 0.5) * log1p(small / big) + small * log(sum) - small +
                      (stirling_delta(sum) - stirling_delta(big));
  return lgam(small) - diff;
}

#define CF_EPS 1e-16       /* relative size of the last factor at convergence */
#define CF_TINY 1e-300     /* Lentz's guard against a zero denominator */
#define CF_MAX_ITER 100000 /* a guard: for b = 1/2, df in [1e-2, 1e20], at most ~100 terms */

/* The continued fraction of I_x(a, b) (DLMF 8.17.22):
 *   I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / K,  K = 1 + d1/(1 + d2/(1 + ...)),
 *   d_(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),   m >= 0,
 *   d_(2m)   = m (b - m) x / ((a + 2m - 1)(a + 2m)),             m >= 1.
 * It converges fast for x <= (a + 1)/(a + b + 2). */
static double cf_odd(double a, double b, double x, double m)
{
  return -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
}

static double cf_even(double a, double b, double x, double m)
{
  return m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
}

/* 1 + d_(2m+1), from y = 1 - x without cancellation (expand the product):
 *   [a (1 - b + 2m) + m (3m + 2 - b) + (a + m)(a + b + m) y] / ((a + 2m)(a + 2m + 1)),
 * a sum of non-negative terms when b <= 1. */
static double cf_odd_plus1(double a, double b, double y, double m)
{
  return (a * (1.0 - b + 2.0 * m) + m * (3.0 * m + 2.0 - b) + (a + m) * (a + b + m) * y) /
         ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
}

/* One step of the modified Lentz algorithm for f = b0 + a1/(b1 + a2/(b2 + ...))
 * (f_0 = b0, C_0 = f_0, D_0 = 0; then D = 1/(b + a D), C = b + a/C,
 * f *= C D); returns the factor C D, which tends to 1. */
static double lentz_step(double an, double bn, double *c, double *d, double *f)
{
  *d = bn + an * *d;
  if (fabs(*d) < CF_TINY) *d = CF_TINY;
  *c = bn + an / *c;
  if (fabs(*c) < CF_TINY) *c = CF_TINY;
  *d = 1.0 / *d;
  const double delta = *c * *d;
  *f *= delta;
  return delta;
}

/* log K for x <= 1/2: K evaluated as it stands. */
static double log_cf_plain(double a, double b, double x)
{
  double f = 1.0, c = 1.0, d = 0.0;
  for (int m = 0; m < CF_MAX_ITER; m++) {
    if (fabs(lentz_step(cf_odd(a, b, x, m), 1.0, &c, &d, &f) - 1.0) < CF_EPS) break;
    if (fabs(lentz_step(cf_even(a, b, x, m + 1.0), 1.0, &c, &d, &f) - 1.0) < CF_EPS) break;
  }
  return log(f);
}

/* log K for x > 1/2 and b <= 1.  There d_(2m+1) is close to -1 when a is
 * large (x = 1 - 4e-6 for df = 1e6, t = 2), and every 1 + d_(2m+1) formed
 * in floating point loses log10(a) digits: K itself is O(1/a).  So use the
 * even part of the fraction instead (its approximants are the even ones of
 * K, so it has the same value),
 *   K = 1 + d1/(1 + d2 - d2 d3/(1 + d3 + d4 - d4 d5/(1 + d5 + d6 - ...))),
 * where each 1 + d_(2m+1) is cf_odd_plus1 of y.  With
 *   Q = beta_2 + alpha_3/(beta_3 + alpha_4/(beta_4 + ...)),
 *   beta_j = (1 + d_(2j-1)) + d_(2j),   alpha_j = -d_(2j-2) d_(2j-1),
 * K = (1 + d1 + d2 + alpha_2/Q) / (1 + d2 + alpha_2/Q), where 1 + d1 is
 * again cf_odd_plus1: no step cancels more than a bounded factor. */
static double log_cf_even(double a, double b, double x, double y)
{
  double f = cf_odd_plus1(a, b, y, 1.0) + cf_even(a, b, x, 2.0); /* beta_2 */
  if (fabs(f) < CF_TINY) f = CF_TINY;
  double c = f, d = 0.0;
  for (int j = 3; j < CF_MAX_ITER; j++) {
    const double m = j - 1.0;
    const double alpha = -cf_even(a, b, x, m) * cf_odd(a, b, x, m);
    const double beta = cf_odd_plus1(a, b, y, m) + cf_even(a, b, x, j);
    if (fabs(lentz_step(alpha, beta, &c, &d, &f) - 1.0) < CF_EPS) break;
  }
  const double d2 = cf_even(a, b, x, 1.0);
  const double tail = -d2 * cf_odd(a, b, x, 1.0) / f; /* alpha_2 / Q */
  return log(cf_odd_plus1(a, b, y, 0.0) + d2 + tail) - log(1.0 + d2 + tail);
}

/* I_x(a, b) for b <= 1 or a <= 1 (Student's t calls it with one of them
 * 1/2), with y = 1 - x, lx = log x and ly = log y all supplied by the
 * caller, who can compute them without cancellation (1 - x itself loses
 * every digit of a small y).  The prefactor x^a y^b / B(a, b) is formed in
 * logarithms and exponentiated once with the continued fraction, so the
 * result underflows only when the true value does.  Past the mean
 * (x > (a+1)/(a+b+2)) the continued fraction of the complement
 * I_y(b, a) = 1 - I_x(a, b) is the one that converges; there p > 0.08
 * for b = 1/2 (t^2 < 3 or so), so the subtraction loses at most a digit. */
static double ibeta(double a, double b, double x, double y, double lx, double ly)
{
  const double log_pre = a * lx + b * ly - log_beta(a, b);
  if (x <= (a + 1.0) / (a + b + 2.0)) {
    const double lk = x > 0.5 ? log_cf_even(a, b, x, y) : log_cf_plain(a, b, x);
    return exp(log_pre - log(a) - lk);
  }
  const double lk = y > 0.5 ? log_cf_even(b, a, y, x) : log_cf_plain(b, a, y);
  return 1.0 - exp(log_pre - log(b) - lk);
}

/* ---------------------------------------------------------------------------
 * Student's t.
 * ------------------------------------------------------------------------- */

double rs__student_t_p2(double t, double df)
{
  if (isnan(t) || !(df > 0)) return NAN; /* also df NaN */
  const double at = fabs(t);
  if (isinf(at)) return 0.0;
  if (at == 0) return 1.0;
  /* The normal limit.  Its relative distance from the t tail is about
   * (1 + t^2)^2 / (4 df): below 5e-15 past df = 1e20 for every p >= 1e-300
   * (|t| <= 37).  Up to there the continued fraction stays accurate (and
   * fast: about 100 terms at most); past df ~ 1e154 its terms would
   * overflow. */
  if (df > 1e20) return erfc(at * 0.70710678118654752440084436210484903); /* |t| / sqrt(2) */

  /* P(|T| >= |t|) = I_x(df/2, 1/2) with x = df/(df + t^2) = 1/(1 + s),
   * s = t^2/df, and y = 1 - x = s/(1 + s).  Unlike at*at, (at/df)*at only
   * overflows or underflows when s itself is out of range. */
  const double a = 0.5 * df, b = 0.5;
  const double s = (at / df) * at;
  double x, y, lx, ly;
  if (s == 0) return 1.0; /* 1 - p = O(|t|), |t| = sqrt(s df) < 1e-150: p rounds to 1 */
  if (isinf(s)) {
    /* x < 1e-308: log x = log df - 2 log|t| - log1p(df/t^2), the last term
     * below one ulp; y = 1 to within x. */
    lx = log(df) - 2.0 * log(at);
    x = exp(lx);
    y = 1.0;
    ly = 0.0;
  } else {
    lx = -log1p(s);
    x = 1.0 / (1.0 + s);
    y = s / (1.0 + s);
    ly = s < 1.0 ? log(s) - log1p(s) : -log1p(1.0 / s);
  }
  return ibeta(a, b, x, y, lx, ly);
}

/* ---------------------------------------------------------------------------
 * Paired t-test.
 * ------------------------------------------------------------------------- */

/* Neumaier's compensated summation: *s + *c carries the sum of every v added
 * with an error independent of n (to first order), in a fixed order. */
static inline void sum_add(double *s, double *c, double v)
{
  const double t = *s + v;
  if (fabs(*s) >= fabs(v))
    *c += (*s - t) + v;
  else
    *c += (v - t) + *s;
  *s = t;
}

void rs__ttest_paired(const double *d, size_t n, rs__ttest *out)
{
  rs__ttest r = {NAN, NAN, NAN, NAN, NAN, NAN};
  if (n == 0) {
    *out = r;
    return;
  }
  r.df = (double)(n - 1);
  if (n == 1) {
    r.mean = d[0];
    *out = r;
    return;
  }

  /* Pass 1: the mean, and whether every d[i] is equal (then the mean is
   * d[0] exactly and sd exactly 0, which a rounded sum / n need not give:
   * three times 0.1 divided by 3 is not 0.1). */
  double s = 0, c = 0;
  int constant = 1;
  for (size_t i = 0; i < n; i++) {
    sum_add(&s, &c, d[i]);
    constant &= d[i] == d[0];
  }
  const double nd = (double)n;
  double var;
  if (constant) {
    r.mean = d[0];
    var = 0;
  } else {
    r.mean = (s + c) / nd;
    /* Pass 2, the corrected two-pass formula (Chan, Golub & LeVeque 1983):
     * sum (d - mean)^2 - (sum (d - mean))^2 / n; the second term removes the
     * first-order effect of the rounding of the mean. */
    double ss = 0, css = 0, sd = 0, csd = 0;
    for (size_t i = 0; i < n; i++) {
      const double dev = d[i] - r.mean;
      sum_add(&ss, &css, dev * dev);
      sum_add(&sd, &csd, dev);
    }
    const double sdev = sd + csd;
    double sq = (ss + css) - sdev * sdev / nd;
    if (sq < 0) sq = 0;
    var = sq / r.df;
  }
  r.sd = sqrt(var);

  if (r.sd == 0) {
    if (r.mean == 0) {
      r.t = 0;
      r.p = 1;
      r.effect = 0;
    } else {
      r.t = r.effect = copysign(INFINITY, r.mean);
      r.p = 0;
    }
  } else {
    r.effect = r.mean / r.sd;
    r.t = r.mean / sqrt(var / nd); /* scipy's order of operations */
    r.p = rs__student_t_p2(r.t, r.df);
  }
  *out = r;
}

/* ---------------------------------------------------------------------------
 * Multiple comparisons.
 * ------------------------------------------------------------------------- */

static int ascii_lower(int ch)
{
  return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static int name_eq(const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b)) return 0;
  return *a == *b;
}

int rs__adjust_parse(const char *name, rs__adjust *out)
{
  static const struct {
    const char *name;
    rs__adjust how;
  } names[] = {
      {"holm", RS_ADJ_HOLM},  {"bh", RS_ADJ_BH},     {"fdr_bh", RS_ADJ_BH},
      {"benjamini-hochberg", RS_ADJ_BH}, {"fdr", RS_ADJ_BH}, {"none", RS_ADJ_NONE},
  };
  if (!name) return -1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (name_eq(name, names[i].name)) {
      *out = names[i].how;
      return 0;
    }
  }
  return -1;
}

const char *rs__adjust_name(rs__adjust a)
{
  switch (a) {
  case RS_ADJ_HOLM: return "holm";
  case RS_ADJ_BH: return "bh";
  case RS_ADJ_NONE: return "none";
  }
  return "?";
}

typedef struct {
  double p;
  size_t i;
} pv;

/* Ascending p, ties by index: a total order, so qsort's result is unique
 * (and the sort therefore stable) whatever its algorithm. */
static int cmp_pv(const void *x, const void *y)
{
  const pv *a = x, *b = y;
  if (a->p != b->p) return a->p < b->p ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

rs_code rs__p_adjust(const double *p, size_t m, rs__adjust how, double *out, rs_error *err)
{
  if (how != RS_ADJ_HOLM && how != RS_ADJ_BH && how != RS_ADJ_NONE)
    return rs__fail(err, RS_USAGE, "p-value adjustment: unknown method %d", (int)how);
  if (how == RS_ADJ_NONE) {
    if (out != p && m) memcpy(out, p, m * sizeof *out);
    return RS_OK;
  }

  size_t k = 0;
  for (size_t i = 0; i < m; i++) k += !isnan(p[i]);
  pv *v = rs__malloc(rs__mul(k, sizeof *v));
  if (!v) return rs__fail(err, RS_NOMEM, "p-value adjustment: cannot allocate %zu entries", k);
  for (size_t i = 0, j = 0; i < m; i++)
    if (!isnan(p[i])) v[j++] = (pv){p[i], i};
  qsort(v, k, sizeof *v, cmp_pv);

  /* R's p.adjust, with i = j + 1 the 1-based rank: Holm multiplies by
   * (k - i + 1) (an integer, exact) and takes the running max from the
   * smallest; BH multiplies by (k / i), rounded first as R does, and takes
   * the running min from the largest.  The cap at 1 commutes with both. */
  const double kd = (double)k;
  if (how == RS_ADJ_HOLM) {
    double run = 0;
    for (size_t j = 0; j < k; j++) {
      const double adj = (double)(k - j) * v[j].p;
      if (adj > run) run = adj;
      v[j].p = run < 1 ? run : 1;
    }
  } else {
    double run = INFINITY;
    for (size_t j = k; j-- > 0;) {
      const double adj = (kd / (double)(j + 1)) * v[j].p;
      if (adj < run) run = adj;
      v[j].p = run < 1 ? run : 1;
    }
  }

  /* Every p was read into v above, so writing out (possibly p) is safe. */
  for (size_t i = 0; i < m; i++)
    if (isnan(p[i])) out[i] = p[i];
  for (size_t j = 0; j < k; j++) out[v[j].i] = v[j].p;
  free(v);
  return RS_OK;
}

/* ---------------------------------------------------------------------------
 * Quantiles.
 * ------------------------------------------------------------------------- */

double rs__quantile_sorted(const double *x, size_t n, double q)
{
  if (n == 0 || !(q >= 0 && q <= 1)) return NAN;
  const double h = (double)(n - 1) * q;
  const double lo = floor(h);
  const size_t i = (size_t)lo;
  if (i >= n - 1) return x[n - 1];
  /* numpy's _lerp: from the nearer end, so t = 0 and t = 1 give the order
   * statistics exactly. */
  const double t = h - lo, a = x[i], b = x[i + 1], diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}
