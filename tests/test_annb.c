/* test_annb.c: ann-benchmarks inputs (`eval DATASET RESULT...`, `import`).
 *
 * The files are written by tests/indep/annb_check.py with h5py in
 * ann-benchmarks' own layouts (datasets.py write_output, results.py
 * store_results, runner.py's attributes; erikbern/ann-benchmarks commit
 * f402b2cc17b980d7cd45241ab5a7a4cc0f965e55).  That script also computes
 * every expected figure in Python from ann_benchmarks/plotting/metrics.py
 * of that commit:
 *   k-nn = mean_i #{d in run_distances[i][:count] : d <= t_i} / count,
 *   t_i  = dataset_distances[i][count - 1] + 1e-3 (float32 arithmetic for
 *          float32 distances, as numpy 2.2.4 pinned there computes it),
 *   qps  = 1 / best_search_time,
 * and latency percentiles with numpy.percentile, and compares them with
 * ragsweep's CSV files exactly.  Here: that check, the kernel on
 * hand-worked values, direct eval against import + eval byte for byte,
 * thread counts, and bad files. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "formats/detect.h"
#include "metrics/knn.h"

static const char *script = "tests/indep/annb_check.py";

/* The files, made once per test process in a fresh folder. */
static const char *files(void)
{
  static char dir[512];
  if (*dir) return dir;
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  char *argv[] = {"/usr/bin/python3", (char *)script, "make", dir, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "annb_check.py make: %s%s", r.out, r.err);
  th_free(&r);
  return dir;
}

static char *in(const char *name) { return th_join(files(), name); }

static th_result ragsweep(char **args)
{
  char *argv[40];
  int n = 0;
  argv[n++] = (char *)th_bin();
  for (; *args && n < 39; args++) argv[n++] = *args;
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

static char *slurp_ok(const char *path)
{
  char *s = th_slurp(path, NULL);
  cr_assert_not_null(s, "cannot read %s", path);
  return s;
}

/* --- the kernel, by hand ------------------------------------------------------ */

Test(annb, threshold_float32_and_float64)
{
  /* 1 + 1e-3 in float32: 1e-3f = 0.001000000047497451305389404296875, the
   * sum 1.001000000047... rounds to the float32 1.00100004673004150390625.
   * In double it is 1.001 (0x3FF004189374BC6A). */
  cr_expect_eq(rs__knn_threshold(1.0, 1, RS_KNN_ADD, 1e-3), 1.00100004673004150390625);
  cr_expect_eq(rs__knn_threshold(1.0, 0, RS_KNN_ADD, 1e-3), 1.001);
  /* 2 * 1.01: float32(1.01) = 1.0099999904632568359375, times 2 exact. */
  cr_expect_eq(rs__knn_threshold(2.0, 1, RS_KNN_MUL, 0.01), 2.019999980926513671875);
  cr_expect_eq(rs__knn_threshold(2.0, 0, RS_KNN_MUL, 0.01), 2.0 * 1.01);
}

Test(annb, hits_by_hand)
{
  /* Two queries, truth [0.1, 0.25] (metrics_test.py's test_recall rows),
   * count 2: threshold 0.25 + 1e-3 in double. */
  const double truth[] = {0.1, 0.25, 0.1, 0.25};
  const double found[] = {0.2, 0.251, /* the second is 1e-3 above 0.25: 0.251 <= 0.251 counts */
                          0.25, 0.2510001};
  rs__knn_input k = {.truth = truth, .truth_cols = 2, .found = found, .found_cols = 2, .nq = 2, .count = 2,
                     .rule = RS_KNN_ADD, .epsilon = 1e-3};
  cr_expect_eq(rs__knn_hits(&k, 0), 2);
  cr_expect_eq(rs__knn_hits(&k, 1), 1);
  uint32_t hits[2];
  rs__knn_all(&k, 2, hits);
  cr_expect(hits[0] == 2 && hits[1] == 1);
  cr_expect_eq(rs__knn_mean(hits, 2, 2), 0.75);
  /* Padding (inf) and NaN never count; a shorter row counts what it has
   * (run_distances[i][:count]). */
  const double pad[] = {0.1, INFINITY, 0.1, NAN};
  k.found = pad;
  cr_expect_eq(rs__knn_hits(&k, 0), 1);
  cr_expect_eq(rs__knn_hits(&k, 1), 1);
  k.found_cols = 1;
  k.found = (const double[]){0.3, 0.2};
  cr_expect_eq(rs__knn_hits(&k, 0), 0);
  cr_expect_eq(rs__knn_hits(&k, 1), 1);
  /* The mean is ann-benchmarks' np.mean(recalls) / count: (5 / 3) / 4. */
  const uint32_t h3[] = {1, 2, 2};
  cr_expect_eq(rs__knn_mean(h3, 3, 4), 5.0 / 3.0 / 4.0);
}

/* --- against the Python computation ------------------------------------------- */

Test(annb, matches_ann_benchmarks_definitions, .timeout = 120)
{
  char *argv[] = {"/usr/bin/python3", (char *)script, "check", (char *)th_bin(), (char *)files(), NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "annb_check.py check:\n%s%s", r.out, r.err);
  /* The float32 threshold case decides hnsw's k-nn: 1 against float32
   * distances (24 of 24 hits), 23/24 against the same values in float64. */
  cr_expect(strstr(r.out, "hnsw k-nn float32 distances 1.0, float64 0.9583333333333334"), "%s", r.out);
  th_free(&r);
}

/* --- direct eval = import + eval ---------------------------------------------- */

Test(annb, direct_equals_import_then_eval, .timeout = 120)
{
  char *direct = th_join(th_fresh_dir(), "out"), *via = th_join(th_fresh_dir(), "out"),
       *corpus = th_join(th_fresh_dir(), "c.h5");
  char *a1[] = {"eval", in("tiny.hdf5"), in("r1.hdf5"), in("r2.hdf5"), in("r3.hdf5"), "-o", direct, "--per-query",
                "-m", "R@{1,4}", "-m", "nDCG@4", "-m", "P@2", "-m", "AP", NULL};
  th_result r = ragsweep(a1);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *a2[] = {"import", "-o", corpus, in("tiny.hdf5"), in("r1.hdf5"), in("r2.hdf5"), in("r3.hdf5"), NULL};
  r = ragsweep(a2);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "(3 runs; qrels: the first 4 true neighbours of each of 6 queries, grade 1)"), "%s", r.out);
  th_free(&r);
  char *a3[] = {"eval", corpus, "-o", via, "--per-query", "--queries=all", "-m", "R@{1,4}", "-m", "nDCG@4", "-m", "P@2",
                "-m", "AP", NULL};
  r = ragsweep(a3);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  const char *names[] = {"aggregate.csv", "per_query.csv", "latency.csv"};
  for (int i = 0; i < 3; i++) {
    char *x = slurp_ok(th_join(direct, names[i])), *y = slurp_ok(th_join(via, names[i]));
    cr_expect_str_eq(x, y, "%s differs", names[i]);
    free(x);
    free(y);
  }
  /* The temporary corpus is gone from the output folder. */
  char *agg = slurp_ok(th_join(direct, "aggregate.csv"));
  cr_expect(strstr(agg, "\nhnsw(M=16),hnswlib,false,0.00125,12.5,4,4,tiny-2-euclidean,,euclidean,false,2048,3,R@4,"),
            "%s", agg);
  free(agg);
  char *ls[] = {"/bin/sh", "-c", "ls -A \"$0\" | tr '\\n' ' '", direct, NULL};
  r = th_run(NULL, ls, NULL, NULL);
  cr_expect_str_eq(r.out, "aggregate.csv latency.csv per_query.csv ");
  th_free(&r);
}

/* --- the same bytes at any thread count --------------------------------------- */

Test(annb, same_bits_at_any_thread_count, .timeout = 120)
{
  const char *bins[] = {th_bin(), th_bin(), th_bin(), th_serial_bin()};
  const char *threads[] = {"1", "3", "8", "1"};
  char *first[2] = {NULL, NULL};
  for (int i = 0; i < 4; i++) {
    if (!bins[i]) continue;
    char *out = th_join(th_fresh_dir(), "out");
    char *argv[] = {(char *)bins[i], "eval", in("tiny.hdf5"), in("r1.hdf5"), in("r2.hdf5"), in("r3.hdf5"), "-o", out,
                    "--per-query", "--threads", (char *)threads[i], "-m", "k-nn", "-m", "epsilon", "-m", "R@4",
                    "-m", "nDCG@4", "-m", "qps", NULL};
    th_result r = th_run(NULL, argv, NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    th_free(&r);
    char *agg = slurp_ok(th_join(out, "aggregate.csv")), *pq = slurp_ok(th_join(out, "per_query.csv"));
    if (!first[0]) {
      first[0] = agg, first[1] = pq;
      continue;
    }
    cr_expect_str_eq(agg, first[0], "aggregate.csv at %s threads (%s)", threads[i], bins[i]);
    cr_expect_str_eq(pq, first[1], "per_query.csv at %s threads (%s)", threads[i], bins[i]);
    free(agg);
    free(pq);
  }
  free(first[0]);
  free(first[1]);
}

/* --- counts that differ ---------------------------------------------------------- */

Test(annb, results_of_different_counts)
{
  char *out = th_join(th_fresh_dir(), "out");
  /* k-nn is per result: fine.  count3 returns the 3 true nearest: 1. */
  char *a1[] = {"eval", in("tiny.hdf5"), in("r3.hdf5"), in("count3.hdf5"), "-o", out, "-m", "k-nn", "--top", "0", NULL};
  th_result r = ragsweep(a1);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *agg = slurp_ok(th_join(out, "aggregate.csv"));
  cr_expect(strstr(agg, "\nthree,bf,false,0.01,1,4,3,"), "%s", agg);
  cr_expect(strstr(agg, ",k-nn,k-nn,,1,all\n"), "%s", agg);
  free(agg);
  /* An id-based measure needs one relevant set per query: exit 2, naming both. */
  char *out2 = th_join(th_fresh_dir(), "out");
  char *a2[] = {"eval", in("tiny.hdf5"), in("r3.hdf5"), in("count3.hdf5"), "-o", out2, "-m", "R@4", NULL};
  r = ragsweep(a2);
  cr_expect_eq(r.status, 2, "%s", r.err);
  char want[1400];
  snprintf(want, sizeof want, "ragsweep eval: an id-based measure (R@4) needs one count for every result, found count "
           "4 in %s and 3 in %s; give the results of each count separately\n", in("r3.hdf5"), in("count3.hdf5"));
  cr_expect_str_eq(r.err, want);
  cr_expect(!th_exists(out2), "the output folder is left behind");
  th_free(&r);
  char *a3[] = {"import", "-o", th_join(out, "c.h5"), in("tiny.hdf5"), in("r3.hdf5"), in("count3.hdf5"), NULL};
  r = ragsweep(a3);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "import (the qrels are each query's first count true neighbours) needs one count"), "%s",
            r.err);
  cr_expect(!th_exists(th_join(out, "c.h5")));
  th_free(&r);
}

/* --- bad files: exit 2, the file and dataset named, nothing written ---------------- */

struct bad_case {
  char file[32];
  char message[200]; /* after "ragsweep eval: DIR/" */
};

ParameterizedTestParameters(annb, bad_result_files)
{
  static struct bad_case cases[] = {
      {"no_distances.hdf5",
       "no_distances.hdf5: missing dataset /distances (an ann-benchmarks result holds neighbors, distances and times)"},
      {"short.hdf5", "short.hdf5:/neighbors: expected 6 rows, one per query of "},
      {"count11.hdf5", "count11.hdf5: attribute count: expected an integer from 1 to 10 (the true neighbours per query "
                       "in "},
  };
  return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(struct bad_case *tc, annb, bad_result_files)
{
  char *out = th_join(th_fresh_dir(), "out");
  char *argv[] = {"eval", in("tiny.hdf5"), in("r1.hdf5"), in(tc->file), "-o", out, NULL};
  th_result r = ragsweep(argv);
  cr_expect_eq(r.status, 2, "%s: status %d, %s", tc->file, r.status, r.err);
  char want[1200];
  snprintf(want, sizeof want, "ragsweep eval: %s/%s", files(), tc->message);
  cr_expect(strncmp(r.err, want, strlen(want)) == 0, "%s:\n got %s\nwant %s", tc->file, r.err, want);
  cr_expect(!th_exists(out), "%s: the output folder is left behind", tc->file);
  th_free(&r);
}

Test(annb, dataset_without_results_and_unsupported_options)
{
  char *out = th_join(th_fresh_dir(), "out");
  char *a1[] = {"eval", in("tiny.hdf5"), "-o", out, NULL};
  th_result r = ragsweep(a1);
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "is an ann-benchmarks dataset: expected its result files after it"), "%s", r.err);
  th_free(&r);
  char *a2[] = {"eval", in("tiny.hdf5"), in("r1.hdf5"), "-o", out, "--qrels", in("tiny.hdf5"), NULL};
  r = ragsweep(a2);
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect_str_eq(r.err, "ragsweep eval: --qrels does not apply to ann-benchmarks files (the ground truth is the "
                          "dataset's neighbours)\n");
  th_free(&r);
  /* NAME=PATH names a result: the same file twice under two names. */
  char arg[700];
  snprintf(arg, sizeof arg, "other=%s", in("r1.hdf5"));
  char *a4[] = {"eval", in("tiny.hdf5"), in("r1.hdf5"), arg, "-o", out, "-m", "k-nn", "--top", "0", NULL};
  r = ragsweep(a4);
  cr_expect_eq(r.status, 0, "NAME=PATH: %s", r.err);
  th_free(&r);
  char *agg = slurp_ok(th_join(out, "aggregate.csv"));
  cr_expect(strstr(agg, "\nother,hnswlib,"), "%s", agg);
  free(agg);
}

Test(annb, gates_on_ann_benchmarks_figures)
{
  char *out = th_join(th_fresh_dir(), "out");
  char *argv[] = {"eval", in("tiny.hdf5"), in("r1.hdf5"), in("r2.hdf5"), "-o", out, "--gate", "k-nn>=0.9",
                  "--gate", "ndcg@4>=0.5", "--top", "0", NULL};
  th_result r = ragsweep(argv);
  cr_expect_eq(r.status, 3, "%s", r.err);
  th_free(&r);
  /* ivf: 11 of 24 hits (0.4583...).  nDCG@4, asked through the gate only and
   * written under its canonical name: hnsw ranks the exact 4 for 5 queries
   * and [0, 4, 5, 6] against {0, 1, 2, 3} for query 0, whose nDCG@4 is
   * 1 / (1 + 1/log2 3 + 1/2 + 1/log2 5) = 0.39038; (5 + 0.39038) / 6 =
   * 0.89840. */
  char *g = slurp_ok(th_join(out, "gates.csv"));
  cr_expect_str_eq(g, "run,check,measure,op,threshold,value,pass\n"
                      "hnsw(M=16),k-nn >= 0.9,k-nn,>=,0.9,1,true\n"
                      "ivf(n_probe=1),k-nn >= 0.9,k-nn,>=,0.9,0.4583333333333333,false\n"
                      "hnsw(M=16),nDCG@4 >= 0.5,nDCG@4,>=,0.5,0.8983966749986836,true\n"
                      "ivf(n_probe=1),nDCG@4 >= 0.5,nDCG@4,>=,0.5,0.5871133133185968,true\n");
  free(g);
}

/* --- detection (formats/detect.c) and the other commands ------------------------- */

Test(annb, detected_from_the_root_links)
{
  rs__detected d;
  rs_error err = {0};
  cr_assert_eq(rs__detect(in("tiny.hdf5"), &d, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(d.kind, RS_INPUT_ANNB_DATASET);
  cr_assert_eq(rs__detect(in("r2.hdf5"), &d, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(d.kind, RS_INPUT_ANNB_RESULT);
  /* A result without distances is not recognised: it goes the corpus way. */
  cr_assert_eq(rs__detect(in("no_distances.hdf5"), &d, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(d.kind, RS_INPUT_HDF5);
  /* A ragsweep corpus imported from them stays a corpus. */
  char *corpus = th_join(th_fresh_dir(), "c.h5");
  char *a[] = {"import", "-o", corpus, in("tiny.hdf5"), in("r2.hdf5"), NULL};
  th_result r = ragsweep(a);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_assert_eq(rs__detect(corpus, &d, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(d.kind, RS_INPUT_HDF5);
}

Test(annb, result_first_or_another_command)
{
  char *out = th_join(th_fresh_dir(), "out");
  char *a1[] = {"eval", in("r1.hdf5"), in("r2.hdf5"), "-o", out, NULL};
  th_result r = ragsweep(a1);
  cr_expect_eq(r.status, 1, "%s", r.err);
  char want[900];
  snprintf(want, sizeof want, "ragsweep eval: %s: an ann-benchmarks result first; give its dataset first, then the "
           "results ('ragsweep eval DATASET.hdf5 RESULT.hdf5 ... -o OUT')\n", in("r1.hdf5"));
  cr_expect_str_eq(r.err, want);
  th_free(&r);
  char *a2[] = {"compare", in("tiny.hdf5"), in("r1.hdf5"), in("r2.hdf5"), "-o", out, NULL};
  r = ragsweep(a2);
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "ann-benchmarks files are read by eval and import"), "%s", r.err);
  cr_expect(!th_exists(out));
  th_free(&r);
}
