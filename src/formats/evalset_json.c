/* evalset_json.c: read the seeds' JSON evaluation sets (format in evalset.h).
 * The only includer of <json-c/json.h>.
 *
 * json-c builds the tree and reports syntax errors with their position.  It
 * silently keeps the last of two equal keys in an object, so a second, raw
 * pass over the (by then validated) text looks for repeated keys in the
 * objects whose keys carry meaning: the top level, each query, and each
 * graded_relevance object (where a repeated key is a doc graded twice). */
#include "formats/evalset.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/textio.h"

/* Lowest grade accepted: INT32_MIN means "not judged" elsewhere (qrels.h). */
#define GRADE_MIN (INT32_MIN + 1)

/* Longest id or value shown in a message, in bytes of the original. */
enum { SHOW_MAX = 40, QUOTE_CAP = 6 * SHOW_MAX + 8, DESCRIBE_CAP = QUOTE_CAP + 16 };

/* ---------------------------------------------------------------------------
 * Message helpers
 * ------------------------------------------------------------------------- */

/* Writes s as a double-quoted string for a message: control bytes escaped,
 * at most SHOW_MAX bytes (cut at a UTF-8 boundary) then "...". */
static const char *quote(char *buf, const char *s, size_t len)
{
  size_t n = len, o = 0;
  if (n > SHOW_MAX) {
    n = SHOW_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  }
  buf[o++] = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      buf[o++] = '\\';
      buf[o++] = (char)c;
    } else if (c < 0x20 || c == 0x7F) {
      o += (size_t)snprintf(buf + o, QUOTE_CAP - o, "\\u%04x", c);
    } else {
      buf[o++] = (char)c;
    }
  }
  buf[o++] = '"';
  if (n < len) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o] = '\0';
  return buf;
}

/* What a JSON value is, for "found ..." in messages. */
static const char *describe(char *buf, json_object *v)
{
  char q[QUOTE_CAP];
  switch (json_object_get_type(v)) {
  case json_type_null: return "null";
  case json_type_boolean: return json_object_get_boolean(v) ? "boolean true" : "boolean false";
  case json_type_object: return "object";
  case json_type_array: return "array";
  case json_type_string:
    snprintf(buf, DESCRIBE_CAP, "string %s",
             quote(q, json_object_get_string(v), (size_t)json_object_get_string_len(v)));
    return buf;
  case json_type_int:
  case json_type_double: {
    /* json-c keeps a parsed number's original text, so 2.0 shows as 2.0. */
    const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    snprintf(buf, DESCRIBE_CAP, "number %.*s", SHOW_MAX, t ? t : "?");
    return buf;
  }
  }
  return "unknown value";
}

/* Fails with "name: queries[i] (id "x"): <fmt>"; id may be NULL (not known). */
static rs_code qfail(rs_error *err, rs_code code, const char *name, size_t i, const char *id,
                     const char *fmt, ...) RS_PRINTF(6, 7);
static rs_code qfail(rs_error *err, rs_code code, const char *name, size_t i, const char *id,
                     const char *fmt, ...)
{
  char tail[sizeof err->msg], q[QUOTE_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tail, sizeof tail, fmt, ap);
  va_end(ap);
  if (id) return rs__fail(err, code, "%s: queries[%zu] (id %s): %s", name, i, quote(q, id, strlen(id)), tail);
  return rs__fail(err, code, "%s: queries[%zu]: %s", name, i, tail);
}

/* 1-based line and byte column of offset pos in text. */
static void line_col(const char *text, size_t pos, size_t *line, size_t *col)
{
  size_t l = 1, start = 0;
  for (size_t i = 0; i < pos; i++)
    if (text[i] == '\n') {
      l++;
      start = i + 1;
    }
  *line = l;
  *col = pos - start + 1;
}

/* The byte at pos (of len), for "found ..." in messages. */
static const char *describe_byte(char *buf, size_t cap, const char *text, size_t pos, size_t len)
{
  unsigned char c = pos < len ? (unsigned char)text[pos] : 0;
  if (pos >= len) snprintf(buf, cap, "the end of the file");
  else if (c > 0x20 && c < 0x7F) snprintf(buf, cap, "'%c'", c);
  else snprintf(buf, cap, "byte 0x%02x", c);
  return buf;
}

/* ---------------------------------------------------------------------------
 * Small containers
 * ------------------------------------------------------------------------- */

static char *dup_bytes(const char *s, size_t n)
{
  char *d = rs__malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* Open-addressing set of strings that live in the caller's arrays
 * (keys[k], lens[k]); it stores 1 + k.  A slot is in use only when its
 * generation is the current one, so emptying it per query costs O(1). */
typedef struct {
  uint32_t *slot;
  uint32_t *gen;
  uint32_t cur;
  size_t mask, n;
} idset;

static int idset_init(idset *t, size_t size)
{
  t->slot = rs__malloc(rs__mul(size, sizeof *t->slot));
  t->gen = rs__calloc(size, sizeof *t->gen);
  t->cur = 1;
  t->mask = size - 1;
  t->n = 0;
  return t->slot && t->gen ? 0 : -1;
}

static void idset_free(idset *t)
{
  free(t->slot);
  free(t->gen);
}

static void idset_clear(idset *t)
{
  t->n = 0;
  if (++t->cur == 0) { /* generations wrapped: forget them for real */
    memset(t->gen, 0, (t->mask + 1) * sizeof *t->gen);
    t->cur = 1;
  }
}

static int idset_grow(idset *t, char *const *keys, const size_t *lens)
{
  size_t size = (t->mask + 1) * 2;
  uint32_t *slot = rs__malloc(rs__mul(size, sizeof *slot));
  uint32_t *gen = rs__calloc(size, sizeof *gen);
  if (!slot || !gen) {
    free(slot);
    free(gen);
    return -1;
  }
  for (size_t i = 0; i <= t->mask; i++) {
    if (t->gen[i] != t->cur) continue;
    size_t k = t->slot[i] - 1;
    size_t j = (size_t)rs__hash_bytes(keys[k], lens[k]) & (size - 1);
    while (gen[j] == t->cur) j = (j + 1) & (size - 1);
    gen[j] = t->cur;
    slot[j] = t->slot[i];
  }
  idset_free(t);
  t->slot = slot;
  t->gen = gen;
  t->mask = size - 1;
  return 0;
}

/* The index of key among those added, or, when it is new, adds it as index
 * idx (the caller then stores it at keys[idx]) and returns idx.  SIZE_MAX
 * when out of memory. */
static size_t idset_get_or_add(idset *t, char *const *keys, const size_t *lens, const char *key,
                               size_t len, size_t idx)
{
  if ((t->n + 1) * 2 > t->mask + 1 && idset_grow(t, keys, lens)) return SIZE_MAX;
  for (size_t i = (size_t)rs__hash_bytes(key, len) & t->mask;; i = (i + 1) & t->mask) {
    if (t->gen[i] != t->cur) {
      t->gen[i] = t->cur;
      t->slot[i] = (uint32_t)(idx + 1);
      t->n++;
      return idx;
    }
    size_t k = t->slot[i] - 1;
    if (lens[k] == len && memcmp(keys[k], key, len) == 0) return k;
  }
}

/* A growable byte buffer. */
typedef struct {
  char *p;
  size_t len, cap;
} bytes;

static int bytes_put(bytes *b, const char *s, size_t n)
{
  if (!b->p || b->cap - b->len < n) { /* allocated even for n == 0: keys point into it */
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) cap *= 2;
    char *p = rs__realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  return 0;
}

/* ---------------------------------------------------------------------------
 * The raw scan for repeated keys.  It runs on text json-c has accepted, so
 * it can skip values without checking them; it still descends only where
 * it finds the expected bracket, so it never reads past a value.
 * ------------------------------------------------------------------------- */

/* json-c's white space. */
static const char *skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* p is at the opening quote (json-c also accepts single-quoted keys). */
static const char *skip_string(const char *p)
{
  char q = *p++;
  while (*p != q) p += *p == '\\' ? 2 : 1;
  return p + 1;
}

static const char *skip_value(const char *p)
{
  if (*p == '"' || *p == '\'') return skip_string(p);
  if (*p == '{' || *p == '[') {
    size_t depth = 0;
    for (;;) {
      char c = *p;
      if (c == '"' || c == '\'') {
        p = skip_string(p);
        continue;
      }
      if (c == '{' || c == '[') depth++;
      else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
      p++;
    }
  }
  while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
  return p;
}

static int hex4(const char *p, unsigned *out)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                 : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                        : 16u;
    if (d == 16) return -1;
    v = v * 16 + d;
  }
  *out = v;
  return 0;
}

static int put_utf8(bytes *b, unsigned cp)
{
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | cp >> 6);
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | cp >> 12);
    u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | cp >> 18);
    u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  return bytes_put(b, u, n);
}

/* Appends the decoded string at p (at its opening quote) to b, as json-c
 * decodes it (so keys compare as json-c compares them: a lone surrogate
 * becomes U+FFFD); returns the end of the string, or NULL when out of
 * memory. */
static const char *decode_string(const char *p, bytes *b)
{
  char q = *p++;
  while (*p != q) {
    const char *run = p;
    while (*p != q && *p != '\\') p++;
    if (bytes_put(b, run, (size_t)(p - run))) return NULL;
    if (*p != '\\') break;
    char e = p[1], c;
    p += 2;
    switch (e) {
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
      unsigned cp, lo;
      if (hex4(p, &cp)) return NULL; /* cannot happen after json-c */
      p += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
          lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
      } else if (cp >= 0xD800 && cp < 0xE000) {
        cp = 0xFFFD;
      }
      if (put_utf8(b, cp)) return NULL;
      continue;
    }
    default: c = e; break; /* \" \\ \/ */
    }
    if (bytes_put(b, &c, 1)) return NULL;
  }
  return p + 1;
}

typedef struct {
  size_t key_off, key_len; /* decoded key in the scan's key buffer */
  const char *key;
  const char *val; /* raw text of the value */
  size_t val_len;
  size_t pos; /* member index in file order */
} member;

static int cmp_member(const void *a, const void *b)
{
  const member *x = a, *y = b;
  int c = rs__strncmp2(x->key, x->key_len, y->key, y->key_len);
  if (c) return c;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

typedef struct {
  const char *name;
  const rs__evalset *s;
  rs_error *err;
  bytes keys;
  member *m;
  size_t n_m, cap_m;
} scan;

/* Reads the members of the object at p (at '{') into sc->m with their
 * decoded keys; *end is set past the '}'. */
static rs_code read_members(scan *sc, const char *p, const char **end)
{
  sc->keys.len = 0;
  sc->n_m = 0;
  if (bytes_put(&sc->keys, "", 0)) return rs__fail(sc->err, RS_NOMEM, "%s: out of memory", sc->name);
  p = skip_ws(p + 1);
  while (*p != '}') {
    if (sc->n_m == sc->cap_m) {
      size_t cap = sc->cap_m ? sc->cap_m * 2 : 64;
      member *m = rs__realloc(sc->m, rs__mul(cap, sizeof *m));
      if (!m) return rs__fail(sc->err, RS_NOMEM, "%s: out of memory", sc->name);
      sc->m = m;
      sc->cap_m = cap;
    }
    member *m = &sc->m[sc->n_m];
    m->key_off = sc->keys.len;
    if (!(p = decode_string(p, &sc->keys))) return rs__fail(sc->err, RS_NOMEM, "%s: out of memory", sc->name);
    m->key_len = sc->keys.len - m->key_off;
    p = skip_ws(skip_ws(p) + 1); /* past ':' */
    m->val = p;
    p = skip_value(p);
    m->val_len = (size_t)(p - m->val);
    m->pos = sc->n_m++;
    p = skip_ws(p);
    if (*p == ',') p = skip_ws(p + 1);
  }
  for (size_t i = 0; i < sc->n_m; i++) sc->m[i].key = sc->keys.p + sc->m[i].key_off;
  *end = p + 1;
  return RS_OK;
}

static int key_is(const member *m, const char *k)
{
  return m->key_len == strlen(k) && memcmp(m->key, k, m->key_len) == 0;
}

static int same_text(const member *a, const member *b)
{
  return a->val_len == b->val_len && memcmp(a->val, b->val, a->val_len) == 0;
}

/* A doc graded twice must be graded alike; json-c kept only the last. */
static rs_code check_graded(scan *sc, const char *p, size_t qi)
{
  const char *end, *id = qi < sc->s->n_queries ? sc->s->query_id[qi] : NULL;
  char q[QUOTE_CAP];
  rs_code rc = read_members(sc, p, &end);
  if (rc) return rc;
  for (size_t i = 0; i < sc->n_m; i++)
    if (memchr(sc->m[i].key, '\0', sc->m[i].key_len))
      return qfail(sc->err, RS_FORMAT, sc->name, qi, id,
                   "graded_relevance: doc id %s contains a NUL character; expected ids without \\u0000",
                   quote(q, sc->m[i].key, sc->m[i].key_len));
  if (sc->n_m < 2) return RS_OK;
  qsort(sc->m, sc->n_m, sizeof *sc->m, cmp_member);
  /* Sorted by key, then file order: a run of equal keys starts with the
   * first occurrence, which every later one must repeat exactly. */
  for (size_t i = 0, first = 0; i < sc->n_m; i++) {
    const member *a = &sc->m[first], *c = &sc->m[i];
    if (rs__strncmp2(c->key, c->key_len, a->key, a->key_len)) {
      first = i;
    } else if (!same_text(a, c)) {
      int na = a->val_len > SHOW_MAX ? SHOW_MAX : (int)a->val_len;
      int nc = c->val_len > SHOW_MAX ? SHOW_MAX : (int)c->val_len;
      return qfail(sc->err, RS_DUPLICATE, sc->name, qi, id,
                   "graded_relevance[%s]: the doc is graded twice with different grades (%.*s, then %.*s); "
                   "expected one grade per doc",
                   quote(q, c->key, c->key_len), na, a->val, nc, c->val);
    }
  }
  return RS_OK;
}

static const char *const query_keys[] = {"id", "query", "relevant_doc_ids", "graded_relevance"};
enum { N_QUERY_KEYS = sizeof query_keys / sizeof *query_keys, KEY_GRADED = 3 };

/* A known key may repeat only with the same text; unknown keys are not ours
 * to judge. */
static rs_code check_query(scan *sc, const char *p, size_t qi, const char **end)
{
  const char *id = qi < sc->s->n_queries ? sc->s->query_id[qi] : NULL;
  member seen[N_QUERY_KEYS];
  int have[N_QUERY_KEYS] = {0};
  rs_code rc = read_members(sc, p, end);
  if (rc) return rc;
  for (size_t i = 0; i < sc->n_m; i++)
    for (int k = 0; k < N_QUERY_KEYS; k++) {
      if (!key_is(&sc->m[i], query_keys[k])) continue;
      if (!have[k]) {
        have[k] = 1;
        seen[k] = sc->m[i];
      } else if (!same_text(&seen[k], &sc->m[i])) {
        /* With "id" repeated, the id json-c kept is not the one to blame. */
        return qfail(sc->err, RS_FORMAT, sc->name, qi, k == 0 ? NULL : id,
                     "key \"%s\" appears twice with different values; expected it at most once",
                     query_keys[k]);
      }
    }
  if (have[KEY_GRADED] && *seen[KEY_GRADED].val == '{') return check_graded(sc, seen[KEY_GRADED].val, qi);
  return RS_OK;
}

static rs_code check_repeated_keys(const char *text, const char *name, const rs__evalset *s, rs_error *err)
{
  scan sc = {.name = name, .s = s, .err = err};
  rs_code rc = RS_OK;
  const char *p = skip_ws(text), *end, *qv = NULL;
  if (*p != '{') goto done;
  if ((rc = read_members(&sc, p, &end))) goto done;
  member first = {0};
  for (size_t i = 0; i < sc.n_m; i++) {
    if (!key_is(&sc.m[i], "queries")) continue;
    if (!qv) {
      first = sc.m[i];
      qv = first.val;
    } else if (!same_text(&first, &sc.m[i])) {
      rc = rs__fail(err, RS_FORMAT,
                    "%s: the top-level key \"queries\" appears twice with different values; expected it once",
                    name);
      goto done;
    }
  }
  if (!qv || *qv != '[') goto done;
  p = skip_ws(qv + 1);
  for (size_t qi = 0; *p != ']'; qi++) {
    if (*p == '{') {
      if ((rc = check_query(&sc, p, qi, &p))) goto done;
    } else {
      p = skip_value(p);
    }
    p = skip_ws(p);
    if (*p == ',') p = skip_ws(p + 1);
  }
done:
  free(sc.keys.p);
  free(sc.m);
  return rc;
}

/* ---------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------- */

void rs__evalset_free(rs__evalset *s)
{
  if (!s) return;
  for (size_t i = 0; s->query_id && i < s->n_queries; i++) free(s->query_id[i]);
  for (size_t i = 0; s->query_text && i < s->n_queries; i++) free(s->query_text[i]);
  for (size_t k = 0; s->doc_id && s->off && k < s->off[s->n_queries]; k++) free(s->doc_id[k]);
  free(s->query_id);
  free(s->query_text);
  free(s->off);
  free(s->doc_id);
  free(s->grade);
  free(s);
}

/* Parses the whole text with json-c; rejects anything after the value. */
static rs_code parse_json(const char *name, const char *text, size_t len, json_object **out, rs_error *err)
{
  rs_code rc = RS_OK;
  json_object *root = NULL;
  json_tokener *tok = json_tokener_new();
  if (!tok) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
  /* Strict: no comments, no trailing commas, lowercase literals.  Trailing
   * data is checked below, where the message can say what it is. */
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
  /* The final NUL goes to json-c too, so a number at the very end is
   * complete; json_tokener_parse_ex takes an int, hence the chunks. */
  size_t total = len + 1, base = 0, chunk = 0;
  enum json_tokener_error jerr = json_tokener_continue;
  while (base < total) {
    chunk = total - base < (size_t)INT_MAX ? total - base : (size_t)INT_MAX;
    root = json_tokener_parse_ex(tok, text + base, (int)chunk);
    jerr = json_tokener_get_error(tok);
    if (jerr != json_tokener_continue) break;
    base += chunk;
  }
  size_t pos = jerr == json_tokener_continue ? len : base + json_tokener_get_parse_end(tok);
  if (pos > len) pos = len;
  char found[32];
  size_t line, col;
  if (jerr != json_tokener_success) {
    line_col(text, pos, &line, &col);
    if (pos == len)
      rc = rs__fail(err, RS_FORMAT, "%s:%zu:%zu: not valid JSON: the file ends inside a value; expected %s", name,
                    line, col, len == 0 ? "a JSON object" : "the rest of the value (an unclosed string, array or object?)");
    else
      rc = rs__fail(err, RS_FORMAT, "%s:%zu:%zu: not valid JSON: %s, found %s", name, line, col,
                    json_tokener_error_desc(jerr), describe_byte(found, sizeof found, text, pos, len));
    goto done;
  }
  while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r')) pos++;
  if (pos < len) {
    line_col(text, pos, &line, &col);
    rc = rs__fail(err, RS_FORMAT,
                  "%s:%zu:%zu: unexpected data after the top-level JSON value: found %s; expected the end of the file",
                  name, line, col, describe_byte(found, sizeof found, text, pos, len));
    goto done;
  }
  *out = root;
  root = NULL;
done:
  json_object_put(root);
  json_tokener_free(tok);
  return rc;
}

/* A query id or doc id as a string: json-c strings may hold NUL bytes. */
static int id_ok(json_object *v)
{
  const char *t = json_object_get_string(v);
  size_t n = (size_t)json_object_get_string_len(v);
  return n > 0 && !memchr(t, '\0', n);
}

typedef struct {
  const char *name;
  rs_error *err;
  rs__evalset *s;
  size_t n_docs, cap_docs;
  size_t *qlen;   /* [n_queries]: lengths of query_id */
  size_t *dlen;   /* [cap_docs]: lengths of doc_id */
  idset qset;     /* query ids seen */
  idset dset;     /* docs of the current query */
} build;


/* Adds doc t[0..n) with grade g to the query whose docs start at qstart,
 * unless the query has it already; returns its index in doc_id and sets
 * *added.  SIZE_MAX when out of memory. */
static size_t add_doc(build *b, size_t qstart, const char *t, size_t n, int32_t g, int *added)
{
  rs__evalset *s = b->s;
  if (b->n_docs == b->cap_docs) {
    size_t cap = b->cap_docs * 2;
    char **d = rs__realloc(s->doc_id, rs__mul(cap, sizeof *d));
    if (!d) return SIZE_MAX;
    s->doc_id = d;
    int32_t *gr = rs__realloc(s->grade, rs__mul(cap, sizeof *gr));
    if (!gr) return SIZE_MAX;
    s->grade = gr;
    size_t *l = rs__realloc(b->dlen, rs__mul(cap, sizeof *l));
    if (!l) return SIZE_MAX;
    b->dlen = l;
    b->cap_docs = cap;
  }
  size_t local = b->n_docs - qstart;
  size_t k = idset_get_or_add(&b->dset, s->doc_id + qstart, b->dlen + qstart, t, n, local);
  *added = k == local;
  if (k == SIZE_MAX || !*added) return k == SIZE_MAX ? k : qstart + k;
  if (!(s->doc_id[b->n_docs] = dup_bytes(t, n))) return SIZE_MAX;
  b->dlen[b->n_docs] = n;
  s->grade[b->n_docs] = g;
  return b->n_docs++;
}

static rs_code read_query(build *b, size_t qi, json_object *q)
{
  rs__evalset *s = b->s;
  const char *name = b->name, *t;
  rs_error *err = b->err;
  char d[DESCRIBE_CAP], num[24], kq[QUOTE_CAP];
  json_object *v;
  size_t n;
  int added;

  if (!json_object_is_type(q, json_type_object))
    return qfail(err, RS_FORMAT, name, qi, NULL, "expected a query object, found %s", describe(d, q));

  if (!json_object_object_get_ex(q, "id", &v))
    return qfail(err, RS_FORMAT, name, qi, NULL, "no \"id\"; expected \"id\" with a string or an integer");
  if (json_object_is_type(v, json_type_string)) {
    if (!id_ok(v))
      return qfail(err, RS_FORMAT, name, qi, NULL,
                   "id: expected a non-empty string without NUL characters, found %s", describe(d, v));
    t = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
  } else if (json_object_is_type(v, json_type_int)) {
    /* json-c clamps integers beyond 64 bits to the bounds, so the bounds
     * cannot be trusted to be what the file says. */
    int64_t x = json_object_get_int64(v);
    if (x == INT64_MIN || x == INT64_MAX)
      return qfail(err, RS_FORMAT, name, qi, NULL,
                   "id: expected a string or an integer in (-2^63, 2^63 - 1), found %s; write large ids as strings",
                   describe(d, v));
    n = (size_t)snprintf(num, sizeof num, "%" PRId64, x);
    t = num;
  } else {
    return qfail(err, RS_FORMAT, name, qi, NULL, "id: expected a string or an integer, found %s", describe(d, v));
  }
  if (!(s->query_id[qi] = dup_bytes(t, n))) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
  b->qlen[qi] = n;
  const char *id = s->query_id[qi];
  size_t k = idset_get_or_add(&b->qset, s->query_id, b->qlen, id, n, qi);
  if (k == SIZE_MAX) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
  if (k != qi)
    return qfail(err, RS_DUPLICATE, name, qi, id, "duplicate query id: queries[%zu] has it too; expected unique ids", k);

  if (json_object_object_get_ex(q, "query", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_string))
      return qfail(err, RS_FORMAT, name, qi, id, "query: expected a string, found %s", describe(d, v));
    t = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (memchr(t, '\0', n))
      return qfail(err, RS_FORMAT, name, qi, id, "query: expected text without NUL characters, found \\u0000");
  } else {
    t = "";
    n = 0;
  }
  if (!(s->query_text[qi] = dup_bytes(t, n))) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);

  const size_t qstart = b->n_docs;
  idset_clear(&b->dset);
  if (json_object_object_get_ex(q, "relevant_doc_ids", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_array))
      return qfail(err, RS_FORMAT, name, qi, id, "relevant_doc_ids: expected an array of doc id strings, found %s",
                   describe(d, v));
    size_t m = json_object_array_length(v);
    for (size_t j = 0; j < m; j++) {
      json_object *e = json_object_array_get_idx(v, j);
      if (!json_object_is_type(e, json_type_string) || !id_ok(e))
        return qfail(err, RS_FORMAT, name, qi, id,
                     "relevant_doc_ids[%zu]: expected a non-empty doc id string without NUL characters, found %s", j,
                     describe(d, e));
      /* Listing a doc twice is still one judgment of grade 1. */
      if (add_doc(b, qstart, json_object_get_string(e), (size_t)json_object_get_string_len(e), 1, &added) ==
          SIZE_MAX)
        return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    }
  }
  if (json_object_object_get_ex(q, "graded_relevance", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_object))
      return qfail(err, RS_FORMAT, name, qi, id,
                   "graded_relevance: expected an object mapping doc ids to integer grades, found %s", describe(d, v));
    /* json-c iterates keys in file order (a repeated key keeps its first
     * place), which is the order the header promises. */
    json_object_object_foreach(v, doc, gv)
    {
      size_t dn = strlen(doc);
      if (dn == 0)
        return qfail(err, RS_FORMAT, name, qi, id, "graded_relevance: expected non-empty doc ids, found \"\"");
      if (!json_object_is_type(gv, json_type_int))
        return qfail(err, RS_FORMAT, name, qi, id, "graded_relevance[%s]: expected an integer grade, found %s",
                     quote(kq, doc, dn), describe(d, gv));
      int64_t g = json_object_get_int64(gv);
      if (g < GRADE_MIN || g > INT32_MAX)
        return qfail(err, RS_FORMAT, name, qi, id,
                     "graded_relevance[%s]: expected an integer grade in [%d, %d], found %s", quote(kq, doc, dn),
                     GRADE_MIN, INT32_MAX, describe(d, gv));
      /* The grade given here wins over relevant_doc_ids' implied 1. */
      size_t at = add_doc(b, qstart, doc, dn, (int32_t)g, &added);
      if (at == SIZE_MAX) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
      s->grade[at] = (int32_t)g;
    }
  }
  return RS_OK;
}

static size_t pow2_at_least(size_t n)
{
  size_t p = 64;
  while (p < n) p <<= 1;
  return p;
}

rs_code rs__evalset_read(const char *path, rs__evalset **out, rs_error *err)
{
  rs_code rc = RS_OK;
  const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
  char *buf = NULL, d[DESCRIBE_CAP];
  size_t len = 0;
  json_object *root = NULL, *queries = NULL;
  build b = {.name = name, .err = err};

  if ((rc = rs__read_all(path, &buf, &len, err))) goto done;
  const char *text = buf;
  /* RFC 8259 lets a parser skip a UTF-8 byte order mark; json-c does not. */
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
    text += 3;
    len -= 3;
  }
  if (len == 0) {
    rc = rs__fail(err, RS_FORMAT, "%s: the file is empty; expected a JSON object with a \"queries\" array", name);
    goto done;
  }
  if ((rc = parse_json(name, text, len, &root, err))) goto done;
  if (!json_object_is_type(root, json_type_object)) {
    rc = rs__fail(err, RS_FORMAT, "%s: expected a JSON object with a \"queries\" array at the top level, found %s",
                  name, describe(d, root));
    goto done;
  }
  if (!json_object_object_get_ex(root, "queries", &queries)) {
    rc = rs__fail(err, RS_FORMAT, "%s: no \"queries\" key at the top level; expected {\"queries\": [...]}", name);
    goto done;
  }
  if (!json_object_is_type(queries, json_type_array)) {
    rc = rs__fail(err, RS_FORMAT, "%s: \"queries\": expected an array of query objects, found %s", name,
                  describe(d, queries));
    goto done;
  }
  const size_t n = json_object_array_length(queries);
  if (n >= UINT32_MAX) { /* the id sets store 32-bit indices */
    rc = rs__fail(err, RS_FORMAT, "%s: %zu queries; expected fewer than %" PRIu32, name, n, UINT32_MAX);
    goto done;
  }
  b.cap_docs = 1024;
  if (!(b.s = rs__calloc(1, sizeof *b.s)) || !(b.s->query_id = rs__calloc(n, sizeof *b.s->query_id)) ||
      !(b.s->query_text = rs__calloc(n, sizeof *b.s->query_text)) ||
      !(b.s->off = rs__calloc(n + 1, sizeof *b.s->off)) ||
      !(b.s->doc_id = rs__malloc(b.cap_docs * sizeof *b.s->doc_id)) ||
      !(b.s->grade = rs__malloc(b.cap_docs * sizeof *b.s->grade)) ||
      !(b.dlen = rs__malloc(b.cap_docs * sizeof *b.dlen)) || !(b.qlen = rs__malloc(rs__mul(n, sizeof *b.qlen))) ||
      idset_init(&b.qset, pow2_at_least(2 * n)) || idset_init(&b.dset, 64)) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory for %zu queries", name, n);
    goto done;
  }
  b.s->n_queries = n;
  for (size_t qi = 0; qi < n; qi++) {
    if ((rc = read_query(&b, qi, json_object_array_get_idx(queries, qi)))) goto done;
    b.s->off[qi + 1] = b.n_docs;
  }
  if ((rc = check_repeated_keys(text, name, b.s, err))) goto done;

  *out = b.s;
  b.s = NULL;
done:
  if (b.s && b.s->off) b.s->off[b.s->n_queries] = b.n_docs; /* so that free releases the docs read so far */
  rs__evalset_free(b.s);
  free(b.qlen);
  free(b.dlen);
  idset_free(&b.qset);
  idset_free(&b.dset);
  json_object_put(root);
  free(buf);
  return rc;
}

/* ---------------------------------------------------------------------------
 * JSONL text records (evalset.h)
 * ------------------------------------------------------------------------- */

struct rs__jsonl {
  json_tokener *tok;
  json_object *last; /* the record whose strings the views point into */
  char num[24];      /* an integer id, written in decimal */
  /* rs__jsonl_object: the members of the last object, in file order. */
  const char **key;
  json_object **val;
  size_t n_members, cap_members;
  scan sc; /* the raw scan for repeated keys (its buffers reused line after line) */
};

rs_code rs__jsonl_new(rs__jsonl **out, rs_error *err)
{
  rs__jsonl *p = rs__calloc(1, sizeof *p);
  if (!p || !(p->tok = json_tokener_new())) {
    free(p);
    return rs__fail(err, RS_NOMEM, "out of memory for a JSON parser");
  }
  json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
  *out = p;
  return RS_OK;
}

void rs__jsonl_free(rs__jsonl *p)
{
  if (!p) return;
  free(p->key);
  free(p->val);
  free(p->sc.keys.p);
  free(p->sc.m);
  json_object_put(p->last);
  json_tokener_free(p->tok);
  free(p);
}

/* Parses line[0, len) into p->last, which must be a JSON object with
 * nothing but white space after it. */
static rs_code parse_line(rs__jsonl *p, const char *name, size_t line_no, const char *line, size_t len, rs_error *err)
{
  char d[DESCRIBE_CAP], found[32];
  json_object *root;
  json_object_put(p->last);
  p->last = NULL;
  if (len >= (size_t)INT_MAX)
    return rs__fail(err, RS_UNSUPPORTED, "%s:%zu: a line of %zu bytes is longer than a JSON record may be", name,
                    line_no, len);
  json_tokener_reset(p->tok);
  /* A line is not NUL-terminated where we are given it, so a bare number
   * at its end would wait for more input; records are objects, which end
   * with '}', so the parse completes without the terminator. */
  root = json_tokener_parse_ex(p->tok, line, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(p->tok);
  if (jerr != json_tokener_success) {
    json_object_put(root);
    if (jerr == json_tokener_continue)
      return rs__fail(err, RS_FORMAT, "%s:%zu: not valid JSON: the line ends inside a value; expected one JSON object "
                      "per line", name, line_no);
    size_t pos = json_tokener_get_parse_end(p->tok);
    return rs__fail(err, RS_FORMAT, "%s:%zu:%zu: not valid JSON: %s, found %s", name, line_no, pos + 1,
                    json_tokener_error_desc(jerr), describe_byte(found, sizeof found, line, pos, len));
  }
  size_t pos = json_tokener_get_parse_end(p->tok);
  while (pos < len && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) pos++;
  if (pos < len) {
    json_object_put(root);
    return rs__fail(err, RS_FORMAT, "%s:%zu:%zu: unexpected data after the JSON object: found %s; expected one object "
                    "per line", name, line_no, pos + 1, describe_byte(found, sizeof found, line, pos, len));
  }
  p->last = root;
  if (!json_object_is_type(root, json_type_object))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a JSON object, found %s", name, line_no, describe(d, root));
  return RS_OK;
}

rs_code rs__json_text_record(rs__jsonl *p, const char *name, size_t line_no, const char *line, size_t len,
                             rs__text_record *out, rs_error *err)
{
  char d[DESCRIBE_CAP];
  json_object *root, *v = NULL;
  rs_code rc = parse_line(p, name, line_no, line, len, err);
  if (rc) return rc;
  root = p->last;

  static const char *const id_keys[] = {"_id", "id", "docid"};
  const char *id_key = NULL;
  for (size_t k = 0; k < 3 && !id_key; k++)
    if (json_object_object_get_ex(root, id_keys[k], &v)) id_key = id_keys[k];
  if (!id_key)
    return rs__fail(err, RS_FORMAT, "%s:%zu: no id; expected \"_id\", \"id\" or \"docid\" with a string or an integer",
                    name, line_no);
  if (json_object_is_type(v, json_type_string)) {
    out->id = json_object_get_string(v);
    out->id_len = (size_t)json_object_get_string_len(v);
    if (!id_ok(v))
      return rs__fail(err, RS_FORMAT, "%s:%zu: \"%s\": expected a non-empty id without NUL bytes, found %s", name,
                      line_no, id_key, describe(d, v));
  } else if (json_object_is_type(v, json_type_int)) {
    snprintf(p->num, sizeof p->num, "%" PRId64, json_object_get_int64(v));
    out->id = p->num;
    out->id_len = strlen(p->num);
  } else {
    return rs__fail(err, RS_FORMAT, "%s:%zu: \"%s\": expected a string or an integer, found %s", name, line_no, id_key,
                    describe(d, v));
  }
  const char *text_key = json_object_object_get_ex(root, "text", &v)       ? "text"
                         : json_object_object_get_ex(root, "contents", &v) ? "contents"
                                                                           : NULL;
  if (!text_key)
    return rs__fail(err, RS_FORMAT, "%s:%zu: id %s: no \"text\"; expected \"text\" (or \"contents\") with a string",
                    name, line_no, quote(d, out->id, out->id_len));
  if (!json_object_is_type(v, json_type_string)) {
    char q[QUOTE_CAP];
    return rs__fail(err, RS_FORMAT, "%s:%zu: id %s: \"%s\": expected a string, found %s", name, line_no,
                    quote(q, out->id, out->id_len), text_key, describe(d, v));
  }
  out->text = json_object_get_string(v);
  out->text_len = (size_t)json_object_get_string_len(v);
  out->title = "";
  out->title_len = 0;
  if (json_object_object_get_ex(root, "title", &v) && !json_object_is_type(v, json_type_null)) {
    if (!json_object_is_type(v, json_type_string)) {
      char q[QUOTE_CAP];
      return rs__fail(err, RS_FORMAT, "%s:%zu: id %s: \"title\": expected a string or null, found %s", name, line_no,
                      quote(q, out->id, out->id_len), describe(d, v));
    }
    out->title = json_object_get_string(v);
    out->title_len = (size_t)json_object_get_string_len(v);
  }
  return RS_OK;
}

/* ---------------------------------------------------------------------------
 * JSONL objects of any keys (evalset.h)
 * ------------------------------------------------------------------------- */

_Static_assert((int)RS_JSON_DESCRIBE_CAP >= (int)DESCRIBE_CAP, "rs__json_describe's buffer holds describe()'s text");

/* A view is the json_object itself: the type is opaque to callers. */
static json_object *jv(const rs__json *v) { return (json_object *)(uintptr_t)v; }

rs_code rs__jsonl_object(rs__jsonl *p, const char *name, size_t line_no, const char *line, size_t len,
                         size_t *n_members, rs_error *err)
{
  char q[QUOTE_CAP];
  p->n_members = 0;
  rs_code rc = parse_line(p, name, line_no, line, len, err);
  if (rc) return rc;
  /* json-c keeps the last of two equal keys and cuts a key at \u0000:
   * the raw text says what it hid.  It is valid JSON by now, and the scan
   * stops at the object's closing brace, inside line[0, len). */
  p->sc.name = name;
  p->sc.err = err;
  const char *at = skip_ws(line), *end;
  if ((rc = read_members(&p->sc, at, &end))) return rc;
  for (size_t i = 0; i < p->sc.n_m; i++)
    if (memchr(p->sc.m[i].key, '\0', p->sc.m[i].key_len))
      return rs__fail(err, RS_FORMAT, "%s:%zu: key %s contains a NUL character; expected keys without \\u0000", name,
                      line_no, quote(q, p->sc.m[i].key, p->sc.m[i].key_len));
  if (p->sc.n_m > (size_t)json_object_object_length(p->last)) {
    qsort(p->sc.m, p->sc.n_m, sizeof *p->sc.m, cmp_member);
    for (size_t i = 1; i < p->sc.n_m; i++) {
      const member *a = &p->sc.m[i - 1], *b = &p->sc.m[i];
      if (rs__strncmp2(a->key, a->key_len, b->key, b->key_len) == 0)
        return rs__fail(err, RS_FORMAT, "%s:%zu: key %s appears twice; expected each key once per object", name,
                        line_no, quote(q, b->key, b->key_len));
    }
  }
  const size_t n = (size_t)json_object_object_length(p->last);
  if (n > p->cap_members) {
    const char **k = rs__realloc(p->key, rs__mul(n, sizeof *k));
    if (k) p->key = k;
    json_object **v = rs__realloc(p->val, rs__mul(n, sizeof *v));
    if (v) p->val = v;
    if (!k || !v) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory", name, line_no);
    p->cap_members = n;
  }
  json_object_object_foreach(p->last, key, val)
  {
    p->key[p->n_members] = key;
    p->val[p->n_members++] = val;
  }
  *n_members = p->n_members;
  return RS_OK;
}

const char *rs__jsonl_member(const rs__jsonl *p, size_t i, const rs__json **value)
{
  *value = (const rs__json *)p->val[i];
  return p->key[i];
}

rs__json_kind rs__json_kind_of(const rs__json *v)
{
  switch (json_object_get_type(jv(v))) {
  case json_type_boolean: return RS_JSON_BOOL;
  case json_type_int: return RS_JSON_INT;
  case json_type_double: return RS_JSON_DOUBLE;
  case json_type_string: return RS_JSON_STRING;
  case json_type_array: return RS_JSON_ARRAY;
  case json_type_object: return RS_JSON_OBJECT;
  case json_type_null: break;
  }
  return RS_JSON_NULL;
}

const char *rs__json_str(const rs__json *v, size_t *len)
{
  *len = (size_t)json_object_get_string_len(jv(v));
  return json_object_get_string(jv(v));
}

int rs__json_bool(const rs__json *v) { return json_object_get_boolean(jv(v)) ? 1 : 0; }

double rs__json_num(const rs__json *v) { return json_object_get_double(jv(v)); }

const char *rs__json_num_text(const rs__json *v, size_t *len)
{
  return json_object_to_json_string_length(jv(v), JSON_C_TO_STRING_PLAIN, len);
}

const char *rs__json_int_text(const rs__json *v, char buf[24])
{
  const int64_t i = json_object_get_int64(jv(v));
  if (i == INT64_MIN) return NULL; /* json-c's floor for anything below it */
  if (i < INT64_MAX) {
    snprintf(buf, 24, "%" PRId64, i);
    return buf;
  }
  const uint64_t u = json_object_get_uint64(jv(v)); /* INT64_MAX and above are kept unsigned */
  if (u == UINT64_MAX) return NULL;                  /* json-c's ceiling */
  snprintf(buf, 24, "%" PRIu64, u);
  return buf;
}

size_t rs__json_len(const rs__json *v) { return json_object_array_length(jv(v)); }

const rs__json *rs__json_at(const rs__json *v, size_t i)
{
  return (const rs__json *)json_object_array_get_idx(jv(v), i);
}

const char *rs__json_describe(char buf[RS_JSON_DESCRIBE_CAP], const rs__json *v)
{
  return describe(buf, jv(v));
}
