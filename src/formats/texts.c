/* texts.c: text collections (format in texts.h).
 *
 * Records go into one growing byte pool ("id\0text\0" each), addressed by
 * offsets while it grows; an open-addressing table of record numbers,
 * keyed by rs__hash_bytes of the id, finds them.  The file is streamed in
 * blocks, so a collection needs its own size in memory plus one block. */
#define _POSIX_C_SOURCE 200809L
#include "formats/texts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/evalset.h"
#include "formats/textio.h"

enum { BLOCK = RS_IO_BLOCK };

typedef struct {
  uint64_t off;  /* the id's first byte in the pool; the text follows its NUL */
  uint32_t id_len;
  uint64_t text_len;
  uint64_t line; /* for the duplicate message */
  uint64_t hash;
} record;

struct rs__texts {
  char *path;
  char *pool;
  size_t pool_len, pool_cap;
  record *rec;
  size_t n, cap;
  uint32_t *slot; /* 0 empty, else 1 + record number */
  size_t mask;
};

const char *rs__texts_path(const rs__texts *t) { return t->path; }
size_t rs__texts_count(const rs__texts *t) { return t->n; }
const char *rs__texts_id(const rs__texts *t, size_t i) { return t->pool + t->rec[i].off; }

void rs__texts_free(rs__texts *t)
{
  if (!t) return;
  free(t->path);
  free(t->pool);
  free(t->rec);
  free(t->slot);
  free(t);
}

/* Record number of id, or SIZE_MAX. */
static size_t find(const rs__texts *t, const char *id, size_t len, uint64_t h)
{
  if (!t->slot) return SIZE_MAX;
  for (size_t i = (size_t)h & t->mask; t->slot[i]; i = (i + 1) & t->mask) {
    const record *r = &t->rec[t->slot[i] - 1];
    if (r->hash == h && r->id_len == len && memcmp(t->pool + r->off, id, len) == 0) return t->slot[i] - 1;
  }
  return SIZE_MAX;
}

/* Doubles the table (load factor at most 1/2, so probes stay short). */
static int grow_table(rs__texts *t)
{
  size_t ns = t->slot ? 2 * (t->mask + 1) : 1024;
  uint32_t *slot = rs__calloc(ns, sizeof *slot);
  if (!slot) return 0;
  for (size_t k = 0; k < t->n; k++) {
    size_t i = (size_t)t->rec[k].hash & (ns - 1);
    while (slot[i]) i = (i + 1) & (ns - 1);
    slot[i] = (uint32_t)(k + 1);
  }
  free(t->slot);
  t->slot = slot;
  t->mask = ns - 1;
  return 1;
}

static int pool_reserve(rs__texts *t, size_t more)
{
  if (t->pool_cap - t->pool_len >= more) return 1;
  size_t cap = t->pool_cap ? t->pool_cap : BLOCK;
  while (cap - t->pool_len < more) {
    if (cap > SIZE_MAX / 2) return 0;
    cap *= 2;
  }
  char *p = rs__realloc(t->pool, cap);
  if (!p) return 0;
  t->pool = p;
  t->pool_cap = cap;
  return 1;
}

/* Adds a record whose text is title "\n\n" text (or text alone when the
 * title is empty). */
static rs_code add(rs__texts *t, size_t line, const char *id, size_t id_len, const char *title, size_t title_len,
                   const char *text, size_t text_len, rs_error *err)
{
  const uint64_t h = rs__hash_bytes(id, id_len);
  size_t prev = find(t, id, id_len, h);
  if (prev != SIZE_MAX)
    return rs__fail(err, RS_DUPLICATE, "%s:%zu: id \"%.*s\" repeats line %llu; expected each id once", t->path, line,
                    (int)(id_len > 80 ? 80 : id_len), id, (unsigned long long)t->rec[prev].line);
  if (id_len > UINT32_MAX || t->n >= UINT32_MAX - 1)
    return rs__fail(err, RS_UNSUPPORTED, "%s:%zu: more than 2^32 - 2 records or an id over 4 GiB", t->path, line);
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 1024;
    record *r = rs__realloc(t->rec, rs__mul(cap, sizeof *r));
    if (!r) return rs__fail(err, RS_NOMEM, "%s: out of memory for %zu records", t->path, cap);
    t->rec = r;
    t->cap = cap;
  }
  if ((t->n + 1) * 2 > (t->slot ? t->mask + 1 : 0) && !grow_table(t))
    return rs__fail(err, RS_NOMEM, "%s: out of memory for the id table", t->path);
  const size_t sep = title_len ? 2 : 0, full = title_len + sep + text_len;
  if (!pool_reserve(t, id_len + full + 2)) return rs__fail(err, RS_NOMEM, "%s: out of memory for the texts", t->path);
  record *r = &t->rec[t->n];
  *r = (record){.off = t->pool_len, .id_len = (uint32_t)id_len, .text_len = full, .line = line, .hash = h};
  char *p = t->pool + t->pool_len;
  memcpy(p, id, id_len);
  p += id_len;
  *p++ = '\0';
  if (title_len) {
    memcpy(p, title, title_len);
    p += title_len;
    *p++ = '\n';
    *p++ = '\n';
  }
  if (text_len) memcpy(p, text, text_len);
  p[text_len] = '\0';
  t->pool_len += id_len + full + 2;
  size_t i = (size_t)h & t->mask;
  while (t->slot[i]) i = (i + 1) & t->mask;
  t->slot[i] = (uint32_t)(t->n + 1);
  t->n++;
  return RS_OK;
}

static rs_code tsv_line(rs__texts *t, size_t ln, const char *s, size_t n, rs_error *err)
{
  const char *tab = memchr(s, '\t', n);
  if (!tab)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected \"id<TAB>text\", found no tab in \"%.*s%s\"", t->path, ln,
                    (int)(n > 40 ? 40 : n), s, n > 40 ? "..." : "");
  if (tab == s) return rs__fail(err, RS_FORMAT, "%s:%zu: expected an id before the tab, found an empty id", t->path, ln);
  if (memchr(s, '\0', (size_t)(tab - s)))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected an id without NUL bytes, found a NUL", t->path, ln);
  return add(t, ln, s, (size_t)(tab - s), "", 0, tab + 1, n - (size_t)(tab - s) - 1, err);
}

static rs_code json_line(rs__texts *t, rs__jsonl *jp, size_t ln, const char *s, size_t n, rs_error *err)
{
  rs__text_record r;
  rs_code rc = rs__json_text_record(jp, t->path, ln, s, n, &r, err);
  if (rc) return rc;
  return add(t, ln, r.id, r.id_len, r.title, r.title_len, r.text, r.text_len, err);
}

typedef struct text_lines {
  rs__texts *t;
  rs__jsonl *jp;
  int format; /* 0 unknown yet, 1 TSV, 2 JSONL: told by the first non-blank line */
} text_lines;

static rs_code text_line(void *ctx, size_t line, const char *s, size_t n, rs_error *err)
{
  text_lines *l = ctx;
  if (!l->format) {
    size_t k = 0;
    while (s[k] == ' ' || s[k] == '\t') k++;
    l->format = s[k] == '{' ? 2 : 1;
    rs_code rc = l->format == 2 ? rs__jsonl_new(&l->jp, err) : RS_OK;
    if (rc) return rc;
  }
  return l->format == 2 ? json_line(l->t, l->jp, line, s, n, err) : tsv_line(l->t, line, s, n, err);
}

rs_code rs__texts_load(const char *path, rs__texts **out, rs_error *err)
{
  text_lines l = {0};
  rs_code rc = RS_OK;
  if (!(l.t = rs__calloc(1, sizeof *l.t)) || !(l.t->path = strdup(path)))
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", path);
  if (!rc) rc = rs__input_lines(path, 0, "", text_line, &l, err);
  if (!rc) *out = l.t, l.t = NULL;
  rs__texts_free(l.t);
  rs__jsonl_free(l.jp);
  return rc;
}

const char *rs__texts_get(const rs__texts *t, const char *id, size_t *len)
{
  const size_t n = strlen(id);
  size_t k = find(t, id, n, rs__hash_bytes(id, n));
  if (k == SIZE_MAX) return NULL;
  if (len) *len = (size_t)t->rec[k].text_len;
  return t->pool + t->rec[k].off + t->rec[k].id_len + 1;
}
