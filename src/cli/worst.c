/* worst.c: the N worst queries per run and measure, with bounded memory. */
#define _GNU_SOURCE
#include "worst.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csvio.h"

typedef struct entry {
  double value, rr, num_rel;
  size_t query;
} entry;

struct worst_file {
  rs__csv *csv;
  const rs__spec *spec;
  const rs__corpus *corpus;
  size_t n_worst;
  entry *heap;   /* [n_out][n_worst]: a max-heap per measure, the largest of the kept values on top */
  size_t *n_heap; /* [n_out] */
  entry *no_hit; /* queries of the current run with no relevant doc retrieved */
  size_t n_no_hit, cap_no_hit;
  size_t run;
  char *run_name;
  rs__csv *texts;       /* query_texts.csv, or NULL when the corpus has no texts */
  unsigned char *named; /* [nq] with texts: the query is in worst.csv */
};

/* a is kept in preference to b: a lower value, or the same value earlier. */
static int before(const entry *a, const entry *b)
{
  if (a->value != b->value) return a->value < b->value;
  return a->query < b->query;
}

static void sift_down(entry *h, size_t n, size_t i)
{
  for (;;) {
    size_t top = i, l = 2 * i + 1, r = l + 1;
    if (l < n && before(&h[top], &h[l])) top = l;
    if (r < n && before(&h[top], &h[r])) top = r;
    if (top == i) return;
    entry t = h[i];
    h[i] = h[top], h[top] = t;
    i = top;
  }
}

static void push(entry *h, size_t *n, size_t cap, entry e)
{
  if (*n < cap) {
    size_t i = (*n)++;
    h[i] = e;
    while (i && before(&h[(i - 1) / 2], &h[i])) {
      entry t = h[i];
      h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
  } else if (before(&e, &h[0])) {
    h[0] = e;
    sift_down(h, *n, 0);
  }
}

static int by_rank(const void *a, const void *b)
{
  const entry *x = a, *y = b;
  return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

rs_code worst_open(worst_file **out, const char *dir, size_t n_worst, const rs__spec *spec, const rs__corpus *c,
                   rs_error *err)
{
  worst_file *w = rs__calloc(1, sizeof *w);
  if (!w) return rs__fail(err, RS_NOMEM, "out of memory");
  w->spec = spec, w->corpus = c, w->n_worst = n_worst, w->run = SIZE_MAX;
  w->heap = rs__malloc(rs__mul(spec->n_out, rs__mul(n_worst, sizeof *w->heap)));
  w->n_heap = rs__calloc(spec->n_out, sizeof *w->n_heap);
  rs_code rc = w->heap && w->n_heap ? rs__csv_create(dir, "worst.csv", &w->csv, err)
                                    : rs__fail(err, RS_NOMEM, "out of memory");
  static const char *const hdr[] = {"run",   "list",  "measure", "position", "query",
                                    "value", "first_relevant_rank", "num_rel"};
  for (size_t i = 0; !rc && i < sizeof hdr / sizeof *hdr; i++) rs__csv_str(w->csv, hdr[i]);
  if (!rc) rc = rs__csv_end_row(w->csv, err);
  if (!rc && c->has_text && c->query_text) {
    if (!(w->named = rs__calloc(c->nq, 1))) rc = rs__fail(err, RS_NOMEM, "out of memory");
    if (!rc) rc = rs__csv_create(dir, "query_texts.csv", &w->texts, err);
    if (!rc) {
      rs__csv_str(w->texts, "query");
      rs__csv_str(w->texts, "text");
      rc = rs__csv_end_row(w->texts, err);
    }
  }
  if (rc) {
    worst_abort(w);
    return rc;
  }
  *out = w;
  return RS_OK;
}

static void first_rank_field(rs__csv *csv, double rr)
{
  if (rr > 0.0) rs__csv_uint(csv, (unsigned long long)llround(1.0 / rr));
  else rs__csv_str(csv, "");
}

/* Writes the finished run's rows and empties the lists. */
static rs_code flush_run(worst_file *w, rs_error *err)
{
  rs_code rc = RS_OK;
  if (w->run == SIZE_MAX) return RS_OK;
  for (size_t k = 0; k < w->spec->n_out && !rc; k++) {
    entry *h = w->heap + k * w->n_worst;
    qsort(h, w->n_heap[k], sizeof *h, by_rank);
    for (size_t i = 0; i < w->n_heap[k] && !rc; i++) {
      rs__csv_str(w->csv, w->run_name);
      rs__csv_str(w->csv, "worst");
      rs__csv_str(w->csv, w->spec->req[k].name);
      rs__csv_uint(w->csv, i + 1);
      rs__csv_str(w->csv, rs__corpus_qid(w->corpus, h[i].query));
      if (w->named) w->named[h[i].query] = 1;
      rs__csv_num(w->csv, h[i].value);
      first_rank_field(w->csv, h[i].rr);
      rs__csv_uint(w->csv, (unsigned long long)h[i].num_rel);
      rc = rs__csv_end_row(w->csv, err);
    }
    w->n_heap[k] = 0;
  }
  for (size_t i = 0; i < w->n_no_hit && !rc; i++) {
    rs__csv_str(w->csv, w->run_name);
    rs__csv_str(w->csv, "no_relevant_retrieved");
    rs__csv_str(w->csv, "");
    rs__csv_uint(w->csv, i + 1);
    rs__csv_str(w->csv, rs__corpus_qid(w->corpus, w->no_hit[i].query));
    if (w->named) w->named[w->no_hit[i].query] = 1;
    rs__csv_str(w->csv, "");
    rs__csv_str(w->csv, "");
    rs__csv_uint(w->csv, (unsigned long long)w->no_hit[i].num_rel);
    rc = rs__csv_end_row(w->csv, err);
  }
  w->n_no_hit = 0;
  return rc;
}

rs_code worst_add(worst_file *w, size_t run, const char *run_name, size_t query, const double *v, rs_error *err)
{
  if (run != w->run) {
    rs_code rc = flush_run(w, err);
    if (rc) return rc;
    free(w->run_name);
    if (!(w->run_name = strdup(run_name))) return rs__fail(err, RS_NOMEM, "out of memory");
    w->run = run;
  }
  const double rr = v[w->spec->hidden_rr], num_rel = v[w->spec->hidden_numrel];
  for (size_t k = 0; k < w->spec->n_out; k++)
    push(w->heap + k * w->n_worst, &w->n_heap[k], w->n_worst, (entry){v[k], rr, num_rel, query});
  if (v[w->spec->hidden_relret] == 0.0) {
    if (w->n_no_hit == w->cap_no_hit) {
      size_t cap = w->cap_no_hit ? 2 * w->cap_no_hit : 256;
      entry *p = rs__realloc(w->no_hit, rs__mul(cap, sizeof *p));
      if (!p) return rs__fail(err, RS_NOMEM, "out of memory");
      w->no_hit = p, w->cap_no_hit = cap;
    }
    w->no_hit[w->n_no_hit++] = (entry){0.0, rr, num_rel, query};
  }
  return RS_OK;
}

static void free_worst(worst_file *w)
{
  free(w->named);
  free(w->heap);
  free(w->n_heap);
  free(w->no_hit);
  free(w->run_name);
  free(w);
}

rs_code worst_commit(worst_file *w, rs_error *err)
{
  rs_code rc = flush_run(w, err);
  if (rc) {
    worst_abort(w);
    return rc;
  }
  for (size_t q = 0; w->texts && q < w->corpus->nq && !rc; q++) {
    if (!w->named[q]) continue;
    rs__csv_str(w->texts, rs__corpus_qid(w->corpus, q));
    rs__csv_str(w->texts, w->corpus->query_text[q] ? w->corpus->query_text[q] : "");
    rc = rs__csv_end_row(w->texts, err);
  }
  if (rc) {
    worst_abort(w);
    return rc;
  }
  rc = rs__csv_commit(w->csv, err);
  w->csv = NULL;
  if (!rc && w->texts) rc = rs__csv_commit(w->texts, err);
  else rs__csv_abort(w->texts);
  w->texts = NULL;
  free_worst(w);
  return rc;
}

int worst_has_texts(const worst_file *w) { return w && w->texts; }

void worst_abort(worst_file *w)
{
  if (!w) return;
  rs__csv_abort(w->csv);
  rs__csv_abort(w->texts);
  free_worst(w);
}
