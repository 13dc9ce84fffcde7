/* import.c: TREC qrels and runs, or a JSON evaluation set -> a corpus. */
#define _POSIX_C_SOURCE 200809L
#include "formats/import.h"
#include "formats/corpus_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/detect.h"
#include "formats/evalset.h"
#include "formats/qrels.h"
#include "formats/textio.h"
#include "formats/texts.h"
#include "formats/textruns.h"
#include "engine/sched.h"
#include "formats/trecrun.h"
#include "util/idsort.h"
#include "util/strdict.h"
#include "util/tmpfiles.h"

/* --- blocks: bytes carved from big allocations ----------------------------- */

/* Many small items (ids' bytes, a topic's doc numbers) carved from blocks:
 * one allocation a block, not one an item, and an in-memory corpus takes
 * the blocks over as they are. */
typedef struct {
  char **block;
  size_t n_block, cap_block;
  char *at; /* the last block's free bytes */
  size_t left;
} blocks;

/* bytes from b, from a new block of block_size bytes (or of bytes, when
 * more) when the last one has too few left (rs__malloc: a block of 2 MB
 * or more on huge pages).  NULL without memory. */
static void *blocks_take(blocks *b, size_t bytes, size_t block_size)
{
  if (bytes > b->left) {
    if (b->n_block == b->cap_block) {
      const size_t cap = b->cap_block ? 2 * b->cap_block : 64;
      char **grown = rs__realloc(b->block, rs__mul(cap, sizeof *grown));
      if (!grown) return NULL;
      b->block = grown;
      b->cap_block = cap;
    }
    const size_t size = bytes > block_size ? bytes : block_size;
    char *fresh = rs__malloc(size);
    if (!fresh) return NULL;
    b->block[b->n_block++] = b->at = fresh;
    b->left = size;
  }
  void *p = b->at;
  b->at += bytes;
  b->left -= bytes;
  return p;
}

static void blocks_free(blocks *b)
{
  for (size_t i = 0; i < b->n_block; i++) free(b->block[i]);
  free(b->block);
  *b = (blocks){0};
}

/* --- doc ids: interned, then numbered in strcmp order ---------------------- */

typedef struct {
  char **id;   /* [n] by provisional number, pointing into block */
  uint64_t *hash;
  size_t n, cap;
  /* 0 empty, else the hash's upper 32 bits << 32 | (1 + provisional
   * number): a probe compares the tag before it touches the id. */
  uint64_t *slot;
  size_t mask;
  blocks bytes; /* the ids' bytes, in blocks of INTERN_BLOCK */
} interner;

/* (8 MiB blocks, on huge pages, were measured and not kept: no faster at
 * 100k x 100, 17 MB more.) */
#define INTERN_BLOCK ((size_t)1 << 20)

/* len + 1 bytes for an id, or NULL when out of memory. */
static char *intern_bytes(interner *in, size_t len) { return blocks_take(&in->bytes, len + 1, INTERN_BLOCK); }

static int intern_grow(interner *in)
{
  size_t cap = in->cap ? 2 * in->cap : 1024;
  char **id = rs__realloc(in->id, rs__mul(cap, sizeof *id));
  if (!id) return 0;
  in->id = id;
  uint64_t *h = rs__realloc(in->hash, rs__mul(cap, sizeof *h));
  if (!h) return 0;
  in->hash = h;
  in->cap = cap;
  size_t ns = 2 * cap;
  uint64_t *slot = rs__calloc(ns, sizeof *slot);
  if (!slot) return 0;
  for (size_t i = 0; i < in->n; i++) {
    size_t s = (size_t)in->hash[i] & (ns - 1);
    while (slot[s]) s = (s + 1) & (ns - 1);
    slot[s] = (in->hash[i] >> 32) << 32 | (uint64_t)(i + 1);
  }
  free(in->slot);
  in->slot = slot;
  in->mask = ns - 1;
  return 1;
}

/* Provisional number of a doc id of hash h (rs__hash_bytes), or -1 when
 * out of memory. */
static int64_t intern_hashed(interner *in, const char *s, size_t len, uint64_t h)
{
  const uint64_t tag = h >> 32;
  if (in->cap) {
    for (size_t i = (size_t)h & in->mask; in->slot[i]; i = (i + 1) & in->mask) {
      if (in->slot[i] >> 32 != tag) continue;
      size_t k = (uint32_t)in->slot[i] - 1;
      if (strncmp(in->id[k], s, len) == 0 && in->id[k][len] == '\0') return (int64_t)k; /* the tag matched */
    }
  }
  if (in->n == in->cap && !intern_grow(in)) return -1;
  char *copy = intern_bytes(in, len);
  if (!copy) return -1;
  memcpy(copy, s, len);
  copy[len] = '\0';
  size_t k = in->n++;
  in->id[k] = copy;
  in->hash[k] = h;
  size_t i = (size_t)h & in->mask;
  while (in->slot[i]) i = (i + 1) & in->mask;
  in->slot[i] = tag << 32 | (uint64_t)(k + 1);
  return (int64_t)k;
}

/* Where id hash h would be looked up first, fetched ahead: a table of
 * millions of ids is far out of the cache, and a topic's ids are known
 * before the first is looked up (100k x 100 direct eval, 4 runs each in
 * turn: open 3.4-4.7 -> 2.5-3.2 s; fetching the id the slot names too, in
 * a second stage, gained nothing more). */
static inline void intern_prefetch(const interner *in, uint64_t h)
{
  if (in->cap) __builtin_prefetch(&in->slot[(size_t)h & in->mask]);
}

/* The id that the first slot of hash h names, if its tag matches: NULL
 * else.  The slot must be in the cache (intern_prefetch) for this to be
 * cheap. */
static inline char *const *intern_first_match(const interner *in, uint64_t h)
{
  if (!in->cap) return NULL;
  const uint64_t s = in->slot[(size_t)h & in->mask];
  return s && s >> 32 == h >> 32 ? &in->id[(uint32_t)s - 1] : NULL;
}

static void interner_free(interner *in)
{
  blocks_free(&in->bytes);
  free(in->id);
  free(in->hash);
  free(in->slot);
}

/* --- doc ids: interned in parts, ranges of strcmp order ------------------------ */

/* Doc ids are interned in parts, each a range of strcmp order (part_of),
 * so that the parts are interned, then sorted, on all threads at once, and
 * their sorted ids, one part after the other, are all the ids in strcmp
 * order.  One interner for all ids took 2.2 s of a 100k x 100 direct eval
 * on one thread while the others waited.  The ranges are cut from a
 * sample of the first ids seen (the judged docs, else the first run's):
 * after the prefix the sample shares, at quantiles of the next 8 bytes.
 * A doc's provisional number is its number in its part, shifted left by
 * part_bits, or'ed with the part.  The final numbers (sort_doc_ids) do not
 * depend on the parts, so neither do they on the thread count. */
enum { ID_PARTS_MAX = 8, ID_SAMPLE = 4096, ID_COMMON_MAX = 64 };

typedef struct {
  interner part[ID_PARTS_MAX];
  size_t n_parts;     /* 1 until ids_split */
  unsigned part_bits; /* log2 of n_parts */
  int split;          /* the ranges are set */
  char common[ID_COMMON_MAX];
  size_t common_len;
  uint64_t from[ID_PARTS_MAX - 1]; /* part p + 1 holds the ids, with the common prefix, from key from[p] */
} doc_ids;

static size_t ids_count(const doc_ids *d)
{
  size_t n = 0;
  for (size_t p = 0; p < ID_PARTS_MAX; p++) n += d->part[p].n;
  return n;
}

static void ids_free(doc_ids *d)
{
  for (size_t p = 0; p < ID_PARTS_MAX; p++) interner_free(&d->part[p]);
}

/* The part of id s (n bytes): every id of a part is before every id of the
 * parts after it. */
static size_t part_of(const doc_ids *d, const char *s, size_t n)
{
  if (d->n_parts == 1) return 0;
  const size_t L = d->common_len, m = n < L ? n : L;
  const int c = memcmp(s, d->common, m);
  if (c < 0 || (c == 0 && n < L)) return 0; /* before every id with the common prefix */
  if (c > 0) return d->n_parts - 1;         /* after every one */
  const uint64_t k = rs__id_key(s + L, n - L);
  size_t p = 0;
  while (p + 1 < d->n_parts && d->from[p] <= k) p++;
  return p;
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Cuts the ranges of min(threads, ID_PARTS_MAX) parts (a power of two)
 * from up to ID_SAMPLE of the n ids id[k], evenly spaced, of id_len[k]
 * bytes (id_len NULL: NUL-terminated); 0 when out of memory. */
static int ids_split(doc_ids *d, int threads, const char *const *id, const uint32_t *id_len, size_t n)
{
  d->split = 1;
  size_t parts = 1;
  while (parts * 2 <= (size_t)threads && parts * 2 <= ID_PARTS_MAX) parts *= 2;
  if (n == 0 || parts == 1) return 1;
  const size_t m = n < ID_SAMPLE ? n : ID_SAMPLE;
  const char **s = rs__malloc(rs__mul(m, sizeof *s));
  size_t *len = rs__malloc(rs__mul(m, sizeof *len));
  uint64_t *key = rs__malloc(rs__mul(m, sizeof *key));
  if (!s || !len || !key) {
    free(s), free(len), free(key);
    return 0;
  }
  for (size_t i = 0; i < m; i++) {
    const size_t k = i * n / m;
    s[i] = id[k], len[i] = id_len ? id_len[k] : strlen(id[k]);
  }
  size_t L = len[0] < ID_COMMON_MAX ? len[0] : ID_COMMON_MAX;
  for (size_t i = 1; i < m; i++) {
    size_t c = 0;
    while (c < L && c < len[i] && s[i][c] == s[0][c]) c++;
    L = c;
  }
  for (size_t i = 0; i < m; i++) key[i] = rs__id_key(s[i] + L, len[i] - L);
  qsort(key, m, sizeof *key, cmp_u64);
  memcpy(d->common, s[0], L);
  d->common_len = L;
  for (size_t p = 1; p < parts; p++) d->from[p - 1] = key[p * m / parts];
  free(s), free(len), free(key);
  d->n_parts = parts;
  while ((size_t)1 << d->part_bits < parts) d->part_bits++;
  return 1;
}

/* The provisional number of id s (n bytes, hash h = rs__hash_bytes) in
 * `part`; -1 when out of memory, -2 when the part holds more ids than a
 * provisional number can tell. */
static int64_t ids_intern(doc_ids *d, size_t part, const char *s, size_t n, uint64_t h)
{
  const int64_t k = intern_hashed(&d->part[part], s, n, h);
  if (k < 0) return -1;
  if ((uint64_t)k > (uint64_t)INT32_MAX >> d->part_bits) return -2;
  return k << d->part_bits | (int64_t)part;
}

/* Ids interned into one part 16 at a time, each written to its place in
 * out[] once interned: the slots of a group are fetched ahead of their
 * lookups (a table of millions of ids is far out of the cache), then,
 * for the lookups that will find their id (most of them, once the runs
 * repeat the corpus's docs), the id's entry and then its bytes, for the
 * group at once (1M x 100 direct eval at 2 threads, 90% of lookups found:
 * open 22.4 / 19.2 s -> 19.6 / 17.8 s, in turn). */
enum { ID_BATCH = 16 };

typedef struct {
  doc_ids *docs;
  size_t part;
  int32_t *out;
  size_t g;
  const char *id[ID_BATCH];
  size_t len[ID_BATCH], at[ID_BATCH];
  uint64_t hash[ID_BATCH];
  int64_t failed; /* ids_intern's error, or 0 */
} id_batch;

/* Interns the group; 0 (and b->failed set) on an error. */
static int batch_flush(id_batch *b)
{
  const interner *in = &b->docs->part[b->part];
  for (size_t k = 0; k < b->g; k++) {
    char *const *e = intern_first_match(in, b->hash[k]);
    if (e) __builtin_prefetch(e);
  }
  for (size_t k = 0; k < b->g; k++) {
    char *const *e = intern_first_match(in, b->hash[k]);
    if (e) __builtin_prefetch(*e);
  }
  for (size_t k = 0; k < b->g; k++) {
    const int64_t d = ids_intern(b->docs, b->part, b->id[k], b->len[k], b->hash[k]);
    if (d < 0) {
      b->failed = d;
      return 0;
    }
    b->out[b->at[k]] = (int32_t)d;
  }
  b->g = 0;
  return 1;
}

/* Adds id s (n bytes) of the batch's part, to be written to out[at]; 0 on
 * an error. */
static inline int batch_add(id_batch *b, const char *s, size_t n, size_t at)
{
  const size_t g = b->g++;
  b->id[g] = s, b->len[g] = n, b->at[g] = at;
  b->hash[g] = rs__hash_bytes(s, n);
  intern_prefetch(&b->docs->part[b->part], b->hash[g]);
  return b->g < ID_BATCH || batch_flush(b);
}

static rs_code ids_fail(const doc_ids *d, int64_t code, rs_error *err)
{
  if (code == -1) return rs__fail(err, RS_NOMEM, "out of memory");
  return rs__fail(err, RS_UNSUPPORTED,
                  "more distinct doc ids in one of %zu ranges of ids than it can number (2^31 / %zu); with --threads 1 "
                  "there is one range, of up to 2^31 - 1",
                  d->n_parts, d->n_parts);
}

/* --- judgments ---------------------------------------------------------------- */

/* A temporary text file TMPDIR/ragsweep-WHAT-XXXXXX, registered with
 * tmpfiles.h so that a signal removes it too; tmp_close_remove removes it
 * at the end.  path[0] is '\0' when there is none. */
typedef struct {
  char path[4096];
  int h; /* rs__tmp_register handle, or -1 */
} tmp_text;

#define TMP_TEXT_NONE {.path = "", .h = -1}


typedef struct {
  size_t nq;
  char **qid, **qtext; /* strcmp order; qtext may be NULL */
  int64_t *off;        /* [nq + 1] */
  int32_t *doc;        /* provisional doc numbers */
  int32_t *grade;
  const char *qrels_for_runs; /* qrels file the runs are read against */
  int rows_are_topics;        /* it is the file the judgments were read from: its topic t is query row t */
  rs__qrels *q;               /* that file as read, kept for the runs' reading (not read again), or NULL */
  tmp_text tmp_qrels;         /* a qrels file written for the runs (or from BEIR qrels), removed at the end */
} judgments;

static int cmp_pstr(const void *a, const void *b) { return strcmp(**(char *const *const *)a, **(char *const *const *)b); }

/* The judged docs of q interned into doc[] (in topic order), a part an
 * item (5.7M judgments of 1M queries: 2.2 s on one thread). */
typedef struct {
  doc_ids *docs;
  const rs__qrels *q;
  int32_t *doc;
  int64_t failed[ID_PARTS_MAX]; /* ids_intern's error of a part, or 0 */
} judged_job;

static void intern_judged(void *vctx, size_t part, int tid)
{
  judged_job *jj = vctx;
  const rs__qrels *q = jj->q;
  id_batch b = {.docs = jj->docs, .part = part, .out = jj->doc};
  for (size_t t = 0, at = 0; t < q->n_topics; t++)
    for (size_t k = q->first[t]; k < q->first[t] + q->count[t]; k++, at++)
      if (part_of(jj->docs, q->doc[k], q->doc_len[k]) == part && !batch_add(&b, q->doc[k], q->doc_len[k], at))
        goto failed;
  if (batch_flush(&b)) return;
failed:
  jj->failed[part] = b.failed;
}

/* TREC qrels at path (shown: the file the user gave, when path is its
 * TREC form).  local (rs__corpus.rows_ranked): a judged doc's number is
 * its place among its topic's judgments, and no doc id is interned. */
static rs_code judgments_from_qrels(const char *path, const char *shown, int threads, int local, doc_ids *docs,
                                   judgments *j, rs_error *err)
{
  rs__qrels *q = NULL;
  rs_code rc = rs__qrels_read(path, RS_NUMBERS_STRICT, threads, &q, err);
  if (rc) return rc;
  /* the ranges of the ids' parts, from the judged docs */
  if (!local && !docs->split && !ids_split(docs, threads, q->doc, q->doc_len, q->n_judged)) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t t = 0; t < q->n_topics; t++)
    if (q->dup[t] != SIZE_MAX) {
      rc = rs__fail(err, RS_DUPLICATE, "%s: topic %s: doc %.*s is judged twice", shown, q->topic_id[t],
                    (int)q->doc_len[q->dup[t]], q->doc[q->dup[t]]);
      goto done;
    }
  j->nq = q->n_topics;
  j->qid = rs__calloc(j->nq ? j->nq : 1, sizeof *j->qid);
  j->off = rs__malloc(rs__mul(j->nq + 1, sizeof *j->off));
  j->doc = rs__malloc(rs__mul(q->n_judged, sizeof *j->doc));
  j->grade = rs__malloc(rs__mul(q->n_judged, sizeof *j->grade));
  if (!j->qid || !j->off || !j->doc || !j->grade) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  for (size_t t = 0, at = 0; t < q->n_topics; t++) { /* the judgments in topic order */
    if (!(j->qid[t] = strdup(q->topic_id[t]))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    j->off[t] = (int64_t)at;
    for (size_t k = q->first[t]; k < q->first[t] + q->count[t]; k++, at++) {
      j->grade[at] = q->grade[k];
      if (local) j->doc[at] = (int32_t)(k - q->first[t]);
    }
  }
  judged_job jj = {.docs = docs, .q = q, .doc = j->doc};
  if (!local) rs__parallel_for(docs->n_parts, threads, 1, intern_judged, &jj);
  for (size_t part = 0; !local && part < docs->n_parts; part++)
    if (jj.failed[part]) { rc = ids_fail(docs, jj.failed[part], err); goto done; }
  j->off[j->nq] = (int64_t)q->n_judged;
  j->qrels_for_runs = path;
  j->rows_are_topics = 1;
  j->q = q;
  q = NULL;
done:
  rs__qrels_free(q);
  return rc;
}

static rs_code tmp_open(tmp_text *t, const char *what, FILE **f, rs_error *err)
{
  const char *dir = getenv("TMPDIR"); /* the usual convention; also lets a test see the file go */
  if (!dir || !*dir) dir = "/tmp";
  if ((size_t)snprintf(t->path, sizeof t->path, "%s/ragsweep-%s-XXXXXX", dir, what) >= sizeof t->path) {
    t->path[0] = '\0';
    return rs__fail(err, RS_IO, "TMPDIR %s: the path is too long for a temporary %s file", dir, what);
  }
  int fd = mkstemp(t->path);
  if (fd >= 0) t->h = rs__tmp_register(t->path);
  if (fd < 0 || !(*f = fdopen(fd, "w"))) {
    rs_code rc = rs__fail(err, RS_IO, "TMPDIR %s: cannot create a temporary %s file: %s", dir, what, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(t->path);
    }
    rs__tmp_forget(t->h);
    t->h = -1;
    t->path[0] = '\0';
    return rc;
  }
  return RS_OK;
}

static void tmp_remove(tmp_text *t)
{
  if (t->path[0]) unlink(t->path);
  rs__tmp_forget(t->h);
  t->path[0] = '\0';
  t->h = -1;
}

/* The temporary qrels file the runs are read against (rs__te_rankings
 * hands over only the rankings of topics a qrels file names).  Its path is
 * kept in j so judgments_free always removes it. */
static rs_code open_tmp_qrels(judgments *j, FILE **f, rs_error *err)
{
  rs_code rc = tmp_open(&j->tmp_qrels, "qrels", f, err);
  if (!rc) j->qrels_for_runs = j->tmp_qrels.path;
  return rc;
}

/* A query id goes into a TREC qrels file and must match a TREC run's topic
 * field, which cannot hold white space. */
static rs_code check_trec_id(const char *path, const char *qid, const char *doc, rs_error *err)
{
  if (!strpbrk(qid, " \t\r\n") && *qid && (!doc || (*doc && !strpbrk(doc, " \t\r\n")))) return RS_OK;
  if (doc)
    return rs__fail(err, RS_FORMAT, "%s: query \"%s\", doc \"%s\": ids with whitespace cannot be matched against a "
                    "TREC run", path, qid, doc);
  return rs__fail(err, RS_FORMAT, "%s: query \"%s\": an id with whitespace cannot be matched against a TREC run", path,
                  qid);
}

/* The line that puts an unjudged query into the temporary qrels file, so
 * its rankings are handed over like a judged query's.  Only that file sees
 * it: the judgments written to the corpus come from j, and the placeholder
 * doc is never interned, so it reaches neither /qrels nor /docs/id. */
static void put_placeholder(FILE *f, const char *qid) { fprintf(f, "%s 0 ragsweep-unjudged 0\n", qid); }

/* The JSON's judgments, queries sorted by id; runs (if any) are read against
 * a TREC qrels file written from them. */
static rs_code judgments_from_json(const char *path, int want_qrels_file, int threads, doc_ids *docs, judgments *j,
                                   rs_error *err)
{
  rs__evalset *s = NULL;
  char ***ord = NULL;
  FILE *f = NULL;
  rs_code rc = rs__evalset_read(path, &s, err);
  if (rc) return rc;
  const size_t nq = s->n_queries, nnz = s->off[nq];
  ord = rs__malloc(rs__mul(nq, sizeof *ord));
  j->qid = rs__calloc(nq ? nq : 1, sizeof *j->qid);
  j->qtext = rs__calloc(nq ? nq : 1, sizeof *j->qtext);
  j->off = rs__malloc(rs__mul(nq + 1, sizeof *j->off));
  j->doc = rs__malloc(rs__mul(nnz, sizeof *j->doc));
  j->grade = rs__malloc(rs__mul(nnz, sizeof *j->grade));
  if (!ord || !j->qid || !j->qtext || !j->off || !j->doc || !j->grade) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nq; i++) ord[i] = &s->query_id[i];
  qsort(ord, nq, sizeof *ord, cmp_pstr);
  if (!docs->split && !ids_split(docs, threads, (const char *const *)s->doc_id, NULL, nnz)) { /* from judged docs */
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  if (want_qrels_file && (rc = open_tmp_qrels(j, &f, err))) goto done;
  size_t k = 0;
  for (size_t i = 0; i < nq; i++) {
    const size_t src = (size_t)(ord[i] - s->query_id);
    j->qid[i] = s->query_id[src];
    j->qtext[i] = s->query_text[src];
    s->query_id[src] = s->query_text[src] = NULL; /* moved */
    j->nq = i + 1; /* so that judgments_free frees what was moved if we stop here */
    j->off[i] = (int64_t)k;
    if (f && (rc = check_trec_id(path, j->qid[i], NULL, err))) goto done;
    /* A query of the eval set without judgments is still a query of the
     * corpus: keep its rankings (eval skips it until it is judged, as
     * trec_eval does; judge can label it). */
    if (f && s->off[src] == s->off[src + 1]) put_placeholder(f, j->qid[i]);
    for (size_t m = s->off[src]; m < s->off[src + 1]; m++, k++) {
      const char *id = s->doc_id[m];
      if (f && (rc = check_trec_id(path, j->qid[i], id, err))) goto done;
      const size_t n = strlen(id);
      const int64_t d = ids_intern(docs, part_of(docs, id, n), id, n, rs__hash_bytes(id, n));
      if (d < 0) { rc = ids_fail(docs, d, err); goto done; }
      j->doc[k] = (int32_t)d;
      j->grade[k] = s->grade[m];
      if (f) fprintf(f, "%s 0 %s %d\n", j->qid[i], id, (int)s->grade[m]);
    }
  }
  j->off[nq] = (int64_t)k;
  j->nq = nq;
done:
  if (f && fclose(f) != 0 && !rc) rc = rs__fail(err, RS_IO, "a temporary qrels file in TMPDIR: cannot write: %s", strerror(errno));
  if (s) { /* what was not moved */
    for (size_t i = 0; i < s->n_queries; i++) {
      free(s->query_id[i]);
      free(s->query_text[i]);
      s->query_id[i] = s->query_text[i] = NULL;
    }
  }
  rs__evalset_free(s);
  free(ord);
  return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* No judgments: the queries are the ids of the text collection, sorted by
 * id, each with an empty qrels row; runs (if any) are read against a
 * temporary qrels file that names every query once (put_placeholder). */
static rs_code judgments_from_texts(const rs__texts *t, int want_qrels_file, judgments *j, rs_error *err)
{
  const size_t nq = rs__texts_count(t);
  const char *path = rs__texts_path(t);
  FILE *f = NULL;
  rs_code rc = RS_OK;
  if (nq == 0) return rs__fail(err, RS_FORMAT, "%s: no queries; expected at least one \"id<TAB>text\" record", path);
  const char **ids = rs__malloc(rs__mul(nq, sizeof *ids));
  j->qid = rs__calloc(nq, sizeof *j->qid);
  j->off = rs__calloc(nq + 1, sizeof *j->off); /* all 0: nothing judged */
  j->doc = rs__malloc(sizeof *j->doc);
  j->grade = rs__malloc(sizeof *j->grade);
  if (!ids || !j->qid || !j->off || !j->doc || !j->grade) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nq; i++) ids[i] = rs__texts_id(t, i);
  qsort(ids, nq, sizeof *ids, cmp_str);
  if (want_qrels_file && (rc = open_tmp_qrels(j, &f, err))) goto done;
  for (size_t i = 0; i < nq; i++) {
    if (!(j->qid[i] = strdup(ids[i]))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    j->nq = i + 1; /* judgments_free frees what is set */
    if (f) {
      if ((rc = check_trec_id(path, ids[i], NULL, err))) goto done;
      put_placeholder(f, ids[i]);
    }
  }
done:
  if (f && fclose(f) != 0 && !rc) rc = rs__fail(err, RS_IO, "a temporary qrels file in TMPDIR: cannot write: %s", strerror(errno));
  free(ids);
  return rc;
}

/* Counts the distinct topics of a TREC run that are not queries of j
 * (rs__te_rankings skips them without a word).  A second, light pass over
 * the file: only the first field of each line is looked at, and a topic's
 * lines are usually consecutive, so most lines cost one comparison. */
static rs_code count_dropped(const char *run_path, const judgments *j, size_t *out, rs_error *err)
{
  rs__input *in = NULL;
  rs__strdict foreign = {0};
  size_t cap = 1 << 20, have = 0, tok_cap = 64, last_len = SIZE_MAX;
  char *buf = rs__malloc(cap), *tok = rs__malloc(tok_cap);
  rs_code rc = buf && tok ? rs__input_open(run_path, &in, err) : rs__fail(err, RS_NOMEM, "out of memory");
  for (int eof = 0; !rc && !eof;) {
    size_t got = 0;
    if (have == cap) { /* a line longer than the buffer */
      char *nb = rs__realloc(buf, rs__mul(cap, 2));
      if (!nb) { rc = rs__fail(err, RS_NOMEM, "out of memory"); break; }
      buf = nb;
      cap *= 2;
    }
    if ((rc = rs__input_read(in, buf + have, cap - have, &got, err))) break;
    eof = got == 0;
    have += got;
    size_t at = 0;
    for (;;) {
      char *nl = memchr(buf + at, '\n', have - at);
      if (!nl && !eof) break;
      const size_t end = nl ? (size_t)(nl - buf) : have;
      size_t a = at;
      while (a < end && (buf[a] == ' ' || (buf[a] >= '\t' && buf[a] <= '\r'))) a++;
      size_t b = a;
      while (b < end && !(buf[b] == ' ' || (buf[b] >= '\t' && buf[b] <= '\r'))) b++;
      at = nl ? end + 1 : have;
      if (b > a && buf[a] != '#' && !(b - a == last_len && memcmp(tok, buf + a, last_len) == 0)) {
        if (b - a + 1 > tok_cap) {
          char *nt = rs__realloc(tok, b - a + 1);
          if (!nt) { rc = rs__fail(err, RS_NOMEM, "out of memory"); break; }
          tok = nt;
          tok_cap = b - a + 1;
        }
        memcpy(tok, buf + a, b - a);
        tok[b - a] = '\0';
        last_len = b - a;
        const char *key = tok;
        uint32_t id;
        if (!bsearch(&key, j->qid, j->nq, sizeof *j->qid, cmp_str) && (rc = rs__strdict_add(&foreign, tok, &id, err)))
          break;
      }
      if (!nl) break;
    }
    memmove(buf, buf + at, have - at);
    have -= at;
  }
  if (!rc) *out = foreign.n;
  rs__strdict_free(&foreign);
  rs__input_close(in);
  free(buf);
  free(tok);
  return rc;
}

static void judgments_free(judgments *j)
{
  for (size_t i = 0; j->qid && i < j->nq; i++) {
    free(j->qid[i]);
    if (j->qtext) free(j->qtext[i]);
  }
  free(j->qid);
  free(j->qtext);
  free(j->off);
  free(j->doc);
  free(j->grade);
  rs__qrels_free(j->q);
  tmp_remove(&j->tmp_qrels);
}

/* --- runs ----------------------------------------------------------------------- */

/* One topic's ranking, copied out of the run reader. */
typedef struct {
  size_t n;
  char *ids;   /* n NUL-terminated doc ids, back to back; NULL when local */
  const int32_t *kept_doc;    /* local (rs__corpus.rows_ranked): the n doc numbers, in an arena, else NULL */
  double *score;
  uint8_t *part; /* [n] each id's part (doc_ids), or NULL when there is one part */
  int oom;
} topic_ranking;

/* Local rankings are kept where collect writes them: a topic's doc
 * numbers (no scores: the rows are ranked already), carved from chunks of
 * huge pages, an arena a thread.  They become the corpus's rows as they
 * are (rs__run_mem.row_doc): a malloc a topic and a CSR copy of them all
 * cost 2M allocations and 1.2 GB more fresh memory at 1M x 100, and the
 * scores 0.8 GB more. */
#define ARENA_BLOCK ((size_t)32 << 20)

typedef struct {
  topic_ranking *t; /* by qrels topic */
  const int64_t *local_off; /* local: the judgments' offsets, by topic (rows_are_topics); else NULL */
  blocks *arena;            /* local: one a thread (ARENA_BLOCK blocks of huge pages) */
  int n_arenas;
} collect_ctx;

static void collect(void *vctx, int tid, size_t topic, const char *const *doc, const uint32_t *doc_len,
                    const double *score, const uint32_t *order, const int32_t *judged, size_t n)
{
  collect_ctx *c = vctx;
  topic_ranking *tr = &c->t[topic];
  /* A run that interleaves topics is read again whole, and its topics come
   * again: the last call holds the whole ranking (trecrun.h; an arena's
   * earlier copy stays unused). */
  free(tr->ids);
  free(tr->score);
  *tr = (topic_ranking){0};
  if (c->local_off) { /* numbers local to the topic (rs__corpus.rows_ranked): no id is kept */
    const int32_t n_judged = (int32_t)(c->local_off[topic + 1] - c->local_off[topic]);
    int32_t *kept_doc =
        tid >= 0 && tid < c->n_arenas ? blocks_take(&c->arena[tid], rs__mul(n, sizeof *kept_doc), ARENA_BLOCK) : NULL;
    if (!kept_doc) {
      tr->oom = 1;
      return;
    }
    for (size_t i = 0; i < n; i++) kept_doc[i] = judged[i] >= 0 ? judged[i] : n_judged + (int32_t)i;
    tr->kept_doc = kept_doc;
    tr->n = n;
    return;
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) bytes += doc_len[order[i]] + 1;
  tr->ids = rs__malloc(bytes);
  tr->score = rs__malloc(rs__mul(n, sizeof *tr->score));
  if (!tr->ids || !tr->score) {
    tr->oom = 1;
    return;
  }
  char *p = tr->ids;
  for (size_t i = 0; i < n; i++) {
    const uint32_t r = order[i];
    memcpy(p, doc[r], doc_len[r]);
    p[doc_len[r]] = '\0';
    p += doc_len[r] + 1;
    tr->score[i] = score[r];
  }
  tr->n = n;
}

/* A run, by query: doc numbers (provisional) and scores, CSR; or, with
 * local numbers, each row where collect kept it (rs__run_mem.row_doc). */
typedef struct {
  int64_t *off;
  int32_t *doc;
  double *score;
  size_t k; /* longest ranking */
  double *latency; /* [nq] seconds, or NULL */
  const int32_t **row_doc; /* local: [nq], NULL for a row the run does not rank */
  char **chunk; /* local: the arenas' chunks that hold the rows */
  size_t n_chunk;
} run_rows;

static void run_rows_free(run_rows *r)
{
  free(r->off);
  free(r->doc);
  free(r->score);
  free(r->latency);
  free(r->row_doc);
  for (size_t i = 0; i < r->n_chunk; i++) free(r->chunk[i]);
  free(r->chunk);
  *r = (run_rows){0};
}

/* --- doc ids in strcmp order -------------------------------------------------- */

/* The ids of `in` in strcmp order (rs__sort_ids) into sorted[0, in->n),
 * and *final: for each provisional number, its place in that order.
 * Takes no memory: the interner's lookup arrays, which every id has been
 * looked up in by now, are the sort's scratch (24 bytes an id: slot holds
 * two of 8, hash two of 4) and then hold *final.  Fresh memory is dear on
 * the virtual machines we measure (about 0.5 GB/s at its first touch):
 * 100k x 100 direct eval, 4 runs each in turn, sorting 0.98-1.61 s ->
 * 0.73-1.22 s, peak RSS 787 -> 645 MB.  The interner takes no more ids
 * after this. */
static void sort_doc_ids(interner *in, const char **sorted, const int32_t **final)
{
  const size_t n = in->n;
  *final = NULL;
  if (!n) return;
  uint64_t *pre = in->slot, *pre2 = in->slot + in->cap; /* cap >= n; slot has 2 cap */
  uint32_t *num = (uint32_t *)(void *)in->hash, *num2 = num + in->cap;
  for (size_t i = 0; i < n; i++) num[i] = (uint32_t)i;
  rs__sort_ids(in->id, num, n, pre, pre2, num2);
  int32_t *place = (int32_t *)(void *)in->slot; /* pre and pre2 are read no more */
  for (size_t i = 0; i < n; i++) {
    place[num[i]] = (int32_t)i;
    sorted[i] = in->id[num[i]];
  }
  *final = place;
}

/* The query row of every topic of the qrels file the runs are read
 * against (rs__te_rankings numbers topics in that file's strcmp order);
 * computed once for all runs. */
static rs_code map_topics(const judgments *j, int threads, size_t **row_of, size_t *n_topics, rs_error *err)
{
  if (j->rows_are_topics) { /* not read a second time (1M queries: 0.4 s) */
    *row_of = rs__malloc(rs__mul(j->nq ? j->nq : 1, sizeof **row_of));
    if (!*row_of) return rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t t = 0; t < j->nq; t++) (*row_of)[t] = t;
    *n_topics = j->nq;
    return RS_OK;
  }
  rs__qrels *q = NULL;
  rs_code rc = rs__qrels_read(j->qrels_for_runs, RS_NUMBERS_STRICT, threads, &q, err);
  if (rc) return rc;
  size_t *rows = rs__malloc(rs__mul(q->n_topics ? q->n_topics : 1, sizeof *rows));
  if (!rows) {
    rs__qrels_free(q);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t t = 0; t < q->n_topics; t++) { /* the file's topics are judged queries, in the same order */
    size_t lo = 0, hi = j->nq;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (strcmp(j->qid[mid], q->topic_id[t]) < 0) lo = mid + 1;
      else hi = mid;
    }
    rows[t] = lo;
  }
  *row_of = rows;
  *n_topics = q->n_topics;
  rs__qrels_free(q);
  return RS_OK;
}

/* A run's topics put in their query rows, with the part of each doc id
 * (place_topic, a topic an item), then the ids interned, a part an item
 * (intern_part): the ids of a part go to its interner only. */
typedef struct {
  doc_ids *docs;
  collect_ctx *cc;
  const size_t *row_of;
  size_t n_topics;
  run_rows *out;
  int64_t failed[ID_PARTS_MAX]; /* ids_intern's error of a part, or 0 */
} intern_job;

static void place_topic(void *vctx, size_t t, int tid)
{
  intern_job *jb = vctx;
  topic_ranking *tr = &jb->cc->t[t];
  if (!tr->n) return;
  memcpy(jb->out->score + jb->out->off[jb->row_of[t]], tr->score, tr->n * sizeof *tr->score);
  if (jb->docs->n_parts == 1) return;
  if (!(tr->part = rs__malloc(tr->n))) {
    tr->oom = 1;
    return;
  }
  const char *p = tr->ids;
  for (size_t i = 0; i < tr->n; i++) {
    const size_t n = strlen(p);
    tr->part[i] = (uint8_t)part_of(jb->docs, p, n);
    p += n + 1;
  }
}

static void intern_part(void *vctx, size_t part, int tid)
{
  intern_job *jb = vctx;
  id_batch b = {.docs = jb->docs, .part = part, .out = jb->out->doc};
  for (size_t t = 0; t < jb->n_topics; t++) {
    const topic_ranking *tr = &jb->cc->t[t];
    const size_t at = (size_t)jb->out->off[jb->row_of[t]];
    const char *p = tr->ids;
    for (size_t i = 0; i < tr->n; i++) {
      const size_t n = strlen(p);
      if ((!tr->part || tr->part[i] == part) && !batch_add(&b, p, n, at + i)) goto failed;
      p += n + 1;
    }
  }
  if (batch_flush(&b)) return;
failed:
  jb->failed[part] = b.failed;
}

/* Reads one run, puts its topics in their query rows, interns its doc ids
 * (local: keeps the rows where collect put them, with no id). */
static rs_code read_run(const rs__import_cfg *cfg, const rs__import_run *ir, const char *trec_path, const judgments *j,
                        const size_t *row_of, size_t n_topics, int local, doc_ids *docs, run_rows *out, rs_error *err)
{
  const int threads = rs__threads(cfg->threads);
  collect_ctx cc = {.local_off = local ? j->off : NULL, .n_arenas = local ? threads : 0};
  rs_code rc = RS_OK;
  size_t *len = NULL;
  memset(out, 0, sizeof *out);
  if (!(cc.t = rs__calloc(n_topics ? n_topics : 1, sizeof *cc.t)) ||
      (local && !(cc.arena = rs__calloc((size_t)threads, sizeof *cc.arena)))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  rc = j->q ? rs__te_rankings_of(j->q, trec_path, RS_NUMBERS_STRICT, cfg->threads, collect, &cc, NULL, err)
            : rs__te_rankings(j->qrels_for_runs, trec_path, RS_NUMBERS_STRICT, cfg->threads, collect, &cc, NULL, err);
  if (rc) goto done;
  size_t total = 0;
  for (size_t t = 0; t < n_topics; t++) {
    if (cc.t[t].oom) { rc = rs__fail(err, RS_NOMEM, "%s: out of memory", ir->path); goto done; }
    total += cc.t[t].n;
  }
  out->off = rs__calloc(j->nq + 1, sizeof *out->off);
  len = rs__calloc(j->nq ? j->nq : 1, sizeof *len);
  if (!out->off || !len) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  for (size_t t = 0; t < n_topics; t++) len[row_of[t]] = cc.t[t].n;
  for (size_t i = 0; i < j->nq; i++) {
    out->off[i + 1] = out->off[i] + (int64_t)len[i];
    if (len[i] > out->k) out->k = len[i];
  }
  if (local) { /* the rows stay in the arenas, which the run takes */
    out->row_doc = rs__calloc(j->nq ? j->nq : 1, sizeof *out->row_doc);
    size_t n_chunk = 0;
    for (int a = 0; a < threads; a++) n_chunk += cc.arena[a].n_block;
    out->chunk = rs__malloc(rs__mul(n_chunk ? n_chunk : 1, sizeof *out->chunk));
    if (!out->row_doc || !out->chunk) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (int a = 0; a < threads; a++) {
      for (size_t k = 0; k < cc.arena[a].n_block; k++) out->chunk[out->n_chunk++] = cc.arena[a].block[k];
      cc.arena[a].n_block = 0;
    }
    for (size_t t = 0; t < n_topics; t++) {
      out->row_doc[row_of[t]] = cc.t[t].kept_doc;
    }
    goto done;
  }
  out->doc = rs__malloc(rs__mul(total, sizeof *out->doc));
  out->score = rs__malloc(rs__mul(total, sizeof *out->score));
  if (!out->doc || !out->score) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  if (!docs->split) { /* no judged docs: the ranges from the top doc of topics evenly spaced */
    const char *first[ID_SAMPLE];
    size_t m = 0;
    for (size_t i = 0; i < ID_SAMPLE && i < n_topics; i++) {
      const topic_ranking *tr = &cc.t[i * n_topics / (n_topics < ID_SAMPLE ? n_topics : ID_SAMPLE)];
      if (tr->n) first[m++] = tr->ids;
    }
    if (!ids_split(docs, threads, first, NULL, m)) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  }
  intern_job job = {.docs = docs, .cc = &cc, .row_of = row_of, .n_topics = n_topics, .out = out};
  rs__parallel_for(n_topics, threads, 64, place_topic, &job);
  for (size_t t = 0; t < n_topics; t++)
    if (cc.t[t].oom) { rc = rs__fail(err, RS_NOMEM, "%s: out of memory", ir->path); goto done; }
  rs__parallel_for(docs->n_parts, threads, 1, intern_part, &job);
  for (size_t part = 0; part < docs->n_parts && !rc; part++)
    if (job.failed[part]) rc = ids_fail(docs, job.failed[part], err);
done:
  free(len);
  for (size_t t = 0; cc.t && t < n_topics; t++) {
    free(cc.t[t].ids);
    free(cc.t[t].score);
    free(cc.t[t].part);
  }
  free(cc.t);
  for (int a = 0; cc.arena && a < threads; a++) blocks_free(&cc.arena[a]);
  free(cc.arena);
  if (rc) run_rows_free(out);
  return rc;
}

/* Adds to err's message (when there is room): rs__detect's view of a file
 * that the TREC reader refused, with the run formats. */
static void add_run_formats(rs_error *err, const rs__detected *d)
{
  if (!err) return;
  char more[sizeof err->msg];
  snprintf(more, sizeof more, "%s (found: %s; a run is %s)", err->msg, d->found, RS_INPUT_FORMATS_RUNS);
  memcpy(err->msg, more, sizeof more);
}

/* Reads run i in whatever format it is (detect.h): a TREC run directly, a
 * JSONL or CSV/TSV run through its TREC text (textruns.h) in a temporary
 * file, removed at once.  Sets *dropped (without judgments) and
 * *no_latency (the run's latencies lack that many corpus queries, so none
 * is stored). */
static rs_code read_any_run(const rs__import_cfg *cfg, size_t i, const judgments *j, const size_t *row_of,
                            size_t n_topics, int unjudged, int local, doc_ids *docs, run_rows *out, size_t *dropped,
                            size_t *no_latency, rs_error *err)
{
  const rs__import_run *ir = &cfg->runs[i];
  const int from_stdin = strcmp(ir->path, "-") == 0;
  rs__detected d = {.kind = RS_INPUT_UNKNOWN};
  tmp_text t = TMP_TEXT_NONE;
  rs__run_latency *lat = NULL;
  const char *trec = ir->path;
  rs_code rc = from_stdin ? RS_OK : rs__detect(ir->path, &d, err);
  if (rc) return rc;
  switch (d.kind) {
  case RS_INPUT_JSONL_RUN:
  case RS_INPUT_CSV_RUN: {
    FILE *f = NULL;
    if ((rc = tmp_open(&t, "run", &f, err))) goto done;
    rc = d.kind == RS_INPUT_JSONL_RUN ? rs__jsonl_run_to_trec(ir->path, f, &lat, err)
                                      : rs__csv_run_to_trec(ir->path, d.delim, f, &lat, err);
    if (fclose(f) != 0 && !rc)
      rc = rs__fail(err, RS_IO, "%s: cannot write its TREC form to %s: %s", ir->path, t.path, strerror(errno));
    if (rc) goto done;
    trec = t.path;
    break;
  }
  case RS_INPUT_TREC_RUN: break;
  case RS_INPUT_UNKNOWN:
  case RS_INPUT_TREC_QRELS:
    /* Text that may be a TREC run with a bad line: the TREC reader says
     * which line, and the formats are added to its message. */
    if (d.text || from_stdin) break;
    /* fall through */
  default: rc = rs__detect_fail(err, ir->path, &d, "run", RS_INPUT_FORMATS_RUNS); goto done;
  }
  if ((rc = read_run(cfg, ir, trec, j, row_of, n_topics, local, docs, out, err))) {
    if (t.path[0] && err && strncmp(err->msg, ir->path, strlen(ir->path)) != 0) {
      char more[sizeof err->msg];
      snprintf(more, sizeof more, "%s: %s", ir->path, err->msg);
      memcpy(err->msg, more, sizeof more);
    } else if (d.kind != RS_INPUT_TREC_RUN && !from_stdin) {
      add_run_formats(err, &d);
    }
    goto done;
  }
  *dropped = 0;
  if (unjudged && (rc = count_dropped(trec, j, dropped, err))) goto done;
  *no_latency = 0;
  if (lat) {
    if (!(out->latency = rs__malloc(rs__mul(j->nq ? j->nq : 1, sizeof *out->latency)))) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      goto done;
    }
    for (size_t q = 0; q < j->nq; q++)
      if (!rs__run_latency_get(lat, j->qid[q], &out->latency[q])) ++*no_latency;
    if (*no_latency) {
      free(out->latency);
      out->latency = NULL;
    }
  }
done:
  if (rc) run_rows_free(out);
  tmp_remove(&t);
  rs__run_latency_free(lat);
  return rc;
}

/* Dense [nq, K] unless padding would take more than half the space. */
static int run_is_dense(const run_rows *r, size_t nq) { return (size_t)r->off[nq] * 2 >= nq * r->k; }

/* Writes a run whose doc numbers are final (import_parse). */
static rs_code write_run(rs__h5w *w, const rs__import_run *ir, const run_rows *r, size_t nq, rs_error *err)
{
  char group[1024], path[1100];
  snprintf(group, sizeof group, "/runs/%s", ir->name);
  rs_code rc = RS_OK;
  for (size_t a = 0; a < ir->n_attrs && !rc; a++) rc = rs__h5w_attr(w, group, &ir->attrs[a], err);
  if (rc) return rc;
  const size_t total = (size_t)r->off[nq];
  int32_t *doc = NULL;
  double *score = NULL;
  if (run_is_dense(r, nq)) {
    doc = rs__malloc(rs__mul(rs__mul(nq, r->k), sizeof *doc));
    score = rs__calloc(rs__mul(nq, r->k) ? rs__mul(nq, r->k) : 1, sizeof *score);
    if (!doc || !score) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < nq; i++)
      for (size_t c = 0; c < r->k; c++) {
        size_t at = (size_t)r->off[i] + c;
        int in_row = at < (size_t)r->off[i + 1];
        doc[i * r->k + c] = in_row ? r->doc[at] : -1;
        score[i * r->k + c] = in_row ? r->score[at] : 0.0;
      }
    uint64_t dims[2] = {nq, r->k};
    snprintf(path, sizeof path, "%s/doc", group);
    if ((rc = rs__h5w_array(w, path, RS_DT_I32, 2, dims, doc, err))) goto done;
    snprintf(path, sizeof path, "%s/score", group);
    rc = rs__h5w_array(w, path, RS_DT_F64, 2, dims, score, err);
  } else {
    uint64_t dims[1] = {nq + 1};
    snprintf(path, sizeof path, "%s/offsets", group);
    if ((rc = rs__h5w_array(w, path, RS_DT_I64, 1, dims, r->off, err))) goto done;
    dims[0] = total;
    snprintf(path, sizeof path, "%s/doc", group);
    if ((rc = rs__h5w_array(w, path, RS_DT_I32, 1, dims, r->doc, err))) goto done;
    snprintf(path, sizeof path, "%s/score", group);
    rc = rs__h5w_array(w, path, RS_DT_F64, 1, dims, r->score, err);
  }
  if (!rc && r->latency) {
    const uint64_t ldims[1] = {nq};
    snprintf(path, sizeof path, "%s/latency", group);
    rc = rs__h5w_array(w, path, RS_DT_F64, 1, ldims, r->latency, err);
  }
done:
  free(doc);
  free(score);
  return rc;
}

/* The texts of ids[0, n) from a loaded collection, in that order; *out is
 * malloc'd (views into texts). */
static rs_code texts_for(const rs__texts *texts, const char *what, const char *const *ids, size_t n, const char ***out,
                         rs_error *err)
{
  const char *path = rs__texts_path(texts);
  const char **v = rs__malloc(rs__mul(n ? n : 1, sizeof *v));
  if (!v) return rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  for (size_t i = 0; i < n; i++)
    if (!(v[i] = rs__texts_get(texts, ids[i], NULL))) {
      free(v);
      return rs__fail(err, RS_FORMAT, "%s: no text for %s \"%s\"; expected a text for every %s of the corpus", path,
                      what, ids[i], what);
    }
  *out = v;
  return RS_OK;
}


/* --- reading the inputs: what both the file and the in-memory corpus hold ------ */

/* The corpus as read from the inputs, before it is written or handed over:
 * queries in strcmp order, doc numbers final (strcmp order of the ids). */
typedef struct {
  judgments j;
  doc_ids docs;
  size_t n_docs;
  run_rows *runs;      /* [n_runs] */
  size_t n_runs;
  const char **sorted; /* [n_docs] the doc ids in strcmp order (views into docs) */
  rs__texts *qtexts, *dtexts;
  const char **qtext;  /* [j.nq] from queries_path, or NULL (views into qtexts) */
  const char **dtext;  /* [n_docs] from docs_path, or NULL (views into dtexts) */
  int local;           /* doc numbers local to each query (rs__corpus.rows_ranked): no doc ids */
} parsed;

static void parsed_free(parsed *p)
{
  for (size_t i = 0; p->runs && i < p->n_runs; i++) run_rows_free(&p->runs[i]);
  free(p->runs);
  free(p->sorted);
  judgments_free(&p->j);
  ids_free(&p->docs);
  free(p->qtext);
  free(p->dtext);
  rs__texts_free(p->qtexts);
  rs__texts_free(p->dtexts);
}

/* Each part's ids in strcmp order, into sorted after the parts before it
 * (base), and place: a part's provisional numbers (shifted right) to their
 * place in the part, a part an item. */
typedef struct {
  doc_ids *docs;
  const char **sorted;
  size_t base[ID_PARTS_MAX];
  const int32_t *place[ID_PARTS_MAX];
} number_job;

static void number_part(void *vctx, size_t part, int tid)
{
  number_job *nj = vctx;
  sort_doc_ids(&nj->docs->part[part], nj->sorted + nj->base[part], &nj->place[part]);
}

/* Provisional doc numbers doc[0, n) to final ones, a piece an item (a
 * random read of a table of millions each: 1.6 s of a 1M x 100 direct
 * eval on one thread). */
enum { REMAP_PIECE = 1 << 16 };

typedef struct {
  const number_job *nj;
  int32_t *doc;
  size_t n;
} remap_job;

static void remap_piece(void *vctx, size_t piece, int tid)
{
  const remap_job *rj = vctx;
  const number_job *nj = rj->nj;
  const unsigned bits = nj->docs->part_bits;
  const uint32_t mask = ((uint32_t)1 << bits) - 1;
  const size_t a = piece * REMAP_PIECE, b = rj->n - a < REMAP_PIECE ? rj->n : a + REMAP_PIECE;
  int32_t *restrict doc = rj->doc;
  for (size_t k = a; k < b; k++) {
    const uint32_t d = (uint32_t)doc[k];
    doc[k] = (int32_t)nj->base[d & mask] + nj->place[d & mask][d >> bits];
  }
}

static void remap_docs(const number_job *nj, int32_t *doc, size_t n, int threads)
{
  remap_job rj = {.nj = nj, .doc = doc, .n = n};
  rs__parallel_for((n + REMAP_PIECE - 1) / REMAP_PIECE, threads, 1, remap_piece, &rj);
}

/* Doc numbers in strcmp order of the ids, in the judgments and the runs:
 * each part sorted on its own, after the parts before it. */
static rs_code number_docs(const rs__import_cfg *cfg, parsed *p, int threads, rs_error *err)
{
  doc_ids *docs = &p->docs;
  judgments *j = &p->j;
  p->n_docs = ids_count(docs);
  if (p->n_docs > INT32_MAX) return rs__fail(err, RS_UNSUPPORTED, "more than 2^31 - 1 distinct doc ids");
  p->sorted = rs__malloc(rs__mul(p->n_docs ? p->n_docs : 1, sizeof *p->sorted));
  if (!p->sorted) return rs__fail(err, RS_NOMEM, "out of memory");
  number_job nj = {.docs = docs, .sorted = p->sorted};
  for (size_t part = 1; part < docs->n_parts; part++) nj.base[part] = nj.base[part - 1] + docs->part[part - 1].n;
  rs__parallel_for(docs->n_parts, threads, 1, number_part, &nj);
  remap_docs(&nj, j->doc, (size_t)j->off[j->nq], threads);
  for (size_t i = 0; i < cfg->n_runs; i++) remap_docs(&nj, p->runs[i].doc, (size_t)p->runs[i].off[j->nq], threads);
  return RS_OK;
}

/* Reads the judgments, the runs and the texts of cfg into p (see import.h
 * for what is kept and in which order); p is freed by parsed_free, also
 * after an error.  rows_only: numbers local to each query when the
 * judgments allow (TREC or BEIR qrels, read against themselves). */
static rs_code import_parse(const rs__import_cfg *cfg, int rows_only, parsed *p, rs_error *err)
{
  memset(p, 0, sizeof *p);
  p->j.tmp_qrels = (tmp_text)TMP_TEXT_NONE;
  size_t *row_of = NULL, n_topics = 0;
  rs_code rc = RS_OK;
  if (!(p->runs = rs__calloc(cfg->n_runs ? cfg->n_runs : 1, sizeof *p->runs)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  p->n_runs = cfg->n_runs;
  judgments *j = &p->j;
  doc_ids *docs = &p->docs;
  docs->n_parts = 1;
  const int threads = rs__threads(cfg->threads);
  for (size_t i = 0; i < cfg->n_runs; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(cfg->runs[i].name, cfg->runs[k].name) == 0) {
        rc = rs__fail(err, RS_USAGE, "run name '%s' is given twice (%s and %s)", cfg->runs[i].name, cfg->runs[k].path,
                      cfg->runs[i].path);
        goto done;
      }
  if (cfg->qrels_path && cfg->json_path) {
    rc = rs__fail(err, RS_USAGE, "expected at most one of qrels (%s) and a JSON eval set (%s)", cfg->qrels_path,
                  cfg->json_path);
    goto done;
  }
  if (!cfg->qrels_path && !cfg->json_path && !cfg->queries_path) {
    rc = rs__fail(err, RS_USAGE, "expected qrels, a JSON eval set or a queries file to take the queries from");
    goto done;
  }
  if (cfg->queries_path && (rc = rs__texts_load(cfg->queries_path, &p->qtexts, err))) goto done;
  const int unjudged = !cfg->qrels_path && !cfg->json_path;
  const char *json_path = cfg->json_path;
  if (cfg->qrels_path) {
    /* TREC qrels, or BEIR's qrels TSV through its TREC form, or a JSON
     * eval set given as the qrels; text that is none of them goes to the
     * TREC reader, which names the bad line. */
    rs__detected d = {.kind = RS_INPUT_UNKNOWN, .text = 1};
    if (strcmp(cfg->qrels_path, "-") != 0 && (rc = rs__detect(cfg->qrels_path, &d, err))) goto done;
    if (d.kind == RS_INPUT_BEIR_QRELS) {
      FILE *f = NULL;
      if ((rc = tmp_open(&j->tmp_qrels, "qrels", &f, err))) goto done;
      rc = rs__beir_qrels_to_trec(cfg->qrels_path, d.delim, f, err);
      if (fclose(f) != 0 && !rc)
        rc = rs__fail(err, RS_IO, "%s: cannot write its TREC form to %s: %s", cfg->qrels_path, j->tmp_qrels.path,
                      strerror(errno));
      p->local = rows_only && !cfg->docs_path;
      if (!rc) rc = judgments_from_qrels(j->tmp_qrels.path, cfg->qrels_path, threads, p->local, docs, j, err);
    } else if (d.kind == RS_INPUT_JSON_EVALSET) {
      json_path = cfg->qrels_path;
      rc = judgments_from_json(json_path, cfg->n_runs > 0, threads, docs, j, err);
    } else if (d.kind == RS_INPUT_TREC_QRELS || (d.kind == RS_INPUT_UNKNOWN && d.text)) {
      p->local = rows_only && !cfg->docs_path;
      rc = judgments_from_qrels(cfg->qrels_path, cfg->qrels_path, threads, p->local, docs, j, err);
    } else {
      rc = rs__detect_fail(err, cfg->qrels_path, &d, "qrels file", RS_INPUT_FORMATS_JUDGMENTS);
    }
  } else if (json_path) rc = judgments_from_json(json_path, cfg->n_runs > 0, threads, docs, j, err);
  else rc = judgments_from_texts(p->qtexts, cfg->n_runs > 0, j, err);
  if (rc) goto done;
  if (cfg->n_runs && (rc = map_topics(j, threads, &row_of, &n_topics, err))) goto done;
  for (size_t i = 0; i < cfg->n_runs && !rc; i++) {
    size_t dropped = 0, no_latency = 0;
    rc = read_any_run(cfg, i, j, row_of, n_topics, unjudged, p->local, docs, &p->runs[i], &dropped, &no_latency, err);
    if (cfg->dropped) cfg->dropped[i] = dropped;
    if (cfg->no_latency) cfg->no_latency[i] = no_latency;
  }
  rs__qrels_free(j->q); /* (before the doc ids' sort takes its memory) */
  j->q = NULL;
  if (rc) goto done;
  if (!p->local && (rc = number_docs(cfg, p, threads, err))) goto done; /* local numbers are final */
  if (p->qtexts && (rc = texts_for(p->qtexts, "query", (const char *const *)j->qid, j->nq, &p->qtext, err))) goto done;
  if (cfg->docs_path && !(rc = rs__texts_load(cfg->docs_path, &p->dtexts, err)))
    rc = texts_for(p->dtexts, "doc", p->sorted, p->n_docs, &p->dtext, err);
done:
  free(row_of);
  return rc;
}

/* --- the corpus file ---------------------------------------------------------- */

rs_code rs__import(const rs__import_cfg *cfg, const char *out_path, rs_error *err)
{
  parsed p;
  rs__h5w *w = NULL;
  rs_code rc = import_parse(cfg, 0, &p, err);
  const judgments *j = &p.j;
  if (rc) goto done;
  if ((rc = rs__h5w_create(out_path, 1, &w, err))) goto done;
  if ((rc = rs__h5w_strings(w, "/queries/id", (const char *const *)j->qid, j->nq, 0, err))) goto done;
  if (p.qtext) rc = rs__h5w_strings(w, "/queries/text", p.qtext, j->nq, 0, err);
  else if (j->qtext) rc = rs__h5w_strings(w, "/queries/text", (const char *const *)j->qtext, j->nq, 0, err);
  if (rc) goto done;
  if ((rc = rs__h5w_strings(w, "/docs/id", p.sorted, p.n_docs, 0, err))) goto done;
  if (p.dtext && (rc = rs__h5w_strings(w, "/docs/text", p.dtext, p.n_docs, 0, err))) goto done;
  const size_t nnz = (size_t)j->off[j->nq];
  uint64_t dims[1] = {j->nq + 1};
  if ((rc = rs__h5w_array(w, "/qrels/offsets", RS_DT_I64, 1, dims, j->off, err))) goto done;
  dims[0] = nnz;
  if ((rc = rs__h5w_array(w, "/qrels/doc", RS_DT_I32, 1, dims, j->doc, err)) ||
      (rc = rs__h5w_array(w, "/qrels/grade", RS_DT_I32, 1, dims, j->grade, err)))
    goto done;
  for (size_t i = 0; i < cfg->n_runs && !rc; i++) rc = write_run(w, &cfg->runs[i], &p.runs[i], j->nq, err);
  if (rc) goto done;
  rc = rs__h5w_commit(w, err);
  w = NULL;
done:
  rs__h5w_abort(w);
  parsed_free(&p);
  return rc;
}

/* --- the corpus in memory ------------------------------------------------------- */

/* n strings in one block: out[i] points into it (NULL reads as "", as a
 * NULL string written to HDF5 reads back). */
static char **pool(const char *const *s, size_t n)
{
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += (s[i] ? strlen(s[i]) : 0) + 1;
  char **v = rs__malloc(rs__mul(n ? n : 1, sizeof *v) + total);
  if (!v) return NULL;
  char *at = (char *)(v + n);
  for (size_t i = 0; i < n; i++) {
    const size_t l = s[i] ? strlen(s[i]) : 0;
    if (l) memcpy(at, s[i], l);
    at[l] = '\0';
    v[i] = at;
    at += l + 1;
  }
  return v;
}

static int cmp_attr_key(const void *a, const void *b)
{
  return strcmp(((const rs__attr *)a)->key, ((const rs__attr *)b)->key);
}

/* A copy of the run's attributes, sorted by key as an opened run has them. */
static rs_code copy_attrs(const rs__import_run *ir, rs__run *r, rs_error *err)
{
  if (!ir->n_attrs) return RS_OK;
  if (!(r->attrs = rs__calloc(ir->n_attrs, sizeof *r->attrs))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t a = 0; a < ir->n_attrs; a++) {
    rs__attr *to = &r->attrs[r->n_attrs++];
    *to = ir->attrs[a];
    to->key = strdup(ir->attrs[a].key);
    to->text = strdup(ir->attrs[a].text ? ir->attrs[a].text : "");
    if (!to->key || !to->text) return rs__fail(err, RS_NOMEM, "out of memory");
  }
  qsort(r->attrs, r->n_attrs, sizeof *r->attrs, cmp_attr_key);
  return RS_OK;
}

rs_code rs__import_corpus(const rs__import_cfg *cfg, rs__corpus **out, rs_error *err)
{
  parsed p;
  rs__corpus *c = NULL;
  rs_code rc = import_parse(cfg, cfg->rows_only, &p, err);
  judgments *j = &p.j;
  if (rc) goto done;
  const char *source = cfg->qrels_path ? cfg->qrels_path : cfg->json_path ? cfg->json_path : cfg->queries_path;
  if (!(c = rs__calloc(1, sizeof *c)) || !(c->path = strdup(source))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  c->in_memory = 1;
  c->nq = j->nq;
  if (!(c->query_id = pool((const char *const *)j->qid, j->nq))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  if (p.qtext || j->qtext) {
    c->has_text = 1;
    c->query_text = pool(p.qtext ? p.qtext : (const char *const *)j->qtext, j->nq);
    if (!c->query_text) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  }
  /* The doc ids stay where the parts' interners put them: the corpus takes
   * their blocks, and the sorted views become its /docs/id. */
  c->has_docs = !p.local;
  c->rows_ranked = p.local;
  c->nd = p.n_docs;
  /* Distinct and sorted by construction (sort_doc_ids): said, so that the
   * sweep breaks ties on doc numbers without first walking every id with
   * strcmp to find that out (100k x 100 direct eval: 0.13-0.26 s of it). */
  c->doc_ids_sorted = 1;
  c->doc_id = (char **)p.sorted;
  p.sorted = NULL;
  size_t n_blocks = 0;
  for (size_t part = 0; part < ID_PARTS_MAX; part++) n_blocks += p.docs.part[part].bytes.n_block;
  if (!(c->id_blocks = rs__malloc(rs__mul(n_blocks ? n_blocks : 1, sizeof *c->id_blocks)))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t part = 0; part < ID_PARTS_MAX; part++) {
    interner *in = &p.docs.part[part];
    for (size_t b = 0; b < in->bytes.n_block; b++) c->id_blocks[c->n_id_blocks++] = in->bytes.block[b];
    in->bytes.n_block = 0;
  }
  if (p.dtext) {
    c->has_doc_text = 1;
    if (!(c->doc_text = pool(p.dtext, p.n_docs))) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  }
  c->qoff = j->off, c->qdoc = j->doc, c->qgrade = j->grade;
  j->off = NULL, j->doc = NULL, j->grade = NULL;
  if ((rc = rs__mem_check_query_ids(c, err))) goto done;
  rs__runset *s = &c->runs;
  if (!(s->run = rs__calloc(cfg->n_runs ? cfg->n_runs : 1, sizeof *s->run)) ||
      !(s->mem = rs__calloc(cfg->n_runs ? cfg->n_runs : 1, sizeof *s->mem))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  /* A corpus file lists its runs in strcmp order of their names. */
  size_t *order = rs__malloc(rs__mul(cfg->n_runs ? cfg->n_runs : 1, sizeof *order));
  if (!order) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  for (size_t i = 0; i < cfg->n_runs; i++) {
    size_t at = i;
    for (; at > 0 && strcmp(cfg->runs[order[at - 1]].name, cfg->runs[i].name) > 0; at--) order[at] = order[at - 1];
    order[at] = i;
  }
  for (size_t o = 0; o < cfg->n_runs && !rc; o++) {
    const size_t i = order[o];
    run_rows *rr = &p.runs[i];
    rs__run_mem *m = &s->mem[o];
    rs__run *r = &s->run[o];
    s->n = o + 1; /* rs__runset_close frees what is set */
    /* The layout import would write sizes the engine's blocks, as it would
     * when the file is read. */
    r->csr = !run_is_dense(rr, j->nq);
    r->k = r->csr ? 0 : rr->k;
    r->n_docs = r->csr ? (uint64_t)rr->off[j->nq] : 0;
    m->off = rr->off, m->doc = rr->doc, m->score = rr->score, m->latency = rr->latency;
    m->row_doc = rr->row_doc, m->chunk = rr->chunk, m->n_chunk = rr->n_chunk;
    *rr = (run_rows){0};
    if (!(m->path = strdup(cfg->runs[i].path)) || !(r->name = strdup(cfg->runs[i].name))) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    if ((rc = copy_attrs(&cfg->runs[i], r, err))) break;
    r->path = m->path;
    r->mem = m;
    r->n_rows = j->nq;
    r->has_score = !p.local; /* local rows are ranked already (rs__corpus.rows_ranked) */
    r->has_latency = m->latency != NULL;
  }
  free(order);
  if (rc) goto done;
  *out = c;
  c = NULL;
done:
  rs__corpus_close(c);
  parsed_free(&p);
  return rc;
}
