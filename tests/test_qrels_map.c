/* test_qrels_map.c: external judgments mapped onto a corpus
 * (src/formats/qrels_map.h).  Corpora are made with `ragsweep import` from
 * small TREC files, then the library is called directly. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/corpus.h"
#include "formats/qrels_map.h"
#include "helpers.h"

/* A temporary folder with the files of one test, removed at the end. */
typedef struct {
  char dir[64];
  char path[8][128];
  int n;
} tmpdir;

static const char *tmp_file(tmpdir *t, const char *name, const char *text)
{
  if (!t->dir[0]) {
    snprintf(t->dir, sizeof t->dir, "/tmp/ragsweep-qmap-XXXXXX");
    cr_assert(mkdtemp(t->dir));
  }
  char buf[128];
  snprintf(buf, sizeof buf, "%s/%s", t->dir, name);
  char *p = t->path[t->n++];
  memcpy(p, buf, sizeof buf);
  if (text) {
    FILE *f = fopen(p, "wb");
    cr_assert(f, "%s", p);
    fputs(text, f);
    fclose(f);
  }
  return p;
}

static void tmp_clean(tmpdir *t)
{
  for (int i = 0; i < t->n; i++) unlink(t->path[i]);
  if (t->dir[0]) rmdir(t->dir);
}

/* Runs `ragsweep import -o OUT --qrels QRELS [sys=RUN]`. */
static void import(const char *out, const char *qrels, const char *run)
{
  char runarg[4200];
  snprintf(runarg, sizeof runarg, "sys=%s", run ? run : "");
  char *argv[] = {(char *)th_bin(), "import", "-o", (char *)out, "--qrels", (char *)qrels, run ? runarg : NULL, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "import %s: %s", qrels, r.err);
  th_free(&r);
}

/* The small corpus: queries q1, q2 (from the qrels); docs D1 D2 D3 (qrels)
 * and D4 (run only), numbered in strcmp order D1=0 D2=1 D3=2 D4=3. */
#define SMALL_QRELS "q1 0 D1 1\nq1 0 D2 0\nq2 0 D3 2\n"
#define SMALL_RUN "q1 Q0 D4 1 3.0 s\nq1 Q0 D1 2 2.0 s\nq2 Q0 D3 1 1.0 s\n"

static rs__corpus *small_corpus(tmpdir *t)
{
  const char *q = tmp_file(t, "corpus_qrels.txt", SMALL_QRELS);
  const char *r = tmp_file(t, "run.txt", SMALL_RUN);
  const char *c = tmp_file(t, "c.h5", NULL);
  import(c, q, r);
  rs__corpus *corpus = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(c, &corpus, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(corpus->nq, 2);
  cr_assert_eq(corpus->nd, 4);
  return corpus;
}

/* Maps text (as file name) onto c; returns the code and fills err. */
static rs_code map_text(tmpdir *t, const rs__corpus *c, const char *name, const char *text, int64_t **off, int32_t **doc,
                        int32_t **grade, rs_error *err)
{
  return rs__qrels_map_file(c, tmp_file(t, name, text), off, doc, grade, err);
}

/* Only q2 judged, in reverse doc order, D4 known from the run:
 * q1 gets an empty row; q2's row is sorted by doc index (D1=0, D4=3). */
Test(qrels_map, subset_sorted_and_unjudged_query)
{
  tmpdir t = {0};
  rs__corpus *c = small_corpus(&t);
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  cr_assert_eq(map_text(&t, c, "q.txt", "q2 0 D4 1\nq2 0 D1 3\n", &off, &doc, &grade, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(off[0], 0);
  cr_expect_eq(off[1], 0);
  cr_expect_eq(off[2], 2);
  cr_expect_eq(doc[0], 0);
  cr_expect_eq(grade[0], 3);
  cr_expect_eq(doc[1], 3);
  cr_expect_eq(grade[1], 1);
  /* Taken over by the corpus, freed by rs__corpus_close. */
  rs__corpus_replace_qrels(c, off, doc, grade);
  cr_expect_eq(c->qoff[2], 2);
  cr_expect_eq(c->qdoc[1], 3);
  rs__corpus_close(c);
  tmp_clean(&t);
}

Test(qrels_map, unknown_query_names_file_and_line)
{
  tmpdir t = {0};
  rs__corpus *c = small_corpus(&t);
  int64_t *off = (int64_t *)1;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  /* Line 2 is a comment: lines count as in the file. */
  rs_code rc = map_text(&t, c, "q.txt", "q1 0 D1 1\n# judged later\nq9 0 D1 1\nq1 0 D7 0\n", &off, &doc, &grade, &err);
  cr_assert_eq(rc, RS_FORMAT, "%s", err.msg);
  cr_expect(strstr(err.msg, "q.txt:3: query 'q9' is not in the corpus (/queries/id of "), "%s", err.msg);
  cr_expect_eq(off, (int64_t *)1, "outputs written on failure");
  rs__corpus_close(c);
  tmp_clean(&t);
}

Test(qrels_map, unknown_doc_names_file_and_line)
{
  tmpdir t = {0};
  rs__corpus *c = small_corpus(&t);
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  /* D9 (line 2) comes before the unknown query q9 (line 3) in the file,
   * though q9 sorts first among the topics. */
  rs_code rc = map_text(&t, c, "q.txt", "q2 0 D1 1\nq2 0 D9 1\nq0 0 D1 1\n", &off, &doc, &grade, &err);
  cr_assert_eq(rc, RS_FORMAT, "%s", err.msg);
  cr_expect(strstr(err.msg, "q.txt:2: doc 'D9' is not in the corpus (/docs/id of "), "%s", err.msg);
  cr_expect(strstr(err.msg, "4 docs"), "%s", err.msg);
  rs__corpus_close(c);
  tmp_clean(&t);
}

Test(qrels_map, duplicate_names_both_lines)
{
  tmpdir t = {0};
  rs__corpus *c = small_corpus(&t);
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  /* D2 repeats on line 4 and D1 on line 5 (and 6): line 4 is first. */
  rs_code rc = map_text(&t, c, "q.txt", "q1 0 D2 1\nq1 0 D1 1\nq2 0 D1 0\nq1 0 D2 0\nq1 0 D1 2\nq1 0 D1 2\n", &off, &doc,
                        &grade, &err);
  cr_assert_eq(rc, RS_DUPLICATE, "%s", err.msg);
  cr_expect(strstr(err.msg, "q.txt:4: doc 'D2' is judged twice for query 'q1' (first on line 1)"), "%s", err.msg);
  /* The same doc for two queries is no duplicate. */
  cr_assert_eq(map_text(&t, c, "ok.txt", "q1 0 D1 1\nq2 0 D1 0\n", &off, &doc, &grade, &err), RS_OK, "%s", err.msg);
  free(off);
  free(doc);
  free(grade);
  rs__corpus_close(c);
  tmp_clean(&t);
}

/* A corpus without /docs/id, built in memory: a doc id is its index in
 * canonical decimal.  rs__qrels_map_file reads only the ids and path. */
Test(qrels_map, decimal_doc_ids_without_docs)
{
  tmpdir t = {0};
  char q1[] = "q1", q2[] = "q2";
  char *qid[2] = {q1, q2};
  rs__corpus c = {.path = "mem.h5", .nq = 2, .query_id = qid};
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  cr_assert_eq(map_text(&t, &c, "q.txt", "q2 0 17 1\nq1 0 0 2\nq2 0 2147483646 1\n", &off, &doc, &grade, &err), RS_OK,
               "%s", err.msg);
  cr_expect(off[0] == 0 && off[1] == 1 && off[2] == 3);
  cr_expect(doc[0] == 0 && grade[0] == 2);
  cr_expect(doc[1] == 17 && doc[2] == 2147483646);
  free(off);
  free(doc);
  free(grade);
  const char *bad[] = {"q1 0 017 1\n", "q1 0 -1 1\n", "q1 0 2147483647 1\n", "q1 0 d3 1\n"};
  const char *want[] = {"'017'", "'-1'", "'2147483647'", "'d3'"};
  for (int i = 0; i < 4; i++) {
    rs_code rc = map_text(&t, &c, "b.txt", bad[i], &off, &doc, &grade, &err);
    cr_expect_eq(rc, RS_FORMAT, "%s", bad[i]);
    cr_expect(strstr(err.msg, "b.txt:1: doc ") && strstr(err.msg, want[i]) && strstr(err.msg, "has no /docs/id"), "%s",
              err.msg);
  }
  tmp_clean(&t);
}

/* In-memory triples (the judge's labels), in any order. */
Test(qrels_map, triples)
{
  const uint32_t q[5] = {2, 0, 2, 2, 0};
  const int32_t d[5] = {9, 4, 1, 5, 3}, g[5] = {1, 2, 0, 3, -1};
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__qrels_map_triples(4, 5, q, d, g, &off, &doc, &grade, &err), RS_OK, "%s", err.msg);
  const int64_t want_off[5] = {0, 2, 2, 5, 5};
  const int32_t want_doc[5] = {3, 4, 1, 5, 9}, want_grade[5] = {-1, 2, 0, 3, 1};
  cr_expect(memcmp(off, want_off, sizeof want_off) == 0);
  cr_expect(memcmp(doc, want_doc, sizeof want_doc) == 0);
  cr_expect(memcmp(grade, want_grade, sizeof want_grade) == 0);
  free(off);
  free(doc);
  free(grade);
  /* None: every row empty. */
  cr_assert_eq(rs__qrels_map_triples(3, 0, NULL, NULL, NULL, &off, &doc, &grade, &err), RS_OK, "%s", err.msg);
  cr_expect(off[0] == 0 && off[3] == 0);
  free(off);
  free(doc);
  free(grade);
}

Test(qrels_map, triples_errors)
{
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  rs_error err = {0};
  const uint32_t q[4] = {1, 0, 1, 1};
  const int32_t d[4] = {7, 7, 3, 7}, g[4] = {1, 1, 1, 0};
  cr_assert_eq(rs__qrels_map_triples(2, 4, q, d, g, &off, &doc, &grade, &err), RS_DUPLICATE);
  cr_expect_str_eq(err.msg, "judgment 3: query 1, doc 7 is judged again (first by judgment 0); expected at most one "
                            "judgment per query and doc");
  cr_assert_eq(rs__qrels_map_triples(1, 4, q, d, g, &off, &doc, &grade, &err), RS_USAGE);
  cr_expect_str_eq(err.msg, "judgment 0: query index 1 is out of range [0, 1)");
  const int32_t neg[1] = {-2};
  cr_assert_eq(rs__qrels_map_triples(2, 1, q, neg, g, &off, &doc, &grade, &err), RS_USAGE);
  cr_expect(strstr(err.msg, "doc index -2 is negative"), "%s", err.msg);
  cr_expect_null(off);
}

/* The conformance data imported with its qrels (and a run, whose docs
 * shift the numbering), and the same qrels mapped from the file onto that
 * corpus: identical CSR arrays. */
struct conf_case {
  char dataset[64], qrels[64], run[64];
};

ParameterizedTestParameters(qrels_map, conformance_equals_import)
{
  static struct conf_case cases[] = {
      {"dl-hard-passage", "qrels.dl-hard-passage.txt", "run.bm25.txt"},
      {"rag24-test", "qrels.rag24.test.txt", ""},
      {"trec-covid-round5", "qrels.covid-round5.txt", ""},
      {"trec_eval-test", "qrels.test", "results.test"},
      {"trec_eval-test", "qrels.test.with-comments", ""},
      {"webtrack-2011-2014", "qrels.wt11-14.txt", ""},
  };
  return cr_make_param_array(struct conf_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(struct conf_case *cc, qrels_map, conformance_equals_import, .timeout = 120)
{
  const char *conf = th_conformance_dir();
  if (!conf) cr_skip_test("no conformance data (../shared/conformance)");
  char qrels[4096], run[4096];
  snprintf(qrels, sizeof qrels, "%s/%s/%s", conf, cc->dataset, cc->qrels);
  snprintf(run, sizeof run, "%s/%s/%s", conf, cc->dataset, cc->run);
  tmpdir t = {0};
  const char *path = tmp_file(&t, "c.h5", NULL);
  import(path, qrels, cc->run[0] ? run : NULL);
  rs__corpus *c = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "%s", err.msg);
  int64_t *off = NULL;
  int32_t *doc = NULL, *grade = NULL;
  cr_assert_eq(rs__qrels_map_file(c, qrels, &off, &doc, &grade, &err), RS_OK, "%s", err.msg);
  const size_t nnz = (size_t)c->qoff[c->nq];
  cr_assert_gt(nnz, 0);
  cr_expect(memcmp(off, c->qoff, (c->nq + 1) * sizeof *off) == 0, "%s: offsets differ", cc->qrels);
  cr_expect(memcmp(doc, c->qdoc, nnz * sizeof *doc) == 0, "%s: docs differ", cc->qrels);
  cr_expect(memcmp(grade, c->qgrade, nnz * sizeof *grade) == 0, "%s: grades differ", cc->qrels);
  free(off);
  free(doc);
  free(grade);
  rs__corpus_close(c);
  tmp_clean(&t);
}
