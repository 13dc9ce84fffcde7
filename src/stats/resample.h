/* resample.h: paired randomization tests and bootstrap intervals (internal).
 *
 * Both work on the per-query differences d[c][0..n) of n_cmp comparisons
 * (d = run - baseline) and share one design:
 *
 *   - Randomness is a counter-based generator (Philox4x32-10, Salmon et al.
 *     2011): the bits for permutation p of query block b are a pure
 *     function of (seed, p, b), and the draws of bootstrap replicate r are
 *     a pure function of (seed, r, counter).  No state is carried from one
 *     permutation or replicate to the next, so the work splits into blocks
 *     that any thread may take, and every figure is the same at any thread
 *     count.  The streams do not depend on the comparison, so all runs
 *     compared with one baseline see the same sign flips and resamples
 *     (common random numbers), and a comparison's p-value does not depend
 *     on which other runs are in the invocation.
 *   - Every sum is taken in a fixed order.
 *
 * Randomization test (Fisher; Smucker, Allan and Carterette 2007): under
 * the null hypothesis the sign of each query's difference is exchangeable.
 * Statistic: |sum_i s_i d_i|; the p-value counts the permutations at least
 * as extreme as the observed one, plus the observed one itself:
 * (count + 1) / (N + 1), which is never 0 and is a valid p-value.  Each
 * permutation is computed from 4-query sign tables (16 partial sums per
 * group of 4 queries, so one lookup adds 4 signed values).
 *
 * Bootstrap: the percentile interval of the mean difference over R
 * resamples of the n queries with replacement (indices uniform by
 * Lemire's multiply-and-reject), quantiles by linear interpolation. */
#ifndef RAGSWEEP_RESAMPLE_H
#define RAGSWEEP_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Philox4x32-10: out = the 128-bit block for counter ctr under key. */
void rs__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

typedef struct rs__resample_cfg {
  uint64_t seed;
  size_t n_perm; /* permutations (0: no randomization test) */
  size_t n_boot; /* bootstrap replicates (0: no interval) */
  double level;  /* interval level, e.g. 0.95 */
  int threads;   /* 0: all cores */
} rs__resample_cfg;

/* For every comparison c: p_perm[c] (NaN when n_perm == 0 or n == 0) and
 * the interval [ci_low[c], ci_high[c]] (NaN when n_boot == 0 or n == 0).
 * n < 2^32.  Allocates its scratch up front. */
rs_code rs__resample(const rs__resample_cfg *cfg, const double *const *d, size_t n_cmp, size_t n, double *p_perm,
                     double *ci_low, double *ci_high, rs_error *err);

/* The exact two-sided randomization p-value over all 2^n sign patterns
 * (the fraction at least as extreme as the observed one); n <= 30. */
double rs__perm_p_exact(const double *d, size_t n);

#endif
