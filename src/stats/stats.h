/* stats.h: paired significance tests between retrieval configurations
 * (internal).
 *
 * The building blocks of `ragsweep compare`: the two-sided tail of
 * Student's t, the paired t-test on per-query differences, corrections of a
 * family of p-values for multiple comparisons (Holm, Benjamini-Hochberg)
 * and the type-7 quantile of a sorted sample.
 *
 * Every function here is pure: no global state, no I/O, no OpenMP, and the
 * same inputs give the same bits on every run and at every thread count.
 * All of them may be called concurrently from several threads.  Only
 * rs__p_adjust allocates (a buffer of m index/value pairs, freed before it
 * returns).
 *
 * Accuracy: rs__student_t_p2 agrees with a 60-digit evaluation within a
 * relative error of 3e-14 for p >= 1e-20 and 2e-13 for p >= 1e-300 (the
 * error grows with |log p|), for real df from 1e-2 to 1e12, and with scipy
 * 1.10's t.sf within 1e-13 (see tests/test_stats.c and
 * tests/indep/stats_reference.py). */
#ifndef RAGSWEEP_STATS_H
#define RAGSWEEP_STATS_H

#include <stddef.h>

#include "internal.h"

/* Two-sided tail of Student's t with df degrees of freedom: P(|T| >= |t|).
 *
 * df > 0, real values allowed.  Past df = 1e20 (+inf included) it is the
 * normal tail erfc(|t|/sqrt(2)), which is then within 5e-15 of the t tail.
 * t = +-inf -> 0; t = 0 -> 1; t NaN, df NaN or df <= 0 -> NaN.  The result underflows to 0 (or a subnormal) only when the
 * true value does: it is computed in logarithms and exponentiated once. */
double rs__student_t_p2(double t, double df);

/* Paired two-sided t-test on differences d[0..n) (d[i] = a[i] - b[i], the
 * per-query values of two configurations on the same query i). */
typedef struct rs__ttest {
  double mean;   /* mean of d */
  double sd;     /* sample standard deviation of d (n-1 denominator) */
  double t;      /* mean / (sd / sqrt(n)) */
  double df;     /* n - 1 */
  double p;      /* two-sided p-value */
  double effect; /* Cohen's d_z = mean / sd (standardised mean difference of the pairs) */
} rs__ttest;

/* Fills *out (never NULL; d may be NULL when n == 0).
 *
 * Edge cases:
 * - n == 0: every field is NaN.
 * - n == 1: mean = d[0], df = 0; sd, t, p and effect are NaN.
 * - sd == 0 (every d[i] equal; mean is then exactly d[0]):
 *   mean == 0 -> t = 0, p = 1, effect = 0 (identical systems: no evidence
 *   of a difference); mean != 0 -> t = effect = +-inf (the sign of mean),
 *   p = 0.
 * - A NaN or infinite d[i] propagates NaN into mean/sd/t/p/effect (the
 *   caller is expected to pass finite values).
 *
 * Numerics: the mean is a compensated (Neumaier) sum divided by n; the sum
 * of squared deviations is the corrected two-pass formula
 * sum (d-mean)^2 - (sum (d-mean))^2 / n, also compensated.  One fixed
 * order (index order), so the result is deterministic; the relative error
 * of mean and sd is a few ulps for any n up to 1e6 and beyond. */
void rs__ttest_paired(const double *d, size_t n, rs__ttest *out);

/* Corrections for multiple comparisons over one family of m p-values. */
typedef enum { RS_ADJ_HOLM, RS_ADJ_BH, RS_ADJ_NONE } rs__adjust;

/* Parses a correction name, ASCII case-insensitively: "holm"; "bh" (also
 * "fdr_bh", "benjamini-hochberg" and R's "fdr"); "none".  Returns 0 and sets
 * *out on success, -1 (and leaves *out alone) for an unknown name or NULL. */
int rs__adjust_parse(const char *name, rs__adjust *out);

/* "holm", "bh" or "none" (static strings); "?" for a value out of range. */
const char *rs__adjust_name(rs__adjust a);

/* Adjusted p-values out[0..m) of p[0..m) (out may equal p; the arrays must
 * not otherwise overlap).  As R's p.adjust:
 * - Holm-Bonferroni: with p sorted ascending, p_(1) <= ... <= p_(k),
 *   adj_(i) = min(1, max_{j <= i} (k - j + 1) * p_(j)) (step-down).
 * - Benjamini-Hochberg: adj_(i) = min(1, min_{j >= i} (k / j) * p_(j))
 *   (step-up).
 * - None: out is a copy of p.
 * NaN p-values are left NaN and excluded from the family: k is the number
 * of non-NaN values.  Ties are sorted stably by index (tied p-values get
 * equal adjusted values either way).  p-values are assumed to lie in [0, 1].
 * Returns RS_OK, RS_USAGE for an unknown `how`, or RS_NOMEM if the index
 * buffer cannot be allocated; out is written only on success. */
rs_code rs__p_adjust(const double *p, size_t m, rs__adjust how, double *out, rs_error *err);

/* Quantile q in [0,1] of sorted (ascending) x[0..n) by linear interpolation
 * between order statistics (Hyndman-Fan type 7, the default of R's quantile
 * and numpy.quantile(method="linear")): with h = (n-1) q and i = floor(h),
 * x[i] + (h - i) (x[i+1] - x[i]), evaluated in numpy's form so the bits
 * match numpy.  n >= 1; returns NaN when n == 0 or q is NaN or outside
 * [0, 1]. */
double rs__quantile_sorted(const double *x, size_t n, double q);

#endif
