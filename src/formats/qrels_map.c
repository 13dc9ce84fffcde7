#define _POSIX_C_SOURCE 200809L
/* qrels_map.c: a TREC qrels file, or in-memory judgments, as a corpus's
 * CSR qrels (see qrels_map.h for the contracts). */
#include "formats/qrels_map.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/qrels.h"
#include "formats/tokens.h"

/* One judgment while it is sorted into place.  pos orders the judgments
 * as they were given (a byte offset into the file, or the input index),
 * so the first repeat in that order is the one reported. */
typedef struct {
  int32_t doc, grade;
  uint64_t pos;
} entry;

static int cmp_entry(const void *pa, const void *pb)
{
  const entry *a = pa, *b = pb;
  if (a->doc != b->doc) return (a->doc > b->doc) - (a->doc < b->doc);
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The CSR arrays of n judgments (query indexes already checked < nq).
 * On a repeated (query, doc), returns RS_DUPLICATE with *dup_first and
 * *dup_second the positions of the first two judgments of the pair that
 * repeats earliest (smallest second position) and *dup_query its query;
 * the caller writes the message. */
static rs_code build_csr(size_t nq, size_t n, const uint32_t *q, const int32_t *doc, const int32_t *grade,
                         const uint64_t *pos, int64_t **qoff, int32_t **qdoc, int32_t **qgrade, uint64_t *dup_first,
                         uint64_t *dup_second, size_t *dup_query, rs_error *err)
{
  rs_code rc = RS_OK;
  int64_t *off = rs__calloc(nq + 1, sizeof *off);
  int64_t *fill = rs__malloc(rs__mul(nq ? nq : 1, sizeof *fill));
  entry *e = rs__malloc(rs__mul(n, sizeof *e));
  int32_t *od = rs__malloc(rs__mul(n, sizeof *od)), *og = rs__malloc(rs__mul(n, sizeof *og));
  if (!off || !fill || !e || !od || !og) {
    rc = rs__fail(err, RS_NOMEM, "out of memory building the qrels of %zu judgments", n);
    goto done;
  }
  /* Counting sort by query (stable), then each row by doc index and
   * position: equal docs end up adjacent, earliest first. */
  for (size_t i = 0; i < n; i++) off[q[i] + 1]++;
  for (size_t k = 0; k < nq; k++) off[k + 1] += off[k];
  memcpy(fill, off, nq * sizeof *fill);
  for (size_t i = 0; i < n; i++) e[fill[q[i]]++] = (entry){doc[i], grade[i], pos ? pos[i] : (uint64_t)i};
  uint64_t best = UINT64_MAX;
  for (size_t k = 0; k < nq; k++) {
    const size_t a = (size_t)off[k], b = (size_t)off[k + 1];
    if (b - a > 1) qsort(e + a, b - a, sizeof *e, cmp_entry);
    for (size_t j = a; j < b; j++) {
      od[j] = e[j].doc;
      og[j] = e[j].grade;
      /* Within a group of equal docs the adjacent pair of the two
       * earliest gives the smallest second position. */
      if (j > a && e[j].doc == e[j - 1].doc && e[j].pos < best) {
        best = e[j].pos;
        *dup_first = e[j - 1].pos;
        *dup_second = e[j].pos;
        *dup_query = k;
      }
    }
  }
  if (best != UINT64_MAX) {
    rc = RS_DUPLICATE;
    goto done;
  }
  *qoff = off;
  *qdoc = od;
  *qgrade = og;
  off = NULL;
  od = og = NULL;
done:
  free(off);
  free(fill);
  free(e);
  free(od);
  free(og);
  return rc;
}

rs_code rs__qrels_map_triples(size_t nq, size_t n, const uint32_t *q, const int32_t *doc, const int32_t *grade,
                              int64_t **qoff, int32_t **qdoc, int32_t **qgrade, rs_error *err)
{
  for (size_t i = 0; i < n; i++) {
    if (q[i] >= nq)
      return rs__fail(err, RS_USAGE, "judgment %zu: query index %" PRIu32 " is out of range [0, %zu)", i, q[i], nq);
    if (doc[i] < 0)
      return rs__fail(err, RS_USAGE, "judgment %zu: doc index %" PRId32 " is negative (expected >= 0)", i, doc[i]);
  }
  uint64_t first = 0, second = 0;
  size_t dq = 0;
  rs_code rc = build_csr(nq, n, q, doc, grade, NULL, qoff, qdoc, qgrade, &first, &second, &dq, err);
  if (rc == RS_DUPLICATE)
    rc = rs__fail(err, RS_DUPLICATE,
                  "judgment %" PRIu64 ": query %zu, doc %" PRId32 " is judged again (first by judgment %" PRIu64
                  "); expected at most one judgment per query and doc",
                  second, dq, doc[second], first);
  return rc;
}

/* --- ids -> indexes --------------------------------------------------------- */

/* An open-addressing table of strings by index.  A slot is 0 (empty) or
 * the high 32 bits of the id's hash above 1 + its index into ids[]: a
 * probe compares the tag first, so it reads the string (a cache miss in a
 * table of millions of docs) only when the tags agree. */
typedef struct {
  uint64_t *slot;
  size_t mask;
  char *const *ids;
} id_table;

static size_t pow2_at_least(size_t n)
{
  size_t p = 2;
  while (p < n) p <<= 1;
  return p;
}

static inline uint64_t slot_value(uint64_t h, size_t k) { return (h & 0xffffffff00000000ull) | (uint64_t)(k + 1); }

/* Fills t with ids[0..n) (n < 2^32 - 1); 0 when out of memory.  A
 * repeated id keeps its first index (a valid corpus has none). */
static int table_build(id_table *t, char *const *ids, size_t n)
{
  t->ids = ids;
  t->mask = pow2_at_least(2 * n) - 1; /* load factor <= 1/2 */
  if (!(t->slot = rs__calloc(t->mask + 1, sizeof *t->slot))) return 0;
  for (size_t k = 0; k < n; k++) {
    const uint64_t h = rs__hash_bytes(ids[k], strlen(ids[k])), v = slot_value(h, k);
    size_t i = (size_t)h & t->mask;
    for (; t->slot[i]; i = (i + 1) & t->mask)
      if ((t->slot[i] >> 32) == (v >> 32) && strcmp(ids[(uint32_t)t->slot[i] - 1], ids[k]) == 0) break;
    if (!t->slot[i]) t->slot[i] = v;
  }
  return 1;
}

/* Index of id (its len bytes; not NUL-terminated), or -1. */
static int64_t table_find(const id_table *t, const char *id, size_t len)
{
  const uint64_t h = rs__hash_bytes(id, len);
  for (size_t i = (size_t)h & t->mask; t->slot[i]; i = (i + 1) & t->mask)
    if ((t->slot[i] >> 32) == (h >> 32)) { /* id is not NUL-terminated (it points into the qrels file) */
      const char *known = t->ids[(uint32_t)t->slot[i] - 1];
      if (strnlen(known, len + 1) == len && memcmp(known, id, len) == 0) return (int64_t)(uint32_t)t->slot[i] - 1;
    }
  return -1;
}

/* A doc id of a corpus without /docs/id: its index in canonical decimal
 * (as `export` writes it), else -1. */
static int64_t decimal_index(const char *s, size_t len)
{
  if (len == 0 || len > 10 || (len > 1 && s[0] == '0')) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = 10 * v + (s[i] - '0');
  }
  return v < INT32_MAX ? v : -1;
}

/* 1 + the number of newlines before offset pos of text. */
static size_t line_of(const char *text, size_t pos)
{
  size_t line = 1;
  for (const char *p = text, *end = text + pos; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) line++;
  return line;
}

rs_code rs__qrels_map_file(const rs__corpus *c, const char *path, int64_t **qoff, int32_t **qdoc, int32_t **qgrade,
                           rs_error *err)
{
  rs__qrels *qr = NULL;
  id_table qt = {0}, dt = {0};
  uint32_t *jq = NULL;
  int32_t *jd = NULL;
  uint64_t *jpos = NULL;
  const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
  rs_code rc;
  /* Loading the ids is a cache fill: the corpus stays the same corpus. */
  if (!c->query_id && (rc = rs__corpus_load_queries((rs__corpus *)c, err))) return rc;
  if ((rc = rs__corpus_load_doc_ids((rs__corpus *)c, err))) return rc;
  if ((rc = rs__qrels_read(path, RS_NUMBERS_STRICT, 1, &qr, err))) return rc;
  const size_t n = qr->n_judged;
  jq = rs__malloc(rs__mul(n, sizeof *jq));
  jd = rs__malloc(rs__mul(n, sizeof *jd));
  jpos = rs__malloc(rs__mul(n, sizeof *jpos));
  if (!jq || !jd || !jpos || !table_build(&qt, c->query_id, c->nq) ||
      (c->has_docs && !table_build(&dt, c->doc_id, c->nd))) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory indexing the corpus's ids", name);
    goto done;
  }
  /* Every id is looked up; the unknown one earliest in the file (docnos
   * point into qr->text, the file) is reported: bad_at orders them and
   * gives the line, [bad, bad + bad_len) is shown. */
  const char *bad = NULL, *bad_at = NULL;
  size_t bad_len = 0;
  int bad_is_doc = 0;
  for (size_t t = 0; t < qr->n_topics; t++) {
    /* topic_id[t] is the qid of the topic's first line: the line of its
     * first docno in the file, before that docno */
    const int64_t qi = table_find(&qt, qr->topic_id[t], qr->topic_len[t]);
    if (qi < 0) {
      const char *at = NULL;
      for (size_t j = qr->first[t]; j < qr->first[t] + qr->count[t]; j++)
        if (!at || qr->doc[j] - 1 < at) at = qr->doc[j] - 1;
      if (at && (!bad || at < bad_at)) bad = qr->topic_id[t], bad_len = strlen(bad), bad_at = at, bad_is_doc = 0;
    }
    for (size_t j = qr->first[t]; j < qr->first[t] + qr->count[t]; j++) {
      const int64_t di = c->has_docs ? table_find(&dt, qr->doc[j], qr->doc_len[j]) : decimal_index(qr->doc[j], qr->doc_len[j]);
      if (di < 0 && (!bad || qr->doc[j] < bad_at)) bad = bad_at = qr->doc[j], bad_len = qr->doc_len[j], bad_is_doc = 1;
      jq[j] = (uint32_t)(qi < 0 ? 0 : qi);
      jd[j] = (int32_t)(di < 0 ? 0 : di);
      jpos[j] = (uint64_t)(qr->doc[j] - qr->text);
    }
  }
  if (bad && !bad_is_doc) {
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%zu: query '%.*s' is not in the corpus (/queries/id of %s, %zu queries); expected qrels for "
                  "the corpus's queries",
                  name, line_of(qr->text, (size_t)(bad_at - qr->text)), (int)bad_len, bad, c->path, c->nq);
    goto done;
  }
  if (bad && c->has_docs) {
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%zu: doc '%.*s' is not in the corpus (/docs/id of %s, %zu docs); expected only docs the corpus "
                  "knows",
                  name, line_of(qr->text, (size_t)(bad_at - qr->text)), (int)bad_len, bad, c->path, c->nd);
    goto done;
  }
  if (bad) {
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%zu: doc '%.*s' is not in the corpus (%s has no /docs/id, so a doc id is its index in decimal, "
                  "0 to %d)",
                  name, line_of(qr->text, (size_t)(bad_at - qr->text)), (int)bad_len, bad, c->path, INT32_MAX - 1);
    goto done;
  }
  uint64_t first = 0, second = 0;
  size_t dq = 0;
  rc = build_csr(c->nq, n, jq, jd, qr->grade, jpos, qoff, qdoc, qgrade, &first, &second, &dq, err);
  if (rc == RS_DUPLICATE)
    rc = rs__fail(err, RS_DUPLICATE,
                  "%s:%zu: doc '%.*s' is judged twice for query '%s' (first on line %zu); trec_eval rejects such qrels "
                  "(\"duplicate docs\"): expected one line per query and doc",
                  name, line_of(qr->text, (size_t)second),
                  (int)(rs__token_end(qr->text + second, qr->text + qr->file.len) - (qr->text + second)),
                  qr->text + second, c->query_id[dq], line_of(qr->text, (size_t)first));
done:
  free(qt.slot);
  free(dt.slot);
  free(jq);
  free(jd);
  free(jpos);
  rs__qrels_free(qr);
  return rc;
}

void rs__corpus_replace_qrels(rs__corpus *c, int64_t *qoff, int32_t *qdoc, int32_t *qgrade)
{
  free(c->qoff);
  free(c->qdoc);
  free(c->qgrade);
  c->qoff = qoff;
  c->qdoc = qdoc;
  c->qgrade = qgrade;
}
