/* rag_samples.c: RAG evaluation samples in ragas's JSONL layout (format in
 * rag_samples.h).
 *
 * Two passes.  The first streams each file line by line (the buffer grows
 * to the longest line, so a line of contexts costs its own size and never
 * a size the file declares), checks each object and keeps its sample with
 * its configuration fields as (column, value) pairs, the values interned.
 * Only when every file is read are the columns known, so the second pass
 * gives each sample its full tuple (an absent column is ""), numbers the
 * configurations in order of first appearance, counts the ordinals and
 * checks that no key repeats within a configuration. */
#define _POSIX_C_SOURCE 200809L
#include "formats/rag_samples.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/evalset.h"
#include "formats/numparse.h"
#include "formats/textio.h"
#include "llm/wire.h" /* rs__utf8_valid */
#include "util/strbuf.h"
#include "util/strdict.h"

/* Longest line read: far beyond any sample (contexts are kilobytes each),
 * short of json-c's INT_MAX, and a file without newlines fails here
 * instead of filling the memory. */
#define LINE_MAX_BYTES ((size_t)1 << 30)

/* Names of rag's output columns: a configuration column of the same name
 * would make a CSV with two columns of one name. */
static const char *const reserved[] = {
    "sample", "metric", "judge", "value", "reason", "mean", "n", "failures", "undefined", "latency_p50_ms",
    "latency_p99_ms", "cost_usd_sum", /* latency.csv, latency_hist.csv: */ "mean_ms", "p50_ms", "p90_ms", "p95_ms",
    "p99_ms", "p999_ms", "max_ms", "le_ms", "count"};
/* Scalar fields ragas writes that describe one sample, not a configuration
 * (its test-set generator's synthesizer, persona and query style): as
 * configuration columns they would make every sample a configuration of its
 * own, so they are ignored. */
static const char *const per_sample_fields[] = {"synthesizer_name", "persona_name", "query_style", "query_length"};

enum { F_USER_INPUT, F_RESPONSE, F_REFERENCE, F_RETRIEVED, F_REFERENCE_CONTEXTS, F_RETRIEVED_IDS, F_REFERENCE_IDS,
       F_ID, F_LATENCY, F_COST, N_KNOWN };
static const char *const known[N_KNOWN] = {"user_input", "response", "reference", "retrieved_contexts",
                                           "reference_contexts", "retrieved_context_ids", "reference_context_ids",
                                           "id", "latency_ms", "cost_usd"};

typedef struct cfg_field {
  uint32_t col, val; /* ids in loader.cols and loader.vals */
} cfg_field;

typedef struct loader {
  rs__rag_set *set;
  size_t cap_s;
  rs__strdict cols, vals; /* column names (first-seen order) and distinct values ("" is value 0) */
  cfg_field *f;           /* the samples' configuration fields: sample i owns [f_off[i], f_off[i + 1]) */
  size_t n_f, cap_f;
  size_t *f_off;          /* [cap_s + 1] */
  uint32_t *file_val;     /* [n_files]: the "file" column's value of each file (when added) */
  rs__jsonl *jp;
  rs__sb msg;             /* scratch for messages */
} loader;

static char *dup_bytes(const char *s, size_t n)
{
  char *d = rs__malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, list[i]) == 0) return 1;
  return 0;
}

static void str_list_free(rs__str_list *l)
{
  for (size_t i = 0; l->v && i < l->n; i++) free(l->v[i]);
  free(l->v);
  *l = (rs__str_list){0};
}

static void sample_free(rs__rag_sample *s)
{
  free(s->id);
  free(s->user_input);
  free(s->response);
  free(s->reference);
  str_list_free(&s->retrieved_contexts);
  str_list_free(&s->reference_contexts);
  str_list_free(&s->retrieved_context_ids);
  str_list_free(&s->reference_context_ids);
}

void rs__rag_set_free(rs__rag_set *s)
{
  if (!s) return;
  for (size_t i = 0; s->s && i < s->n; i++) sample_free(&s->s[i]);
  free(s->s);
  for (size_t i = 0; s->files && i < s->n_files; i++) free(s->files[i]);
  free(s->files);
  for (size_t i = 0; s->columns && i < s->n_columns; i++) free(s->columns[i]);
  free(s->columns);
  for (size_t i = 0; s->config_values && i < s->n_configs * s->n_columns; i++) free(s->config_values[i]);
  free(s->config_values);
  *s = (rs__rag_set){0};
}

const char *rs__rag_sample_key(const rs__rag_sample *s, char buf[24])
{
  if (s->id) return s->id;
  snprintf(buf, 24, "%" PRIu32, s->ordinal);
  return buf;
}

/* --- one field ------------------------------------------------------------------ */

/* Fails with "FILE:LINE: "field": expected WHAT, found ..." (item >= 0:
 * "field[item]"). */
static rs_code wrong_type(const char *path, size_t line, const char *field, long item, const char *what,
                          const rs__json *v, rs_error *err)
{
  char d[RS_JSON_DESCRIBE_CAP], at[32] = "";
  if (item >= 0) snprintf(at, sizeof at, "[%ld]", item);
  return rs__fail(err, RS_FORMAT, "%s:%zu: \"%s\"%s: expected %s, found %s", path, line, field, at, what,
                  rs__json_describe(d, v));
}

/* A string without NUL, copied. */
static rs_code take_text(const char *path, size_t line, const char *field, long item, const rs__json *v, char **out,
                         rs_error *err)
{
  size_t n;
  const char *t = rs__json_str(v, &n);
  if (memchr(t, '\0', n)) {
    char at[32] = "";
    if (item >= 0) snprintf(at, sizeof at, "[%ld]", item);
    return rs__fail(err, RS_FORMAT, "%s:%zu: \"%s\"%s: expected text without NUL characters, found \\u0000", path,
                    line, field, at);
  }
  if (!(*out = dup_bytes(t, n))) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory", path, line);
  return RS_OK;
}

/* An id: a string (non-empty) or an integer, as text. */
static rs_code take_id(const char *path, size_t line, const char *field, long item, const rs__json *v, char **out,
                       rs_error *err)
{
  char num[24];
  const char *t;
  switch (rs__json_kind_of(v)) {
  case RS_JSON_STRING: {
    size_t n;
    rs__json_str(v, &n);
    if (n == 0) return wrong_type(path, line, field, item, "a non-empty string or an integer", v, err);
    return take_text(path, line, field, item, v, out, err);
  }
  case RS_JSON_INT:
    if (!(t = rs__json_int_text(v, num)))
      return wrong_type(path, line, field, item, "an integer within 64 bits (write larger ids as strings)", v, err);
    if (!(*out = dup_bytes(t, strlen(t)))) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory", path, line);
    return RS_OK;
  default: return wrong_type(path, line, field, item, "a string or an integer", v, err);
  }
}

/* A list of texts (ids: strings or integers). */
static rs_code take_list(const char *path, size_t line, const char *field, int ids, const rs__json *v,
                         rs__str_list *out, rs_error *err)
{
  if (rs__json_kind_of(v) != RS_JSON_ARRAY)
    return wrong_type(path, line, field, -1, ids ? "an array of ids (strings or integers)" : "an array of strings", v,
                      err);
  const size_t n = rs__json_len(v);
  out->present = 1;
  if (!(out->v = rs__calloc(n, sizeof *out->v))) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory", path, line);
  for (size_t i = 0; i < n; i++) {
    const rs__json *e = rs__json_at(v, i);
    rs_code rc;
    if (ids) rc = take_id(path, line, field, (long)i, e, &out->v[i], err);
    else if (rs__json_kind_of(e) != RS_JSON_STRING) rc = wrong_type(path, line, field, (long)i, "a string", e, err);
    else rc = take_text(path, line, field, (long)i, e, &out->v[i], err);
    if (rc) return rc;
    out->n = i + 1;
  }
  return RS_OK;
}

static rs_code take_amount(const char *path, size_t line, const char *field, const rs__json *v, double *out,
                           rs_error *err)
{
  const rs__json_kind k = rs__json_kind_of(v);
  const double x = k == RS_JSON_INT || k == RS_JSON_DOUBLE ? rs__json_num(v) : NAN;
  if (!(x >= 0.0) || !isfinite(x)) return wrong_type(path, line, field, -1, "a finite number >= 0", v, err);
  *out = x;
  return RS_OK;
}

/* A configuration value as text: strings as they are, integers in decimal,
 * other numbers the shortest text that reads back the same, booleans
 * true/false. */
static rs_code config_text(const char *path, size_t line, const char *field, const rs__json *v, char buf[32],
                           const char **out, size_t *len, rs_error *err)
{
  switch (rs__json_kind_of(v)) {
  case RS_JSON_STRING:
    *out = rs__json_str(v, len);
    if (memchr(*out, '\0', *len))
      return rs__fail(err, RS_FORMAT, "%s:%zu: \"%s\": expected text without NUL characters, found \\u0000", path,
                      line, field);
    return RS_OK;
  case RS_JSON_INT:
    if (!(*out = rs__json_int_text(v, buf)))
      return wrong_type(path, line, field, -1, "an integer within 64 bits (write larger values as strings)", v, err);
    break;
  case RS_JSON_DOUBLE: {
    double x = rs__json_num(v);
    if (!isfinite(x)) return wrong_type(path, line, field, -1, "a finite number", v, err);
    rs__format_double(x == 0.0 ? 0.0 : x, buf); /* -0 is 0 */
    *out = buf;
    break;
  }
  case RS_JSON_BOOL: *out = rs__json_bool(v) ? "true" : "false"; break;
  default: *out = ""; break; /* not called for the others */
  }
  *len = strlen(*out);
  return RS_OK;
}

/* --- one line ------------------------------------------------------------------- */

static rs_code add_field(loader *L, const char *path, size_t line, const char *key, const char *val, rs_error *err)
{
  uint32_t col, id;
  rs_code rc;
  if ((rc = rs__strdict_add(&L->cols, key, &col, err)) || (rc = rs__strdict_add(&L->vals, val, &id, err)))
    return rs__fail(err, rc, "%s:%zu: out of memory", path, line);
  if (L->n_f == L->cap_f) {
    size_t cap = L->cap_f ? 2 * L->cap_f : 1024;
    cfg_field *f = rs__realloc(L->f, rs__mul(cap, sizeof *f));
    if (!f) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory", path, line);
    L->f = f, L->cap_f = cap;
  }
  L->f[L->n_f++] = (cfg_field){col, id};
  return RS_OK;
}

static rs_code grow_samples(loader *L, const char *path, size_t line, rs_error *err)
{
  rs__rag_set *set = L->set;
  if (set->n < L->cap_s) return RS_OK;
  if (set->n >= UINT32_MAX - 1)
    return rs__fail(err, RS_UNSUPPORTED, "%s:%zu: more than 2^32 - 2 samples", path, line);
  size_t cap = L->cap_s ? 2 * L->cap_s : 256;
  rs__rag_sample *s = rs__realloc(set->s, rs__mul(cap, sizeof *s));
  if (s) set->s = s;
  size_t *off = rs__realloc(L->f_off, rs__mul(cap + 1, sizeof *off));
  if (off) L->f_off = off;
  if (!s || !off) return rs__fail(err, RS_NOMEM, "%s:%zu: out of memory for %zu samples", path, line, cap);
  L->cap_s = cap;
  return RS_OK;
}

static rs_code parse_sample(loader *L, uint32_t file, size_t line, const char *text, size_t len, rs_error *err)
{
  rs__rag_set *set = L->set;
  const char *path = set->files[file];
  size_t bad = 0, n_members = 0;
  rs_code rc;
  if (!rs__utf8_valid(text, len, &bad))
    return rs__fail(err, RS_FORMAT, "%s:%zu:%zu: expected UTF-8 text, found byte 0x%02x", path, line, bad + 1,
                    (unsigned char)text[bad]);
  if ((rc = rs__jsonl_object(L->jp, path, line, text, len, &n_members, err))) return rc;
  if ((rc = grow_samples(L, path, line, err))) return rc;
  rs__rag_sample *s = &set->s[set->n];
  *s = (rs__rag_sample){.file = file, .line = line, .latency_ms = NAN, .cost_usd = NAN};
  set->n++; /* counted now, so that a failure below frees what it holds */
  L->f_off[set->n - 1] = L->n_f;
  if (set->n_files > 1 && (rc = add_field(L, path, line, "file", L->vals.str[L->file_val[file]], err))) return rc;
  for (size_t i = 0; i < n_members; i++) {
    const rs__json *v;
    const char *key = rs__jsonl_member(L->jp, i, &v);
    const rs__json_kind kind = rs__json_kind_of(v);
    if (kind == RS_JSON_NULL) continue; /* null is absent */
    int k = 0;
    while (k < N_KNOWN && strcmp(key, known[k]) != 0) k++;
    switch (k) {
    case F_USER_INPUT:
    case F_RESPONSE:
    case F_REFERENCE: {
      char **dst = k == F_USER_INPUT ? &s->user_input : k == F_RESPONSE ? &s->response : &s->reference;
      rc = kind == RS_JSON_STRING ? take_text(path, line, key, -1, v, dst, err)
                                  : wrong_type(path, line, key, -1, "a string", v, err);
      break;
    }
    case F_RETRIEVED: rc = take_list(path, line, key, 0, v, &s->retrieved_contexts, err); break;
    case F_REFERENCE_CONTEXTS: rc = take_list(path, line, key, 0, v, &s->reference_contexts, err); break;
    case F_RETRIEVED_IDS: rc = take_list(path, line, key, 1, v, &s->retrieved_context_ids, err); break;
    case F_REFERENCE_IDS: rc = take_list(path, line, key, 1, v, &s->reference_context_ids, err); break;
    case F_ID: rc = take_id(path, line, key, -1, v, &s->id, err); break;
    case F_LATENCY:
      rc = take_amount(path, line, key, v, &s->latency_ms, err);
      set->has_latency = 1;
      break;
    case F_COST:
      rc = take_amount(path, line, key, v, &s->cost_usd, err);
      set->has_cost = 1;
      break;
    default: {
      if (kind == RS_JSON_ARRAY || kind == RS_JSON_OBJECT) break; /* not a configuration value */
      if (in_list(key, per_sample_fields, sizeof per_sample_fields / sizeof *per_sample_fields)) break;
      if (in_list(key, reserved, sizeof reserved / sizeof *reserved))
        return rs__fail(err, RS_FORMAT,
                        "%s:%zu: a configuration field named \"%s\", which is the name of a column of rag's outputs; "
                        "expected another name (rename the field)", path, line, key);
      if (set->n_files > 1 && strcmp(key, "file") == 0)
        return rs__fail(err, RS_FORMAT,
                        "%s:%zu: a configuration field named \"file\", the column that names the file when several "
                        "are given; expected another name (rename the field), or one file", path, line);
      char buf[32];
      const char *t = "";
      size_t tn = 0;
      if ((rc = config_text(path, line, key, v, buf, &t, &tn, err))) return rc;
      rc = add_field(L, path, line, key, t, err);
      break;
    }
    }
    if (rc) return rc;
  }
  return RS_OK;
}

/* --- one file ---------------------------------------------------------------------- */

typedef struct file_lines {
  loader *L;
  uint32_t file;
} file_lines;

static rs_code sample_line(void *ctx, size_t line, const char *s, size_t n, rs_error *err)
{
  file_lines *f = ctx;
  return parse_sample(f->L, f->file, line, s, n, err);
}

static rs_code read_file(loader *L, uint32_t file, rs_error *err)
{
  const char *path = L->set->files[file];
  const size_t n_before = L->set->n;
  file_lines f = {L, file};
  rs_code rc = rs__input_lines(path, LINE_MAX_BYTES, "expected one JSON object per line", sample_line, &f, err);
  if (!rc && L->set->n == n_before)
    rc = rs__fail(err, RS_FORMAT, "%s: no samples; expected one JSON object per line (ragas's JSONL)", path);
  return rc;
}

/* The "file" column's value: the name without folder and without .gz,
 * then without .jsonl or .json. */
static char *file_label(const char *path)
{
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t n = strlen(b);
  if (n > 3 && strcmp(b + n - 3, ".gz") == 0) n -= 3;
  if (n > 6 && memcmp(b + n - 6, ".jsonl", 6) == 0) n -= 6;
  else if (n > 5 && memcmp(b + n - 5, ".json", 5) == 0) n -= 5;
  return dup_bytes(b, n);
}

/* --- the second pass: configurations, ordinals, keys ---------------------------------- */

/* "(model=a, chunk=256)", at most about 100 bytes, for messages. */
static const char *describe_config(loader *L, const uint32_t *tuple)
{
  rs__sb_free(&L->msg);
  rs__sb_add(&L->msg, "(", 1);
  for (size_t c = 0; c < L->cols.n && L->msg.n < 100; c++)
    rs__sb_printf(&L->msg, "%s%s=%s", c ? ", " : "", L->cols.str[c], L->vals.str[tuple[c]]);
  rs__sb_add(&L->msg, L->msg.n < 100 ? ")" : "...)", L->msg.n < 100 ? 1 : 4);
  return L->msg.failed ? "" : rs__sb_view(&L->msg);
}

static uint64_t hash_tuple(const uint32_t *t, size_t n) { return rs__hash_bytes((const char *)t, n * sizeof *t); }

static rs_code assign_configs(loader *L, rs_error *err)
{
  rs__rag_set *set = L->set;
  const size_t n_cols = L->cols.n, n = set->n;
  rs_code rc = RS_OK;
  uint32_t *tuples = NULL, *slot = NULL, *count = NULL, *first = NULL;
  rs__strdict keys = {0};
  size_t n_configs = 0, cap_configs = 0, n_slots = 1024;
  /* tuples[k * n_cols + c]: configuration k's value ids; slot: open
   * addressing over them, 1 + k, 0 empty. */
  if (!(slot = rs__calloc(n_slots, sizeof *slot))) goto nomem;
  uint32_t *cur = rs__calloc(n_cols ? n_cols : 1, sizeof *cur);
  if (!cur) goto nomem;
  for (size_t i = 0; i < n; i++) {
    memset(cur, 0, n_cols * sizeof *cur); /* value 0 is "" */
    for (size_t j = L->f_off[i]; j < L->f_off[i + 1]; j++) cur[L->f[j].col] = L->f[j].val;
    const uint64_t h = hash_tuple(cur, n_cols);
    size_t at = (size_t)h & (n_slots - 1);
    while (slot[at] && memcmp(tuples + (size_t)(slot[at] - 1) * n_cols, cur, n_cols * sizeof *cur) != 0)
      at = (at + 1) & (n_slots - 1);
    if (!slot[at]) { /* a new configuration */
      if (n_configs == cap_configs) {
        size_t cap = cap_configs ? 2 * cap_configs : 16;
        uint32_t *t = rs__realloc(tuples, rs__mul(cap, rs__mul(n_cols ? n_cols : 1, sizeof *t)));
        if (t) tuples = t;
        uint32_t *c = rs__realloc(count, rs__mul(cap, sizeof *c));
        if (c) count = c;
        if (!t || !c) {
          free(cur);
          goto nomem;
        }
        cap_configs = cap;
      }
      if (n_cols) memcpy(tuples + n_configs * n_cols, cur, n_cols * sizeof *cur);
      count[n_configs] = 0;
      slot[at] = (uint32_t)++n_configs;
      if (2 * n_configs > n_slots) { /* rehash at half full */
        size_t ns = 2 * n_slots;
        uint32_t *s2 = rs__calloc(ns, sizeof *s2);
        if (!s2) {
          free(cur);
          goto nomem;
        }
        for (size_t k = 0; k < n_configs; k++) {
          size_t a = (size_t)hash_tuple(tuples + k * n_cols, n_cols) & (ns - 1);
          while (s2[a]) a = (a + 1) & (ns - 1);
          s2[a] = (uint32_t)(k + 1);
        }
        free(slot);
        slot = s2, n_slots = ns;
      }
      set->s[i].config = (uint32_t)(n_configs - 1);
    } else {
      set->s[i].config = slot[at] - 1;
    }
    set->s[i].ordinal = ++count[set->s[i].config];
  }
  free(cur);
  /* Keys: "CONFIG<US>KEY" once each; first[id] is the sample that has it. */
  for (size_t i = 0; i < n; i++) {
    const rs__rag_sample *s = &set->s[i];
    char num[24], ckey[40];
    const char *key = rs__rag_sample_key(s, num);
    rs__sb_free(&L->msg);
    snprintf(ckey, sizeof ckey, "%" PRIu32 "\x1f", s->config);
    rs__sb_str(&L->msg, ckey);
    rs__sb_str(&L->msg, key);
    if (L->msg.failed) goto nomem;
    const size_t before = keys.n;
    uint32_t id;
    if ((rc = rs__strdict_add(&keys, rs__sb_view(&L->msg), &id, err))) goto done;
    if (keys.n > before) {
      uint32_t *f = rs__realloc(first, rs__mul(keys.n, sizeof *f));
      if (!f) goto nomem;
      first = f;
      first[id] = (uint32_t)i;
      continue;
    }
    const rs__rag_sample *o = &set->s[first[id]];
    char q[64];
    snprintf(q, sizeof q, "%.40s%s", key, strlen(key) > 40 ? "..." : "");
    rc = rs__fail(err, RS_DUPLICATE,
                  "%s:%zu: sample \"%s\" (%s) repeats line %zu in configuration %" PRIu32 " %s; expected each id once "
                  "per configuration (a sample without an id is its position)",
                  set->files[s->file], s->line, q, s->id ? "its id" : "its position, as it has no id", o->line,
                  s->config + 1, describe_config(L, tuples + (size_t)s->config * n_cols));
    goto done;
  }
  /* The columns and the configurations' values, as text. */
  if (!(set->columns = rs__calloc(n_cols, sizeof *set->columns)) ||
      !(set->config_values = rs__calloc(rs__mul(n_configs, n_cols), sizeof *set->config_values)))
    goto nomem;
  set->n_configs = n_configs;
  set->n_columns = n_cols;
  for (size_t c = 0; c < n_cols; c++)
    if (!(set->columns[c] = strdup(L->cols.str[c]))) goto nomem;
  for (size_t k = 0; k < n_configs * n_cols; k++)
    if (!(set->config_values[k] = strdup(L->vals.str[tuples[k]]))) goto nomem;
  goto done;
nomem:
  rc = rs__fail(err, RS_NOMEM, "out of memory numbering %zu samples' configurations", n);
done:
  free(tuples);
  free(slot);
  free(count);
  free(first);
  rs__strdict_free(&keys);
  return rc;
}

/* --- loading ---------------------------------------------------------------------------- */

rs_code rs__rag_set_load(const char *const *paths, size_t n_paths, rs__rag_set *out, rs_error *err)
{
  rs__rag_set set = {0};
  loader L = {.set = &set};
  rs_code rc = RS_OK;
  uint32_t empty;
  *out = (rs__rag_set){0};
  if (n_paths == 0) return rs__fail(err, RS_USAGE, "no sample files; expected at least one JSONL file");
  if (n_paths >= UINT32_MAX) return rs__fail(err, RS_UNSUPPORTED, "%zu files; expected fewer than 2^32", n_paths);
  if (!(set.files = rs__calloc(n_paths, sizeof *set.files)) || !(L.file_val = rs__calloc(n_paths, sizeof *L.file_val)))
    goto nomem;
  set.n_files = n_paths;
  for (size_t i = 0; i < n_paths; i++)
    if (!(set.files[i] = strdup(paths[i]))) goto nomem;
  if ((rc = rs__jsonl_new(&L.jp, err))) goto done;
  if ((rc = rs__strdict_add(&L.vals, "", &empty, err))) goto done; /* value 0 */
  if (n_paths > 1) { /* the "file" column first, a distinct value per file */
    uint32_t col;
    if ((rc = rs__strdict_add(&L.cols, "file", &col, err))) goto done;
    for (size_t i = 0; i < n_paths; i++) {
      char *label = file_label(paths[i]);
      if (!label) goto nomem;
      const size_t before = L.vals.n;
      rc = rs__strdict_add(&L.vals, label, &L.file_val[i], err);
      free(label);
      if (rc) goto done;
      if (L.vals.n == before) {
        size_t j = 0;
        while (L.file_val[j] != L.file_val[i]) j++;
        rc = rs__fail(err, RS_USAGE, "%s and %s: both name the configuration \"%s\" (column file); expected files of "
                      "different names", paths[j], paths[i], L.vals.str[L.file_val[i]]);
        goto done;
      }
    }
  }
  for (size_t i = 0; i < n_paths; i++)
    if ((rc = read_file(&L, (uint32_t)i, err))) goto done;
  L.f_off[set.n] = L.n_f;
  if ((rc = assign_configs(&L, err))) goto done;
  *out = set;
  set = (rs__rag_set){0};
  goto done;
nomem:
  rc = rs__fail(err, RS_NOMEM, "out of memory");
done:
  rs__rag_set_free(&set);
  rs__strdict_free(&L.cols);
  rs__strdict_free(&L.vals);
  rs__jsonl_free(L.jp);
  rs__sb_free(&L.msg);
  free(L.f);
  free(L.f_off);
  free(L.file_val);
  return rc;
}
