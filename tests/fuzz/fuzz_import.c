/* fuzz_import: the corpus a direct eval builds in memory
 * (rs__import_corpus) from TREC qrels and a TREC run, the input cut at
 * its first NUL byte (qrels before, run after), built at 1 and at 8
 * threads: doc ids interned in 1 and in 8 parts, ranges of strcmp order
 * cut from a sample of the judged docs.  Both must succeed or fail alike
 * (an error with a message); on success they must agree on the doc ids,
 * which rise strictly, and on every judged and ranked doc number, each in
 * range.  (The fuzz build is serial: the parts are interned in turn.)
 * Built a third time with rows_only (eval's: doc numbers local to each
 * query), it must succeed or fail alike and hold the same rows, with no
 * scores: each judged doc numbered by its judgment's place in its query
 * (which names the same doc as the ids' corpus), each other doc by the
 * query's judgment count plus its rank. */
#include "fuzz.h"
#include "formats/corpus.h"
#include "formats/import.h"

static rs_code build(const char *qrels, const char *run, int threads, int rows_only, rs__corpus **c, rs_error *err)
{
  const rs__import_run ir = {.name = "run", .path = run};
  const rs__import_cfg cfg = {.qrels_path = qrels, .runs = &ir, .n_runs = 1, .threads = threads, .rows_only = rows_only};
  return rs__import_corpus(&cfg, c, err);
}

/* local (rows_only) against ids (the doc ids' corpus of the same files). */
static void check_local(const rs__corpus *ids, const rs__corpus *local)
{
  if (!local->rows_ranked || local->has_docs || local->nq != ids->nq || local->runs.run[0].has_score) abort();
  const rs__run_mem *mi = ids->runs.run[0].mem, *ml = local->runs.run[0].mem;
  for (size_t q = 0; q < ids->nq; q++) {
    const int64_t qa = ids->qoff[q], qb = ids->qoff[q + 1];
    if (local->qoff[q] != qa || local->qoff[q + 1] != qb) abort();
    for (int64_t k = qa; k < qb; k++)
      if (local->qdoc[k] != (int32_t)(k - qa) || local->qgrade[k] != ids->qgrade[k]) abort();
    if (ml->off[q] != mi->off[q] || ml->off[q + 1] != mi->off[q + 1]) abort();
    const int64_t n = mi->off[q + 1] - mi->off[q];
    if (n && !ml->row_doc[q]) abort();
    for (int64_t i = 0; i < n; i++) {
      const int32_t g = mi->doc[mi->off[q] + i], l = ml->row_doc[q][i];
      int64_t k = qa;
      while (k < qb && ids->qdoc[k] != g) k++;
      if (k < qb ? l != (int32_t)(k - qa) : l != (int32_t)(qb - qa + i)) abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *cut = memchr(data, 0, size);
  const size_t qn = cut ? (size_t)(cut - data) : size;
  fz_file q, r;
  fz_file_open(&q, data, qn);
  fz_file_open(&r, cut ? cut + 1 : data + size, cut ? size - qn - 1 : 0);
  rs__corpus *one = NULL, *many = NULL, *local = NULL;
  rs_error e1 = {0}, e8 = {0}, el = {0};
  const rs_code rc1 = build(q.path, r.path, 1, 0, &one, &e1), rc8 = build(q.path, r.path, 8, 0, &many, &e8);
  const rs_code rcl = build(q.path, r.path, 2, 1, &local, &el);
  if (rc1 != rc8 || (rc1 && (!e1.msg[0] || !e8.msg[0]))) abort();
  if (rcl != rc1 || (rcl && !el.msg[0])) abort();
  if (!rc1) check_local(one, local);
  if (!rc1) {
    if (one->nd != many->nd || one->nq != many->nq || !one->doc_ids_sorted) abort();
    for (size_t i = 0; i < one->nd; i++) {
      if (strcmp(one->doc_id[i], many->doc_id[i]) != 0) abort();
      if (i && strcmp(one->doc_id[i - 1], one->doc_id[i]) >= 0) abort();
    }
    const size_t nnz = (size_t)one->qoff[one->nq];
    if ((size_t)many->qoff[many->nq] != nnz) abort();
    for (size_t k = 0; k < nnz; k++)
      if (one->qdoc[k] != many->qdoc[k] || one->qdoc[k] < 0 || (size_t)one->qdoc[k] >= one->nd) abort();
    const rs__run_mem *m1 = one->runs.run[0].mem, *m8 = many->runs.run[0].mem;
    const size_t ranked = (size_t)m1->off[one->nq];
    if ((size_t)m8->off[many->nq] != ranked) abort();
    for (size_t k = 0; k < ranked; k++)
      if (m1->doc[k] != m8->doc[k] || m1->doc[k] < 0 || (size_t)m1->doc[k] >= one->nd) abort();
  }
  rs__corpus_close(one);
  rs__corpus_close(many);
  rs__corpus_close(local);
  fz_file_close(&q);
  fz_file_close(&r);
  return 0;
}
