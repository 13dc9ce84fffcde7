/* textruns.c: JSONL and CSV/TSV runs, BEIR qrels -> TREC text (see textruns.h). */
#define _POSIX_C_SOURCE 200809L
#include "formats/textruns.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csvio.h"
#include "formats/evalset.h"
#include "formats/numparse.h"
#include "formats/textio.h"
#include "util/strdict.h"

/* --- the queries of a run ----------------------------------------------------- */

struct rs__run_latency {
  rs__strdict ids; /* query ids, first appearance first */
  double *sec;     /* [ids.n] latency (seconds), when given */
  size_t *line;    /* [ids.n] line of the query's first appearance */
  size_t *rows;    /* [ids.n] rows so far (CSV: the next rank) */
  size_t cap;
  int given;       /* the run gives latencies */
};

void rs__run_latency_free(rs__run_latency *l)
{
  if (!l) return;
  rs__strdict_free(&l->ids);
  free(l->sec);
  free(l->line);
  free(l->rows);
  free(l);
}

int rs__run_latency_get(const rs__run_latency *l, const char *qid, double *sec)
{
  const long id = rs__strdict_find(&l->ids, qid);
  if (id < 0) return 0;
  *sec = l->sec[id];
  return 1;
}

/* The number of query qid (added with its line when new); *is_new says which. */
static rs_code query_of(rs__run_latency *l, const char *qid, size_t line, uint32_t *id, int *is_new, rs_error *err)
{
  const size_t before = l->ids.n;
  rs_code rc = rs__strdict_add(&l->ids, qid, id, err);
  if (rc) return rc;
  *is_new = l->ids.n > before;
  if (!*is_new) return RS_OK;
  if (l->ids.n > l->cap) {
    const size_t cap = l->cap ? 2 * l->cap : 1024;
    double *s = rs__realloc(l->sec, rs__mul(cap, sizeof *s));
    if (s) l->sec = s;
    size_t *ln = s ? rs__realloc(l->line, rs__mul(cap, sizeof *ln)) : NULL;
    if (ln) l->line = ln;
    size_t *r = ln ? rs__realloc(l->rows, rs__mul(cap, sizeof *r)) : NULL;
    if (!r) return rs__fail(err, RS_NOMEM, "out of memory");
    l->rows = r;
    l->cap = cap;
  }
  l->sec[*id] = 0.0;
  l->line[*id] = line;
  l->rows[*id] = 0;
  return RS_OK;
}

/* --- shared checks -------------------------------------------------------------- */

/* An id that TREC text can carry: non-empty, no NUL, no white space. */
static rs_code check_id(const char *path, size_t line, const char *field, const char *s, size_t n, rs_error *err)
{
  if (n == 0) return rs__fail(err, RS_FORMAT, "%s:%zu: %s: expected an id, found an empty one", path, line, field);
  for (size_t i = 0; i < n; i++) {
    const char c = s[i];
    if (c == '\0')
      return rs__fail(err, RS_FORMAT, "%s:%zu: %s: expected an id without NUL bytes, found one", path, line, field);
    if (c == ' ' || (c >= '\t' && c <= '\r'))
      return rs__fail(err, RS_FORMAT,
                      "%s:%zu: %s: expected an id without white space (runs are matched as TREC text, which splits "
                      "on it), found \"%.*s%s\"",
                      path, line, field, (int)(n > 60 ? 60 : n), s, n > 60 ? "..." : "");
  }
  return RS_OK;
}

/* One TREC run line: the rank field is informative (trec_eval ignores it).
 * The score is text the TREC reader parses back to the same double: the
 * file's own token (checked with the same strict parser) or -rank. */
static void put_line(FILE *out, const char *qid, const char *doc, size_t doc_len, size_t rank, const char *score,
                     size_t score_len)
{
  /* fputs and fwrite: ten million lines through fprintf cost seconds */
  char num[24];
  size_t k = sizeof num;
  do num[--k] = (char)('0' + rank % 10); while ((rank /= 10) != 0);
  fputs(qid, out);
  fputs(" Q0 ", out);
  fwrite(doc, 1, doc_len, out);
  putc(' ', out);
  fwrite(num + k, 1, sizeof num - k, out);
  putc(' ', out);
  fwrite(score, 1, score_len, out);
  fputs(" ragsweep\n", out);
}

/* The score of a run without scores: -rank, as text. */
static size_t rank_score(char buf[32], size_t rank) { return (size_t)snprintf(buf, 32, "-%zu", rank); }

/* The stream's state after writing; the caller closes it. */
static rs_code out_ok(FILE *out, const char *path, rs_error *err)
{
  if (fflush(out) != 0 || ferror(out))
    return rs__fail(err, RS_IO, "%s: cannot write its TREC form to a temporary file (TMPDIR): %s", path,
                    strerror(errno));
  return RS_OK;
}

/* --- JSONL runs ------------------------------------------------------------------- */

typedef struct {
  const char *path;
  FILE *out;
  rs__jsonl *p;
  rs__run_latency *q;
  size_t line_with, line_without; /* first line with and without latency_ms (0: none yet) */
  /* the docs of the current line, copied: offsets into pool */
  char *pool;
  size_t pool_len, pool_cap;
  size_t *off, *len, off_cap, len_cap;
  uint32_t *slot; /* duplicate check: 1 + doc index, 0 empty */
  size_t n_slots;
} jsonl_run;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap) return 1;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *np = rs__realloc(*p, rs__mul(c, elem));
  if (!np) return 0;
  *p = np;
  *cap = c;
  return 1;
}

/* The text of an id value (a string, or an integer in decimal) into
 * (*s, *n): a view of v or of buf. */
static rs_code id_text(const jsonl_run *j, size_t line, const char *field, const rs__json *v, char buf[24],
                       const char **s, size_t *n, rs_error *err)
{
  const rs__json_kind k = rs__json_kind_of(v);
  if (k == RS_JSON_STRING) *s = rs__json_str(v, n);
  else if (k == RS_JSON_INT && (*s = rs__json_int_text(v, buf)) != NULL) *n = strlen(*s);
  else {
    char d[RS_JSON_DESCRIBE_CAP];
    return rs__fail(err, RS_FORMAT, "%s:%zu: %s: expected a string or an integer id, found %s", j->path, line, field,
                    rs__json_describe(d, v));
  }
  return check_id(j->path, line, field, *s, *n, err);
}

static rs_code jsonl_line(void *ctx, size_t line, const char *s, size_t n, rs_error *err)
{
  jsonl_run *j = ctx;
  size_t n_members = 0;
  rs_code rc = rs__jsonl_object(j->p, j->path, line, s, n, &n_members, err);
  if (rc) return rc;
  const rs__json *qv = NULL, *dv = NULL, *sv = NULL, *lv = NULL;
  const char *qkey = NULL, *dkey = NULL;
  char d[RS_JSON_DESCRIBE_CAP];
  for (size_t i = 0; i < n_members; i++) {
    const rs__json *v;
    const char *k = rs__jsonl_member(j->p, i, &v);
    const int is_q = strcmp(k, "query_id") == 0 || strcmp(k, "qid") == 0,
              is_d = strcmp(k, "doc_ids") == 0 || strcmp(k, "docs") == 0;
    if ((is_q && qkey) || (is_d && dkey))
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected one of \"%s\" and \"%s\", found both", j->path, line,
                      is_q ? qkey : dkey, k);
    if (is_q) qv = v, qkey = k;
    else if (is_d) dv = v, dkey = k;
    else if (strcmp(k, "scores") == 0 && rs__json_kind_of(v) != RS_JSON_NULL) sv = v;
    else if (strcmp(k, "latency_ms") == 0 && rs__json_kind_of(v) != RS_JSON_NULL) lv = v;
  }
  if (!qv) return rs__fail(err, RS_FORMAT, "%s:%zu: expected \"query_id\" (or \"qid\"), found neither", j->path, line);
  if (!dv) return rs__fail(err, RS_FORMAT, "%s:%zu: expected \"doc_ids\" (or \"docs\"), found neither", j->path, line);

  char qbuf[24];
  const char *qs;
  size_t qn;
  if ((rc = id_text(j, line, qkey, qv, qbuf, &qs, &qn, err))) return rc;
  char *qid = rs__malloc(qn + 1);
  if (!qid) return rs__fail(err, RS_NOMEM, "out of memory");
  memcpy(qid, qs, qn);
  qid[qn] = '\0';
  uint32_t qi;
  int is_new;
  if ((rc = query_of(j->q, qid, line, &qi, &is_new, err))) goto done;
  if (!is_new) {
    rc = rs__fail(err, RS_FORMAT, "%s:%zu: %s: query \"%s\" is also on line %zu; expected one line per query",
                  j->path, line, qkey, qid, j->q->line[qi]);
    goto done;
  }

  if (rs__json_kind_of(dv) != RS_JSON_ARRAY) {
    rc = rs__fail(err, RS_FORMAT, "%s:%zu: %s: expected an array of doc ids, found %s", j->path, line, dkey,
                  rs__json_describe(d, dv));
    goto done;
  }
  const size_t nd = rs__json_len(dv);
  if (sv && rs__json_kind_of(sv) != RS_JSON_ARRAY) {
    rc = rs__fail(err, RS_FORMAT, "%s:%zu: scores: expected an array of numbers, found %s", j->path, line,
                  rs__json_describe(d, sv));
    goto done;
  }
  if (sv && rs__json_len(sv) != nd) {
    rc = rs__fail(err, RS_FORMAT, "%s:%zu: scores: expected %zu scores (one per doc of %s), found %zu", j->path,
                  line, nd, dkey, rs__json_len(sv));
    goto done;
  }
  if (lv) {
    const rs__json_kind k = rs__json_kind_of(lv);
    const double ms = k == RS_JSON_INT || k == RS_JSON_DOUBLE ? rs__json_num(lv) : -1.0;
    if (!(ms >= 0.0) || isinf(ms)) {
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: latency_ms: expected a number of milliseconds >= 0, found %s", j->path,
                    line, rs__json_describe(d, lv));
      goto done;
    }
    j->q->sec[qi] = ms / 1000.0;
    if (!j->line_with) j->line_with = line;
  } else if (!j->line_without) {
    j->line_without = line;
  }
  if (j->line_with && j->line_without) {
    const int missing_here = !lv;
    rc = rs__fail(err, RS_FORMAT, "%s:%zu: latency_ms: %s here but %s on line %zu; expected it on every line or on none",
                  j->path, line, missing_here ? "missing" : "given", missing_here ? "given" : "missing",
                  missing_here ? j->line_with : j->line_without);
    goto done;
  }

  /* The docs, copied, then checked for repeats. */
  j->pool_len = 0;
  if (!grow((void **)&j->off, &j->off_cap, nd, sizeof *j->off) || !grow((void **)&j->len, &j->len_cap, nd, sizeof *j->len)) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nd; i++) {
    char field[48], dbuf[24];
    snprintf(field, sizeof field, "%s[%zu]", dkey, i);
    const char *ds;
    size_t dn;
    if ((rc = id_text(j, line, field, rs__json_at(dv, i), dbuf, &ds, &dn, err))) goto done;
    if (!grow((void **)&j->pool, &j->pool_cap, j->pool_len + dn, 1)) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      goto done;
    }
    memcpy(j->pool + j->pool_len, ds, dn);
    j->off[i] = j->pool_len;
    j->len[i] = dn;
    j->pool_len += dn;
  }
  size_t ns = 16;
  while (ns < 2 * nd) ns *= 2;
  if (ns > j->n_slots) {
    uint32_t *sl = rs__realloc(j->slot, rs__mul(ns, sizeof *sl));
    if (!sl) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      goto done;
    }
    j->slot = sl;
    j->n_slots = ns;
  }
  memset(j->slot, 0, ns * sizeof *j->slot);
  for (size_t i = 0; i < nd; i++) {
    const char *di = j->pool + j->off[i];
    size_t h = (size_t)rs__hash_bytes(di, j->len[i]) & (ns - 1);
    for (; j->slot[h]; h = (h + 1) & (ns - 1)) {
      const size_t o = j->slot[h] - 1;
      if (j->len[o] == j->len[i] && memcmp(j->pool + j->off[o], di, j->len[i]) == 0) {
        rc = rs__fail(err, RS_DUPLICATE, "%s:%zu: %s[%zu]: doc \"%.*s\" is also at %s[%zu]; expected each doc once a query",
                      j->path, line, dkey, i, (int)(j->len[i] > 60 ? 60 : j->len[i]), di, dkey, o);
        goto done;
      }
    }
    j->slot[h] = (uint32_t)(i + 1);
  }

  for (size_t i = 0; i < nd; i++) {
    char buf[32];
    const char *text = buf;
    size_t text_len;
    if (sv) {
      const rs__json *x = rs__json_at(sv, i);
      const rs__json_kind k = rs__json_kind_of(x);
      double score;
      if ((k != RS_JSON_INT && k != RS_JSON_DOUBLE) || !isfinite(rs__json_num(x)) ||
          !(text = rs__json_num_text(x, &text_len)) || !rs__strict_atof(text, text_len, &score) || !isfinite(score)) {
        rc = rs__fail(err, RS_FORMAT, "%s:%zu: scores[%zu]: expected a finite number, found %s", j->path, line, i,
                      rs__json_describe(d, x));
        goto done;
      }
    } else {
      text_len = rank_score(buf, i + 1);
    }
    put_line(j->out, qid, j->pool + j->off[i], j->len[i], i + 1, text, text_len);
  }
done:
  free(qid);
  return rc;
}

rs_code rs__jsonl_run_to_trec(const char *path, FILE *out, rs__run_latency **lat, rs_error *err)
{
  jsonl_run j = {.path = path, .out = out};
  rs_code rc = rs__jsonl_new(&j.p, err);
  if (!rc && !(j.q = rs__calloc(1, sizeof *j.q))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) rc = rs__input_lines(path, 0, "", jsonl_line, &j, err);
  if (!rc && j.q->ids.n == 0)
    rc = rs__fail(err, RS_FORMAT, "%s: no queries; expected one JSON object a line with query_id and doc_ids", path);
  if (!rc) rc = out_ok(out, path, err);
  if (!rc && j.line_with) {
    j.q->given = 1;
    *lat = j.q;
    j.q = NULL;
  } else if (!rc) {
    *lat = NULL;
  }
  rs__run_latency_free(j.q);
  rs__jsonl_free(j.p);
  free(j.pool);
  free(j.off);
  free(j.len);
  free(j.slot);
  return rc;
}

/* --- CSV/TSV runs -------------------------------------------------------------------- */

enum { COL_QID, COL_DOC, COL_RANK, COL_SCORE, COL_LATENCY, N_COLS };
static const char *const col_name[N_COLS] = {"query_id", "doc_id", "rank", "score", "latency_ms"};
static const char *const col_alias[N_COLS] = {"qid", "docid", NULL, NULL, NULL};

typedef struct {
  const char *path;
  FILE *out;
  rs__run_latency *q;
  size_t n_fields;        /* the header's */
  long col[N_COLS];       /* field index, or -1 */
  const char *cname[N_COLS]; /* the header's spelling (points into names) */
  char names[N_COLS][16];
  int header_done;
} csv_run;

static rs_code csv_header(csv_run *c, char **f, size_t n, size_t line, rs_error *err)
{
  for (int k = 0; k < N_COLS; k++) c->col[k] = -1;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < N_COLS; k++) {
      if (strcmp(f[i], col_name[k]) != 0 && !(col_alias[k] && strcmp(f[i], col_alias[k]) == 0)) continue;
      if (c->col[k] >= 0)
        return rs__fail(err, RS_FORMAT, "%s:%zu: columns %zu and %zu both name the %s; expected one", c->path, line,
                        (size_t)c->col[k] + 1, i + 1, col_name[k]);
      c->col[k] = (long)i;
      snprintf(c->names[k], sizeof c->names[k], "%s", f[i]);
      c->cname[k] = c->names[k];
    }
  if (c->col[COL_QID] < 0 || c->col[COL_DOC] < 0) {
    char seen[120];
    size_t k = 0;
    seen[0] = '\0';
    for (size_t i = 0; i < n && k + 1 < sizeof seen; i++)
      k += (size_t)snprintf(seen + k, sizeof seen - k, "%s%s", i ? "," : "", f[i]);
    return rs__fail(err, RS_FORMAT,
                    "%s:%zu: expected a header naming query_id (or qid) and doc_id (or docid), and optionally rank, "
                    "score, latency_ms; found '%s'",
                    c->path, line, seen);
  }
  c->n_fields = n;
  c->header_done = 1;
  return RS_OK;
}

static rs_code csv_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  csv_run *c = ctx;
  if (!c->header_done) return csv_header(c, f, n, line, err);
  if (n != c->n_fields)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", c->path, line,
                    c->n_fields, n);
  const char *qid = f[c->col[COL_QID]], *doc = f[c->col[COL_DOC]];
  rs_code rc;
  if ((rc = check_id(c->path, line, c->cname[COL_QID], qid, strlen(qid), err)) ||
      (rc = check_id(c->path, line, c->cname[COL_DOC], doc, strlen(doc), err)))
    return rc;
  double score = 0.0, ms = 0.0;
  long long rank = 0;
  const char *score_text = NULL;
  if (c->col[COL_SCORE] >= 0) {
    const char *t = score_text = f[c->col[COL_SCORE]];
    if (!rs__strict_atof(t, strlen(t), &score) || !isfinite(score))
      return rs__fail(err, RS_FORMAT, "%s:%zu: score: expected a finite number, found '%s'", c->path, line, t);
  } else if (c->col[COL_RANK] >= 0) {
    const char *t = f[c->col[COL_RANK]];
    char *end;
    errno = 0;
    rank = strtoll(t, &end, 10);
    if (!rs__is_integer_token(t, strlen(t)) || errno || rank > ((long long)1 << 53) || rank < -((long long)1 << 53))
      return rs__fail(err, RS_FORMAT, "%s:%zu: rank: expected an integer, found '%s'", c->path, line, t);
  }
  if (c->col[COL_LATENCY] >= 0) {
    const char *t = f[c->col[COL_LATENCY]];
    if (!rs__strict_atof(t, strlen(t), &ms) || !(ms >= 0.0) || isinf(ms))
      return rs__fail(err, RS_FORMAT, "%s:%zu: latency_ms: expected a number of milliseconds >= 0, found '%s'",
                      c->path, line, t);
  }
  uint32_t qi;
  int is_new;
  if ((rc = query_of(c->q, qid, line, &qi, &is_new, err))) return rc;
  const size_t pos = ++c->q->rows[qi];
  if (c->col[COL_LATENCY] >= 0) {
    const double sec = ms / 1000.0;
    if (is_new) c->q->sec[qi] = sec;
    else if (c->q->sec[qi] != sec)
      return rs__fail(err, RS_FORMAT,
                      "%s:%zu: latency_ms: query \"%s\" has %s here and %.17g on line %zu; expected one latency per "
                      "query on all its rows",
                      c->path, line, qid, f[c->col[COL_LATENCY]], c->q->sec[qi] * 1000.0, c->q->line[qi]);
  }
  char buf[32];
  size_t score_len;
  if (score_text) {
    score_len = strlen(score_text);
  } else if (c->col[COL_RANK] < 0) {
    score_len = rank_score(buf, pos);
    score_text = buf;
  } else {
    score_len = (size_t)snprintf(buf, sizeof buf, "%lld", -rank);
    score_text = buf;
  }
  put_line(c->out, qid, doc, strlen(doc), pos, score_text, score_len);
  return RS_OK;
}

rs_code rs__csv_run_to_trec(const char *path, char delim, FILE *out, rs__run_latency **lat, rs_error *err)
{
  csv_run c = {.path = path, .out = out};
  rs_code rc = (c.q = rs__calloc(1, sizeof *c.q)) ? RS_OK : rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) rc = rs__csv_read_delim(path, delim, csv_row, &c, err);
  if (!rc && !c.header_done)
    rc = rs__fail(err, RS_FORMAT, "%s: an empty file; expected a header naming query_id and doc_id, then rows", path);
  if (!rc && c.q->ids.n == 0) rc = rs__fail(err, RS_FORMAT, "%s: a header but no rows; expected one row per (query, doc)", path);
  if (!rc) rc = out_ok(out, path, err);
  if (!rc && c.col[COL_LATENCY] >= 0) {
    c.q->given = 1;
    *lat = c.q;
    c.q = NULL;
  } else if (!rc) {
    *lat = NULL;
  }
  rs__run_latency_free(c.q);
  return rc;
}

/* --- BEIR qrels --------------------------------------------------------------------- */

typedef struct {
  const char *path;
  FILE *out;
  size_t rows, judged;
} beir_qrels;

static rs_code beir_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  beir_qrels *b = ctx;
  if (b->rows++ == 0 && n >= 2 && strcmp(f[0], "query-id") == 0 && strcmp(f[1], "corpus-id") == 0) return RS_OK;
  if (n != 3)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected 3 fields (query-id, corpus-id, score), found %zu", b->path,
                    line, n);
  rs_code rc;
  if ((rc = check_id(b->path, line, "query-id", f[0], strlen(f[0]), err)) ||
      (rc = check_id(b->path, line, "corpus-id", f[1], strlen(f[1]), err)))
    return rc;
  const size_t gl = strlen(f[2]);
  long long g = 0;
  if (rs__is_integer_token(f[2], gl)) {
    errno = 0;
    g = strtoll(f[2], NULL, 10);
  }
  if (!rs__is_integer_token(f[2], gl) || errno || g <= INT32_MIN || g > INT32_MAX)
    return rs__fail(err, RS_FORMAT, "%s:%zu: score: expected an integer grade, found '%s'", b->path, line, f[2]);
  fprintf(b->out, "%s 0 %s %lld\n", f[0], f[1], g);
  b->judged++;
  return RS_OK;
}

rs_code rs__beir_qrels_to_trec(const char *path, char delim, FILE *out, rs_error *err)
{
  beir_qrels b = {.path = path, .out = out};
  rs_code rc = rs__csv_read_delim(path, delim ? delim : '\t', beir_row, &b, err);
  if (!rc && b.judged == 0)
    rc = rs__fail(err, RS_FORMAT, "%s: no judgments; expected rows \"query-id<TAB>corpus-id<TAB>score\"", path);
  if (!rc) rc = out_ok(out, path, err);
  return rc;
}
