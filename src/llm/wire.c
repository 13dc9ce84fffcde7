/* wire.c: the OpenAI wire format (the LLM layer's only json-c user). */
#include "llm/wire.h"

#include <json-c/json.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <strings.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/numparse.h"
#include "internal.h"
#include "util/strbuf.h"

/* --- writing ---------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 when it is not
 * one (RFC 3629 table: rejects overlongs, surrogates, > U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t k;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) k = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    k = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    k = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else return 0;
  if (n < k) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < k; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return k;
}

int rs__utf8_valid(const char *s, size_t n, size_t *bad)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (u[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = utf8_seq(u + i, n - i);
    if (!k) {
      if (bad) *bad = i;
      return 0;
    }
    i += k;
  }
  return 1;
}

static void put_str(rs__sb *b, const char *s) { rs__sb_json_str(b, s ? s : "", s ? strlen(s) : 0); }

static char *finish(rs__sb *b, size_t *len)
{
  const size_t n = b->n;
  char *text = rs__sb_take(b); /* NULL when an append ran out of memory */
  if (text && len) *len = n;
  return text;
}

char *rs__chat_request(const rs__chat_params *p, const rs__chat_msg *msgs, size_t n, size_t *len)
{
  if (!isfinite(p->temperature)) return NULL;
  rs__sb b = {0};
  rs__sb_add(&b, "{\"model\":", 9);
  put_str(&b, p->model);
  rs__sb_add(&b, ",\"messages\":[", 13);
  for (size_t i = 0; i < n; i++) {
    rs__sb_add(&b, i ? ",{\"role\":" : "{\"role\":", i ? 9 : 8);
    put_str(&b, msgs[i].role);
    rs__sb_add(&b, ",\"content\":", 11);
    put_str(&b, msgs[i].content);
    rs__sb_add(&b, "}", 1);
  }
  char num[32];
  /* -0.0 would print as "-0"; a temperature has no sign to keep. */
  rs__format_double(p->temperature == 0 ? 0.0 : p->temperature, num);
  rs__sb_add(&b, "],\"temperature\":", 16);
  rs__sb_add(&b, num, strlen(num));
  if (p->max_tokens != 0) {
    snprintf(num, sizeof num, "%d", p->max_tokens);
    rs__sb_add(&b, ",\"max_tokens\":", 14);
    rs__sb_add(&b, num, strlen(num));
  }
  rs__sb_add(&b, "}", 1);
  return finish(&b, len);
}

char *rs__embed_request(const char *model, const char *const *inputs, size_t n, size_t *len)
{
  rs__sb b = {0};
  rs__sb_add(&b, "{\"model\":", 9);
  put_str(&b, model);
  rs__sb_add(&b, ",\"input\":[", 10);
  for (size_t i = 0; i < n; i++) {
    if (i) rs__sb_add(&b, ",", 1);
    put_str(&b, inputs[i]);
  }
  rs__sb_add(&b, "]}", 2);
  return finish(&b, len);
}

/* --- reading ---------------------------------------------------------------- */

static char *dup_n(const char *s, size_t n)
{
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static char *dup_printf(const char *fmt, ...) RS_PRINTF(1, 2);
static char *dup_printf(const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return dup_n(buf, strlen(buf));
}

/* Parses body as one JSON value (trailing whitespace allowed).  Returns the
 * status and, on OK, *root; *why gets a message otherwise. */
static rs__reply_status parse_json(const char *body, size_t len, json_object **root, char **why)
{
  *root = NULL;
  size_t bad = 0;
  if (!body) body = "", len = 0;
  if (!rs__utf8_valid(body, len, &bad)) {
    *why = dup_printf("reply is not valid UTF-8 (byte 0x%02x at offset %zu)", (unsigned char)body[bad], bad);
    return RS_REPLY_NOT_UTF8;
  }
  if (len > (size_t)INT32_MAX) {
    *why = dup_printf("reply of %zu bytes is too long to parse", len);
    return RS_REPLY_NOT_JSON;
  }
  json_tokener *tok = json_tokener_new();
  if (!tok) {
    *why = dup_printf("out of memory");
    return RS_REPLY_BAD_SHAPE;
  }
  json_object *o = json_tokener_parse_ex(tok, body, (int)len);
  enum json_tokener_error e = json_tokener_get_error(tok);
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (o && e == json_tokener_success) {
    while (used < len && (body[used] == ' ' || body[used] == '\t' || body[used] == '\n' || body[used] == '\r'))
      used++;
    if (used == len) {
      *root = o;
      return RS_REPLY_OK;
    }
    json_object_put(o);
    *why = dup_printf("reply is not JSON: unexpected bytes after the value at offset %zu", used);
    return RS_REPLY_NOT_JSON;
  }
  json_object_put(o);
  if (len == 0) *why = dup_printf("reply is empty, expected JSON");
  else if (e == json_tokener_continue) *why = dup_printf("reply is not JSON: it ends inside a value (%zu bytes)", len);
  else *why = dup_printf("reply is not JSON: %s near offset %zu", json_tokener_error_desc(e), used);
  return RS_REPLY_NOT_JSON;
}

static json_object *get(json_object *o, const char *key)
{
  json_object *v = NULL;
  if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v)) return v;
  return NULL;
}

/* The message of an error shape, borrowed from root, or NULL.  *is_error
 * tells whether root is an error shape at all (an error without a message
 * still is one). */
static const char *error_of(json_object *root, int *is_error)
{
  *is_error = 0;
  json_object *e = get(root, "error");
  if (e && !json_object_is_type(e, json_type_null)) {
    *is_error = 1;
    if (json_object_is_type(e, json_type_string)) return json_object_get_string(e);
    json_object *m = get(e, "message");
    if (m && json_object_is_type(m, json_type_string)) return json_object_get_string(m);
    json_object *c = get(e, "code");
    if (c && json_object_is_type(c, json_type_string)) return json_object_get_string(c);
    return NULL;
  }
  json_object *obj = get(root, "object");
  if (obj && json_object_is_type(obj, json_type_string) && strcmp(json_object_get_string(obj), "error") == 0) {
    *is_error = 1;
    json_object *m = get(root, "message");
    if (m && json_object_is_type(m, json_type_string)) return json_object_get_string(m);
  }
  return NULL;
}

char *rs__llm_error_message(const char *body, size_t len)
{
  json_object *root;
  char *why = NULL;
  if (parse_json(body, len, &root, &why) != RS_REPLY_OK) {
    free(why);
    return NULL;
  }
  int is_error;
  const char *m = error_of(root, &is_error);
  char *r = is_error ? (m ? dup_n(m, strlen(m)) : dup_printf("(no message)")) : NULL;
  json_object_put(root);
  return r;
}

static int64_t int_or_minus1(json_object *v)
{
  if (!v || !json_object_is_type(v, json_type_int)) return -1;
  return json_object_get_int64(v);
}

/* A malloc'd copy of a JSON string (embedded NULs end it). */
static char *dup_json_string(json_object *v)
{
  return dup_n(json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static rs__reply_status shape(rs__chat_reply *out, const char *msg)
{
  out->error = dup_n(msg, strlen(msg));
  return out->status = RS_REPLY_BAD_SHAPE;
}

rs__reply_status rs__chat_reply_parse(const char *body, size_t len, rs__chat_reply *out)
{
  memset(out, 0, sizeof *out);
  out->prompt_tokens = out->completion_tokens = -1;
  json_object *root = NULL;
  rs__reply_status st = parse_json(body, len, &root, &out->error);
  if (st != RS_REPLY_OK) return out->status = st;

  int is_error;
  const char *em = error_of(root, &is_error);
  if (is_error) {
    out->error = em ? dup_n(em, strlen(em)) : dup_printf("server error without a message");
    st = out->status = RS_REPLY_ERROR;
    goto done;
  }
  if (!json_object_is_type(root, json_type_object)) {
    st = shape(out, "reply is not a JSON object");
    goto done;
  }
  json_object *choices = get(root, "choices");
  if (!choices || !json_object_is_type(choices, json_type_array)) {
    st = shape(out, choices ? "reply: \"choices\" is not an array" : "reply has no \"choices\"");
    goto done;
  }
  if (json_object_array_length(choices) == 0) {
    st = shape(out, "reply: \"choices\" is empty");
    goto done;
  }
  json_object *c0 = json_object_array_get_idx(choices, 0);
  if (!c0 || !json_object_is_type(c0, json_type_object)) {
    st = shape(out, "reply: choices[0] is not an object");
    goto done;
  }
  json_object *msg = get(c0, "message");
  if (!msg || !json_object_is_type(msg, json_type_object)) {
    st = shape(out, msg ? "reply: choices[0].message is not an object" : "reply: choices[0] has no \"message\"");
    goto done;
  }
  json_object *content = get(msg, "content");
  if (content && !json_object_is_type(content, json_type_string) && !json_object_is_type(content, json_type_null)) {
    st = shape(out, "reply: choices[0].message.content is not a string");
    goto done;
  }
  json_object *fr = get(c0, "finish_reason");
  if (fr && !json_object_is_type(fr, json_type_string) && !json_object_is_type(fr, json_type_null)) {
    st = shape(out, "reply: choices[0].finish_reason is not a string");
    goto done;
  }
  json_object *usage = get(root, "usage");
  out->prompt_tokens = int_or_minus1(get(usage, "prompt_tokens"));
  out->completion_tokens = int_or_minus1(get(usage, "completion_tokens"));
  out->content = content && json_object_is_type(content, json_type_string) ? dup_json_string(content) : dup_n("", 0);
  if (fr && json_object_is_type(fr, json_type_string)) out->finish_reason = dup_json_string(fr);
  if (!out->content || (fr && json_object_is_type(fr, json_type_string) && !out->finish_reason)) {
    st = shape(out, "out of memory");
    goto done;
  }
  /* json-c turns an escaped lone surrogate ("\ud800") into bytes that are
   * not UTF-8; the content is handed on as UTF-8, so check it again. */
  size_t bad;
  if (!rs__utf8_valid(out->content, strlen(out->content), &bad)) {
    out->error = dup_printf("reply content is not valid UTF-8 after unescaping (offset %zu)", bad);
    st = out->status = RS_REPLY_NOT_UTF8;
    goto done;
  }
  if (out->finish_reason && strcmp(out->finish_reason, "length") == 0) {
    out->error = dup_printf("reply truncated: finish_reason is \"length\" (max_tokens reached)");
    st = out->status = RS_REPLY_TRUNCATED;
    goto done;
  }
  st = out->status = RS_REPLY_OK;
done:
  json_object_put(root);
  return st;
}

void rs__chat_reply_free(rs__chat_reply *r)
{
  if (!r) return;
  free(r->content);
  free(r->finish_reason);
  free(r->error);
  r->content = r->finish_reason = r->error = NULL;
}

rs__reply_status rs__embed_reply_parse(const char *body, size_t len, size_t n_expected, double **vectors,
                                       size_t *dim, int64_t *prompt_tokens, char **error)
{
  *vectors = NULL;
  *dim = 0;
  if (prompt_tokens) *prompt_tokens = -1;
  char *why = NULL;
  double *v = NULL;
  unsigned char *seen = NULL;
  json_object *root = NULL;
  rs__reply_status st = parse_json(body, len, &root, &why);
  if (st != RS_REPLY_OK) goto done;
  int is_error;
  const char *em = error_of(root, &is_error);
  if (is_error) {
    why = em ? dup_n(em, strlen(em)) : dup_printf("server error without a message");
    st = RS_REPLY_ERROR;
    goto done;
  }
  st = RS_REPLY_BAD_SHAPE;
  json_object *data = get(root, "data");
  if (!data || !json_object_is_type(data, json_type_array)) {
    why = dup_printf("embeddings reply: \"data\" is %s", data ? "not an array" : "missing");
    goto done;
  }
  size_t n = json_object_array_length(data);
  if (n != n_expected) {
    why = dup_printf("embeddings reply: expected %zu vectors in \"data\", found %zu", n_expected, n);
    goto done;
  }
  size_t d = 0;
  if (!(seen = calloc(n ? n : 1, 1))) goto nomem;
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(data, i);
    json_object *idx = get(item, "index"), *emb = get(item, "embedding");
    int64_t k = idx && json_object_is_type(idx, json_type_int) ? json_object_get_int64(idx) : -1;
    if (k < 0 || (uint64_t)k >= n || seen[k]) {
      why = dup_printf("embeddings reply: data[%zu].index is missing, out of range or repeated", i);
      goto done;
    }
    if (!emb || !json_object_is_type(emb, json_type_array) || json_object_array_length(emb) == 0) {
      why = dup_printf("embeddings reply: data[%zu].embedding is not a non-empty array", i);
      goto done;
    }
    size_t di = json_object_array_length(emb);
    if (!v) {
      d = di;
      if (!(v = malloc(rs__mul(n, rs__mul(d, sizeof *v))))) goto nomem;
    } else if (di != d) {
      why = dup_printf("embeddings reply: data[%zu].embedding has %zu values, data[0] has %zu", i, di, d);
      goto done;
    }
    seen[k] = 1;
    for (size_t j = 0; j < d; j++) {
      json_object *x = json_object_array_get_idx(emb, j);
      if (!x || !(json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int))) {
        why = dup_printf("embeddings reply: data[%zu].embedding[%zu] is not a number", i, j);
        goto done;
      }
      v[(size_t)k * d + j] = json_object_get_double(x);
    }
  }
  if (prompt_tokens) *prompt_tokens = int_or_minus1(get(get(root, "usage"), "prompt_tokens"));
  *vectors = v;
  *dim = d;
  v = NULL;
  st = RS_REPLY_OK;
  goto done;
nomem:
  why = dup_printf("out of memory");
done:
  free(v);
  free(seen);
  json_object_put(root);
  if (error) *error = why;
  else free(why);
  return st;
}

/* --- JSON in a model's reply text ------------------------------------------ */

struct rs__reply_obj {
  json_object *root;
};

/* The end (one past the balancing '}') of the object opening at s[0], or
 * NULL when the text ends first.  Braces inside strings do not count. */
static const char *balanced_end(const char *s)
{
  int depth = 0, in_str = 0;
  for (const char *p = s; *p; p++) {
    if (in_str) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == '"') in_str = 0;
    } else if (*p == '"') {
      in_str = 1;
    } else if (*p == '{') {
      depth++;
    } else if (*p == '}' && --depth == 0) {
      return p + 1;
    }
  }
  return NULL;
}

rs__reply_obj *rs__reply_obj_parse(const char *text)
{
  if (!text) return NULL;
  /* At most 64 starts: each try scans to the end, and a hostile reply of
   * many unbalanced braces must not cost quadratic time. */
  int tries = 0;
  for (const char *p = strchr(text, '{'); p && tries < 64; p = strchr(p + 1, '{'), tries++) {
    const char *end = balanced_end(p);
    if (!end) continue;
    json_tokener *tok = json_tokener_new();
    if (!tok) return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, p, (int)(end - p));
    const int ok = root && json_tokener_get_error(tok) == json_tokener_success &&
                   json_object_is_type(root, json_type_object);
    json_tokener_free(tok);
    if (!ok) {
      json_object_put(root);
      continue;
    }
    rs__reply_obj *o = malloc(sizeof *o);
    if (!o) {
      json_object_put(root);
      return NULL;
    }
    o->root = root;
    return o;
  }
  return NULL;
}

void rs__reply_obj_free(rs__reply_obj *o)
{
  if (!o) return;
  json_object_put(o->root);
  free(o);
}

char *rs__reply_obj_string(const rs__reply_obj *o, const char *key)
{
  json_object *v = o ? get(o->root, key) : NULL;
  if (!v || !json_object_is_type(v, json_type_string)) return NULL;
  return dup_n(json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static int int_of(json_object *v, long *out)
{
  if (!v) return 0;
  if (json_object_is_type(v, json_type_int)) {
    errno = 0;
    const int64_t x = json_object_get_int64(v);
    if (x < LONG_MIN || x > LONG_MAX) return 0;
    *out = (long)x;
    return 1;
  }
  if (json_object_is_type(v, json_type_double)) {
    const double d = json_object_get_double(v);
    if (!(d == floor(d)) || fabs(d) > 1e15) return 0;
    *out = (long)d;
    return 1;
  }
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    char *end;
    while (*s == ' ') s++;
    if (!isdigit((unsigned char)*s) && !(*s == '-' && isdigit((unsigned char)s[1]))) return 0;
    errno = 0;
    const long x = strtol(s, &end, 10);
    while (*end == ' ') end++;
    if (*end || errno) return 0;
    *out = x;
    return 1;
  }
  return 0;
}

int rs__reply_obj_int(const rs__reply_obj *o, const char *key, long *v) { return o && int_of(get(o->root, key), v); }

static int verdict_of(json_object *v, int *out)
{
  long x;
  if (!v) return 0;
  if (json_object_is_type(v, json_type_boolean)) {
    *out = json_object_get_boolean(v) ? 1 : 0;
    return 1;
  }
  if (json_object_is_type(v, json_type_string)) {
    const char *s = json_object_get_string(v);
    if (strcasecmp(s, "yes") == 0 || strcasecmp(s, "true") == 0) return *out = 1, 1;
    if (strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0) return *out = 0, 1;
  }
  if (!int_of(v, &x) || (x != 0 && x != 1)) return 0;
  *out = (int)x;
  return 1;
}

int rs__reply_obj_verdict(const rs__reply_obj *o, const char *key, int *v)
{
  return o && verdict_of(get(o->root, key), v);
}

void rs__str_array_free(char **v, size_t n)
{
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

int rs__reply_obj_strings(const rs__reply_obj *o, const char *key, char ***out, size_t *n)
{
  json_object *a = o ? get(o->root, key) : NULL;
  *out = NULL, *n = 0;
  if (!a || !json_object_is_type(a, json_type_array)) return 0;
  const size_t m = json_object_array_length(a);
  char **v = calloc(m ? m : 1, sizeof *v);
  if (!v) return 0;
  for (size_t i = 0; i < m; i++) {
    json_object *e = json_object_array_get_idx(a, i);
    if (!e || !json_object_is_type(e, json_type_string) ||
        !(v[i] = dup_n(json_object_get_string(e), (size_t)json_object_get_string_len(e)))) {
      rs__str_array_free(v, i);
      return 0;
    }
  }
  *out = v, *n = m;
  return 1;
}

int rs__reply_obj_verdicts(const rs__reply_obj *o, const char *key, const char *field, int **out, size_t *n)
{
  json_object *a = o ? get(o->root, key) : NULL;
  *out = NULL, *n = 0;
  if (!a || !json_object_is_type(a, json_type_array)) return 0;
  const size_t m = json_object_array_length(a);
  int *v = malloc((m ? m : 1) * sizeof *v);
  if (!v) return 0;
  for (size_t i = 0; i < m; i++) {
    json_object *e = json_object_array_get_idx(a, i);
    if (!e || !json_object_is_type(e, json_type_object) || !verdict_of(get(e, field), &v[i])) {
      free(v);
      return 0;
    }
  }
  *out = v, *n = m;
  return 1;
}
