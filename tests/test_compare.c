/* test_compare.c: the randomization test and bootstrap (resample.c), paired
 * comparisons (compare.c), and `ragsweep compare`, `--gate`, `--worst` end
 * to end.  The t-test and the corrections have their own tests
 * (test_stats.c). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats/compare.h"
#include "helpers.h"
#include "stats/resample.h"

/* --- Philox4x32-10 ---------------------------------------------------------------- */

/* Random123's known-answer vectors (kat_vectors, Salmon et al. 2011). */
Test(resample, philox_known_answers)
{
  static const struct {
    uint32_t ctr[4], key[2], out[4];
  } kat[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (size_t i = 0; i < sizeof kat / sizeof *kat; i++) {
    uint32_t out[4];
    rs__philox4x32_10(kat[i].ctr, kat[i].key, out);
    for (int w = 0; w < 4; w++) cr_assert_eq(out[w], kat[i].out[w], "vector %zu word %d: %08x", i, w, out[w]);
  }
}

/* --- the exact randomization p-value, by hand ------------------------------------------ */

Test(resample, exact_p_by_hand)
{
  /* {1,1,1}: |sum| = 3 only for +++ and ---: 2 of 8. */
  const double a[] = {1, 1, 1};
  cr_assert_float_eq(rs__perm_p_exact(a, 3), 0.25, 1e-15);
  /* {1,2,3,4}: sum 10; |sum| >= 10 only for all + and all -: 2 of 16. */
  const double b[] = {1, 2, 3, 4};
  cr_assert_float_eq(rs__perm_p_exact(b, 4), 0.125, 1e-15);
  /* {0.5,0.5,-0.25}: sum 0.75; patterns with |sum| >= 0.75: +,+,- / -,-,+ (0.75 each)
   * and +,+,+ / -,-,- (1.25 each): 4 of 8. */
  const double c[] = {0.5, 0.5, -0.25};
  cr_assert_float_eq(rs__perm_p_exact(c, 3), 0.5, 1e-15);
  /* No difference at all: every pattern is as extreme. */
  const double z[] = {0, 0, 0, 0, 0};
  cr_assert_float_eq(rs__perm_p_exact(z, 5), 1.0, 1e-15);
}

/* Small cases where all 2^n sign patterns can be enumerated: the
 * Monte-Carlo p-value must fall within 4 standard errors (plus the
 * (count+1)/(N+1) offset) of the exact one. */
Test(resample, monte_carlo_within_error_of_exact)
{
  /* Per-query differences of nDCG-like values, with ties and zeros. */
  static const double cases[][16] = {
      {0.12, -0.05, 0.30, 0.0, 0.08, 0.08, -0.11, 0.25, 0.02, 0.0, 0.17, -0.02, 0.05, 0.05, 0.09, -0.30},
      {0.5, 0.5, -0.5, 0.25, 0.0, 0.0, 0.125, 0.5, -0.25, 0.5, 0.0, 0.75, -0.125, 0.25, 0.5, 0.0},
      {0.01, 0.02, -0.03, 0.04, -0.05, 0.06, 0.07, -0.08, 0.09, 0.1, -0.11, 0.12, 0.13, -0.14, 0.15, 0.16},
  };
  const size_t n_perm = 40000;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (size_t n = 10; n <= 16; n += 3) {
      const double exact = rs__perm_p_exact(cases[k], n);
      const double *d[1] = {cases[k]};
      double p, lo, hi;
      rs__resample_cfg cfg = {.seed = 7 + k, .n_perm = n_perm, .n_boot = 0, .level = 0.95, .threads = 2};
      rs_error err = {0};
      cr_assert_eq(rs__resample(&cfg, d, 1, n, &p, &lo, &hi, &err), RS_OK, "%s", err.msg);
      const double se = sqrt(exact * (1.0 - exact) / (double)n_perm);
      cr_assert(fabs(p - exact) <= 4.0 * se + 1.0 / (double)(n_perm + 1), "case %zu n %zu: p %.5f exact %.5f se %.5f",
                k, n, p, exact, se);
      cr_assert(isnan(lo) && isnan(hi), "no bootstrap asked for");
    }
}

/* --- determinism -------------------------------------------------------------------------- */

static double *synthetic(size_t n_cmp, size_t n, unsigned seed)
{
  double *d = malloc(n_cmp * n * sizeof *d);
  unsigned s = seed;
  for (size_t i = 0; i < n_cmp * n; i++) {
    s = s * 1103515245u + 12345u;
    /* differences of values in tenths (P@10-like), mostly small, some ties */
    d[i] = (double)((int)(s >> 16) % 7 - 3) / 10.0 + (i % 5 == 0 ? 0.05 : 0.0);
  }
  return d;
}

Test(resample, identical_bits_at_any_thread_count)
{
  const size_t n_cmp = 5, n = 3001;
  double *data = synthetic(n_cmp, n, 3);
  const double *d[5];
  for (size_t c = 0; c < n_cmp; c++) d[c] = data + c * n;
  double ref[3][5], got[3][5];
  const int threads[] = {1, 2, 3, 8};
  for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
    rs__resample_cfg cfg = {.seed = 99, .n_perm = 3000, .n_boot = 700, .level = 0.95, .threads = threads[t]};
    rs_error err = {0};
    double (*out)[5] = t == 0 ? ref : got;
    cr_assert_eq(rs__resample(&cfg, d, n_cmp, n, out[0], out[1], out[2], &err), RS_OK, "%s", err.msg);
    if (t) cr_assert(memcmp(ref, got, sizeof ref) == 0, "results differ at %d threads", threads[t]);
  }
  /* ... and a comparison's figures do not depend on the others in the call. */
  rs__resample_cfg cfg = {.seed = 99, .n_perm = 3000, .n_boot = 700, .level = 0.95, .threads = 2};
  double p, lo, hi;
  rs_error err = {0};
  cr_assert_eq(rs__resample(&cfg, d + 2, 1, n, &p, &lo, &hi, &err), RS_OK);
  cr_assert(p == ref[0][2] && lo == ref[1][2] && hi == ref[2][2], "comparison 2 alone differs");
  /* A different seed gives different draws. */
  cfg.seed = 100;
  double p2, lo2, hi2;
  cr_assert_eq(rs__resample(&cfg, d + 2, 1, n, &p2, &lo2, &hi2, &err), RS_OK);
  cr_assert(lo2 != lo || hi2 != hi, "the seed must matter");
  free(data);
}

/* --- bootstrap ------------------------------------------------------------------------------- */

Test(resample, bootstrap_interval)
{
  /* Constant differences: every resample has the same mean. */
  double c[50];
  for (int i = 0; i < 50; i++) c[i] = 0.125;
  const double *d[1] = {c};
  double p, lo, hi;
  rs__resample_cfg cfg = {.seed = 1, .n_perm = 1000, .n_boot = 2000, .level = 0.95, .threads = 2};
  rs_error err = {0};
  cr_assert_eq(rs__resample(&cfg, d, 1, 50, &p, &lo, &hi, &err), RS_OK);
  cr_assert(lo == 0.125 && hi == 0.125, "[%g, %g]", lo, hi);
  cr_assert_float_eq(p, 1.0 / 1001.0, 1e-15, "every sign flip is less extreme than all +: p %g", p);

  /* Differences -1/+1 with mean 0.2 (n = 1000: 600 of +1): the percentile
   * interval is close to the normal one, 0.2 +- 1.96 * sd / sqrt(n). */
  static double pm[1000];
  for (int i = 0; i < 1000; i++) pm[i] = i % 5 < 3 ? 1.0 : -1.0;
  d[0] = pm;
  cfg.n_boot = 10000;
  cr_assert_eq(rs__resample(&cfg, d, 1, 1000, &p, &lo, &hi, &err), RS_OK);
  const double sd = sqrt((1.0 - 0.04) * 1000.0 / 999.0), half = 1.96 * sd / sqrt(1000.0);
  cr_assert(fabs(lo - (0.2 - half)) < 0.006 && fabs(hi - (0.2 + half)) < 0.006, "[%g, %g] vs 0.2 +- %g", lo, hi,
            half);
  cr_assert(p < 0.001, "p %g", p);
}

/* --- paired comparisons -------------------------------------------------------------------- */

Test(compare, family_statistics)
{
  /* Three runs on 12 queries: b = a + 0.1 on 9 queries (+0 elsewhere), c = a. */
  double a[12], b[12], c[12];
  for (int i = 0; i < 12; i++) {
    a[i] = (double)(i % 4) / 4.0;
    b[i] = a[i] + (i < 9 ? 0.125 : 0.0);
    c[i] = a[i];
  }
  const double *v[3] = {a, b, c};
  rs__comparison cmp[2] = {{.run = 1, .base = 0}, {.run = 2, .base = 0}};
  rs__compare_cfg cfg = {.adjust = RS_ADJ_HOLM,
                         .resample = {.seed = 5, .n_perm = 10000, .n_boot = 1000, .level = 0.95, .threads = 2}};
  rs_error err = {0};
  cr_assert_eq(rs__compare(&cfg, v, 12, cmp, 2, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(cmp[0].n, 12);
  cr_assert_float_eq(cmp[0].diff, 9 * 0.125 / 12, 1e-15);
  /* 2^12 = 4096 <= 10000 permutations: the exact p.  Of the 4096 sign
   * patterns of nine 0.125s (and three zeros), |sum| = 9 * 0.125 only for
   * all + or all - of the nine: 2 * 2^3 patterns, p = 16/4096. */
  cr_assert(cmp[0].perm_exact);
  cr_assert_float_eq(cmp[0].p_perm, 16.0 / 4096.0, 1e-15);
  /* Identical runs: p = 1, no difference, interval [0, 0]. */
  cr_assert_float_eq(cmp[1].p_perm, 1.0, 1e-15);
  cr_assert_float_eq(cmp[1].p_ttest, 1.0, 1e-15);
  cr_assert(cmp[1].diff == 0.0 && cmp[1].ci_low == 0.0 && cmp[1].ci_high == 0.0);
  /* Holm over the two: the smaller p doubled, the larger one kept (capped at 1). */
  cr_assert_float_eq(cmp[0].p_perm_adj, 2.0 * 16.0 / 4096.0, 1e-15);
  cr_assert_float_eq(cmp[1].p_perm_adj, 1.0, 1e-15);
  cr_assert(cmp[0].p_ttest_adj >= cmp[0].p_ttest);
  cr_assert(cmp[0].ci_low > 0.0 && cmp[0].ci_high <= 0.125 + 1e-15, "[%g, %g]", cmp[0].ci_low, cmp[0].ci_high);
}

/* --- end to end: a crafted corpus ------------------------------------------------------------ */

static char *sibling(const char *name)
{
  char *p = th_ring_slot();
  snprintf(p, 4096, "%s", th_bin());
  strcpy(strrchr(p, '/') + 1, name);
  return p;
}

static void expect_file(const char *path, const char *want)
{
  char *got = th_slurp(path, NULL);
  cr_assert(got, "cannot read %s", path);
  cr_assert_str_eq(got, want, "%s", path);
  free(got);
}

/* Three queries, two runs (the corpus keeps them in name order); by hand (relevance >= 1 is relevant):
 *   good: q1 d1 d3 d2 -> RR 1;   q2 d9 d4 -> RR 1/2;  q3 d8 -> no relevant doc, RR 0
 *   bad:  q1 d2 d9 d3 -> RR 1/3; q2 d9 -> RR 0;       q3 d9 d8 d6 -> RR 1/3
 * NumRel: q1 2 (d1, d3), q2 1, q3 2.  Mean RR: good 1/2, bad 2/9. */
static const char *crafted_corpus(void)
{
  static char path[4096];
  if (*path) return path;
  const char *q = th_write_temp(2, "crafted.qrels",
                                "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq3 0 d5 1\nq3 0 d6 1\n");
  const char *g = th_write_temp(3, "good.run",
                                "q1 Q0 d1 1 3 good\nq1 Q0 d3 2 2 good\nq1 Q0 d2 3 1 good\n"
                                "q2 Q0 d9 1 2 good\nq2 Q0 d4 2 1 good\nq3 Q0 d8 1 1 good\n");
  const char *b = th_write_temp(4, "bad.run",
                                "q1 Q0 d2 1 3 bad\nq1 Q0 d9 2 2 bad\nq1 Q0 d3 3 1 bad\n"
                                "q2 Q0 d9 1 1 bad\nq3 Q0 d9 1 3 bad\nq3 Q0 d8 2 2 bad\nq3 Q0 d6 3 1 bad\n");
  char *dir = th_fresh_dir();
  snprintf(path, sizeof path, "%s/crafted.h5", dir);
  char ga[4200], ba[4200];
  snprintf(ga, sizeof ga, "good=%s", g);
  snprintf(ba, sizeof ba, "bad=%s", b);
  char *argv[] = {(char *)th_bin(), "import", "-o", path, "--qrels", (char *)q, ga, ba, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);
  return path;
}

Test(worst, crafted_corpus)
{
  char *out = th_fresh_dir();
  char *argv[] = {(char *)th_bin(), "eval", (char *)crafted_corpus(), "-o", out, "-m", "RR", "--worst", "2",
                  "--top", "0", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  /* Ties keep corpus order (bad: q1 before q3 at 1/3); the first relevant
   * rank is empty when nothing relevant was retrieved. */
  expect_file(th_join(out, "worst.csv"), "run,list,measure,position,query,value,first_relevant_rank,num_rel\n"
                                      "bad,worst,RR,1,q2,0,,1\n"
                                      "bad,worst,RR,2,q1,0.3333333333333333,3,2\n"
                                      "bad,no_relevant_retrieved,,1,q2,,,1\n"
                                      "good,worst,RR,1,q3,0,,2\n"
                                      "good,worst,RR,2,q2,0.5,2,1\n"
                                      "good,no_relevant_retrieved,,1,q3,,,2\n");
}

Test(gate, exit_codes_and_report)
{
  const char *corpus = crafted_corpus();
  char *out = th_fresh_dir();
  /* Fails for bad (2/9 < 0.5), passes for good (exactly 0.5). */
  char *fail_argv[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", out, "-m", "RR", "--gate", "RR>=0.5",
                       "--top", "0", NULL};
  th_result r = th_run(NULL, fail_argv, NULL, NULL);
  cr_assert_eq(r.status, 3, "a failed gate exits 3; got %d: %s", r.status, r.err);
  cr_assert(strstr(r.out, "\xE2\x9C\x93 RR >= 0.5  good  0.5000"), "%s", r.out);
  cr_assert(strstr(r.out, "\xE2\x9C\x97 RR >= 0.5  bad   0.2222"), "%s", r.out);
  cr_assert(strstr(r.out, "gates: 1 of 2 checks failed"), "%s", r.out);
  th_free(&r);
  expect_file(th_join(out, "gates.csv"), "run,check,measure,op,threshold,value,pass\n"
                                      "bad,RR >= 0.5,RR,>=,0.5,0.2222222222222222,false\n"
                                      "good,RR >= 0.5,RR,>=,0.5,0.5,true\n");
  /* Every output is still written. */
  char *agg = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_assert(agg && strstr(agg, "bad,RR,RR,,0.2222222222222222"), "aggregate.csv");
  free(agg);

  /* Passing gates exit 0; a gated measure not asked for with -m is computed. */
  char *out2 = th_fresh_dir();
  char *pass_argv[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", out2, "-m", "RR", "--gate", "RR > 0.2",
                       "--gate", "recip_rank<=1", "--gate", "P@1>=0", "--top", "0", NULL};
  r = th_run(NULL, pass_argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
  cr_assert(strstr(r.out, "gates: 0 of 6 checks failed"), "%s", r.out);
  th_free(&r);
  agg = th_slurp(th_join(out2, "aggregate.csv"), NULL);
  cr_assert(agg && strstr(agg, "good,P@1,P,1,0.3333333333333333"), "P@1 computed for its gate");
  free(agg);

  /* Malformed gates are usage errors (1), named in the message. */
  const char *bad[][2] = {{"RR=0.5", "expected MEASURE>=VALUE"},
                          {"RR>=high", "expected a number after '>=', found 'high'"},
                          {"nope>=1", "gate 'nope>=1': measure 'nope': unknown"},
                          {"P@{1,5}>=0.1", "names 2 measures; a gate checks one"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *argv[] = {(char *)th_bin(), "eval", (char *)corpus, "-o", out2, "--gate", (char *)bad[i][0], NULL};
    r = th_run(NULL, argv, NULL, NULL);
    cr_assert_eq(r.status, 1, "gate '%s': status %d", bad[i][0], r.status);
    cr_assert(strstr(r.err, bad[i][1]), "gate '%s': %s", bad[i][0], r.err);
    th_free(&r);
  }
}

/* --- end to end: compare on a generated sweep ------------------------------------------------- */

static const char *generated_corpus(void)
{
  static char path[4096];
  if (*path) return path;
  char *dir = th_fresh_dir();
  snprintf(path, sizeof path, "%s/g.h5", dir);
  char *argv[] = {sibling("gen_sweep"), "-o", path, "--queries", "1500", "--k", "20", "--seed", "3", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  return path;
}

/* A line of text that starts (after spaces) with a and contains b. */
static int has_line(const char *text, const char *a, const char *b)
{
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    while (*p == ' ') p++;
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (strncmp(p, a, strlen(a)) == 0 && memmem(p, len, b, strlen(b))) return 1;
  }
  return 0;
}

static th_result compare(const char *out, const char *threads, const char *extra1, const char *extra2)
{
  char *argv[16] = {(char *)th_bin(), "compare", (char *)generated_corpus(), "-o", (char *)out,
                    "--permutations", "2000", "--bootstrap", "300", "--threads", (char *)threads};
  int n = 11;
  if (extra1) argv[n++] = (char *)extra1;
  if (extra2) argv[n++] = (char *)extra2;
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

Test(compare_cli, same_bytes_at_any_thread_count_and_in_the_serial_build, .timeout = 120)
{
  char *o1 = th_fresh_dir(), *o2 = th_fresh_dir(), *o3 = th_fresh_dir();
  th_result r1 = compare(o1, "1", NULL, NULL), r2 = compare(o2, "2", NULL, NULL), r3 = compare(o3, "3", NULL, NULL);
  cr_assert_eq(r1.status, 0, "%s", r1.err);
  cr_assert_eq(r2.status, 0, "%s", r2.err);
  cr_assert_eq(r3.status, 0, "%s", r3.err);
  const char *files[] = {"compare.csv", "summary.csv", "aggregate.csv"};
  for (size_t i = 0; i < 3; i++) {
    char *a = th_slurp(th_join(o1, files[i]), NULL), *b = th_slurp(th_join(o2, files[i]), NULL),
         *c = th_slurp(th_join(o3, files[i]), NULL);
    cr_assert(a && b && c, "%s", files[i]);
    cr_assert_str_eq(a, b, "%s differs at 1 and 2 threads", files[i]);
    cr_assert_str_eq(a, c, "%s differs at 1 and 3 threads", files[i]);
    if (i == 0) {
      /* 23 runs against the first, on each of the 3 default measures, plus the header. */
      size_t lines = 0;
      for (char *p = a; *p; p++) lines += *p == '\n';
      cr_assert_eq(lines, 1 + 3 * 23);
      cr_assert(strncmp(a, "run,chunk,model,reranker,baseline,measure,n,mean,baseline_mean,diff,ci_low,ci_high,"
                           "effect_size,t,p_ttest,p_perm,p_ttest_adj,p_perm_adj\n", 128) == 0, "%.200s", a);
    }
    free(a), free(b), free(c);
  }
  th_free(&r1), th_free(&r2), th_free(&r3);
  if (th_serial_bin()) {
    char *o4 = th_fresh_dir();
    char *argv[] = {(char *)th_serial_bin(), "compare", (char *)generated_corpus(), "-o", o4, "--permutations",
                    "2000", "--bootstrap", "300", NULL};
    th_result r4 = th_run(NULL, argv, NULL, NULL);
    cr_assert_eq(r4.status, 0, "%s", r4.err);
    th_free(&r4);
    char *a = th_slurp(th_join(o1, "compare.csv"), NULL), *d = th_slurp(th_join(o4, "compare.csv"), NULL);
    cr_assert(a && d);
    cr_assert_str_eq(a, d, "the serial build differs");
    free(a), free(d);
  }
}

/* Removes the last field of every line of s (in place). */
static void drop_last_column(char *s)
{
  char *w = s;
  for (char *l = s; *l;) {
    char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l), *c = end;
    while (c > l && c[-1] != ',') c--;
    if (c > l) c--;
    memmove(w, l, (size_t)(c - l));
    w += c - l;
    if (nl) *w++ = '\n';
    l = nl ? nl + 1 : end;
  }
  *w = '\0';
}

Test(compare_cli, gates_fail_if_worse_and_per_query_input, .timeout = 120)
{
  /* The best configuration of the generated sweep beats the others by far. */
  char *o1 = th_fresh_dir();
  th_result r = compare(o1, "2", "--fail-if-worse-than", "bge-large_256_cross-encoder");
  cr_assert_eq(r.status, 3, "%s\n%s", r.out, r.err);
  cr_assert(strstr(r.out, "\xE2\x9C\x97 nDCG@10 not worse than bge-large_256_cross-encoder"), "%s", r.out);
  /* ... except where the summary says so too (R@10: not significantly worse, p_adj 0.372). */
  cr_assert(has_line(r.out, "\xE2\x9C\x93 R@10 not worse than bge-large_256_cross-encoder", "bge-large_512_cross-encoder"),
            "%s", r.out);
  cr_assert(strstr(r.out, "not significantly worse: bge-large_512_cross-encoder 0.6989 (p_adj 0.372)"), "%s", r.out);
  th_free(&r);
  /* Nothing is significantly worse than the weakest one. */
  char *o2 = th_fresh_dir();
  r = compare(o2, "2", "--fail-if-worse-than", "minilm_1024_none");
  cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
  th_free(&r);
  /* Gates on compare work on the compared means. */
  r = compare(o2, "2", "--gate", "RR@10>=0");
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  /* A baseline that is not a run is a usage error. */
  r = compare(o2, "2", "--baseline", "nope");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "baseline run 'nope' is not among the 24 runs"), "%s", r.err);
  th_free(&r);

  /* From per_query.csv: the same per-query values give the same summary. */
  char *ev = th_fresh_dir();
  char *eargv[] = {(char *)th_bin(), "eval", (char *)generated_corpus(), "-o", ev, "--per-query", "-m", "nDCG@10",
                   "-m", "RR@10", "-m", "R@10", "--top", "0", NULL};
  r = th_run(NULL, eargv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *o3 = th_fresh_dir();
  char *pargv[] = {(char *)th_bin(), "compare", "--per-query", th_join(ev, "per_query.csv"), "-o", o3,
                   "--permutations", "2000", "--bootstrap", "300", NULL};
  r = th_run(NULL, pargv, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *a = th_slurp(th_join(o1, "summary.csv"), NULL), *b = th_slurp(th_join(o3, "summary.csv"), NULL);
  cr_assert(a && b);
  /* The same values; only the policy differs: "all" judged queries from the
   * corpus, "values" (those with a value for every run) from the file. */
  cr_expect(strstr(a, ",all\n") && !strstr(a, ",values\n"), "%s", a);
  cr_expect(strstr(b, ",values\n") && !strstr(b, ",all\n"), "%s", b);
  drop_last_column(a), drop_last_column(b);
  cr_assert_str_eq(a, b, "summary from per_query.csv differs from the corpus's");
  free(a), free(b);

  /* All pairs: 24 * 23 / 2 rows per measure. */
  char *o4 = th_fresh_dir();
  r = compare(o4, "2", "--all-pairs", "-mRR@10");
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *c = th_slurp(th_join(o4, "compare.csv"), NULL);
  size_t lines = 0;
  for (char *p = c; *p; p++) lines += *p == '\n';
  cr_assert_eq(lines, 1 + 276);
  free(c);
}

/* --- compare --per-query on rag's per_sample.csv ----------------------------------------------- */

static char *write_in(const char *dir, const char *name, const char *text)
{
  char *path = th_join(dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Splits the row of a CSV text that starts with prefix into fields (no
 * quoting in the rows looked at); the number of fields, 0 when no row
 * starts so. */
static int csv_row(const char *text, const char *prefix, char fields[][64], int max)
{
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (strncmp(p, prefix, strlen(p) < strlen(prefix) ? strlen(p) : strlen(prefix)) != 0) continue;
    int n = 0;
    const char *f = p;
    for (;;) {
      size_t len = strcspn(f, ",\n");
      cr_assert(n < max && len < 64);
      memcpy(fields[n], f, len);
      fields[n++][len] = '\0';
      if (f[len] != ',') break;
      f += len + 1;
    }
    return n;
  }
  return 0;
}

/* Two configurations (model, chunk) x four samples x two metrics, as rag
 * writes per_sample.csv (the judge column empty: one judge).  By hand:
 *   faithfulness          gpt-4o/256: 1    0.5  0.75  1
 *                         mini/512:   0.5  0.5  0.25  (empty: undefined)
 *   factual_correctness(mode=f1)
 *                         gpt-4o/256: 0.8  0.6  0.4   0.2
 *                         mini/512:   0.6  0.6  0.2   0
 * faithfulness is paired on s1..s3 only (s4 has no value for mini/512):
 *   n = 3, mean mini = 1.25/3 = 0.41667, baseline (gpt-4o, the first
 *   configuration) = 2.25/3 = 0.75, diff = (-0.5 + 0 - 0.5)/3 = -1/3.
 * factual_correctness: n = 4, mini 1.4/4 = 0.35, gpt-4o 2/4 = 0.5,
 *   diff = -0.15. */
static const char per_sample_csv[] =
    "sample,model,chunk,judge,metric,value,reason\n"
    "s1,gpt-4o,256,,faithfulness,1,\"2 of 2 statements supported\"\n"
    "s1,gpt-4o,256,,factual_correctness(mode=f1),0.8,\n"
    "s2,gpt-4o,256,,faithfulness,0.5,\"1 of 2, the second unsupported\"\n"
    "s2,gpt-4o,256,,factual_correctness(mode=f1),0.6,\n"
    "s3,gpt-4o,256,,faithfulness,0.75,\n"
    "s3,gpt-4o,256,,factual_correctness(mode=f1),0.4,\n"
    "s4,gpt-4o,256,,faithfulness,1,\n"
    "s4,gpt-4o,256,,factual_correctness(mode=f1),0.2,\n"
    "s1,mini,512,,faithfulness,0.5,\n"
    "s1,mini,512,,factual_correctness(mode=f1),0.6,\n"
    "s2,mini,512,,faithfulness,0.5,\n"
    "s2,mini,512,,factual_correctness(mode=f1),0.6,\n"
    "s3,mini,512,,faithfulness,0.25,\n"
    "s3,mini,512,,factual_correctness(mode=f1),0.2,\n"
    "s4,mini,512,,faithfulness,,\"the reply could not be parsed\"\n"
    "s4,mini,512,,factual_correctness(mode=f1),0,\n";

static th_result compare_samples(const char *csv, const char *out, const char *extra1, const char *extra2)
{
  char *argv[16] = {(char *)th_bin(), "compare", "--per-query", (char *)csv, "-o", (char *)out,
                    "--permutations", "1000", "--bootstrap", "200"};
  int n = 10;
  if (extra1) argv[n++] = (char *)extra1;
  if (extra2) argv[n++] = (char *)extra2;
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

Test(compare_cli, per_sample_csv_of_rag, .timeout = 60)
{
  char *dir = th_fresh_dir(), *out = th_fresh_dir();
  char *csv = write_in(dir, "per_sample.csv", per_sample_csv);
  th_result r = compare_samples(csv, out, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
  cr_assert(strstr(r.out, "baseline: gpt-4o/256"), "%s", r.out);
  cr_assert(strstr(r.out, "the samples with a value for every configuration"), "%s", r.out);
  th_free(&r);
  char *cmp = th_slurp(th_join(out, "compare.csv"), NULL);
  cr_assert(cmp);
  /* The run is the configuration's values joined with '/'; no attribute
   * columns, as for eval's per_query.csv. */
  cr_assert(strncmp(cmp, "run,baseline,measure,n,mean,baseline_mean,diff,", 47) == 0, "%s", cmp);
  size_t lines = 0;
  for (char *p = cmp; *p; p++) lines += *p == '\n';
  cr_assert_eq(lines, 1 + 2, "%s", cmp);
  char f[20][64];
  cr_assert_eq(csv_row(cmp, "mini/512,gpt-4o/256,faithfulness,", f, 20), 16, "%s", cmp);
  cr_assert_str_eq(f[3], "3");
  cr_assert(fabs(strtod(f[4], NULL) - 1.25 / 3) < 1e-12, "mean %s", f[4]);
  cr_assert(fabs(strtod(f[5], NULL) - 0.75) < 1e-12, "baseline_mean %s", f[5]);
  cr_assert(fabs(strtod(f[6], NULL) - -1.0 / 3) < 1e-12, "diff %s", f[6]);
  cr_assert_str_eq(f[15], "values");
  /* factual_correctness(mode=f1) kept its name, parentheses and all (no
   * quoting needed: no comma). */
  cr_assert_eq(csv_row(cmp, "mini/512,gpt-4o/256,factual_correctness(mode=f1),", f, 20), 16, "%s", cmp);
  cr_assert_str_eq(f[3], "4");
  cr_assert(fabs(strtod(f[4], NULL) - 0.35) < 1e-12, "mean %s", f[4]);
  cr_assert(fabs(strtod(f[5], NULL) - 0.5) < 1e-12, "baseline_mean %s", f[5]);
  cr_assert(fabs(strtod(f[6], NULL) - -0.15) < 1e-12, "diff %s", f[6]);
  free(cmp);
  char *agg = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_assert(agg);
  cr_assert(strstr(agg, "gpt-4o/256,faithfulness,faithfulness,,0.75,values\n"), "%s", agg);
  cr_assert(strstr(agg, "gpt-4o/256,num_q,num_q,,3,values\n"), "%s", agg);
  free(agg);

  /* -m takes a metric's name as written. */
  char *o2 = th_fresh_dir();
  r = compare_samples(csv, o2, "-m", "factual_correctness(mode=f1)");
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cmp = th_slurp(th_join(o2, "compare.csv"), NULL);
  cr_assert(cmp && !strstr(cmp, "faithfulness") && strstr(cmp, ",factual_correctness(mode=f1),4,"), "%s", cmp);
  free(cmp);
  r = compare_samples(csv, th_fresh_dir(), "-m", "answer_relevancy");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "per_sample.csv: no values of metric 'answer_relevancy'"), "%s", r.err);
  th_free(&r);

  /* Gates take rag's names too: mini/512's faithfulness 0.41667 < 0.5. */
  char *o3 = th_fresh_dir();
  r = compare_samples(csv, o3, "--gate", "faithfulness>=0.5");
  cr_assert_eq(r.status, 3, "%s\n%s", r.out, r.err);
  cr_assert(has_line(r.out, "\xE2\x9C\x97 faithfulness >= 0.5", "mini/512"), "%s", r.out);
  cr_assert(has_line(r.out, "\xE2\x9C\x93 faithfulness >= 0.5", "gpt-4o/256"), "%s", r.out);
  th_free(&r);
  r = compare_samples(csv, o3, "--fail-if-worse-than", "gpt-4o/256");
  /* Three paired samples: the smallest exact randomization p is 2/8, so
   * nothing is significantly worse and the check passes. */
  cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
  th_free(&r);
}

/* Several judges: a measure per metric and judge, METRIC[JUDGE]; -m METRIC
 * takes every judge's, a gate must name one. */
Test(compare_cli, per_sample_csv_with_judges, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *csv = write_in(dir, "per_sample.csv",
                       "sample,model,judge,metric,value,reason\n"
                       "1,a,j1,faithfulness,1,\n1,a,j2,faithfulness,0.5,\n"
                       "2,a,j1,faithfulness,0.5,\n2,a,j2,faithfulness,0.5,\n"
                       "1,b,j1,faithfulness,0,\n1,b,j2,faithfulness,0.5,\n"
                       "2,b,j1,faithfulness,0.5,\n2,b,j2,faithfulness,1,\n");
  char *out = th_fresh_dir();
  th_result r = compare_samples(csv, out, "-m", "faithfulness");
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *cmp = th_slurp(th_join(out, "compare.csv"), NULL);
  char f[20][64];
  /* j1: b 0.25 vs a 0.75, diff -0.5;  j2: b 0.75 vs a 0.5, diff 0.25. */
  cr_assert_eq(csv_row(cmp, "b,a,faithfulness[j1],", f, 20), 16, "%s", cmp);
  cr_assert(strtod(f[4], NULL) == 0.25 && strtod(f[5], NULL) == 0.75 && strtod(f[6], NULL) == -0.5, "%s", cmp);
  cr_assert_eq(csv_row(cmp, "b,a,faithfulness[j2],", f, 20), 16, "%s", cmp);
  cr_assert(strtod(f[4], NULL) == 0.75 && strtod(f[5], NULL) == 0.5 && strtod(f[6], NULL) == 0.25, "%s", cmp);
  free(cmp);
  r = compare_samples(csv, th_fresh_dir(), "--gate", "faithfulness>=0.5");
  cr_assert_eq(r.status, 1, "%s", r.err);
  cr_assert(strstr(r.err, "gate on 'faithfulness'") && strstr(r.err, "faithfulness[j1], faithfulness[j2]"), "%s",
            r.err);
  th_free(&r);
  r = compare_samples(csv, th_fresh_dir(), "--gate", "faithfulness[j2]>=0.5");
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);

  /* Two configurations that join to one name are refused, not merged. */
  csv = write_in(dir, "clash.csv",
                 "sample,model,chunk,metric,value\n1,a/b,c,m,1\n1,a,b/c,m,0\n");
  r = compare_samples(csv, th_fresh_dir(), NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "clash.csv:3: two configurations read as run 'a/b/c'"), "%s", r.err);
  th_free(&r);
  /* Neither layout. */
  csv = write_in(dir, "other.csv", "sample,value\n1,2\n");
  r = compare_samples(csv, th_fresh_dir(), NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "other.csv:1: expected eval's per_query.csv header (run,query,measure,value) or rag's "
                          "per_sample.csv header"), "%s", r.err);
  th_free(&r);
}
