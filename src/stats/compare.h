/* compare.h: paired comparisons of configurations on one measure (internal).
 *
 * Input: the per-query values of every run on one measure over the same n
 * queries.  Each comparison (run vs baseline) reports the two means, their
 * difference, a paired t-test, a randomization test, a bootstrap interval
 * of the mean difference and the effect size (Cohen's d_z); the p-values
 * of all comparisons of one call are one family for the correction. */
#ifndef RAGSWEEP_COMPARE_H
#define RAGSWEEP_COMPARE_H

#include <stddef.h>

#include "stats/resample.h"
#include "stats/stats.h"

typedef struct rs__compare_cfg {
  rs__adjust adjust;
  rs__resample_cfg resample; /* seed, permutations, replicates, level, threads */
} rs__compare_cfg;

typedef struct rs__comparison {
  size_t run, base; /* set by the caller: indexes into values */
  size_t n;         /* paired queries */
  double mean, base_mean, diff; /* diff = mean - base_mean */
  double ci_low, ci_high;       /* bootstrap interval of the mean difference */
  double effect;                /* Cohen's d_z: mean difference / sd of the differences */
  double t, p_ttest, p_perm;
  double p_ttest_adj, p_perm_adj;
  int perm_exact; /* p_perm enumerates all 2^n sign patterns (when 2^n <= permutations) */
} rs__comparison;

/* Fills cmp[0..n_cmp) (whose run and base are set) from values[r][0..n). */
rs_code rs__compare(const rs__compare_cfg *cfg, const double *const *values, size_t n, rs__comparison *cmp,
                    size_t n_cmp, rs_error *err);

#endif
