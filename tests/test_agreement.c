/* test_agreement.c: agreement statistics for `ragsweep judge`
 * (src/stats/agreement.h): Cohen's kappa, weighted kappa, Kendall's tau-b,
 * confusion counts.
 *
 * Two kinds of expectations:
 * - hand-worked cases, with the arithmetic in the comments;
 * - tables computed by tests/indep/agreement_reference.py, an independent
 *   implementation from the definitions (exact rationals for the kappas,
 *   pair enumeration for tau-b), because neither scikit-learn nor scipy is
 *   installed here.  The script prints the initializers below verbatim;
 *   regenerate with /usr/bin/python3 tests/indep/agreement_reference.py
 *   (with sklearn and scipy importable it also cross-checks itself against
 *   cohen_kappa_score and kendalltau and prints the largest difference).
 *
 * Tolerance.  The kappas are one division of two exact integers (see
 * agreement.h), as is the reference's rounding of an exact rational, so
 * they must match bit for bit.  tau-b repeats scipy's operations (two
 * square roots, two divisions) on integer counts, also bit for bit. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "stats/agreement.h"

/* ---------------------------------------------------------------------------
 * Hand-worked cases.
 * ------------------------------------------------------------------------- */

/* 2x2: a is the row, b the column.
 *            b=0  b=1 | r
 *     a=0     4    1  | 5
 *     a=1     2    3  | 5
 *     c       6    4  | n = 10
 * po = (4 + 3) / 10 = 0.7
 * pe = (5*6 + 5*4) / 100 = 0.5
 * kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4 exactly; as integers
 * (n*diag - S) / (n^2 - S) = (70 - 50) / (100 - 50) = 0.4. */
Test(agreement, kappa_2x2_by_hand)
{
  const int a[10] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  const int b[10] = {0, 0, 0, 0, 1, 0, 0, 1, 1, 1};
  cr_assert_eq(rs__cohen_kappa(a, b, 10, 2), 0.4);
  /* With two categories both weightings give w = 1 off the diagonal. */
  cr_assert_eq(rs__weighted_kappa(a, b, 10, 2, RS_KAPPA_LINEAR), 0.4);
  cr_assert_eq(rs__weighted_kappa(a, b, 10, 2, RS_KAPPA_QUADRATIC), 0.4);
  /* The order of the items does not matter. */
  const int ra[10] = {1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  const int rb[10] = {1, 1, 1, 0, 0, 1, 0, 0, 0, 0};
  cr_assert_eq(rs__cohen_kappa(ra, rb, 10, 2), 0.4);
}

/* 4 levels, n = 6:  a = 0 1 2 3 0 2,  b = 0 2 2 1 1 3.
 * Marginals r (a) = [2, 1, 2, 1], c (b) = [1, 2, 2, 1].
 * Unweighted: agreements (0,0), (2,2) -> diag = 2; S = sum r_i c_i
 *   = 2*1 + 1*2 + 2*2 + 1*1 = 9; kappa = (6*2 - 9) / (36 - 9) = 3/27 = 1/9.
 * Linear, w = |i-j|: W_O = 0+1+0+2+1+1 = 5.
 *   W_E = sum_i r_i sum_j |i-j| c_j:
 *   i=0: 2 * (0*1 + 1*2 + 2*2 + 3*1 = 9)  = 18
 *   i=1: 1 * (1*1 + 0*2 + 1*2 + 2*1 = 5)  =  5
 *   i=2: 2 * (2*1 + 1*2 + 0*2 + 1*1 = 5)  = 10
 *   i=3: 1 * (3*1 + 2*2 + 1*2 + 0*1 = 9)  =  9   -> W_E = 42
 *   kappa = 1 - n W_O / W_E = 1 - 30/42 = 2/7.
 * Quadratic, w = (i-j)^2: W_O = 0+1+0+4+1+1 = 7.
 *   i=0: 2 * (0 + 1*2 + 4*2 + 9*1 = 19) = 38
 *   i=1: 1 * (1*1 + 0 + 1*2 + 4*1 = 7)  =  7
 *   i=2: 2 * (4*1 + 1*2 + 0 + 1*1 = 7)  = 14
 *   i=3: 1 * (9*1 + 4*2 + 1*2 + 0 = 19) = 19   -> W_E = 78
 *   kappa = 1 - 42/78 = 36/78 = 6/13. */
Test(agreement, kappa_4_levels_by_hand)
{
  const int a[6] = {0, 1, 2, 3, 0, 2}, b[6] = {0, 2, 2, 1, 1, 3};
  cr_assert_eq(rs__cohen_kappa(a, b, 6, 4), 1.0 / 9.0);
  cr_assert_eq(rs__weighted_kappa(a, b, 6, 4, RS_KAPPA_LINEAR), 2.0 / 7.0);
  cr_assert_eq(rs__weighted_kappa(a, b, 6, 4, RS_KAPPA_QUADRATIC), 6.0 / 13.0);
  /* A fifth, unused level changes nothing unweighted (a zero row and
   * column) and nothing weighted either (it is the last category, so no
   * distance between used categories changes). */
  cr_assert_eq(rs__cohen_kappa(a, b, 6, 5), 1.0 / 9.0);
  cr_assert_eq(rs__weighted_kappa(a, b, 6, 5, RS_KAPPA_LINEAR), 2.0 / 7.0);
}

/* Level 1 is never used: with categories 0..2 the distance from 0 to 2 is
 * 2 (sklearn with labels=range(3)), not 1 (sklearn without labels=).
 * a = 0 0 2 2, b = 0 2 2 2: r = [2, 0, 2], c = [1, 0, 3].
 * Linear: W_O = |0-2| = 2; W_E = 2*(0*1 + 2*3) + 2*(2*1 + 0*3) = 12 + 4 = 16;
 * kappa = 1 - 4*2/16 = 0.5.  Unweighted: diag = 3, S = 2*1 + 2*3 = 8,
 * kappa = (12 - 8)/(16 - 8) = 0.5 as well (two used categories). */
Test(agreement, weighted_kappa_unused_middle_level)
{
  const int a[4] = {0, 0, 2, 2}, b[4] = {0, 2, 2, 2};
  cr_assert_eq(rs__weighted_kappa(a, b, 4, 3, RS_KAPPA_LINEAR), 0.5);
  /* Quadratic: W_O = 4; W_E = 2*(4*3) + 2*(4*1) = 32; 1 - 16/32 = 0.5. */
  cr_assert_eq(rs__weighted_kappa(a, b, 4, 3, RS_KAPPA_QUADRATIC), 0.5);
  cr_assert_eq(rs__cohen_kappa(a, b, 4, 3), 0.5);
}

/* Perfect agreement over two used labels: po = 1, pe = (2*2 + 2*2)/16 = 0.5,
 * kappa = 1.  Total disagreement with balanced marginals: po = 0,
 * pe = 0.5, kappa = -1. */
Test(agreement, kappa_extremes)
{
  const int a[4] = {0, 0, 1, 1}, b[4] = {1, 1, 0, 0};
  cr_assert_eq(rs__cohen_kappa(a, a, 4, 2), 1.0);
  cr_assert_eq(rs__weighted_kappa(a, a, 4, 2, RS_KAPPA_QUADRATIC), 1.0);
  cr_assert_eq(rs__cohen_kappa(a, b, 4, 2), -1.0);
  cr_assert_eq(rs__weighted_kappa(a, b, 4, 2, RS_KAPPA_LINEAR), -1.0);
}

/* pe == 1: both raters give every item the same label.  po == 1 too, but
 * kappa is 0/0: NaN, as sklearn.  Also NaN: n == 0, a label out of range,
 * no levels, an unknown weighting. */
Test(agreement, kappa_degenerate)
{
  const int z[3] = {2, 2, 2}, bad[3] = {0, 4, 1}, neg[3] = {0, -1, 1};
  cr_assert(isnan(rs__cohen_kappa(z, z, 3, 4)));
  cr_assert(isnan(rs__weighted_kappa(z, z, 3, 4, RS_KAPPA_LINEAR)));
  cr_assert(isnan(rs__weighted_kappa(z, z, 3, 4, RS_KAPPA_QUADRATIC)));
  cr_assert(isnan(rs__cohen_kappa(z, z, 0, 4)));
  cr_assert(isnan(rs__cohen_kappa(z, bad, 3, 4)));
  cr_assert(isnan(rs__cohen_kappa(neg, z, 3, 4)));
  cr_assert(isnan(rs__cohen_kappa(z, z, 3, 0)));
  cr_assert(isnan(rs__weighted_kappa(bad, bad, 3, 5, (rs__kappa_weights)7)));
  /* One rater constant, the other not: pe = sum r_i c_i / n^2 with r
   * concentrated on label 2: pe = 3 * c_2 / 9 < 1 -> defined.
   * a = 2 2 2, b = 0 2 1: diag = 1, S = 3*1 = 3, kappa = (3 - 3)/(9 - 3) = 0. */
  const int b[3] = {0, 2, 1};
  cr_assert_eq(rs__cohen_kappa(z, b, 3, 3), 0.0);
}

/* No ties: x = 1 2 3 4, y = 1 3 2 4.  Of the 6 pairs only (2,3) is
 * discordant: P = 5, Q = 1, tau = (5 - 1)/sqrt(6)/sqrt(6) = 4/6 = 2/3
 * (scipy's order: 4/sqrt(6) = 1.6329931618554523, / sqrt(6) again). */
Test(agreement, tau_b_no_ties)
{
  const double x[4] = {1, 2, 3, 4}, y[4] = {1, 3, 2, 4};
  const double want = 4.0 / sqrt(6.0) / sqrt(6.0);
  cr_assert_eq(rs__kendall_tau_b(x, y, 4), want);
  cr_assert(fabs(want - 2.0 / 3.0) < 1e-15);
  /* Reversed y: every pair discordant, P = 0, Q = 6 -> -6/6 = -1. */
  const double r[4] = {4, 3, 2, 1};
  cr_assert_eq(rs__kendall_tau_b(x, r, 4), -1.0);
}

/* Ties: x = 1 2 2 3, y = 1 2 3 3.
 * pairs (0,1) C, (0,2) C, (0,3) C, (1,2) tied in x, (1,3) C, (2,3) tied in y.
 * P = 4, Q = 0, n0 = 6, n1 = 1, n2 = 1: tau_b = 4 / sqrt(5) / sqrt(5) = 0.8
 * (to the last bit: 4/sqrt(5) = 1.7888543819998317, /sqrt(5) -> 0.8).
 * tau-a would be 4/6: the tie correction matters. */
Test(agreement, tau_b_with_ties)
{
  const double x[4] = {1, 2, 2, 3}, y[4] = {1, 2, 3, 3};
  cr_assert_eq(rs__kendall_tau_b(x, y, 4), 4.0 / sqrt(5.0) / sqrt(5.0));
  cr_assert(fabs(rs__kendall_tau_b(x, y, 4) - 0.8) < 1e-15);
  /* A pair tied in both counts in n1 and n2: x = 1 1 2, y = 5 5 6.
   * P = 2 (pairs (0,2), (1,2)), n0 = 3, n1 = n2 = 1: 2/sqrt(2)/sqrt(2) = 1. */
  const double x2[3] = {1, 1, 2}, y2[3] = {5, 5, 6};
  cr_assert_eq(rs__kendall_tau_b(x2, y2, 3), 2.0 / sqrt(2.0) / sqrt(2.0));
}

Test(agreement, tau_b_undefined)
{
  const double x[3] = {1, 2, 3}, c[3] = {0.5, 0.5, 0.5}, nan3[3] = {1, NAN, 3};
  cr_assert(isnan(rs__kendall_tau_b(x, x, 1)));
  cr_assert(isnan(rs__kendall_tau_b(x, x, 0)));
  cr_assert(isnan(rs__kendall_tau_b(x, c, 3)));
  cr_assert(isnan(rs__kendall_tau_b(c, x, 3)));
  cr_assert(isnan(rs__kendall_tau_b(x, nan3, 3)));
  cr_assert_eq(rs__kendall_tau_b(x, x, 2), 1.0);
}

/* a = 0 1 2 1, b = 1 1 0 1 over 3 x 2 levels: (0,1) (1,1) (2,0) (1,1)
 * -> conf[0*2+1] = 1, conf[1*2+1] = 2, conf[2*2+0] = 1.  A second call
 * adds; out-of-range pairs are skipped. */
Test(agreement, confusion_counts)
{
  const int a[4] = {0, 1, 2, 1}, b[4] = {1, 1, 0, 1};
  uint64_t conf[6] = {0};
  rs__confusion(a, 3, b, 2, 4, conf);
  const uint64_t want[6] = {0, 1, 0, 2, 1, 0};
  cr_assert(memcmp(conf, want, sizeof want) == 0, "%llu %llu %llu %llu %llu %llu",
            (unsigned long long)conf[0], (unsigned long long)conf[1], (unsigned long long)conf[2],
            (unsigned long long)conf[3], (unsigned long long)conf[4], (unsigned long long)conf[5]);
  const int a2[3] = {2, 3, -1}, b2[3] = {1, 0, 0};
  rs__confusion(a2, 3, b2, 2, 3, conf);
  cr_assert_eq(conf[5], 1);
  cr_assert_eq(conf[0] + conf[1] + conf[2] + conf[3] + conf[4] + conf[5], 5);
}

/* ---------------------------------------------------------------------------
 * Tables from tests/indep/agreement_reference.py.
 * ------------------------------------------------------------------------- */

struct kappa_case {
  int seed, n, levels;
  int a[200], b[200];
  double kappa, linear, quadratic;
};

ParameterizedTestParameters(agreement, kappa_reference)
{
  static struct kappa_case cases[] = {
      {1, 40, 4, {0, 1, 0, 1, 2, 1, 0, 0, 2, 3, 1, 1, 1, 1, 0, 2, 0, 1, 0, 1, 0, 2, 1, 1, 3, 1, 2, 2, 0, 3, 0, 3, 3, 3, 1, 3, 0, 1, 0, 0}, {0, 1, 0, 1, 2, 1, 0, 1, 2, 3, 1, 1, 1, 1, 0, 1, 0, 3, 0, 1, 0, 2, 1, 1, 3, 1, 2, 2, 2, 3, 0, 2, 3, 2, 3, 3, 2, 1, 1, 0}, 0.6923076923076923, 0.7192224622030238, 0.7616345062429057},
      {2, 100, 3, {0, 1, 1, 1, 0, 0, 1, 1, 1, 2, 2, 2, 1, 1, 0, 2, 2, 1, 1, 2, 1, 0, 0, 1, 1, 1, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 0, 1, 2, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 2, 2, 0, 0, 1, 2, 2, 2, 2, 0, 0, 1, 0, 0, 2, 0, 0, 2, 2, 1, 0, 1, 1, 1, 2, 0, 0, 1, 1, 2, 1, 1, 0, 1, 1, 0, 0, 0, 2}, {0, 1, 1, 2, 0, 0, 1, 1, 1, 0, 2, 2, 1, 2, 0, 2, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 2, 1, 1, 2, 2, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 2, 2, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 2, 2, 0, 2, 1, 1, 2, 2, 2, 1, 0, 1, 1, 0, 2, 0, 0, 2, 2, 1, 0, 1, 0, 2, 1, 2, 0, 0, 1, 2, 1, 2, 0, 1, 1, 0, 0, 0, 2}, 0.5510835913312694, 0.5736142463004765, 0.6000727140519906},
      {3, 25, 2, {0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1}, {0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1}, 0.8263888888888888, 0.8263888888888888, 0.8263888888888888},
      {4, 200, 5, {2, 3, 2, 3, 3, 3, 0, 1, 2, 3, 1, 3, 0, 0, 4, 0, 3, 1, 4, 2, 1, 2, 4, 1, 2, 2, 1, 2, 3, 2, 4, 4, 1, 2, 3, 2, 1, 0, 0, 3, 0, 2, 3, 4, 0, 3, 1, 2, 0, 0, 0, 2, 3, 2, 1, 0, 0, 2, 2, 1, 4, 0, 1, 3, 0, 0, 3, 2, 4, 2, 3, 3, 3, 0, 3, 4, 0, 0, 1, 3, 4, 3, 2, 2, 4, 2, 3, 4, 4, 3, 0, 1, 1, 1, 1, 0, 2, 2, 4, 1, 2, 2, 2, 1, 2, 1, 4, 3, 2, 0, 2, 3, 2, 1, 4, 3, 0, 3, 2, 0, 2, 0, 3, 1, 0, 3, 2, 0, 3, 4, 3, 4, 2, 1, 4, 0, 1, 4, 3, 2, 3, 0, 0, 1, 2, 1, 0, 0, 0, 2, 3, 0, 4, 0, 2, 2, 1, 2, 2, 0, 0, 3, 3, 3, 2, 4, 0, 1, 4, 0, 0, 0, 3, 3, 4, 1, 0, 2, 4, 2, 2, 3, 2, 1, 0, 0, 2, 1, 0, 2, 2, 2, 0, 0, 3, 3, 0, 4, 0, 2}, {4, 0, 3, 4, 3, 3, 1, 0, 3, 0, 1, 3, 2, 4, 4, 1, 3, 3, 3, 2, 4, 2, 4, 3, 1, 3, 3, 2, 2, 2, 0, 0, 1, 4, 0, 2, 2, 0, 1, 3, 0, 0, 0, 4, 2, 0, 4, 0, 2, 4, 0, 4, 3, 0, 1, 0, 3, 1, 1, 3, 4, 0, 3, 1, 4, 4, 0, 0, 0, 2, 4, 0, 3, 2, 0, 4, 3, 0, 0, 2, 3, 3, 3, 2, 4, 2, 3, 3, 1, 3, 0, 4, 1, 1, 2, 0, 1, 2, 4, 1, 2, 3, 0, 4, 1, 2, 4, 3, 2, 1, 2, 3, 0, 3, 4, 3, 0, 1, 0, 0, 2, 4, 3, 1, 1, 1, 3, 3, 0, 4, 3, 4, 2, 3, 3, 0, 4, 3, 1, 4, 4, 2, 4, 2, 1, 1, 1, 0, 0, 4, 1, 1, 3, 4, 0, 3, 1, 4, 1, 4, 1, 2, 3, 2, 2, 4, 2, 1, 3, 2, 2, 0, 0, 4, 1, 1, 2, 3, 1, 1, 0, 0, 1, 2, 3, 0, 2, 1, 2, 3, 3, 1, 0, 1, 0, 3, 2, 4, 0, 0}, 0.2172088799824655, 0.22123331214240305, 0.22559793148028442},
      {5, 60, 4, {1, 0, 2, 3, 1, 3, 1, 3, 1, 0, 1, 1, 3, 3, 3, 1, 2, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 3, 1, 0, 0, 2, 0, 2, 1, 3, 1, 2, 2, 3, 0, 3, 0, 2, 3, 1, 3, 2, 0, 2, 0, 0, 3, 3, 2, 2, 2}, {1, 0, 2, 3, 1, 3, 1, 3, 1, 0, 1, 1, 3, 3, 3, 1, 2, 2, 3, 1, 0, 1, 1, 1, 1, 1, 1, 1, 3, 1, 3, 1, 0, 0, 2, 0, 2, 1, 3, 1, 2, 2, 3, 0, 3, 0, 2, 3, 1, 3, 2, 0, 2, 0, 0, 2, 3, 2, 2, 2}, 0.9546827794561934, 0.9715504978662873, 0.9850187265917603},
  };
  return cr_make_param_array(struct kappa_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct kappa_case *tc, agreement, kappa_reference)
{
  const size_t n = (size_t)tc->n;
  double k = rs__cohen_kappa(tc->a, tc->b, n, tc->levels);
  double l = rs__weighted_kappa(tc->a, tc->b, n, tc->levels, RS_KAPPA_LINEAR);
  double q = rs__weighted_kappa(tc->a, tc->b, n, tc->levels, RS_KAPPA_QUADRATIC);
  cr_expect_eq(k, tc->kappa, "seed %d: kappa %.17g, want %.17g", tc->seed, k, tc->kappa);
  cr_expect_eq(l, tc->linear, "seed %d: linear %.17g, want %.17g", tc->seed, l, tc->linear);
  cr_expect_eq(q, tc->quadratic, "seed %d: quadratic %.17g, want %.17g", tc->seed, q, tc->quadratic);
  /* Swapping the raters transposes O: every kappa is symmetric. */
  cr_expect_eq(rs__cohen_kappa(tc->b, tc->a, n, tc->levels), k, "seed %d: not symmetric", tc->seed);
  cr_expect_eq(rs__weighted_kappa(tc->b, tc->a, n, tc->levels, RS_KAPPA_QUADRATIC), q, "seed %d", tc->seed);
}

struct tau_case {
  int seed, n;
  double x[50], y[50];
  double tau;
};

ParameterizedTestParameters(agreement, tau_reference)
{
  static struct tau_case cases[] = {
      {11, 12, {0.87, 0.08, 0.91, 0.3, 0.41, 0.87, 0.13, 0.55, 0.54, 0.72, 0.69, 0.35}, {0.9, -0.01, 1.03, 0.2, 0.47, 0.79, 0.14, 0.48, 0.55, 0.61, 0.62, 0.48}, 0.8923076923076924},
      {12, 30, {0.2, 0.1, 0.3, 0.8, 0.8, 1.0, 0.9, 0.9, 0.4, 0.1, 0.9, 0.0, 0.3, 0.1, 0.7, 0.2, 0.6, 0.1, 1.0, 0.6, 0.8, 0.5, 0.3, 0.5, 0.5, 0.7, 0.0, 0.8, 0.8, 0.1}, {0.3, 0.1, 0.4, 0.9, 0.8, 1.0, 0.9, 0.9, 0.4, 0.2, 0.9, 0.0, 0.3, 0.2, 0.7, 0.1, 0.6, 0.2, 0.9, 0.6, 0.7, 0.6, 0.4, 0.5, 0.5, 0.7, 0.0, 0.9, 0.8, 0.2}, 0.9338334368507846},
      {13, 8, {0.563, 0.165, 0.737, 0.252, 0.123, 0.095, 0.604, 0.21}, {0.558, 0.148, 0.751, 0.256, 0.109, 0.099, 0.627, 0.204}, 0.9999999999999998},
      {14, 50, {0.91, 0.21, 0.15, 0.73, 0.48, 0.21, 0.34, 0.54, 0.27, 0.95, 0.24, 0.38, 0.12, 0.96, 0.52, 0.17, 0.91, 0.79, 0.19, 0.65, 0.1, 0.09, 0.47, 0.33, 0.44, 0.03, 0.36, 0.76, 0.71, 0.71, 0.82, 0.85, 0.83, 0.92, 0.12, 0.76, 0.46, 0.05, 0.52, 0.92, 0.76, 0.59, 0.7, 0.05, 0.21, 0.65, 0.33, 0.11, 0.54, 0.88}, {1.22, -0.15, 0.37, 0.51, 0.95, 0.46, 0.01, 0.97, 0.11, 0.96, 0.71, 0.13, -0.24, 0.58, 0.63, -0.06, 0.75, 0.32, 0.17, 0.78, -0.05, -0.01, 0.07, 0.17, 0.89, -0.32, 0.34, 0.6, 0.23, 0.27, 0.54, 0.65, 0.86, 1.02, 0.06, 0.68, 0.84, 0.05, 0.58, 1.29, 0.59, 0.49, 0.29, 0.12, 0.53, 1.12, 0.26, 0.3, 0.25, 0.43}, 0.5080220485534314},
  };
  return cr_make_param_array(struct tau_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct tau_case *tc, agreement, tau_reference)
{
  double t = rs__kendall_tau_b(tc->x, tc->y, (size_t)tc->n);
  cr_expect_eq(t, tc->tau, "seed %d: tau %.17g, want %.17g", tc->seed, t, tc->tau);
  /* Swapped, the two divisions come in the other order (as in scipy):
   * equal within an ulp or two, not always to the bit. */
  double s = rs__kendall_tau_b(tc->y, tc->x, (size_t)tc->n);
  cr_expect(fabs(s - t) <= 4e-16, "seed %d: not symmetric: %.17g vs %.17g", tc->seed, s, t);
}

/* ---------------------------------------------------------------------------
 * Krippendorff's alpha, interval metric.
 * ------------------------------------------------------------------------- */

#define M NAN
/* Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability",
 * section C: observers A..D (columns here) by units 1..12 (rows here).
 * The paper gives interval alpha = 0.849; tests/indep/krippendorff_alpha.py
 * computes it in exact rationals from the coincidence matrix:
 * 951/1120 = 0.8491071428571428, from n = 40 pairable values (unit 12 has
 * one value only and is not pairable). */
static const double kripp_units[12][4] = {
    {1, 1, M, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 4},
    {4, 4, 4, 4}, {1, 1, 2, 1}, {2, 2, 2, 2}, {M, 5, 5, 5}, {M, M, 1, 1}, {M, 3, M, M},
};

Test(agreement, alpha_krippendorff_worked_example)
{
  size_t n = 0;
  const double a = rs__krippendorff_alpha_interval(&kripp_units[0][0], 12, 4, &n);
  cr_assert_eq(n, 40);
  cr_assert(fabs(a - 951.0 / 1120.0) < 1e-12, "alpha %.17g, want 951/1120", a);
  cr_assert(fabs(a - 0.849) < 5e-4); /* the paper's three digits */
  /* The coders' order and the units' order do not change the value. */
  double t[12][4];
  for (int u = 0; u < 12; u++)
    for (int c = 0; c < 4; c++) t[11 - u][c] = kripp_units[u][3 - c];
  cr_assert(fabs(rs__krippendorff_alpha_interval(&t[0][0], 12, 4, NULL) - a) < 1e-15);
  /* Interval alpha depends on differences only: a common offset of 1e8
   * leaves it unchanged.  Written as 2 n S2 - 2 S1^2, D_e would lose about
   * 16 digits to cancellation here; the two-pass form keeps 1e-8. */
  for (int u = 0; u < 12; u++)
    for (int c = 0; c < 4; c++) t[u][c] = kripp_units[u][c] + 1e8;
  const double shifted = rs__krippendorff_alpha_interval(&t[0][0], 12, 4, NULL);
  cr_assert(fabs(shifted - a) < 1e-8, "shifted alpha %.17g", shifted);
}

/* Units {1,2}, {3,3}, {5} (the last not pairable): n = 4, values 1 2 3 3.
 * Ordered pairs within units: (1,2), (2,1) -> 1 + 1 = 2, over m - 1 = 1;
 * D_o = 2 / 4 = 0.5.  All ordered pairs: 2 * (1 + 4 + 4 + 1 + 1 + 0) = 22;
 * D_e = 22 / (4 * 3) = 11/6.  alpha = 1 - 0.5 / (11/6) = 1 - 3/11 = 8/11.
 * Systematic disagreement, {1,2}, {2,1}: D_o = (2 + 2) / 4 = 1; pairs of
 * 1 2 2 1: 2 * 4 = 8, D_e = 8/12 = 2/3; alpha = 1 - 3/2 = -1/2. */
Test(agreement, alpha_by_hand)
{
  const double a[3][2] = {{1, 2}, {3, 3}, {M, 5}};
  size_t n = 0;
  cr_assert(fabs(rs__krippendorff_alpha_interval(&a[0][0], 3, 2, &n) - 8.0 / 11.0) < 1e-15);
  cr_assert_eq(n, 4);
  const double b[2][2] = {{1, 2}, {2, 1}};
  cr_assert(fabs(rs__krippendorff_alpha_interval(&b[0][0], 2, 2, &n) - -0.5) < 1e-15);
  cr_assert_eq(n, 4);
}

/* Perfect agreement inside every unit, different values across units: D_o
 * = 0, alpha = 1 exactly.  Undefined (NaN): everything missing; no unit
 * with two values; one value throughout (D_e = 0); an infinite value. */
Test(agreement, alpha_extremes)
{
  const double same[3][3] = {{1, 1, 1}, {4, M, 4}, {2.5, 2.5, M}};
  size_t n = 99;
  cr_assert_eq(rs__krippendorff_alpha_interval(&same[0][0], 3, 3, &n), 1.0);
  cr_assert_eq(n, 7);
  const double none[2][3] = {{M, M, M}, {M, M, M}};
  cr_assert(isnan(rs__krippendorff_alpha_interval(&none[0][0], 2, 3, &n)));
  cr_assert_eq(n, 0);
  const double lone[3][2] = {{1, M}, {M, 2}, {3, M}};
  cr_assert(isnan(rs__krippendorff_alpha_interval(&lone[0][0], 3, 2, &n)));
  cr_assert_eq(n, 0);
  const double flat[2][2] = {{3, 3}, {3, 3}};
  cr_assert(isnan(rs__krippendorff_alpha_interval(&flat[0][0], 2, 2, &n)));
  cr_assert_eq(n, 4);
  const double inf[2][2] = {{1, 2}, {INFINITY, 3}};
  cr_assert(isnan(rs__krippendorff_alpha_interval(&inf[0][0], 2, 2, NULL)));
  cr_assert(isnan(rs__krippendorff_alpha_interval(NULL, 0, 4, NULL)));
}
#undef M
