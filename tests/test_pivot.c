/* test_pivot.c: the pivot engine (src/report/pivot.c) called as a library:
 * axis positions, cell lookup, ambiguity and significance marks on a small
 * hand-written aggregate.csv and compare.csv. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "helpers.h"
#include "report/pivot.h"

/* 2 models x 2 rerankers, m2+ce missing; two measures, and num_q. */
#define AGG                                  \
  "run,model,reranker,measure,value\n"       \
  "a,m1,none,nDCG@10,0.25\n"                 \
  "a,m1,none,RR@10,0.5\n"                    \
  "a,m1,none,num_q,10\n"                     \
  "b,m1,ce,nDCG@10,0.31\n"                   \
  "b,m1,ce,RR@10,0.6\n"                      \
  "c,m2,none,nDCG@10,0.27\n"                 \
  "c,m2,none,RR@10,\n"

Test(pivot, default_axes_runs_by_measures)
{
  const char *path = th_write_temp(0, "aggregate.csv", AGG);
  rs__agg t = {0};
  rs__pivot p = {0};
  rs_error err = {0};
  cr_assert_eq(rs__agg_load(path, &t, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(t.n_keys, 4);
  cr_assert_eq(t.n_rows, 6, "the row with an empty value is skipped");
  rs__pivot_spec spec = {0};
  cr_assert_eq(rs__pivot_make(&p, &t, &spec, &err), RS_OK, "%s", err.msg);
  cr_assert(p.n_rkeys == 1 && p.rows[0] == RS__AGG_RUN && p.n_ckeys == 1 && p.cols[0] == 3);
  cr_assert_eq(p.n_r, 3);
  cr_assert_eq(p.n_c, 2, "num_q is not shown by default");
  /* cells: table rows (0-based, in file order without the skipped one), SIZE_MAX = empty */
  const size_t want[] = {0, 1, 3, 4, 5, SIZE_MAX};
  for (size_t i = 0; i < 6; i++) cr_assert_eq(p.cell[i], want[i], "cell %zu: %zu", i, p.cell[i]);
  cr_assert_str_eq(rs__agg_value(&t, p.r_first[2], RS__AGG_RUN), "c");
  rs__pivot_free(&p);
  rs__agg_free(&t);
}

Test(pivot, measure_order_filters_and_ambiguity)
{
  const char *path = th_write_temp(0, "aggregate.csv", AGG);
  rs__agg t = {0};
  rs__pivot p = {0};
  rs_error err = {0};
  cr_assert_eq(rs__agg_load(path, &t, &err), RS_OK, "%s", err.msg);
  const char *m[] = {"RR@10", "ndcg_cut.10"}; /* -m order; eval's spelling resolved */
  const char *w[] = {"model=m1"};
  rs__pivot_spec spec = {.rows = "reranker", .cols = "measure", .measures = m, .n_measures = 2, .where = w,
                         .n_where = 1};
  cr_assert_eq(rs__pivot_make(&p, &t, &spec, &err), RS_OK, "%s", err.msg);
  cr_assert(p.n_r == 2 && p.n_c == 2);
  cr_assert_eq(p.cell[0], 1, "none x RR@10 is row 1 (a)");
  cr_assert_eq(p.cell[1], 0, "none x nDCG@10 is row 0 (a)");
  cr_assert_eq(p.cell[2], 4);
  cr_assert_eq(p.cell[3], 3);
  rs__pivot_free(&p);
  /* Without the filter, reranker=none x nDCG@10 matches a and c. */
  spec.n_where = 0;
  cr_assert_eq(rs__pivot_make(&p, &t, &spec, &err), RS_USAGE);
  cr_assert(strstr(err.msg, "differ in model (m1, m2)") && strstr(err.msg, "--where model=m1"), "%s", err.msg);
  rs__pivot_free(&p);
  spec.rows = "run,bogus";
  cr_assert_eq(rs__pivot_make(&p, &t, &spec, &err), RS_USAGE);
  cr_assert(strstr(err.msg, "--rows: unknown key 'bogus'") && strstr(err.msg, "are: run, model, reranker, measure)"),
            "%s", err.msg);
  rs__pivot_free(&p);
  rs__agg_free(&t);
}

Test(pivot, significance_marks)
{
  const char *agg = th_write_temp(0, "aggregate.csv", AGG);
  const char *cmp = th_write_temp(1, "compare.csv",
                                  "run,baseline,measure,p_perm_adj,p_ttest_adj\n"
                                  "b,a,nDCG@10,0.01,0.2\n"
                                  "c,a,nDCG@10,0.3,0.04\n");
  rs__agg t = {0};
  rs__pivot p = {0};
  rs__pivot_sig s = {.base_run = -1};
  rs_error err = {0};
  rs__pivot_spec spec = {0};
  cr_assert_eq(rs__agg_load(agg, &t, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__pivot_make(&p, &t, &spec, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__pivot_sig_load(&p, cmp, NULL, 0, 0.05, &s, &err), RS_OK, "%s", err.msg);
  cr_assert(s.on && s.base_run == 0);
  cr_assert_str_eq(s.baseline, "a");
  /* table rows: 0 a nDCG, 1 a RR, 2 a num_q, 3 b nDCG, 4 b RR, 5 c nDCG */
  const unsigned char want_perm[6] = {0, 0, 0, 1, 0, 0}, want_t[6] = {0, 0, 0, 0, 0, 1};
  cr_assert(memcmp(s.mark, want_perm, 6) == 0, "p_perm_adj marks");
  cr_assert_eq(s.n_untested, 1);
  cr_assert_str_eq(s.untested[0], "RR@10");
  rs__pivot_sig_free(&s);
  cr_assert_eq(rs__pivot_sig_load(&p, cmp, "a", 1, 0.05, &s, &err), RS_OK, "%s", err.msg);
  cr_assert(memcmp(s.mark, want_t, 6) == 0, "p_ttest_adj marks");
  rs__pivot_sig_free(&s);
  cr_assert_eq(rs__pivot_sig_load(&p, cmp, "zz", 0, 0.05, &s, &err), RS_USAGE);
  cr_assert(strstr(err.msg, "--baseline zz:"), "%s", err.msg);
  rs__pivot_sig_free(&s);
  rs__pivot_free(&p);
  rs__agg_free(&t);
}
