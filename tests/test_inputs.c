/* test_inputs.c: direct inputs (issue 16): eval, compare and judge on TREC,
 * JSONL and CSV/TSV runs with TREC qrels, BEIR qrels or a BEIR folder, and
 * import on the same inputs.  Direct evaluation is import's reading into a
 * corpus held in memory followed by the unchanged engine, so its output
 * files must equal those of `import` then `eval` byte for byte; the values
 * themselves are hand-worked below.  Every command runs with TMPDIR set to
 * a folder of the test, which must be empty afterwards (the temporary TREC
 * forms of runs and qrels are gone, after success and after errors). */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/detect.h"
#include "formats/import.h"
#include "helpers.h"
#include "llm_helpers.h"

/* Judged: q1 {d1:1, d2:0, d3:2}, q2 {d4:1, d5:0}, q3 {d6:1}. */
#define QRELS "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 0\nq3 0 d6 1\n"
#define BEIR_QRELS "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq1\td3\t2\nq2\td4\t1\nq2\td5\t0\nq3\td6\t1\n"

/* A, TREC: q1 d3 d1 d2; q2 d5 d4; q3 d7; q9 (not judged) dropped.
 * P@1: q1 1, q2 0, q3 0 -> 1/3.  RR: 1, 1/2, 0 -> 1/2. */
#define RUN_A                                                                                                          \
  "q1 Q0 d3 1 3.0 A\nq1 Q0 d1 2 2.0 A\nq1 Q0 d2 3 1.0 A\nq2 Q0 d5 1 2.0 A\nq2 Q0 d4 2 1.0 A\n"                        \
  "q3 Q0 d7 1 1.0 A\nq9 Q0 d1 1 1.0 A\n"
/* B, JSONL with scores and latency (both spellings of the keys):
 * q1 d2 d1; q2 d4 d8; q3 d6.  P@1: 0, 1, 1 -> 2/3.  RR: 1/2, 1, 1 -> 5/6.
 * Latency of the judged queries: 10, 20, 30 ms (q9's 40 is dropped). */
#define RUN_B                                                                                                          \
  "{\"query_id\": \"q1\", \"doc_ids\": [\"d2\", \"d1\"], \"scores\": [0.5, 0.25], \"latency_ms\": 10}\n"              \
  "{\"qid\": \"q2\", \"docs\": [\"d4\", \"d8\"], \"scores\": [1, 0.5], \"latency_ms\": 20}\n"                        \
  "{\"query_id\": \"q3\", \"doc_ids\": [\"d6\"], \"scores\": [7.5], \"latency_ms\": 30}\n"                            \
  "{\"query_id\": \"q9\", \"doc_ids\": [\"d1\"], \"scores\": [1], \"latency_ms\": 40}\n"
/* C, JSONL without scores: the listed order is the ranking.  q1 d2 d1 d3
 * (with equal scores trec_eval's tie-break would put d3 first: P@1 1);
 * q2 d5 d4.  P@1: 0, 0 -> 0.  RR: 1/2, 1/2 -> 1/2. */
#define RUN_C "{\"query_id\": \"q1\", \"doc_ids\": [\"d2\", \"d1\", \"d3\"]}\n{\"query_id\": \"q2\", \"doc_ids\": [\"d5\", \"d4\"]}\n"
/* D, CSV with scores and a latency per query, rows interleaved: q1 d3 d2;
 * q2 d5 d4; q3 d6.  P@1: 1, 0, 1 -> 2/3.  Latency 4, 5, 6 ms. */
#define RUN_D "query_id,doc_id,score,latency_ms\nq2,d4,0.9,5\nq1,d3,0.8,4\nq2,d5,0.95,5\nq1,d2,0.7,4\nq3,d6,0.1,6\n"
/* E, TSV with ranks only, out of order: q1 d2 d1; q2 d4.  P@1: 0, 1 -> 1/2.
 * RR: 1/2, 1 -> 3/4. */
#define RUN_E "qid\tdocid\trank\nq1\td1\t2\nq1\td2\t1\nq2\td4\t1\n"

/* --- helpers ------------------------------------------------------------------- */

static void put(const char *dir, const char *name, const char *text)
{
  char *p = th_join(dir, name);
  FILE *f = fopen(p, "wb");
  cr_assert(f, "%s", p);
  fputs(text, f);
  fclose(f);
}

static void put_gz(const char *dir, const char *name, const char *text)
{
  char *p = th_join(dir, name);
  gzFile g = gzopen(p, "wb");
  cr_assert(g);
  gzputs(g, text);
  gzclose(g);
}

/* The test's folder D with the inputs and D/tmp, the TMPDIR of every command. */
static char *fixture(void)
{
  char *d = th_fresh_dir();
  put(d, "q.txt", QRELS);
  put(d, "bq.tsv", BEIR_QRELS);
  put(d, "runA.txt", RUN_A);
  put(d, "runB.jsonl", RUN_B);
  put(d, "runC.jsonl", RUN_C);
  put(d, "runD.csv", RUN_D);
  put(d, "runE.tsv", RUN_E);
  put_gz(d, "runF.run.txt.gz", RUN_A);
  cr_assert_eq(mkdir(th_join(d, "tmp"), 0700), 0);
  return d;
}

/* Runs "ragsweep ARGS" (ARGS formatted, split on spaces; $D in it is the
 * test's folder) with TMPDIR=D/tmp. */
static th_result rs(const char *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static th_result rs(const char *d, const char *fmt, ...)
{
  char raw[4096], args[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  size_t k = 0;
  for (const char *p = raw; *p && k + 300 < sizeof args; p++) {
    if (p[0] == '$' && p[1] == 'D') k += (size_t)snprintf(args + k, sizeof args - k, "%s", d), p++;
    else args[k++] = *p;
  }
  args[k] = '\0';
  char *argv[64], env[4200];
  th_split(args, th_bin(), NULL, argv, 64);
  snprintf(env, sizeof env, "TMPDIR=%s/tmp", d);
  char *envv[] = {env, NULL};
  return th_run(NULL, argv, envv, NULL);
}

/* Entries of D/tmp: the temporary corpus and files must be gone. */
static int tmp_entries(const char *d)
{
  DIR *dir = opendir(th_join(d, "tmp"));
  cr_assert(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(dir);
  return n;
}

static void expect_ok(th_result *r, const char *what)
{
  cr_assert_eq(r->status, 0, "%s: %s%s", what, r->out, r->err);
  th_free(r);
}

static void expect_same_file(const char *a, const char *b)
{
  size_t na = 0, nb = 0;
  char *x = th_slurp(a, &na), *y = th_slurp(b, &nb);
  cr_assert(x, "%s", a);
  cr_assert(y, "%s", b);
  cr_expect(na == nb && memcmp(x, y, na) == 0, "%s and %s differ:\n%s\n---\n%s", a, b, x, y);
  free(x);
  free(y);
}

/* OUT1 and OUT2 hold the same eval files. */
static void expect_same_outputs(const char *out1, const char *out2)
{
  static const char *const files[] = {"aggregate.csv", "per_query.csv", "latency.csv"};
  for (size_t i = 0; i < 3; i++) {
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/%s", out1, files[i]);
    snprintf(b, sizeof b, "%s/%s", out2, files[i]);
    expect_same_file(a, b);
  }
}

/* The value column of aggregate.csv's row "run,measure,base,cutoff,". */
static double agg_value(const char *out, const char *run, const char *measure)
{
  char path[600], key[200];
  snprintf(path, sizeof path, "%s/aggregate.csv", out);
  char *text = th_slurp(path, NULL);
  cr_assert(text, "%s", path);
  snprintf(key, sizeof key, "\n%s,%s,", run, measure);
  const char *p = strstr(text, key);
  cr_assert(p, "no row %s,%s in:\n%s", run, measure, text);
  p += strlen(key);
  p = strchr(strchr(p, ',') + 1, ',') + 1; /* base, cutoff */
  const double v = strtod(p, NULL);
  free(text);
  return v;
}

/* --- each format: direct eval == import + eval ---------------------------------- */

Test(inputs, each_format_direct_equals_import_then_eval, .timeout = 120)
{
  char *d = fixture();
  static const char *const runs[] = {"runA.txt", "runB.jsonl", "runC.jsonl", "runD.csv", "runE.tsv", "runF.run.txt.gz"};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    th_result r = rs(d, "eval $D/q.txt $D/%s -o $D/direct%zu --per-query -m P@1 -m RR", runs[i], i);
    expect_ok(&r, runs[i]);
    cr_expect_eq(tmp_entries(d), 0, "%s: the temporary corpus is removed", runs[i]);
    r = rs(d, "import -o $D/c%zu.h5 --qrels $D/q.txt $D/%s", i, runs[i]);
    expect_ok(&r, runs[i]);
    r = rs(d, "eval $D/c%zu.h5 -o $D/imported%zu --per-query -m P@1 -m RR", i, i);
    expect_ok(&r, runs[i]);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/direct%zu", d, i);
    snprintf(b, sizeof b, "%s/imported%zu", d, i);
    expect_same_outputs(a, b);
  }
  /* The hand-worked values (see the runs' comments). */
  char out[600];
#define OUT(i) (snprintf(out, sizeof out, "%s/direct%d", d, i), out)
  cr_expect_float_eq(agg_value(OUT(0), "runA", "P@1"), 1.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(OUT(0), "runA", "RR"), 0.5, 1e-15);
  cr_expect_float_eq(agg_value(OUT(0), "runA", "num_q"), 3.0, 0);
  cr_expect_float_eq(agg_value(OUT(1), "runB", "P@1"), 2.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(OUT(1), "runB", "RR"), 5.0 / 6.0, 1e-15);
  cr_expect_float_eq(agg_value(OUT(2), "runC", "P@1"), 0.0, 0);
  cr_expect_float_eq(agg_value(OUT(2), "runC", "RR"), 0.5, 1e-15);
  cr_expect_float_eq(agg_value(OUT(2), "runC", "num_q"), 2.0, 0);
  cr_expect_float_eq(agg_value(OUT(3), "runD", "P@1"), 2.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(OUT(4), "runE", "P@1"), 0.5, 1e-15);
  cr_expect_float_eq(agg_value(OUT(4), "runE", "RR"), 0.75, 1e-15);
  cr_expect_float_eq(agg_value(OUT(5), "runF", "P@1"), 1.0 / 3.0, 1e-15); /* the gzip copy of A */
  /* Latencies: B's 10, 20, 30 ms and D's 4, 5, 6 ms (n, mean, ..., max). */
  char path[700];
  snprintf(path, sizeof path, "%s/latency.csv", OUT(1));
  char *lat = th_slurp(path, NULL);
  int n = 0;
  double mean = 0, p50 = 0, mx = 0;
  const char *row = lat ? strstr(lat, "\nrunB,") : NULL;
  cr_assert(row, "%s", lat);
  cr_assert_eq(sscanf(row, "\nrunB,%d,%lf,%lf,%*f,%*f,%*f,%*f,%lf", &n, &mean, &p50, &mx), 4, "%s", lat);
  cr_expect_eq(n, 3);
  cr_expect_float_eq(mean, 20.0, 1e-9);
  cr_expect_float_eq(p50, 20.0, 1e-9);
  cr_expect_float_eq(mx, 30.0, 1e-9);
  free(lat);
  snprintf(path, sizeof path, "%s/latency.csv", OUT(3));
  lat = th_slurp(path, NULL);
  row = lat ? strstr(lat, "\nrunD,") : NULL;
  cr_assert(row, "%s", lat);
  cr_assert_eq(sscanf(row, "\nrunD,%d,%lf,%lf,%*f,%*f,%*f,%*f,%lf", &n, &mean, &p50, &mx), 4, "%s", lat);
  cr_expect_eq(n, 3);
  cr_expect_float_eq(mean, 5.0, 1e-9);
  cr_expect_float_eq(mx, 6.0, 1e-9);
  free(lat);
  /* A TREC run has no latency: latency.csv has the header only. */
  snprintf(path, sizeof path, "%s/latency.csv", OUT(0));
  lat = th_slurp(path, NULL);
  cr_expect(lat && !strstr(lat, "runA"), "%s", lat);
  free(lat);
#undef OUT
}

/* G, TREC, one long ranking: q1 d9 d8 d3 d1 d2 d10 d11 d12; q2 d4; q3 d6.
 * 10 docs in 3 x 8 would be mostly padding, so import stores it as CSR.
 * P@1: q1 0 (d9 unjudged), q2 1, q3 1 -> 2/3.  RR: 1/3, 1, 1 -> 7/9. */
#define RUN_G                                                                                                          \
  "q1 Q0 d9 1 9 G\nq1 Q0 d8 2 8 G\nq1 Q0 d3 3 7 G\nq1 Q0 d1 4 6 G\nq1 Q0 d2 5 5 G\nq1 Q0 d10 6 4 G\n"              \
  "q1 Q0 d11 7 3 G\nq1 Q0 d12 8 2 G\nq2 Q0 d4 1 1 G\nq3 Q0 d6 1 1 G\nq9 Q0 d4 1 1 G\n"
/* A JSON eval set: q1 and q2 judged as in QRELS, q4 not judged at all (a
 * query of the set: the runs' rankings of it are kept, and eval skips it). */
#define EVALSET                                                                                                        \
  "{\"queries\": [{\"id\": \"q2\", \"query\": \"two\", \"graded_relevance\": {\"d4\": 1, \"d5\": 0}},\n"          \
  " {\"id\": \"q4\", \"query\": \"four\"},\n"                                                                        \
  " {\"id\": \"q1\", \"graded_relevance\": {\"d1\": 1, \"d2\": 0, \"d3\": 2}}]}\n"
/* H, CSV with latency, ranking q4 (unjudged in EVALSET) and q1. */
#define RUN_H "query_id,doc_id,score,latency_ms\nq4,d1,0.9,7\nq1,d1,0.8,3\nq1,d3,0.5,3\nq4,d2,0.1,7\n"

/* Every eval output of two runs with --per-query (latencies included). */
static void expect_same_eval_files(const char *out1, const char *out2)
{
  static const char *const files[] = {"aggregate.csv", "per_query.csv", "latency.csv", "latency_hist.csv"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/%s", out1, files[i]);
    snprintf(b, sizeof b, "%s/%s", out2, files[i]);
    expect_same_file(a, b);
  }
}

/* The corpus built in memory gives the bytes of import then eval: TREC,
 * JSONL and CSV runs two by two, with latencies, named out of name order,
 * one stored as CSR, topics the qrels do not judge (dropped), --depths
 * (virtual runs over the rows in memory), and a JSON eval set with a query
 * that has no judgments (its rankings kept). */
Test(inputs, in_memory_corpus_equals_import_then_eval, .timeout = 120)
{
  char *d = fixture();
  put(d, "runG.txt", RUN_G);
  put(d, "set.json", EVALSET);
  put(d, "runH.csv", RUN_H);
  static const char *const pairs[][2] = {{"zz=$D/runB.jsonl", "aa=$D/runG.txt"},
                                         {"$D/runD.csv", "$D/runA.txt"},
                                         {"$D/runB.jsonl", "$D/runD.csv"}};
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
    th_result r = rs(d, "eval $D/q.txt %s %s -o $D/m%zu --per-query", pairs[i][0], pairs[i][1], i);
    expect_ok(&r, pairs[i][0]);
    r = rs(d, "import -o $D/m%zu.h5 --qrels $D/q.txt %s %s", i, pairs[i][0], pairs[i][1]);
    expect_ok(&r, pairs[i][0]);
    r = rs(d, "eval $D/m%zu.h5 -o $D/f%zu --per-query", i, i);
    expect_ok(&r, pairs[i][0]);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/m%zu", d, i);
    snprintf(b, sizeof b, "%s/f%zu", d, i);
    expect_same_eval_files(a, b);
    /* --depths cuts the rows in memory as it cuts the file's */
    r = rs(d, "eval $D/q.txt %s %s -o $D/md%zu --per-query --depths 1,2", pairs[i][0], pairs[i][1], i);
    expect_ok(&r, "--depths, direct");
    r = rs(d, "eval $D/m%zu.h5 -o $D/fd%zu --per-query --depths 1,2", i, i);
    expect_ok(&r, "--depths, imported");
    snprintf(a, sizeof a, "%s/md%zu", d, i);
    snprintf(b, sizeof b, "%s/fd%zu", d, i);
    expect_same_eval_files(a, b);
  }
  cr_expect_eq(tmp_entries(d), 0);
  /* G is stored as CSR, B dense with its latencies */
  th_result r = rs(d, "check $D/m0.h5");
  cr_expect(strstr(r.out, "run aa: ok (CSR, 3 queries, 10 docs, scores)"), "%s", r.out);
  cr_expect(strstr(r.out, "run zz: ok (dense 3 x 2, scores, latency)"), "%s", r.out);
  th_free(&r);
  char out[600];
  snprintf(out, sizeof out, "%s/m0", d);
  cr_expect_float_eq(agg_value(out, "aa", "P@1"), 2.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(out, "aa", "RR@10"), 7.0 / 9.0, 1e-15);
  cr_expect_float_eq(agg_value(out, "zz", "RR@10"), 5.0 / 6.0, 1e-15);
  /* the rows follow the name order of the runs, as the file lists them */
  char *agg = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_assert(agg);
  cr_expect(strstr(agg, "\naa,") && strstr(agg, "\nzz,") && strstr(agg, "\naa,") < strstr(agg, "\nzz,"), "%s", agg);
  free(agg);

  /* The JSON eval set: q4 has no judgments; H ranks it (latency 7 ms) and q1. */
  r = rs(d, "eval $D/set.json $D/runH.csv $D/runA.txt -o $D/js --per-query");
  expect_ok(&r, "eval set, direct");
  r = rs(d, "import -o $D/js.h5 --qrels $D/set.json $D/runH.csv $D/runA.txt");
  expect_ok(&r, "eval set, import");
  r = rs(d, "eval $D/js.h5 -o $D/jsf --per-query");
  expect_ok(&r, "eval set, imported");
  expect_same_eval_files(th_join(d, "js"), th_join(d, "jsf"));
  /* H: q1 only (q4 unjudged): P@1 1 (d1), RR 1; its latencies 3 and 7 ms (q2 it does not rank: left out) */
  cr_expect_float_eq(agg_value(th_join(d, "js"), "runH", "P@1"), 1.0, 0);
  cr_expect_float_eq(agg_value(th_join(d, "js"), "runH", "num_q"), 1.0, 0);
  cr_expect_eq(tmp_entries(d), 0);
}

/* All formats in one command, positional qrels and --qrels, TREC and BEIR
 * qrels: the same files as import of the same inputs. */
Test(inputs, all_formats_together, .timeout = 120)
{
  char *d = fixture();
  const char *runs = "$D/runA.txt $D/runB.jsonl $D/runC.jsonl $D/runD.csv $D/runE.tsv $D/runF.run.txt.gz";
  char cmd[1000];
  snprintf(cmd, sizeof cmd, "eval $D/q.txt %s -o $D/d1 --per-query -m P@1 -m RR -m nDCG@10", runs);
  th_result r = rs(d, "%s", cmd);
  expect_ok(&r, "positional qrels");
  snprintf(cmd, sizeof cmd, "eval --qrels $D/bq.tsv %s -o $D/d2 --per-query -m P@1 -m RR -m nDCG@10", runs);
  r = rs(d, "%s", cmd);
  expect_ok(&r, "--qrels BEIR TSV");
  snprintf(cmd, sizeof cmd, "import -o $D/c.h5 --qrels $D/q.txt %s", runs);
  r = rs(d, "%s", cmd);
  expect_ok(&r, "import");
  r = rs(d, "eval $D/c.h5 -o $D/i1 --per-query -m P@1 -m RR -m nDCG@10");
  expect_ok(&r, "eval of the import");
  expect_same_outputs(th_join(d, "d1"), th_join(d, "i1"));
  expect_same_outputs(th_join(d, "d2"), th_join(d, "i1"));
  cr_expect_eq(tmp_entries(d), 0);
  /* the import kept the latencies of B and D only */
  r = rs(d, "check $D/c.h5");
  cr_expect_eq(r.status, 0, "%s", r.out);
  cr_expect(strstr(r.out, "run runB: ok (dense 3 x 2, scores, latency)"), "%s", r.out);
  cr_expect(strstr(r.out, "run runD: ok (dense 3 x 2, scores, latency)"), "%s", r.out);
  cr_expect(strstr(r.out, "run runA: ok (dense 3 x 3, scores)"), "%s", r.out);
  th_free(&r);
}

/* --- names ------------------------------------------------------------------------ */

Test(inputs, run_names)
{
  char *d = fixture();
  th_result r = rs(d, "eval $D/q.txt first=$D/runA.txt second=$D/runB.jsonl $D/runF.run.txt.gz -o $D/o -m P@1");
  expect_ok(&r, "NAME=PATH");
  cr_expect_float_eq(agg_value(th_join(d, "o"), "first", "P@1"), 1.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(th_join(d, "o"), "second", "P@1"), 2.0 / 3.0, 1e-15);
  cr_expect_float_eq(agg_value(th_join(d, "o"), "runF", "P@1"), 1.0 / 3.0, 1e-15); /* .run.txt.gz stripped */
  /* Two runs of one name: a usage error, nothing written, nothing left. */
  put(d, "runA.csv", RUN_D);
  r = rs(d, "eval $D/q.txt $D/runA.txt $D/runA.csv -o $D/o2");
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "run name 'runA' is given twice"), "%s", r.err);
  th_free(&r);
  r = rs(d, "eval $D/q.txt x=$D/runA.txt x=$D/runB.jsonl -o $D/o2");
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "run name 'x' is given twice"), "%s", r.err);
  th_free(&r);
  r = rs(d, "import -o $D/c.h5 --qrels $D/q.txt x=$D/runA.txt x=$D/runB.jsonl");
  cr_expect_eq(r.status, 1, "%s", r.err);
  th_free(&r);
  cr_expect(!th_exists(th_join(d, "o2")));
  cr_expect(!th_exists(th_join(d, "c.h5")));
  cr_expect_eq(tmp_entries(d), 0);
}

/* --- BEIR -------------------------------------------------------------------------- */

static char *beir_fixture(void)
{
  char *d = fixture();
  char *b = th_join(d, "beir");
  cr_assert_eq(mkdir(b, 0700), 0);
  cr_assert_eq(mkdir(th_join(b, "qrels"), 0700), 0);
  put(b, "corpus.jsonl",
      "{\"_id\": \"d1\", \"title\": \"Alpha\", \"text\": \"the relevant passage about alpha\"}\n"
      "{\"_id\": \"d2\", \"title\": \"\", \"text\": \"beta\"}\n"
      "{\"_id\": \"d3\", \"title\": \"Gamma\", \"text\": \"another relevant passage\"}\n"
      "{\"_id\": \"d4\", \"text\": \"delta\"}\n{\"_id\": \"d5\", \"text\": \"epsilon\"}\n"
      "{\"_id\": \"d6\", \"text\": \"zeta\"}\n{\"_id\": \"d7\", \"text\": \"eta\"}\n"
      "{\"_id\": \"d8\", \"text\": \"theta\"}\n");
  put(b, "queries.jsonl",
      "{\"_id\": \"q1\", \"text\": \"what is alpha\"}\n{\"_id\": \"q2\", \"text\": \"what is delta\"}\n"
      "{\"_id\": \"q3\", \"text\": \"what is zeta\"}\n{\"_id\": \"q9\", \"text\": \"unjudged\"}\n");
  put(th_join(b, "qrels"), "test.tsv", BEIR_QRELS);
  /* dev judges q2 only: d5 relevant */
  put(th_join(b, "qrels"), "dev.tsv", "query-id\tcorpus-id\tscore\nq2\td5\t1\n");
  return d;
}

Test(inputs, beir_folder, .timeout = 120)
{
  char *d = beir_fixture();
  th_result r = rs(d, "eval $D/beir $D/runA.txt $D/runB.jsonl -o $D/direct --per-query -m P@1 -m RR");
  expect_ok(&r, "eval BEIR");
  cr_expect_float_eq(agg_value(th_join(d, "direct"), "runA", "P@1"), 1.0 / 3.0, 1e-15);
  r = rs(d, "import -o $D/c.h5 $D/beir $D/runA.txt $D/runB.jsonl");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "query texts, doc texts"), "%s", r.out);
  th_free(&r);
  r = rs(d, "eval $D/c.h5 -o $D/imported --per-query -m P@1 -m RR");
  expect_ok(&r, "eval of the BEIR import");
  expect_same_outputs(th_join(d, "direct"), th_join(d, "imported"));
  r = rs(d, "check $D/c.h5");
  cr_expect(strstr(r.out, "3 queries, 3 judged; 8 docs; 6 judgments; 2 runs; query texts; doc texts"), "%s", r.out);
  th_free(&r);
  /* --split dev: only q2, where A ranks d5 (relevant in dev) first. */
  r = rs(d, "eval $D/beir $D/runA.txt --split dev -o $D/dev -m P@1");
  expect_ok(&r, "--split dev");
  cr_expect_float_eq(agg_value(th_join(d, "dev"), "runA", "P@1"), 1.0, 0);
  cr_expect_float_eq(agg_value(th_join(d, "dev"), "runA", "num_q"), 1.0, 0);
  /* a split that is not there names the ones that are */
  r = rs(d, "eval $D/beir $D/runA.txt --split train -o $D/x");
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "qrels/train.tsv: no qrels for the split 'train'; the folder has: "), "%s", r.err);
  cr_expect(strstr(r.err, "dev") && strstr(r.err, "test"), "%s", r.err);
  th_free(&r);
  /* compare on the folder */
  r = rs(d, "compare $D/beir $D/runA.txt $D/runB.jsonl -o $D/cmp -m P@1 --permutations 100 --bootstrap 20");
  expect_ok(&r, "compare BEIR");
  r = rs(d, "compare $D/c.h5 -o $D/cmp2 -m P@1 --permutations 100 --bootstrap 20");
  expect_ok(&r, "compare of the import");
  expect_same_file(th_join(th_join(d, "cmp"), "compare.csv"), th_join(th_join(d, "cmp2"), "compare.csv"));
  expect_same_file(th_join(th_join(d, "cmp"), "summary.csv"), th_join(th_join(d, "cmp2"), "summary.csv"));
  cr_expect_eq(tmp_entries(d), 0);
}

/* judge reads the folder's texts: the stub says YES to a passage with
 * "relevant passage" in it (d1, d3), NO to the rest. */
#define RELEVANT_RULES "{\"rules\": [{\"match\": \"relevant passage\", \"behaviour\": {\"content\": \"YES\"}}], \"default\": {\"content\": \"NO\"}}"

Test(inputs, judge_beir_and_text_runs, .timeout = 120)
{
  char *d = beir_fixture();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, RELEVANT_RULES, 100), 0);
  /* depth 2 of A: q1 d3 d1, q2 d5 d4, q3 d7: five pairs */
  th_result r = rs(d, "judge $D/beir $D/runA.txt -o $D/j1 --model m --depth 2 --base-url %s", stub.url);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *q1 = th_slurp(th_join(th_join(d, "j1"), "qrels.txt"), NULL);
  cr_expect_str_eq(q1, "q1 0 d1 1\nq1 0 d3 1\nq2 0 d4 0\nq2 0 d5 0\nq3 0 d7 0\n");
  /* the query text and the titled passage reached the model */
  json_object *log = llm_stub_log(&stub);
  int saw_query = 0, saw_title = 0;
  for (size_t i = 0; i < json_object_array_length(log); i++) {
    const char *raw = llm_str(json_object_array_get_idx(log, i), "raw");
    saw_query |= raw && strstr(raw, "what is alpha") != NULL;
    saw_title |= raw && strstr(raw, "Alpha\\n\\nthe relevant passage about alpha") != NULL;
  }
  json_object_put(log);
  cr_expect(saw_query && saw_title);
  /* the same as judging the imported corpus (texts from the folder) */
  r = rs(d, "import -o $D/c.h5 $D/beir $D/runA.txt");
  expect_ok(&r, "import BEIR");
  r = rs(d, "judge $D/c.h5 -o $D/j2 --model m --depth 2 --base-url %s", stub.url);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *q2 = th_slurp(th_join(th_join(d, "j2"), "qrels.txt"), NULL);
  cr_expect_str_eq(q2, q1);
  /* no judgments yet: --queries gives the queries, --docs the passages */
  put(d, "queries.tsv", "q1\twhat is alpha\nq2\twhat is delta\n");
  put(d, "docs.tsv", "d1\tthe relevant passage\nd3\tno\nd4\tno\nd5\tno\n");
  r = rs(d, "judge --queries $D/queries.tsv --docs $D/docs.tsv $D/runA.txt -o $D/j3 --model m --depth 2 --base-url %s",
         stub.url);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.err, "2 topics not in"), "q3 and q9 are left out: %s", r.err);
  th_free(&r);
  char *q3 = th_slurp(th_join(th_join(d, "j3"), "qrels.txt"), NULL);
  cr_expect_str_eq(q3, "q1 0 d1 1\nq1 0 d3 0\nq2 0 d4 0\nq2 0 d5 0\n");
  free(q1);
  free(q2);
  free(q3);
  llm_stub_stop(&stub);
  cr_expect_eq(tmp_entries(d), 0);
}

/* --- compare ----------------------------------------------------------------------- */

Test(inputs, compare_direct, .timeout = 120)
{
  char *d = fixture();
  th_result r = rs(d, "compare $D/q.txt $D/runA.txt $D/runB.jsonl $D/runD.csv -o $D/c1 -m P@1 -m RR --permutations 200 "
                      "--bootstrap 50 --worst 2");
  expect_ok(&r, "compare direct");
  r = rs(d, "import -o $D/c.h5 $D/q.txt $D/runA.txt $D/runB.jsonl $D/runD.csv");
  expect_ok(&r, "import");
  r = rs(d, "compare $D/c.h5 -o $D/c2 -m P@1 -m RR --permutations 200 --bootstrap 50 --worst 2");
  expect_ok(&r, "compare of the import");
  static const char *const files[] = {"compare.csv", "summary.csv", "aggregate.csv", "worst.csv"};
  for (size_t i = 0; i < 4; i++)
    expect_same_file(th_join(th_join(d, "c1"), files[i]), th_join(th_join(d, "c2"), files[i]));
  /* compare's default policy scores unranked judged queries 0: A 1/3, B 2/3 */
  cr_expect_float_eq(agg_value(th_join(d, "c1"), "runB", "P@1"), 2.0 / 3.0, 1e-15);
  cr_expect_eq(tmp_entries(d), 0);
}

/* --- bad input ----------------------------------------------------------------------- */

static void expect_error(const char *d, int status, const char *fragment, const char *fmt)
{
  th_result r = rs(d, "%s", fmt);
  cr_expect_eq(r.status, status, "%s: status %d: %s", fmt, r.status, r.err);
  cr_expect(strstr(r.err, fragment), "%s: expected '%s' in: %s", fmt, fragment, r.err);
  th_free(&r);
  cr_expect(!th_exists(th_join(d, "out")), "%s: no output folder", fmt);
  cr_expect(!th_exists(th_join(d, "c.h5")), "%s: no corpus", fmt);
  cr_expect_eq(tmp_entries(d), 0, "%s: the temporary files are removed", fmt);
}

Test(inputs, malformed_rows_name_file_line_and_field, .timeout = 60)
{
  char *d = fixture();
  put(d, "b1.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d1\"]}\n{\"query_id\": \"q2\", \"doc_ids\": [\"d4\", 5], \"scores\": [1, \"x\"]}\n");
  expect_error(d, 2, "b1.jsonl:2: scores[1]: expected a finite number, found string \"x\"",
               "eval $D/q.txt $D/b1.jsonl -o $D/out");
  expect_error(d, 2, "b1.jsonl:2: scores[1]: expected a finite number", "import -o $D/c.h5 --qrels $D/q.txt $D/b1.jsonl");
  put(d, "b2.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d1\", \"d2\", \"d1\"]}\n");
  expect_error(d, 2, "b2.jsonl:1: doc_ids[2]: doc \"d1\" is also at doc_ids[0]", "eval $D/q.txt $D/b2.jsonl -o $D/out");
  put(d, "b3.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d1\"]}\n\n{\"query_id\": \"q1\", \"doc_ids\": [\"d2\"]}\n");
  expect_error(d, 2, "b3.jsonl:3: query_id: query \"q1\" is also on line 1", "eval $D/q.txt $D/b3.jsonl -o $D/out");
  put(d, "b4.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d1\"], \"latency_ms\": 3}\n{\"query_id\": \"q2\", \"doc_ids\": [\"d4\"]}\n");
  expect_error(d, 2, "b4.jsonl:2: latency_ms: missing here but given on line 1", "eval $D/q.txt $D/b4.jsonl -o $D/out");
  put(d, "b5.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d 1\"]}\n");
  expect_error(d, 2, "b5.jsonl:1: doc_ids[0]: expected an id without white space", "eval $D/q.txt $D/b5.jsonl -o $D/out");
  put(d, "b6.jsonl", "{\"query_id\": \"q1\", \"doc_ids\": [\"d1\"]}\n{\"query_id\": \"q2\" \"doc_ids\": []}\n");
  expect_error(d, 2, "b6.jsonl:2", "eval $D/q.txt $D/b6.jsonl -o $D/out");
  put(d, "b1.csv", "query_id,doc_id,score\nq1,d1,1.5\nq1,d2\n");
  expect_error(d, 2, "b1.csv:3: expected 3 fields, as in the header, found 2", "eval $D/q.txt $D/b1.csv -o $D/out");
  put(d, "b2.csv", "query_id,doc_id,score\nq1,d1,1.5\nq1,d2,abc\n");
  expect_error(d, 2, "b2.csv:3: score: expected a finite number, found 'abc'", "eval $D/q.txt $D/b2.csv -o $D/out");
  put(d, "b3.csv", "query_id,doc_id,latency_ms\nq1,d1,4\nq2,d4,5\nq1,d2,4.5\n");
  expect_error(d, 2, "b3.csv:4: latency_ms: query \"q1\" has 4.5 here and 4 on line 2", "eval $D/q.txt $D/b3.csv -o $D/out");
  put(d, "b4.tsv", "qid\tdocid\trank\nq1\td1\tfirst\n");
  expect_error(d, 2, "b4.tsv:2: rank: expected an integer, found 'first'", "eval $D/q.txt $D/b4.tsv -o $D/out");
  put(d, "b5.csv", "query_id,doc_id\nq1,d1\nq1,d1\n");
  expect_error(d, 2, "b5.csv: topic 'q1': duplicate docs d1", "eval $D/q.txt $D/b5.csv -o $D/out");
  put(d, "bq.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\thigh\n");
  expect_error(d, 2, "bq.tsv:3: score: expected an integer grade, found 'high'", "eval $D/bq.tsv $D/runA.txt -o $D/out");
}

Test(inputs, unrecognised_inputs_list_the_formats, .timeout = 60)
{
  char *d = fixture();
  FILE *bf = fopen(th_join(d, "bin.dat"), "wb");
  cr_assert(bf);
  fwrite("\x7f" "ELF\x02\x01\x01\x00\x00", 1, 9, bf);
  fclose(bf);
  put(d, "hello.txt", "hello world\n");
  /* first positional: neither a corpus nor judgments nor a run */
  expect_error(d, 2, "hello.txt: not an input ragsweep reads (found: a first line of 2 fields: 'hello world'); expected a "
                     "ragsweep corpus (HDF5), judgments then runs, or --qrels QRELS then runs.  Judgments: TREC qrels, "
                     "BEIR qrels (TSV), a JSON eval set or a BEIR folder; runs: TREC, JSONL or CSV/TSV",
               "eval $D/hello.txt $D/runA.txt -o $D/out");
  expect_error(d, 2, "bin.dat: not an input ragsweep reads (found: binary data, first bytes 7f 45 4c 46 02 01 01 00)",
               "compare $D/bin.dat $D/runA.txt -o $D/out");
  /* a run of no known format */
  expect_error(d, 2,
               "bin.dat: not a run ragsweep reads (found: binary data, first bytes 7f 45 4c 46 02 01 01 00); expected a "
               "TREC run (qid Q0 docno rank score tag), a JSONL run",
               "eval --qrels $D/q.txt $D/runA.txt $D/bin.dat -o $D/out");
  expect_error(d, 2, "not a run ragsweep reads", "import -o $D/c.h5 --qrels $D/q.txt $D/bin.dat");
  /* text the TREC reader refuses: its line, and the formats */
  expect_error(d, 2, "hello.txt:1: malformed run line", "eval --qrels $D/q.txt $D/hello.txt -o $D/out");
  expect_error(d, 2, "a run is a TREC run (qid Q0 docno rank score tag), a JSONL run",
               "eval --qrels $D/q.txt $D/hello.txt -o $D/out");
  /* qrels given as a run: the TREC reader's line, and what the file looks like */
  expect_error(d, 2, "q.txt:1: malformed run line", "eval --qrels $D/q.txt $D/runA.txt $D/q.txt -o $D/out");
  expect_error(d, 2, "(found: TREC qrels; a run is", "eval --qrels $D/q.txt $D/runA.txt $D/q.txt -o $D/out");
  /* runs without judgments; two sets of judgments; judgments without runs */
  expect_error(d, 1, "runA.txt: a TREC run, and runs are scored against judgments", "eval $D/runA.txt -o $D/out");
  /* with --qrels every positional is a run, qrels too */
  expect_error(d, 2, "q.txt:1: malformed run line", "eval $D/q.txt $D/runA.txt --qrels $D/bq.tsv -o $D/out");
  expect_error(d, 1, "q.txt: judgments without runs", "eval $D/q.txt -o $D/out");
  /* a text run after a corpus */
  th_result r = rs(d, "import -o $D/good.h5 --qrels $D/q.txt $D/runA.txt");
  expect_ok(&r, "import");
  expect_error(d, 1, "runB.jsonl: a JSONL run after the corpus", "eval $D/good.h5 $D/runB.jsonl -o $D/out");
}

/* A BEIR folder or a text collection given as a run. */
Test(inputs, known_kinds_are_not_runs)
{
  char *d = beir_fixture();
  expect_error(d, 2, "beir: a BEIR folder, not a run", "eval --qrels $D/q.txt $D/runA.txt $D/beir -o $D/out");
  expect_error(d, 2, "a JSONL text collection, not a run", "eval --qrels $D/q.txt $D/runA.txt $D/beir/queries.jsonl -o $D/out");
}

/* An error after the corpus is built (an unknown measure) still removes it. */
Test(inputs, temporary_corpus_removed_after_an_error)
{
  char *d = fixture();
  th_result r = rs(d, "eval $D/q.txt $D/runA.txt $D/runB.jsonl -o $D/out -m NoSuchMeasure@3");
  cr_expect_eq(r.status, 1, "%s", r.err);
  th_free(&r);
  cr_expect_eq(tmp_entries(d), 0);
  cr_expect(!th_exists(th_join(d, "out")));
}

/* --- detection -------------------------------------------------------------------- */

static rs__input_kind kind_of(const char *d, const char *name, const char *text, char *delim)
{
  put(d, name, text);
  rs__detected det;
  rs_error err = {0};
  cr_assert_eq(rs__detect(th_join(d, name), &det, &err), RS_OK, "%s", err.msg);
  if (delim) *delim = det.delim;
  return det.kind;
}

Test(inputs, detection)
{
  char *d = th_fresh_dir();
  char delim = 0;
  cr_expect_eq(kind_of(d, "a", "# comment\n\nq1 Q0 d1 1 0.5 tag\n", NULL), RS_INPUT_TREC_RUN);
  cr_expect_eq(kind_of(d, "b", "q1\tQ0\td1\t1\t-2e3\ttag\n", NULL), RS_INPUT_TREC_RUN); /* tabs, no header */
  cr_expect_eq(kind_of(d, "c", "q1 0 d1 2\n", NULL), RS_INPUT_TREC_QRELS);
  cr_expect_eq(kind_of(d, "d", "query-id\tcorpus-id\tscore\n", &delim), RS_INPUT_BEIR_QRELS);
  cr_expect_eq(delim, '\t');
  cr_expect_eq(kind_of(d, "e", "\xEF\xBB\xBF" "doc_id,score,query_id\n", &delim), RS_INPUT_CSV_RUN);
  cr_expect_eq(delim, ',');
  cr_expect_eq(kind_of(d, "f", "\"qid\"\t\"docid\"\n", &delim), RS_INPUT_CSV_RUN);
  cr_expect_eq(delim, '\t');
  cr_expect_eq(kind_of(d, "g", "{\"qid\": 1, \"docs\": []}\n", NULL), RS_INPUT_JSONL_RUN);
  cr_expect_eq(kind_of(d, "h", "{\n  \"queries\": []\n}\n", NULL), RS_INPUT_JSON_EVALSET);
  cr_expect_eq(kind_of(d, "i", "{\"queries\": [{\"id\": \"q\"}]}", NULL), RS_INPUT_JSON_EVALSET);
  cr_expect_eq(kind_of(d, "j", "{\"_id\": \"d1\", \"text\": \"x\"}\n", NULL), RS_INPUT_TEXTS);
  cr_expect_eq(kind_of(d, "k", "q1 Q0 d1 one 0.5 tag\n", NULL), RS_INPUT_UNKNOWN); /* rank not an integer */
  cr_expect_eq(kind_of(d, "l", "", NULL), RS_INPUT_UNKNOWN);
  cr_expect_eq(kind_of(d, "m", "\x89HDF\r\n\x1a\n", NULL), RS_INPUT_HDF5);
  /* gzip is looked through */
  put_gz(d, "n.gz", "{\"query_id\": \"q\", \"doc_ids\": [\"a\"]}\n");
  rs__detected det;
  rs_error err = {0};
  cr_assert_eq(rs__detect(th_join(d, "n.gz"), &det, &err), RS_OK);
  cr_expect_eq(det.kind, RS_INPUT_JSONL_RUN);
  /* a folder with qrels/ and queries.jsonl is BEIR; an empty one is not */
  char *b = th_join(d, "beir");
  cr_assert_eq(mkdir(b, 0700), 0);
  cr_assert_eq(rs__detect(b, &det, &err), RS_OK);
  cr_expect_eq(det.kind, RS_INPUT_UNKNOWN);
  cr_expect_str_eq(det.found, "a folder without corpus.jsonl, queries.jsonl or qrels/");
  cr_assert_eq(mkdir(th_join(b, "qrels"), 0700), 0);
  put(b, "queries.jsonl", "");
  cr_assert_eq(rs__detect(b, &det, &err), RS_OK);
  cr_expect_eq(det.kind, RS_INPUT_BEIR_DIR);
  cr_expect_eq(rs__detect(th_join(d, "none"), &det, &err), RS_IO);
  cr_expect(strstr(err.msg, "none: cannot open: No such file or directory"), "%s", err.msg);
}

/* SIGTERM while the corpus is being built (the run comes from a pipe that
 * stays open): the handler removes the temporary files.  The corpus itself
 * is built in memory; BEIR qrels are read through a temporary TREC form,
 * which is in TMPDIR while the run is read. */
Test(inputs, temporary_corpus_removed_on_sigterm, .timeout = 60)
{
  char *d = fixture();
  char *fifo = th_join(d, "pipe");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  int wfd = open(fifo, O_RDWR); /* a writer that never closes; O_RDWR does not block */
  cr_assert(wfd >= 0);
  cr_assert(write(wfd, "q1 Q0 d1 1 1.0 A\n", 17) == 17);
  char env[4200], qrels[600], out[600];
  snprintf(env, sizeof env, "TMPDIR=%s/tmp", d);
  snprintf(qrels, sizeof qrels, "%s/bq.tsv", d);
  snprintf(out, sizeof out, "%s/out", d);
  const pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    int rfd = open(fifo, O_RDONLY);
    if (rfd < 0 || dup2(rfd, 0) < 0) _exit(99);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    putenv(env);
    execl(th_bin(), th_bin(), "eval", "--qrels", qrels, "-", "-o", out, (char *)NULL);
    _exit(98);
  }
  /* wait for the temporary qrels file to appear */
  int seen = 0;
  for (int i = 0; i < 500 && !seen; i++) {
    seen = tmp_entries(d) > 0;
    if (!seen) nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  cr_expect(seen, "the temporary qrels file appeared");
  nanosleep(&(struct timespec){0, 50000000}, NULL);
  kill(pid, SIGTERM);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  close(wfd);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %d", status);
  cr_expect_eq(tmp_entries(d), 0, "nothing left in TMPDIR");
}

/* --- the doc id order of the corpus in memory ------------------------------------- */

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Doc ids that the radix sort of 8-byte prefixes must still put in strcmp
 * order: ids of 8 and 9 bytes sharing their first 8, ids equal in their
 * first 16 bytes, bytes above 0x7f (compared unsigned), one-byte ids, and
 * 70 ids sharing a 23-byte prefix (more than the small-group sort takes).
 * The corpus in memory has them in the order of the file import writes,
 * and that order is strcmp's. */
Test(inputs, in_memory_doc_ids_in_strcmp_order)
{
  char *d = th_fresh_dir();
  static const char *const fixed[] = {"doc12345", "doc123456", "doc1234567", "doc12345678901234567",
                                      "doc12345678901234568", "doc1234567890123456", "\xc3\xa9t\xc3\xa9", "a", "b", "Z",
                                      "doc1234\xc3\xa9", "doc12345\xff", "doc12344", "doc1234"};
  const size_t n_fixed = sizeof fixed / sizeof *fixed, n_url = 70, n = n_fixed + n_url;
  char *ids[sizeof fixed / sizeof *fixed + 70];
  char *qrels = th_join(d, "q.txt"), *run = th_join(d, "r.txt");
  FILE *q = fopen(qrels, "w"), *r = fopen(run, "w");
  cr_assert(q && r);
  for (size_t i = 0; i < n; i++) {
    char buf[64];
    if (i < n_fixed) snprintf(buf, sizeof buf, "%s", fixed[i]);
    else snprintf(buf, sizeof buf, "http://example.org/doc/%zu", (i * 37) % 101); /* distinct, unordered */
    ids[i] = strdup(buf);
    /* half judged, half only retrieved */
    if (i % 2) fprintf(q, "q1 0 %s 1\n", buf);
    else fprintf(r, "q1 Q0 %s %zu %zu.0 r\n", buf, i + 1, n - i);
  }
  fclose(q);
  fclose(r);
  qsort(ids, n, sizeof *ids, cmp_cstr);
  rs__import_run ir = {.name = "r", .path = run};
  const rs__import_cfg cfg = {.qrels_path = qrels, .runs = &ir, .n_runs = 1, .threads = 1};
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__import_corpus(&cfg, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->nd, n);
  for (size_t i = 0; i < n; i++) cr_expect_str_eq(c->doc_id[i], ids[i], "doc %zu", i);
  /* the file import writes has the same /docs/id */
  char *h5 = th_join(d, "c.h5");
  cr_assert_eq(rs__import(&cfg, h5, &err), RS_OK, "%s", err.msg);
  rs__corpus *f = NULL;
  cr_assert_eq(rs__corpus_open(h5, &f, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(f->nd, n);
  cr_assert_eq(rs__corpus_load_doc_ids(f, &err), RS_OK, "%s", err.msg);
  for (size_t i = 0; i < n; i++) cr_expect_str_eq(f->doc_id[i], c->doc_id[i], "doc %zu", i);
  /* and the same rows, read from memory and from the file */
  rs__block bm = {0}, bf = {0};
  cr_assert_eq(rs__run_read(&c->runs.run[0], 0, 1, &bm, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__run_read(&f->runs.run[0], 0, 1, &bf, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->runs.run[0].csr, f->runs.run[0].csr);
  cr_assert_eq(bm.off[1], (int64_t)((n + 1) / 2));
  cr_assert_eq(bm.off[1], bf.off[1]);
  for (int64_t k = 0; k < bm.off[1]; k++) {
    cr_expect_eq(bm.doc[k], bf.doc[k]);
    cr_expect_eq(rs__block_score(&bm, (size_t)k), rs__block_score(&bf, (size_t)k));
  }
  rs__block_free(&bm);
  rs__block_free(&bf);
  rs__corpus_close(f);
  rs__corpus_close(c);
  for (size_t i = 0; i < n; i++) free(ids[i]);
}
