/* test_import_noqrels.c: `ragsweep import --queries FILE RUN ...` without
 * qrels (the queries file gives the queries, the qrels are empty), `check`
 * and `eval` on such a corpus, `eval --qrels` on it against import with
 * the same qrels, and a JSON eval set's unjudged query keeping its
 * rankings. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "formats/corpus.h"
#include "helpers.h"

/* Three queries, written out of order; q10 is ranked by no run. */
#define QUERIES "q2\tsecond query\nq1\tfirst query\nq10\ttenth query\n"
/* q1 has a tie (d2, d3 at 2.0: trec_eval puts the larger docno first);
 * q8 and q9 are not queries: they are dropped with d5, d6, d7. */
#define RUN_A                                                                                                          \
  "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 2.0 A\nq2 Q0 d4 1 1.5 A\n"                                           \
  "q9 Q0 d5 1 1.0 A\nq9 Q0 d6 2 0.5 A\nq8 Q0 d7 1 0.5 A\n"
/* Topics interleaved (the engine's read-whole path), ranks ignored. */
#define RUN_B "q2 Q0 d1 1 1.0 B\nq1 Q0 d3 1 9.0 B\nq1 Q0 d1 2 8.0 B\nq1 Q0 d8 3 0.25 B\n"
/* Judges q1 and q2, not q10, and only docs the runs retrieve. */
#define SOME_QRELS "q1 0 d1 1\nq1 0 d3 0\nq1 0 d8 2\nq2 0 d4 2\nq2 0 d1 0\n"
/* Judges every query once. */
#define ALL_QRELS "q1 0 d1 1\nq10 0 d2 0\nq2 0 d4 2\n"

typedef struct {
  char dir[256], queries[300], run_a[300], run_b[300], some[300], all[300];
} files;

static void make_files(files *f)
{
  const char *p = th_write_temp(0, "queries.tsv", QUERIES);
  cr_assert_not_null(p);
  snprintf(f->queries, sizeof f->queries, "%s", p);
  snprintf(f->dir, sizeof f->dir, "%.*s", (int)(strrchr(p, '/') - p), p);
  snprintf(f->run_a, sizeof f->run_a, "%s", th_write_temp(0, "runA.txt", RUN_A));
  snprintf(f->run_b, sizeof f->run_b, "%s", th_write_temp(0, "runB.txt", RUN_B));
  snprintf(f->some, sizeof f->some, "%s", th_write_temp(0, "some.txt", SOME_QRELS));
  snprintf(f->all, sizeof f->all, "%s", th_write_temp(0, "all.txt", ALL_QRELS));
}

/* ragsweep import -o out [opt val] run_a run_b, with extra environment. */
static th_result import(const files *f, const char *out, const char *opt, const char *val, char *const env[])
{
  char *argv[12];
  int n = 0;
  argv[n++] = (char *)th_bin();
  argv[n++] = "import";
  argv[n++] = "-o";
  argv[n++] = (char *)out;
  if (opt) argv[n++] = (char *)opt, argv[n++] = (char *)val;
  argv[n++] = (char *)f->run_a;
  argv[n++] = (char *)f->run_b;
  argv[n] = NULL;
  return th_run(NULL, argv, env, NULL);
}

static char *path_in(const files *f, const char *name)
{
  static char buf[16][400]; /* enough for one test's paths */
  static int slot;
  char *p = buf[slot++ & 15];
  snprintf(p, sizeof buf[0], "%s/%s", f->dir, name);
  return p;
}

static th_result run3(const char *sub, const char *a, const char *b, const char *c, const char *d, const char *e)
{
  char *argv[] = {(char *)th_bin(), (char *)sub, (char *)a, (char *)b, (char *)c, (char *)d, (char *)e, NULL};
  return th_run(NULL, argv, NULL, NULL);
}

static char *slurp_ok(const char *path)
{
  char *s = th_slurp(path, NULL);
  cr_assert_not_null(s, "cannot read %s", path);
  return s;
}

static size_t entries(const char *dir)
{
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "%s", dir);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

Test(import_noqrels, corpus_layout)
{
  files f;
  make_files(&f);
  char *out = path_in(&f, "nq.h5");
  th_result r = import(&f, out, "--queries", f.queries, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "(2 runs, query texts)"), "%s", r.out);
  /* q8 and q9 of runA; runB has nothing to drop, so no note for it. */
  char want[600];
  snprintf(want, sizeof want, "ragsweep import: note: run runA: 2 topics not in %s were dropped\n", f.queries);
  cr_assert_str_eq(r.err, want);
  th_free(&r);

  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(out, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_queries(c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->nq, 3);
  const char *qid[] = {"q1", "q10", "q2"}, *qtext[] = {"first query", "tenth query", "second query"};
  for (size_t i = 0; i < 3; i++) {
    cr_expect_str_eq(c->query_id[i], qid[i]);
    cr_expect_str_eq(c->query_text[i], qtext[i]);
  }
  for (size_t i = 0; i <= 3; i++) cr_expect_eq(c->qoff[i], 0, "qoff[%zu] = %lld", i, (long long)c->qoff[i]);
  /* Only docs the runs retrieved for the queries: not d5-d7 (dropped
   * topics), nor the placeholder judgment of the temporary qrels file. */
  cr_assert_eq(c->nd, 5);
  cr_assert_eq(rs__corpus_load_doc_ids(c, &err), RS_OK, "%s", err.msg);
  const char *doc[] = {"d1", "d2", "d3", "d4", "d8"};
  for (size_t i = 0; i < 5; i++) cr_expect_str_eq(c->doc_id[i], doc[i]);
  cr_assert_eq(c->runs.n, 2);
  rs__corpus_close(c);

  r = run3("check", out, NULL, NULL, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "ok (corpus: 3 queries, 0 judged; 5 docs; 0 judgments; 2 runs; query texts)"), "%s", r.out);
  cr_assert(strstr(r.out, "all valid"), "%s", r.out);
  th_free(&r);

  /* The rankings, in trec_eval's order, through export (stored order). */
  char *ex = path_in(&f, "ex");
  r = run3("export", out, "-o", ex, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *qrels = slurp_ok(path_in(&f, "ex/qrels.txt"));
  cr_expect_str_eq(qrels, "");
  free(qrels);
  char *a = slurp_ok(path_in(&f, "ex/runA.txt")), *b = slurp_ok(path_in(&f, "ex/runB.txt"));
  cr_expect_str_eq(a, "q1 Q0 d1 1 3 runA\nq1 Q0 d3 2 2 runA\nq1 Q0 d2 3 2 runA\nq2 Q0 d4 1 1.5 runA\n");
  cr_expect_str_eq(b, "q1 Q0 d3 1 9 runB\nq1 Q0 d1 2 8 runB\nq1 Q0 d8 3 0.25 runB\nq2 Q0 d1 1 1 runB\n");
  free(a);
  free(b);
}

Test(import_noqrels, runs_equal_import_with_qrels_judging_every_query)
{
  files f;
  make_files(&f);
  char *nq = path_in(&f, "nq.h5"), *wq = path_in(&f, "wq.h5");
  th_result r = import(&f, nq, "--queries", f.queries, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = import(&f, wq, "--qrels", f.all, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_str_eq(r.err, ""); /* with qrels, unjudged topics go silently, as in trec_eval */
  th_free(&r);
  r = run3("export", nq, "-o", path_in(&f, "ex_nq"), NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = run3("export", wq, "-o", path_in(&f, "ex_wq"), NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  const char *names[] = {"runA.txt", "runB.txt"};
  for (int i = 0; i < 2; i++) {
    char x[300], y[300];
    snprintf(x, sizeof x, "ex_nq/%s", names[i]);
    snprintf(y, sizeof y, "ex_wq/%s", names[i]);
    size_t lx = 0, ly = 0;
    char *sx = th_slurp(path_in(&f, x), &lx), *sy = th_slurp(path_in(&f, y), &ly);
    cr_assert(sx && sy);
    cr_expect(lx > 0 && lx == ly && memcmp(sx, sy, lx) == 0, "%s differs:\n%s---\n%s", names[i], sx, sy);
    free(sx);
    free(sy);
  }
  /* The same doc table too (ALL_QRELS judges only retrieved docs). */
  rs__corpus *c1 = NULL, *c2 = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(nq, &c1, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_open(wq, &c2, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c1->nd, c2->nd);
  cr_assert_eq(rs__corpus_load_doc_ids(c1, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__corpus_load_doc_ids(c2, &err), RS_OK, "%s", err.msg);
  for (size_t i = 0; i < c1->nd; i++) cr_expect_str_eq(c1->doc_id[i], c2->doc_id[i]);
  rs__corpus_close(c1);
  rs__corpus_close(c2);
}

Test(import_noqrels, eval_with_qrels_equals_import_with_qrels)
{
  files f;
  make_files(&f);
  char *nq = path_in(&f, "nq.h5"), *sq = path_in(&f, "sq.h5");
  th_result r = import(&f, nq, "--queries", f.queries, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = import(&f, sq, "--qrels", f.some, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = run3("eval", nq, "--qrels", f.some, "-o", path_in(&f, "e_nq"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_null(strstr(r.err, "note"), "%s", r.err);
  th_free(&r);
  r = run3("eval", sq, "-o", path_in(&f, "e_sq"), NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  size_t l1 = 0, l2 = 0;
  char *a1 = th_slurp(path_in(&f, "e_nq/aggregate.csv"), &l1), *a2 = th_slurp(path_in(&f, "e_sq/aggregate.csv"), &l2);
  cr_assert(a1 && a2);
  cr_assert(l1 == l2 && memcmp(a1, a2, l1) == 0, "aggregate.csv differs:\n%s---\n%s", a1, a2);
  /* By hand.  runA: q1 ranks d1 (grade 1) first, q2 ranks d4 (grade 2)
   * first: RR 1.  runB: q1 ranks d3 (0), d1 (1), d8 (2): RR 1/2; q2 ranks
   * only d1 (0): RR 0; mean 0.25.  R@5 of runB: q1 finds d1 and d8 of its
   * two relevant docs (1), q2 misses d4 (0): 0.5. */
  cr_expect(strstr(a1, "runA,RR@10,RR,10,1,ranked\n"), "%s", a1);
  cr_expect(strstr(a1, "runB,RR@10,RR,10,0.25,ranked\n"), "%s", a1);
  cr_expect(strstr(a1, "runB,R@5,R,5,0.5,ranked\n"), "%s", a1);
  free(a1);
  free(a2);
}

Test(import_noqrels, eval_without_judgments_says_so)
{
  files f;
  make_files(&f);
  char *nq = path_in(&f, "nq.h5");
  th_result r = import(&f, nq, "--queries", f.queries, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = run3("eval", nq, "-o", path_in(&f, "e"), "--top", "0");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.err, "has no judgments (empty /qrels), so no query is scored (num_q 0); give --qrels FILE"), "%s",
            r.err);
  th_free(&r);
  /* The files are written as for any corpus: every value 0. */
  char *agg = slurp_ok(path_in(&f, "e/aggregate.csv"));
  cr_expect(strncmp(agg, "run,measure,base,cutoff,value,queries\nrunA,nDCG@10,nDCG,10,0,ranked\n", 66) == 0, "%s", agg);
  cr_expect(strstr(agg, "runB,RR@10,RR,10,0,ranked\n"), "%s", agg);
  free(agg);
}

Test(import_noqrels, temporary_qrels_file_is_removed)
{
  files f;
  make_files(&f);
  char tmp[400], env[420];
  snprintf(tmp, sizeof tmp, "%s", path_in(&f, "tmpdir"));
  cr_assert_eq(mkdir(tmp, 0700), 0);
  snprintf(env, sizeof env, "TMPDIR=%s", tmp);
  char *const envp[] = {env, NULL};
  th_result r = import(&f, path_in(&f, "nq.h5"), "--queries", f.queries, envp);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect_eq(entries(tmp), 0);
  /* And when a run fails after the file was written. */
  snprintf(f.run_b, sizeof f.run_b, "%s", path_in(&f, "no-such-run.txt"));
  r = import(&f, path_in(&f, "bad.h5"), "--queries", f.queries, envp);
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "no-such-run.txt"), "%s", r.err);
  th_free(&r);
  cr_expect_eq(entries(tmp), 0);
  FILE *bad = fopen(path_in(&f, "bad.h5"), "rb");
  cr_expect_null(bad, "a failed import left its output");
  if (bad) fclose(bad);
}

Test(import_noqrels, json_query_without_judgments_keeps_its_rankings)
{
  files f;
  make_files(&f);
  /* q2 is in the eval set without judgments. */
  const char *json = th_write_temp(1, "set.json",
                                   "{\"queries\": [{\"id\": \"q1\", \"query\": \"one\", \"relevant_doc_ids\": [\"d1\"]},"
                                   " {\"id\": \"q2\", \"query\": \"two\"}]}");
  char js[300];
  snprintf(js, sizeof js, "%s", json);
  char *out = path_in(&f, "js.h5");
  th_result r = import(&f, out, "--json", js, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(out, &c, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(c->nq, 2);
  cr_expect_eq(c->qoff[1], 1);
  cr_expect_eq(c->qoff[2], 1); /* q2 unjudged */
  rs__corpus_close(c);
  r = run3("export", out, "-o", path_in(&f, "ex"), NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *b = slurp_ok(path_in(&f, "ex/runB.txt")), *q = slurp_ok(path_in(&f, "ex/qrels.txt"));
  cr_expect_str_eq(b, "q1 Q0 d3 1 9 runB\nq1 Q0 d1 2 8 runB\nq1 Q0 d8 3 0.25 runB\nq2 Q0 d1 1 1 runB\n");
  cr_expect_str_eq(q, "q1 0 d1 1\n");
  free(b);
  free(q);
  /* eval scores only q1, as trec_eval would: runB's RR is 1/2. */
  r = run3("eval", out, "-o", path_in(&f, "e"), NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *agg = slurp_ok(path_in(&f, "e/aggregate.csv"));
  cr_expect(strstr(agg, "runB,RR@10,RR,10,0.5,ranked\n"), "%s", agg);
  free(agg);
}

Test(import_noqrels, usage_and_input_errors)
{
  files f;
  make_files(&f);
  th_result r = import(&f, path_in(&f, "x.h5"), NULL, NULL, NULL);
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "expected -o OUT.h5 and one of --qrels, --json or (no judgments yet) --queries alone"), "%s",
            r.err);
  th_free(&r);
  /* An id with white space can never be a TREC run's topic. */
  const char *q = th_write_temp(1, "q.jsonl", "{\"_id\": \"q 1\", \"text\": \"spaced\"}\n");
  char qs[300];
  snprintf(qs, sizeof qs, "%s", q);
  r = import(&f, path_in(&f, "x.h5"), "--queries", qs, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "query \"q 1\": an id with whitespace cannot be matched against a TREC run"), "%s", r.err);
  th_free(&r);
  q = th_write_temp(1, "empty.tsv", "\n");
  snprintf(qs, sizeof qs, "%s", q);
  r = import(&f, path_in(&f, "x.h5"), "--queries", qs, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "no queries; expected at least one"), "%s", r.err);
  th_free(&r);
}

Test(import_noqrels, help_names_the_mode)
{
  th_result r = run3("import", "--help", NULL, NULL, NULL, NULL);
  cr_assert_eq(r.status, 0);
  cr_expect(strstr(r.out, "ragsweep import -o OUT.h5 --queries FILE [--docs FILE] [RUN ...]"), "%s", r.out);
  cr_expect(strstr(r.out, "No judgments yet"), "%s", r.out);
  th_free(&r);
}

Test(import_noqrels, dropped_topics_counted_once_in_gzip_with_comments)
{
  files f;
  make_files(&f);
  /* q9 comes back after q1 (read whole by the engine), a comment line
   * names q7 (not a topic), a blank line: one topic dropped. */
  const char *run = "# q7 Q0 d1 1 1.0 C\nq9 Q0 d1 1 1.0 C\n\nq1 Q0 d2 1 1.0 C\n  q9 Q0 d3 2 0.5 C\n";
  char gz[400];
  snprintf(gz, sizeof gz, "%s", path_in(&f, "runC.txt.gz"));
  gzFile g = gzopen(gz, "wb");
  cr_assert_not_null(g);
  gzwrite(g, run, (unsigned)strlen(run));
  gzclose(g);
  snprintf(f.run_a, sizeof f.run_a, "%s", gz);
  th_result r = import(&f, path_in(&f, "c.h5"), "--queries", f.queries, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char want[600];
  snprintf(want, sizeof want, "ragsweep import: note: run runC: 1 topic not in %s was dropped\n", f.queries);
  cr_expect_str_eq(r.err, want);
  th_free(&r);
}
