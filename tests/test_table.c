/* test_table.c: `ragsweep table` on hand-written aggregate.csv and
 * compare.csv files (exact output text, messages and exit codes), end to end
 * on a generated sweep, and the streaming CSV reader (rs__csv_read) it uses. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/csvio.h"
#include "helpers.h"

/* A sweep of 2 models x 2 chunk sizes x 2 rerankers without m2 + ce; the
 * measures are not in the canonical order, to show that -m orders them. */
#define SWEEP_AGG                                        \
  "run,chunk,model,reranker,measure,value\n"             \
  "m1_256_none,256,m1,none,nDCG@10,0.25\n"               \
  "m1_256_none,256,m1,none,Success@10,0.4\n"             \
  "m1_256_none,256,m1,none,Success@1,0.1\n"              \
  "m1_256_none,256,m1,none,Success@3,0.2\n"              \
  "m1_256_none,256,m1,none,Success@5,0.3\n"              \
  "m1_256_none,256,m1,none,num_q,100\n"                  \
  "m1_256_ce,256,m1,ce,nDCG@10,0.31\n"                   \
  "m1_256_ce,256,m1,ce,Success@10,0.45\n"                \
  "m1_256_ce,256,m1,ce,Success@1,0.15\n"                 \
  "m1_256_ce,256,m1,ce,Success@3,0.28\n"                 \
  "m1_256_ce,256,m1,ce,Success@5,0.36\n"                 \
  "m1_256_ce,256,m1,ce,num_q,100\n"                      \
  "m1_512_none,512,m1,none,nDCG@10,0.27\n"               \
  "m1_512_none,512,m1,none,Success@10,0.41\n"            \
  "m1_512_none,512,m1,none,Success@1,0.12\n"             \
  "m1_512_none,512,m1,none,Success@3,0.22\n"             \
  "m1_512_none,512,m1,none,Success@5,0.33\n"             \
  "m1_512_none,512,m1,none,num_q,100\n"                  \
  "m1_512_ce,512,m1,ce,nDCG@10,0.34\n"                   \
  "m1_512_ce,512,m1,ce,Success@10,0.47\n"                \
  "m1_512_ce,512,m1,ce,Success@1,0.18\n"                 \
  "m1_512_ce,512,m1,ce,Success@3,0.3\n"                  \
  "m1_512_ce,512,m1,ce,Success@5,0.39\n"                 \
  "m1_512_ce,512,m1,ce,num_q,100\n"                      \
  "m2_256_none,256,m2,none,nDCG@10,0.14\n"               \
  "m2_256_none,256,m2,none,Success@10,0.28\n"            \
  "m2_256_none,256,m2,none,Success@1,0.05\n"             \
  "m2_256_none,256,m2,none,Success@3,0.11\n"             \
  "m2_256_none,256,m2,none,Success@5,0.19\n"             \
  "m2_256_none,256,m2,none,num_q,100\n"                  \
  "m2_512_none,512,m2,none,nDCG@10,0.156789\n"           \
  "m2_512_none,512,m2,none,Success@10,0.3\n"             \
  "m2_512_none,512,m2,none,Success@1,0.06\n"             \
  "m2_512_none,512,m2,none,Success@3,0.125\n"            \
  "m2_512_none,512,m2,none,Success@5,0.2\n"              \
  "m2_512_none,512,m2,none,num_q,100\n"

/* Three runs, a baseline, a run name that needs quotes. */
#define SIG_AGG                              \
  "run,model,reranker,measure,value\n"       \
  "base,m1,none,nDCG@10,0.5\n"               \
  "base,m1,none,Success@1,0.25\n"            \
  "base,m1,none,num_q,100\n"                 \
  "\"rr, v2\",m1,ce,nDCG@10,0.61234\n"       \
  "\"rr, v2\",m1,ce,Success@1,0.3\n"         \
  "\"rr, v2\",m1,ce,num_q,100\n"             \
  "m2,m2,none,nDCG@10,0.45\n"                \
  "m2,m2,none,Success@1,0.2\n"               \
  "m2,m2,none,num_q,100\n"

/* The unadjusted p-values are all significant, so a mark shows that the
 * adjusted column was read; m2's permutation p is not available (empty). */
#define SIG_CMP                                                                                                    \
  "run,model,reranker,baseline,measure,n,mean,baseline_mean,diff,ci_low,ci_high,effect_size,p_ttest,p_perm,"      \
  "p_ttest_adj,p_perm_adj\n"                                                                                       \
  "\"rr, v2\",m1,ce,base,nDCG@10,100,0.61234,0.5,0.11234,0.05,0.17,0.4,0.001,0.002,0.003,0.004\n"                 \
  "\"rr, v2\",m1,ce,base,Success@1,100,0.3,0.25,0.05,-0.01,0.11,0.1,0.001,0.01,0.045,0.07\n"                      \
  "m2,m2,none,base,nDCG@10,100,0.45,0.5,-0.05,-0.1,0,0.2,0.001,0.001,0.008,\n"

/* Runs `ragsweep table PATH ARGS` (ARGS split on spaces). */
static th_result run_table(const char *path, const char *args)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", args);
  char *argv[64];
  int n = th_split(buf, th_bin(), "table", argv, 60);
  argv[n++] = (char *)path;
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

static void expect_output(const char *path, const char *args, const char *want)
{
  th_result r = run_table(path, args);
  cr_assert_eq(r.status, 0, "table %s: exit %d: %s", args, r.status, r.err);
  cr_expect_str_eq(r.out, want, "table %s:\n--- got ---\n%s--- want ---\n%s", args, r.out, want);
  cr_expect_str_eq(r.err, "", "table %s: stderr: %s", args, r.err);
  th_free(&r);
}

static void expect_error(const char *path, const char *args, int code, const char *message)
{
  th_result r = run_table(path, args);
  cr_expect_eq(r.status, code, "table %s: exit %d, want %d (stderr: %s)", args, r.status, code, r.err);
  cr_expect(strstr(r.err, message), "table %s: stderr lacks \"%s\"; it says: %s", args, message, r.err);
  cr_expect_eq(r.out_len, 0, "table %s: errors print nothing on stdout, got: %s", args, r.out);
  th_free(&r);
}

/* th_write_temp's path, copied (the next call on its slot reuses the buffer). */
static const char *temp_file(int slot, const char *name, const char *text)
{
  static char paths[8][256];
  const char *p = th_write_temp(slot, name, text);
  cr_assert(p, "cannot write %s", name);
  for (int i = 0; i < 8; i++)
    if (!paths[i][0] || strcmp(paths[i], p) == 0) return strcpy(paths[i], p);
  cr_assert_fail("too many temp files");
  return NULL;
}

/* The folder of a file th_write_temp wrote. */
static char *dir_of(const char *path)
{
  static char d[256];
  snprintf(d, sizeof d, "%s", path);
  *strrchr(d, '/') = '\0';
  return d;
}

/* --- pivots --------------------------------------------------------------------------- */

Test(table, default_pivot_runs_by_measures)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  const char *want = "| run         | nDCG@10 | Success@10 | Success@1 | Success@3 | Success@5 |\n"
                     "| :---------- | ------: | ---------: | --------: | --------: | --------: |\n"
                     "| m1_256_none |  0.2500 |     0.4000 |    0.1000 |    0.2000 |    0.3000 |\n"
                     "| m1_256_ce   |  0.3100 |     0.4500 |    0.1500 |    0.2800 |    0.3600 |\n"
                     "| m1_512_none |  0.2700 |     0.4100 |    0.1200 |    0.2200 |    0.3300 |\n"
                     "| m1_512_ce   |  0.3400 |     0.4700 |    0.1800 |    0.3000 |    0.3900 |\n"
                     "| m2_256_none |  0.1400 |     0.2800 |    0.0500 |    0.1100 |    0.1900 |\n"
                     "| m2_512_none |  0.1568 |     0.3000 |    0.0600 |    0.1250 |    0.2000 |\n";
  expect_output(agg, "", want);
  expect_output(dir_of(agg), "", want); /* the folder finds its aggregate.csv */
}

Test(table, measure_list_expansion_and_trec_eval_names)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  expect_output(agg, "-m Success@{1,3,5,10} -m ndcg_cut.10 --decimals 3",
                "| run         | Success@1 | Success@3 | Success@5 | Success@10 | nDCG@10 |\n"
                "| :---------- | --------: | --------: | --------: | ---------: | ------: |\n"
                "| m1_256_none |     0.100 |     0.200 |     0.300 |      0.400 |   0.250 |\n"
                "| m1_256_ce   |     0.150 |     0.280 |     0.360 |      0.450 |   0.310 |\n"
                "| m1_512_none |     0.120 |     0.220 |     0.330 |      0.410 |   0.270 |\n"
                "| m1_512_ce   |     0.180 |     0.300 |     0.390 |      0.470 |   0.340 |\n"
                "| m2_256_none |     0.050 |     0.110 |     0.190 |      0.280 |   0.140 |\n"
                "| m2_512_none |     0.060 |     0.125 |     0.200 |      0.300 |   0.157 |\n");
  /* the same measure named twice is shown once; num_q is shown when asked for */
  expect_output(agg, "-m Hit@1 -m success.1 -m num_q --decimals 0 --where model=m2",
                "(model=m2)\n"
                "\n"
                "| run         | Success@1 | num_q |\n"
                "| :---------- | --------: | ----: |\n"
                "| m2_256_none |         0 |   100 |\n"
                "| m2_512_none |         0 |   100 |\n");
}

Test(table, two_attributes_with_where)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  expect_output(agg, "--rows model --cols chunk --where reranker=none -m nDCG@10",
                "**nDCG@10** (reranker=none)\n"
                "\n"
                "| model | chunk=256 | chunk=512 |\n"
                "| :---- | --------: | --------: |\n"
                "| m1    |    0.2500 |    0.2700 |\n"
                "| m2    |    0.1400 |    0.1568 |\n");
  /* two row keys; m2 has no reranked run: empty cells */
  expect_output(agg, "--rows model,chunk --cols reranker -m Success@1",
                "**Success@1**\n"
                "\n"
                "| model | chunk | reranker=none | reranker=ce |\n"
                "| :---- | :---- | ------------: | ----------: |\n"
                "| m1    | 256   |        0.1000 |      0.1500 |\n"
                "| m1    | 512   |        0.1200 |      0.1800 |\n"
                "| m2    | 256   |        0.0500 |           – |\n"
                "| m2    | 512   |        0.0600 |           – |\n");
  /* measures as rows, model as columns; two values of one --where key */
  expect_output(agg, "--rows chunk,measure --cols model --where chunk=512 --where chunk=256 --where reranker=ce "
                     "-m Success@{1,10}",
                "(reranker=ce)\n"
                "\n"
                "| chunk | measure    | model=m1 |\n" /* no m2 row is left: no m2 column */
                "| :---- | :--------- | -------: |\n"
                "| 256   | Success@1  |   0.1500 |\n"
                "| 256   | Success@10 |   0.4500 |\n"
                "| 512   | Success@1  |   0.1800 |\n"
                "| 512   | Success@10 |   0.4700 |\n");
}

Test(table, reranker_and_measure_columns)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  expect_output(agg, "--rows model,chunk --cols reranker,measure -m Success@{1,5} --format csv",
                "model,chunk,reranker=none / Success@1,reranker=none / Success@5,reranker=ce / Success@1,"
                "reranker=ce / Success@5\n"
                "m1,256,0.1000,0.3000,0.1500,0.3600\n"
                "m1,512,0.1200,0.3300,0.1800,0.3900\n"
                "m2,256,0.0500,0.1900,,\n"
                "m2,512,0.0600,0.2000,,\n");
}

Test(table, bold_best)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  /* per column when measures are the columns */
  expect_output(agg, "--where chunk=512 -m Success@1 -m nDCG@10 --bold-best",
                "(chunk=512)\n"
                "\n"
                "| run         | Success@1  | nDCG@10    |\n"
                "| :---------- | ---------: | ---------: |\n"
                "| m1_512_none |     0.1200 |     0.2700 |\n"
                "| m1_512_ce   | **0.1800** | **0.3400** |\n"
                "| m2_512_none |     0.0600 |     0.1568 |\n");
  /* per row when measures are the rows; ties shown equal are all bold */
  expect_output(agg, "--rows measure --cols run --where reranker=none -m Success@10 --decimals 1 --bold-best",
                "(reranker=none)\n"
                "\n"
                "| measure    | m1_256_none | m1_512_none | m2_256_none | m2_512_none |\n"
                "| :--------- | ----------: | ----------: | ----------: | ----------: |\n"
                "| Success@10 |     **0.4** |     **0.4** |         0.3 |         0.3 |\n");
}

Test(table, csv_format_and_decimals)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  expect_output(agg, "--format csv --no-sig",
                "run,nDCG@10,Success@1\n"
                "base,0.5000,0.2500\n"
                "\"rr, v2\",0.6123,0.3000\n"
                "m2,0.4500,0.2000\n");
  expect_output(agg, "--format csv --no-sig --decimals 2 -m nDCG@10",
                "run,nDCG@10\n"
                "base,0.50\n"
                "\"rr, v2\",0.61\n"
                "m2,0.45\n");
  expect_output(agg, "--format csv --no-sig --decimals 0 --rows measure",
                "measure,base,\"rr, v2\",m2\n"
                "nDCG@10,0,1,0\n" /* printf rounds 0.5 to even */
                "Success@1,0,0,0\n");
}

Test(table, out_file_written_by_rename)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  char out[512];
  snprintf(out, sizeof out, "%s/table.md", dir_of(agg));
  char args[700];
  snprintf(args, sizeof args, "--no-sig -m nDCG@10 -o %s", out);
  th_result r = run_table(agg, args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect_eq(r.out_len, 0, "stdout: %s", r.out);
  th_free(&r);
  char *text = th_slurp(out, NULL);
  cr_assert(text, "no %s", out);
  cr_expect_str_eq(text, "| run    | nDCG@10 |\n"
                         "| :----- | ------: |\n"
                         "| base   |  0.5000 |\n"
                         "| rr, v2 |  0.6123 |\n"
                         "| m2     |  0.4500 |\n");
  free(text);
}

/* --- significance marks ------------------------------------------------------------------ */

Test(table, sig_marks_perm_default)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  temp_file(0, "compare.csv", SIG_CMP);
  expect_output(agg, "",
                "| run             | nDCG@10 | Success@1 |\n"
                "| :-------------- | ------: | --------: |\n"
                "| base (baseline) | 0.5000  |    0.2500 |\n"
                "| rr, v2          | 0.6123† |    0.3000 |\n"
                "| m2              | 0.4500  |    0.2000 |\n"
                "\n"
                "† p < 0.05 vs baseline base (permutation test, adjusted p-values from compare.csv)\n");
  /* --no-sig: plain numbers */
  expect_output(agg, "--no-sig -m nDCG@10",
                "| run    | nDCG@10 |\n"
                "| :----- | ------: |\n"
                "| base   |  0.5000 |\n"
                "| rr, v2 |  0.6123 |\n"
                "| m2     |  0.4500 |\n");
}

Test(table, sig_marks_ttest_and_alpha)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  temp_file(0, "compare.csv", SIG_CMP);
  expect_output(agg, "--test ttest",
                "| run             | nDCG@10 | Success@1 |\n"
                "| :-------------- | ------: | --------: |\n"
                "| base (baseline) | 0.5000  |   0.2500  |\n"
                "| rr, v2          | 0.6123† |   0.3000† |\n"
                "| m2              | 0.4500† |   0.2000  |\n"
                "\n"
                "† p < 0.05 vs baseline base (t-test, adjusted p-values from compare.csv)\n");
  expect_output(agg, "--test ttest --alpha 0.005 --format csv",
                "run,nDCG@10,Success@1\n"
                "base (baseline),0.5000,0.2500\n"
                "\"rr, v2\",0.6123†,0.3000\n"
                "m2,0.4500,0.2000\n");
  expect_output(agg, "--test perm --alpha 0.1 --decimals 2",
                "| run             | nDCG@10 | Success@1 |\n"
                "| :-------------- | ------: | --------: |\n"
                "| base (baseline) |   0.50  |     0.25  |\n"
                "| rr, v2          |   0.61† |     0.30† |\n"
                "| m2              |   0.45  |     0.20  |\n"
                "\n"
                "† p < 0.1 vs baseline base (permutation test, adjusted p-values from compare.csv)\n");
}

Test(table, sig_baseline_cells_when_runs_are_not_a_key)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  temp_file(0, "compare.csv", SIG_CMP);
  expect_output(agg, "--rows model --cols reranker -m nDCG@10 --test ttest",
                "**nDCG@10**\n"
                "\n"
                "| model | reranker=none | reranker=ce |\n"
                "| :---- | ------------: | ----------: |\n"
                "| m1    |       0.5000° |     0.6123† |\n"
                "| m2    |       0.4500† |          –  |\n"
                "\n"
                "† p < 0.05 vs baseline base (t-test, adjusted p-values from compare.csv)\n"
                "° the baseline run, base\n");
}

/* Columns are found by name, --sig names the file, --baseline picks one of
 * several, and a measure compare.csv does not test is named. */
Test(table, sig_file_baseline_choice_and_untested)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  const char *cmp = temp_file(1, "cmp.csv",
                                  "p_perm_adj,measure,baseline,run,p_ttest_adj\n"
                                  "0.01,nDCG@10,base,m2,0.5\n"
                                  "0.5,nDCG@10,base,\"rr, v2\",0.5\n"
                                  "0.01,nDCG@10,m2,base,0.5\n"
                                  "0.01,nDCG@10,m2,\"rr, v2\",0.5\n");
  char args[512];
  snprintf(args, sizeof args, "--sig %s --baseline base", cmp);
  expect_output(agg, args,
                "| run             | nDCG@10 | Success@1 |\n"
                "| :-------------- | ------: | --------: |\n"
                "| base (baseline) | 0.5000  |    0.2500 |\n"
                "| rr, v2          | 0.6123  |    0.3000 |\n"
                "| m2              | 0.4500† |    0.2000 |\n"
                "\n"
                "† p < 0.05 vs baseline base (permutation test, adjusted p-values from compare.csv); no "
                "comparisons for Success@1\n");
  snprintf(args, sizeof args, "--sig %s --baseline m2 --rows measure", cmp);
  expect_output(agg, args,
                "| measure   | base    | rr, v2  | m2 (baseline) |\n"
                "| :-------- | ------: | ------: | ------------: |\n"
                "| nDCG@10   | 0.5000† | 0.6123† |        0.4500 |\n"
                "| Success@1 | 0.2500  | 0.3000  |        0.2000 |\n"
                "\n"
                "† p < 0.05 vs baseline m2 (permutation test, adjusted p-values from compare.csv); no "
                "comparisons for Success@1\n");
  snprintf(args, sizeof args, "--sig %s", cmp);
  expect_error(agg, args, 1, "cmp.csv compares with several baselines (base, m2); choose one with --baseline");
  snprintf(args, sizeof args, "--sig %s --baseline zz", cmp);
  expect_error(agg, args, 1, "--baseline zz: ");
}

Test(table, sig_input_errors)
{
  const char *agg = temp_file(0, "aggregate.csv", SIG_AGG);
  const char *no_p = temp_file(1, "no_p.csv", "run,baseline,measure,p_perm\nm2,base,nDCG@10,0.1\n");
  const char *bad_p = temp_file(1, "bad_p.csv", "run,baseline,measure,p_perm_adj\nm2,base,nDCG@10,0.1\n"
                                                    "m2,base,Success@1,small\n");
  const char *twice = temp_file(1, "twice.csv", "run,baseline,measure,p_perm_adj\nm2,base,nDCG@10,0.1\n"
                                                    "m2,base,nDCG@10,0.2\n");
  char args[512];
  snprintf(args, sizeof args, "--sig %s", no_p);
  expect_error(agg, args, 2, "no_p.csv:1: expected a header with columns run, baseline, measure and p_perm_adj");
  snprintf(args, sizeof args, "--sig %s --test ttest", no_p);
  expect_error(agg, args, 2, "measure and p_ttest_adj");
  snprintf(args, sizeof args, "--sig %s", bad_p);
  expect_error(agg, args, 2, "bad_p.csv:3: expected a number (or nothing) in column 'p_perm_adj', found 'small'");
  snprintf(args, sizeof args, "--sig %s", twice);
  expect_error(agg, args, 2, "twice.csv:3: run 'm2' is compared with baseline 'base' on nDCG@10 twice (also line 2)");
  /* options that need compare.csv when there is none */
  expect_error(agg, "--alpha 0.01", 2, "--alpha needs compare.csv, and there is none beside");
  expect_error(agg, "--sig /nonexistent/compare.csv", 2, "/nonexistent/compare.csv: cannot open");
  expect_error(agg, "--sig x.csv --no-sig", 1, "--sig and --no-sig exclude each other");
}

/* --- errors ---------------------------------------------------------------------------------- */

Test(table, ambiguous_cell)
{
  const char *agg = temp_file(0, "aggregate.csv", SWEEP_AGG);
  expect_error(agg, "--rows model -m nDCG@10", 1,
               "the cell model=m1, measure=nDCG@10 matches 4 rows of ");
  expect_error(agg, "--rows model -m nDCG@10", 1,
               "aggregate.csv (lines 2, 8, 14, 20) that differ in chunk (256, 512), reranker (none, ce), run "
               "(m1_256_none, m1_256_ce, m1_512_none, ...); choose one with --where (e.g. --where chunk=256) or "
               "add chunk to --rows or --cols");
  /* only the measure differs: -m is the way out */
  expect_error(agg, "--rows model,chunk --cols reranker", 1,
               "the cell model=m1, chunk=256, reranker=none matches 5 rows of ");
  expect_error(agg, "--rows model,chunk --cols reranker", 1,
               "that differ in measure (nDCG@10, Success@10, Success@1, ...); choose one with -m (e.g. -m nDCG@10) "
               "or add measure to --rows or --cols");
}

struct error_case {
  char name[40];
  char agg[300];
  char args[120];
  int exit_code;
  char message[200];
};

#define OK_AGG "run,model,measure,value\na,m1,nDCG@10,0.5\nb,m2,nDCG@10,0.25\n"

ParameterizedTestParameters(table_errors, inputs)
{
  static struct error_case cases[] = {
      {"no measure column", "run,model,value\na,m1,0.5\n", "", 2,
       "aggregate.csv:1: expected a header run,<attributes...>,measure,value (as 'ragsweep eval' writes "
       "aggregate.csv), found 'run,model,value': no column 'measure'"},
      {"no value column", "run,model,measure\na,m1,P@1\n", "", 2, "found 'run,model,measure': no column 'value'"},
      {"no run column", "name,measure,value\na,P@1,1\n", "", 2, "found 'name,measure,value': no column 'run'"},
      {"measure before run", "measure,run,value\nP@1,a,1\n", "", 2, "'measure' comes before 'run'"},
      {"column twice", "run,model,model,measure,value\n", "", 2,
       "aggregate.csv:1: the header names column 'model' twice"},
      {"non-numeric value", "run,model,measure,value\na,m1,P@1,0.5\nb,m1,P@1,n/a\n", "", 2,
       "aggregate.csv:3: expected a number in column 'value', found 'n/a'"},
      {"short row", "run,model,measure,value\na,m1,P@1,0.5\n\nb,P@1,0.5\n", "", 2,
       "aggregate.csv:4: expected 4 fields, as in the header, found 3"},
      {"stray quote", "run,model,measure,value\na,m\"1,P@1,0.5\n", "", 2,
       "aggregate.csv:2: malformed CSV in field 2: a quote inside an unquoted field"},
      {"open quote", "run,model,measure,value\na,m1,P@1,0.5\n\"b,m1,P@1,0.5\n", "", 2,
       "aggregate.csv:3: malformed CSV: the file ends inside a quoted field (opened after line 2)"},
      {"empty file", "", "", 2, "aggregate.csv: empty file (expected a header run,<attributes...>,measure,value)"},
      {"header only", "run,measure,value\n", "", 2, "aggregate.csv: no rows after the header"},
      {"duplicate rows", OK_AGG "a,m1,nDCG@10,0.5\n", "", 2,
       "aggregate.csv: the cell run=a, measure=nDCG@10 is given twice (lines 2, 4)"},
      {"unknown rows key", OK_AGG, "--rows chunk", 1,
       "--rows: unknown key 'chunk' (the keys of "},
      {"unknown cols key", OK_AGG, "--cols model,size", 1, "aggregate.csv are: run, model, measure)"},
      {"key twice", OK_AGG, "--rows model --cols measure,model", 1, "key 'model' is given twice in --rows and --cols"},
      {"where without =", OK_AGG, "--where model", 1, "--where model: expected KEY=VALUE"},
      {"unknown where key", OK_AGG, "--where size=1", 1, "--where size=1: unknown key 'size'"},
      {"unknown where value", OK_AGG, "--where model=m3", 1,
       "--where model=m3: no row of "},
      {"unknown where value lists", OK_AGG, "--where model=m3", 1, "has model 'm3' (its values: m1, m2)"},
      {"unknown measure", OK_AGG, "-m foo", 1, "-m foo: unknown measure: not in "},
      {"measure not in file", OK_AGG, "-m R@{5,10}", 1,
       "-m R@{5,10}: "},
      {"measure not in file lists", OK_AGG, "-m R@{5,10}", 1, "has no measure 'R@5' (its measures: nDCG@10)"},
      {"bad format", OK_AGG, "--format html", 1, "invalid value 'html' for --format"},
      {"bad decimals", OK_AGG, "--decimals 40", 1, "invalid value '40' for --decimals"},
      {"bad test", OK_AGG, "--test wilcoxon", 1, "invalid value 'wilcoxon' for --test"},
      {"bad alpha", OK_AGG, "--alpha 0", 1, "invalid value '0' for --alpha"},
      {"unknown option", OK_AGG, "--colour", 1, "unknown option '--colour'"},
  };
  return cr_make_param_array(struct error_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct error_case *c, table_errors, inputs)
{
  const char *agg = temp_file(0, "aggregate.csv", c->agg);
  th_result r = run_table(agg, c->args);
  cr_expect_eq(r.status, c->exit_code, "%s: exit %d, want %d (stderr: %s)", c->name, r.status, c->exit_code, r.err);
  cr_expect(strstr(r.err, c->message), "%s: stderr lacks \"%s\"; it says: %s", c->name, c->message, r.err);
  cr_expect(strncmp(r.err, "ragsweep table: ", 16) == 0, "%s: %s", c->name, r.err);
  cr_expect_eq(r.out_len, 0, "%s: stdout: %s", c->name, r.out);
  th_free(&r);
}

Test(table_errors, paths_and_arguments)
{
  expect_error("/nonexistent/aggregate.csv", "", 2, "/nonexistent/aggregate.csv: cannot open");
  const char *other = temp_file(0, "other.txt", "x\n");
  expect_error(dir_of(other), "", 2, "no aggregate.csv in this folder");
  char *argv[] = {(char *)th_bin(), "table", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "expected PATH"), "%s", r.err);
  th_free(&r);
}

Test(table, help)
{
  char *argv[] = {(char *)th_bin(), "table", "--help", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 0);
  const char *needles[] = {"usage: ragsweep table PATH", "--rows KEYS", "--cols KEYS", "--where KEY=VALUE",
                           "--format md|csv", "--decimals N", "--bold-best", "--sig FILE", "--no-sig",
                           "--baseline RUN", "--test perm|ttest", "--alpha A", "example:", "exit status"};
  for (size_t i = 0; i < sizeof needles / sizeof *needles; i++)
    cr_expect(strstr(r.out, needles[i]), "help lacks %s", needles[i]);
  th_free(&r);
  char *argv2[] = {(char *)th_bin(), "help", NULL};
  r = th_run(NULL, argv2, NULL, NULL);
  cr_expect(strstr(r.out, "  table "), "ragsweep help lacks table: %s", r.out);
  th_free(&r);
}

/* --- end to end: gen_sweep, eval, table ---------------------------------------------------------- */

static char *field(char *line, int n)
{
  char *save = NULL, *tok = strtok_r(line, ",", &save);
  for (int i = 0; tok && i < n; i++) tok = strtok_r(NULL, ",", &save);
  return tok;
}

Test(table, end_to_end_matches_aggregate)
{
  char dir[] = "/tmp/ragsweep-table-XXXXXX";
  cr_assert(mkdtemp(dir));
  th_note_dir(dir);
  char gen[4096], corpus[600], out[600];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  snprintf(corpus, sizeof corpus, "%s/c.h5", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  char *gargv[] = {gen, "-o", corpus, "--queries", "300", "--k", "20", "--seed", "7", "--grid",
                   "model=ma,mb;chunk=256;reranker=none,ce", NULL};
  th_result g = th_run(NULL, gargv, NULL, NULL);
  cr_assert_eq(g.status, 0, "gen_sweep: %s", g.err);
  th_free(&g);
  char *eargv[] = {(char *)th_bin(), "eval", corpus, "-o", out, "--quiet", "--top", "0", "-m", "Success@{1,5}",
                   "-m", "nDCG@10", NULL};
  th_result e = th_run(NULL, eargv, NULL, NULL);
  cr_assert_eq(e.status, 0, "eval: %s", e.err);
  th_free(&e);

  /* header: run,chunk,model,reranker,measure,base,cutoff,value,queries */
  char agg_path[700];
  snprintf(agg_path, sizeof agg_path, "%s/aggregate.csv", out);
  char *agg = th_slurp(agg_path, NULL);
  cr_assert(agg);
  cr_assert(strncmp(agg, "run,chunk,model,reranker,measure,base,cutoff,value,queries\n", 59) == 0, "%s", agg);
  double want = NAN;
  for (char *save = NULL, *line = strtok_r(agg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char a[256], b[256], c[256];
    snprintf(a, sizeof a, "%s", line);
    snprintf(b, sizeof b, "%s", line);
    snprintf(c, sizeof c, "%s", line);
    char *model = field(a, 2), *rr = field(b, 3), *measure = field(c, 4);
    if (model && rr && measure && !strcmp(model, "mb") && !strcmp(rr, "ce") && !strcmp(measure, "nDCG@10"))
      want = strtod(field(line, 7), NULL);
  }
  free(agg);
  cr_assert(!isnan(want), "no mb/ce nDCG@10 row in %s", agg_path);

  char args[] = "--rows model --cols reranker,measure -m nDCG@10 -m Success@1 --format csv";
  th_result r = run_table(out, args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  /* runs are in bytewise name order: ma_256_ce first */
  const char *header = "model,reranker=ce / nDCG@10,reranker=ce / Success@1,reranker=none / nDCG@10,"
                       "reranker=none / Success@1\n";
  cr_assert(strncmp(r.out, header, strlen(header)) == 0, "%s", r.out);
  char line[128];
  snprintf(line, sizeof line, "\nmb,%.4f,", want);
  cr_expect(strstr(r.out, line), "table lacks '%s' (aggregate: %.17g):\n%s", line + 1, want, r.out);
  th_free(&r);
}

/* --- the CSV reader ------------------------------------------------------------------------------ */

typedef struct {
  char text[4096];
  size_t len, rows, stop_at;
} collect;

static rs_code collect_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  collect *c = ctx;
  c->rows++;
  c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "%zu:", line);
  for (size_t i = 0; i < n; i++) c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "[%s]", f[i]);
  c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "\n");
  if (c->stop_at && line >= c->stop_at) return rs__fail(err, RS_USAGE, "stopped at line %zu", line);
  return RS_OK;
}

Test(table_csvread, fields_and_lines)
{
  const char *path = temp_file(0, "r.csv",
                                   "\xEF\xBB\xBF"
                                   "run,query,measure,value\r\n"
                                   "\r\n"
                                   "\"a,b\",\"say \"\"hi\"\"\",,\" spaced \"\r\n"
                                   "\n"
                                   "x,\"two\nlines\",P@1, 1\n"
                                   "\"multi\nline\nfirst\",q,m,v\n"
                                   "last,no,newline,0.5");
  collect c = {0};
  rs_error err = {0};
  cr_assert_eq(rs__csv_read(path, collect_row, &c, &err), RS_OK, "%s", err.msg);
  cr_expect_str_eq(c.text, "1:[run][query][measure][value]\n"
                           "3:[a,b][say \"hi\"][][ spaced ]\n"
                           "5:[x][two\nlines][P@1][ 1]\n"
                           "7:[multi\nline\nfirst][q][m][v]\n"
                           "10:[last][no][newline][0.5]\n");
}

Test(table_csvread, callback_stops_reading)
{
  const char *path = temp_file(0, "r.csv", "a\nb\nc\nd\n");
  collect c = {.stop_at = 3};
  rs_error err = {0};
  cr_expect_eq(rs__csv_read(path, collect_row, &c, &err), RS_USAGE);
  cr_expect_str_eq(err.msg, "stopped at line 3");
  cr_expect_eq(c.rows, 3);
}

Test(table_csvread, malformed_and_missing)
{
  collect c = {0};
  rs_error err = {0};
  const char *path = temp_file(0, "r.csv", "a,b\n\"x\"y,2\n");
  cr_expect_eq(rs__csv_read(path, collect_row, &c, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "r.csv:2: malformed CSV in field 1: "), "%s", err.msg);
  path = temp_file(0, "r.csv", "a,b\n1,\"open\n\nstill open");
  cr_expect_eq(rs__csv_read(path, collect_row, &c, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "r.csv:4: malformed CSV: the file ends inside a quoted field (opened after line 1)"), "%s",
            err.msg);
  cr_expect_eq(rs__csv_read("/nonexistent/x.csv", collect_row, &c, &err), RS_IO);
  cr_expect_str_eq(err.msg, "/nonexistent/x.csv: cannot open: No such file or directory");
}

typedef struct {
  size_t rows, last_line, long_len;
  double sum;
} big_acc;

static rs_code big_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  big_acc *a = ctx;
  if (n != 4) return rs__fail(err, RS_FORMAT, "line %zu: %zu fields", line, n);
  if (line > 1) a->sum += strtod(f[3], NULL);
  if (strlen(f[1]) > a->long_len) a->long_len = strlen(f[1]);
  a->rows++;
  a->last_line = line;
  return RS_OK;
}

/* Records cross the reader's 1 MiB blocks, and one field is 3 MiB long. */
Test(table_csvread, records_across_blocks)
{
  char path[] = "/tmp/ragsweep-table-big-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("run,query,measure,value\n", f);
  const size_t n = 100000, big = 3u << 20;
  for (size_t i = 0; i < n; i++) {
    if (i == n / 2) {
      fputs("r,\"", f);
      for (size_t j = 0; j < big; j++) fputc(j % 1000 == 999 ? '\n' : 'x', f);
      fputs("\",m,1\n", f);
    } else {
      fprintf(f, "run_%zu,q%zu,nDCG@10,%zu\n", i % 7, i, i % 3);
    }
  }
  fclose(f);
  big_acc a = {0};
  rs_error err = {0};
  rs_code rc = rs__csv_read(path, big_row, &a, &err);
  unlink(path);
  cr_assert_eq(rc, RS_OK, "%s", err.msg);
  cr_expect_eq(a.rows, n + 1);
  /* the long field holds big / 1000 newlines */
  cr_expect_eq(a.last_line, n + 1 + big / 1000, "last record at line %zu", a.last_line);
  cr_expect_eq(a.long_len, big);
  double want = 1; /* the long record's value */
  for (size_t i = 0; i < n; i++)
    if (i != n / 2) want += (double)(i % 3);
  cr_expect_eq(a.sum, want);
}

/* rag's aggregate.csv: configuration columns, judge, metric, mean; the run
 * is the configuration's values joined by '/'; empty means are skipped. */
Test(table, rag_aggregate)
{
  const char *path = temp_file(6, "rag_aggregate.csv",
                               "model,chunk,judge,metric,mean,n,failures,undefined\n"
                               "m1,256,j1,faithfulness,0.75,4,0,0\n"
                               "m1,256,j2,faithfulness,0.5,4,0,0\n"
                               "m2,512,j1,faithfulness,0.25,3,1,0\n"
                               "m2,512,j2,faithfulness,,0,4,0\n");
  expect_output(path, "--rows run --cols judge",
                "**faithfulness**\n\n"
                "| run    | judge=j1 | judge=j2 |\n"
                "| :----- | -------: | -------: |\n"
                "| m1/256 |   0.7500 |   0.5000 |\n"
                "| m2/512 |   0.2500 |        \xE2\x80\x93 |\n");
  expect_output(path, "--rows model --cols metric --where judge=j1",
                "(judge=j1)\n\n"
                "| model | faithfulness |\n"
                "| :---- | -----------: |\n"
                "| m1    |       0.7500 |\n"
                "| m2    |       0.2500 |\n");
}
