/* test_corpus_ids.c: the open's checks of a corpus's ids, on corpora large
 * enough that the checks split their work across threads: query ids unique
 * (hashes bucketed on all threads), whatever rows a duplicate sits in, and
 * the same verdict at one thread and two. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sched.h"
#include "formats/corpus.h"
#include "helpers.h"

/* nq query ids "q%06zu" (row dup_of's id again at row dup_at when dup_at <
 * nq), one doc, one judgment, one run ranking the doc for every query. */
static char *write_many_queries(size_t nq, size_t dup_of, size_t dup_at)
{
  char *path = th_join(th_fresh_dir(), "many.h5");
  char **qid = calloc(nq, sizeof *qid);
  int64_t *qoff = calloc(nq + 1, sizeof *qoff);
  int32_t *doc = calloc(nq, sizeof *doc);
  cr_assert(qid && qoff && doc);
  for (size_t i = 0; i < nq; i++) {
    qid[i] = malloc(16);
    cr_assert(qid[i]);
    snprintf(qid[i], 16, "q%06zu", i == dup_at ? dup_of : i);
    qoff[i + 1] = 1; /* query 0 judges doc 0 */
  }
  rs_error err = {0};
  rs__h5w *w = NULL;
  cr_assert_eq(rs__h5w_create(path, 1, &w, &err), RS_OK, "%s", err.msg);
  const char *const did[] = {"d0"};
  int32_t qdoc[] = {0}, qgrade[] = {1};
  cr_assert_eq(rs__h5w_strings(w, "/queries/id", (const char *const *)qid, nq, 0, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_strings(w, "/docs/id", did, 1, 0, &err), RS_OK, "%s", err.msg);
  uint64_t dims[2] = {nq + 1, 1};
  cr_assert_eq(rs__h5w_array(w, "/qrels/offsets", RS_DT_I64, 1, dims, qoff, &err), RS_OK, "%s", err.msg);
  dims[0] = 1;
  cr_assert_eq(rs__h5w_array(w, "/qrels/doc", RS_DT_I32, 1, dims, qdoc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_array(w, "/qrels/grade", RS_DT_I32, 1, dims, qgrade, &err), RS_OK, "%s", err.msg);
  dims[0] = nq;
  cr_assert_eq(rs__h5w_array(w, "/runs/sys/doc", RS_DT_I32, 2, dims, doc, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__h5w_commit(w, &err), RS_OK, "%s", err.msg);
  for (size_t i = 0; i < nq; i++) free(qid[i]);
  free(qid);
  free(qoff);
  free(doc);
  return path;
}

enum { MANY = 150000 }; /* past the two parts of 65536 rows the checks split at two threads */

static rs_code open_at(const char *path, int threads, rs_error *err)
{
  rs__threads_set_default(threads);
  rs__corpus *c = NULL;
  const rs_code rc = rs__corpus_open(path, &c, err);
  rs__corpus_close(c);
  return rc;
}

Test(corpus_ids, many_distinct_query_ids_pass_at_one_thread_and_two, .timeout = 60)
{
  const char *path = write_many_queries(MANY, MANY, MANY);
  for (int t = 1; t <= 2; t++) {
    rs_error err = {0};
    cr_expect_eq(open_at(path, t, &err), RS_OK, "%d threads: %s", t, err.msg);
  }
}

/* A duplicate in each half, and one across the halves: each is found and
 * named by its rows, at one thread and two. */
Test(corpus_ids, a_duplicate_query_id_is_found_wherever_it_sits, .timeout = 120)
{
  static const struct {
    size_t of, at;
  } dups[] = {{3, 70000}, {3, MANY - 1}, {80000, 149000}, {0, 1}};
  for (size_t k = 0; k < sizeof dups / sizeof *dups; k++) {
    const char *path = write_many_queries(MANY, dups[k].of, dups[k].at);
    char want[128];
    snprintf(want, sizeof want, "rows %zu and %zu: expected unique query ids, found 'q%06zu' twice", dups[k].of,
             dups[k].at, dups[k].of);
    for (int t = 1; t <= 2; t++) {
      rs_error err = {0};
      cr_expect_eq(open_at(path, t, &err), RS_FORMAT, "q%06zu at row %zu, %d threads: %s", dups[k].of, dups[k].at, t,
                   err.msg);
      cr_expect(strstr(err.msg, want), "%d threads: expected \"%s\" in \"%s\"", t, want, err.msg);
    }
  }
}
