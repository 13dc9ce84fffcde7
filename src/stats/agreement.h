/* agreement.h: agreement between two raters and between two rankings of
 * systems (internal).
 *
 * The building blocks of `ragsweep judge`'s report: how far an LLM's labels
 * agree with human labels (Cohen's kappa, weighted kappa, the confusion
 * table), and whether two sets of labels rank the systems the same way
 * (Kendall's tau-b over the systems' scores); and, for `ragsweep rag`'s
 * several judges, Krippendorff's alpha over interval scores.
 *
 * Every function here is pure: no global state, no I/O, no OpenMP; the
 * same inputs give the same bits on every run, and all of them may be
 * called concurrently.  The kappas allocate two arrays of n_levels counts
 * (freed before they return; NaN if that fails).
 *
 * Numerics.  Both kappas are formed from integer counts: with n items, row
 * and column totals r_i, c_j of the confusion table O and weights w_ij,
 *   kappa = 1 - sum(w O) / sum(w E),  E_ij = r_i c_j / n,
 * is evaluated as (W_E - n W_O) / W_E with W_O = sum w_ij O_ij and
 * W_E = sum w_ij r_i c_j, both integers.  Those are exact in doubles while
 * n^2 (n_levels - 1)^2 < 2^53, so the result is then the correctly rounded
 * value of the exact rational, whatever the order of the items. */
#ifndef RAGSWEEP_AGREEMENT_H
#define RAGSWEEP_AGREEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Cohen's kappa of two raters' labels a[i], b[i] over n items, labels in
 * 0..n_levels-1: (po - pe) / (1 - pe), po the observed agreement and pe the
 * agreement expected from the raters' marginals.  The same value as
 * sklearn.metrics.cohen_kappa_score(a, b) (which computes it as 1 - sum(w O)
 * / sum(w E) with w = 1 - I; the identity is exact).
 *
 * Degenerate cases: NaN when n == 0, when n_levels < 1, when a label lies
 * outside [0, n_levels), and when pe == 1 (both raters give every item one
 * and the same label, so agreement by chance is certain).  NaN for pe == 1
 * is what sklearn returns (0/0; sklearn >= 1.6 names it
 * replace_undefined_by=np.nan, its default), also when po == 1: perfect
 * agreement that chance alone explains is no evidence of skill. */
double rs__cohen_kappa(const int *a, const int *b, size_t n, int n_levels);

/* Weights for rs__weighted_kappa: w_ij = |i - j| or (i - j)^2. */
typedef enum { RS_KAPPA_LINEAR, RS_KAPPA_QUADRATIC } rs__kappa_weights;

/* Weighted kappa 1 - sum(w O) / sum(w E) over the n_levels categories
 * 0..n_levels-1, with w_ij = |i - j| (linear) or (i - j)^2 (quadratic):
 * sklearn.metrics.cohen_kappa_score(a, b, labels=range(n_levels),
 * weights="linear" / "quadratic").  Note the labels= argument: sklearn
 * without it takes only the labels that occur, which shortens the
 * distances when a middle grade is never used; here grade i is always
 * category i.  NaN in the same cases as rs__cohen_kappa (sum(w E) == 0
 * happens exactly when pe == 1), and for a weights value out of range. */
double rs__weighted_kappa(const int *a, const int *b, size_t n, int n_levels, rs__kappa_weights w);

/* Kendall's tau-b between x[0..n) and y[0..n) (e.g. the scores of n
 * systems under two sets of judgments), as scipy.stats.kendalltau's
 * default (variant "b"): (P - Q) / sqrt(n0 - n1) / sqrt(n0 - n2), P and Q
 * the concordant and discordant pairs, n0 = n (n - 1) / 2, n1 and n2 the
 * pairs tied in x and in y (a pair tied in both counts in both), clipped
 * to [-1, 1] as scipy does.  NaN when n < 2, when x or y is constant, or
 * when any value is NaN (scipy's nan_policy="propagate").  O(n^2) time, no
 * allocation; the pair counts are integers, so the order of the systems
 * does not change the bits. */
double rs__kendall_tau_b(const double *x, const double *y, size_t n);

/* Adds the confusion counts of n label pairs to conf (row-major,
 * n_levels_a rows of n_levels_b columns): conf[a[i] * n_levels_b + b[i]]
 * += 1.  The caller zeroes conf first (or accumulates over batches).  A
 * pair with a label outside its range is not counted, so that a bad label
 * can never write outside conf; callers validate labels beforehand. */
void rs__confusion(const int *a, int n_levels_a, const int *b, int n_levels_b, size_t n, uint64_t *conf);

/* Krippendorff's alpha for interval data (Krippendorff 2011, "Computing
 * Krippendorff's Alpha-Reliability"): v[u * n_coders + c] is coder c's
 * value for unit u, NaN when missing.  A unit with m_u >= 2 values is
 * pairable; n is the number of values in pairable units (stored in
 * *n_pairable when it is non-NULL).  With the sums over ordered pairs of
 * distinct values,
 *   D_o = (1/n) sum_u 1/(m_u - 1) sum_{i != j in u} (v_i - v_j)^2,
 *   D_e = 1/(n (n - 1)) sum_{i != j, all pairable values} (v_i - v_j)^2,
 *   alpha = 1 - D_o / D_e,
 * the coincidence-matrix definition written over values.  Evaluated as
 *   D_o / D_e = (n - 1)/n * sum_u [m_u SS_u / (m_u - 1)] / SS,
 * SS_u and SS the sums of squared deviations from the unit's and from the
 * overall mean (sum_{i != j} (v_i - v_j)^2 = 2 m SS): two passes, so a
 * large common offset does not cancel the digits away.  O(n_units
 * n_coders), no allocation, units and coders in index order (the same bits
 * on every run).  NaN when n < 2, when every pairable value is the same
 * (D_e == 0) and when a value is infinite.  1 for perfect agreement within
 * every unit; below 0 for systematic disagreement. */
double rs__krippendorff_alpha_interval(const double *v, size_t n_units, size_t n_coders, size_t *n_pairable);

#endif
