/* shard_io.c: shard folders, written by `eval --shard` and read by `merge` (see shard_io.h). */
#define _GNU_SOURCE
#include "shard_io.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "llm/cache.h"
#include "llm/calls.h"
#include "sweep_io.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/tmpfiles.h"

#define FORMAT_LINE "ragsweep-shard 1"
#define THIS_SHARD "this-shard\n"

/* --- the manifest's text ------------------------------------------------------------ */

/* A word as one token: bytes <= ' ', '%' and DEL as %XX. */
static void put_escaped(rs__sb *b, const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p <= ' ' || *p == '%' || *p == 0x7f) rs__sb_printf(b, "%%%02X", *p);
    else rs__sb_add(b, (const char *)p, 1);
  }
}

static int hexval(int c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undoes put_escaped in place; 0 on a bad escape. */
static int unescape(char *s)
{
  char *w = s;
  for (const char *p = s; *p; p++) {
    if (*p != '%') {
      *w++ = *p;
      continue;
    }
    const int a = hexval(p[1]), b = a < 0 ? -1 : hexval(p[2]);
    if (b < 0) return 0;
    *w++ = (char)(a * 16 + b);
    p += 2;
  }
  *w = 0;
  return 1;
}

static int little_endian(void)
{
  const uint16_t x = 1;
  unsigned char c;
  memcpy(&c, &x, 1);
  return c == 1;
}

/* size and modification time of an input: what make and rsync compare. */
static void put_input(rs__sb *b, const char *word)
{
  struct stat st;
  const char *path = word;
  if (stat(path, &st) != 0 && strchr(word, '=') && stat(strchr(word, '=') + 1, &st) == 0) path = strchr(word, '=') + 1;
  rs__sb_str(b, "input ");
  put_escaped(b, word);
  if (stat(path, &st) != 0) rs__sb_str(b, " missing\n");
  else
    rs__sb_printf(b, " %s %" PRIu64 " mtime %lld.%09ld\n", S_ISDIR(st.st_mode) ? "folder" : "size",
                      S_ISDIR(st.st_mode) ? (uint64_t)0 : (uint64_t)st.st_size, (long long)st.st_mtim.tv_sec,
                      (long)st.st_mtim.tv_nsec);
}

/* The lines every kind of shard manifest starts with: format, version,
 * byte order, command, working folder, the stored words, the inputs. */
static rs_code manifest_head(rs__sb *b, const char *cmd, char *const *words, size_t n_words, char *const *inputs,
                             size_t n_inputs, rs_error *err)
{
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return rs__fail(err, RS_IO, "cannot read the working folder: %s", strerror(errno));
  rs__sb_printf(b, FORMAT_LINE "\nversion %s\nbyte-order %s\ncommand %s\ncwd ", RAGSWEEP_VERSION,
                little_endian() ? "little-endian" : "big-endian", cmd);
  put_escaped(b, cwd);
  rs__sb_str(b, "\n");
  for (size_t i = 0; i < n_words; i++) {
    rs__sb_str(b, "arg ");
    put_escaped(b, words[i]);
    rs__sb_str(b, "\n");
  }
  for (size_t i = 0; i < n_inputs; i++) put_input(b, inputs[i]);
  return RS_OK;
}

static rs_code take_text(rs__sb *b, char **out, rs_error *err)
{
  if (b->failed) {
    rs__sb_free(b);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  *out = rs__sb_take(b);
  return RS_OK;
}

rs_code shard_manifest_common(const char *cmd, char *const *words, size_t n_words, char *const *inputs,
                              size_t n_inputs, const rs__spec *spec, size_t n_results, size_t n_queries,
                              const rs__shard_plan *plan, size_t n, char **out, rs_error *err)
{
  rs__sb b = {0};
  rs_code rc = manifest_head(&b, cmd, words, n_words, inputs, n_inputs, err);
  if (rc) return rc;
  /* The measure set as the engine sees it: names, in order, of every
   * value a record holds (visible, gate-only, hidden and curve values). */
  rs__sha256_ctx h;
  rs__sha256_init(&h);
  for (size_t k = 0; k < spec->n_req; k++) rs__sha256_update(&h, spec->req[k].name, strlen(spec->req[k].name) + 1);
  uint8_t d[32];
  char hex[65];
  rs__sha256_final(&h, d);
  rs__hex(d, 32, hex);
  rs__sb_printf(&b, "results %zu\nqueries %zu\nvalues %zu\nmeasures-sha256 %s\nunit-rows %zu\nunits %zu\nshards %zu\n",
                    n_results, n_queries, spec->n_req, hex, plan->unit_rows, plan->n_units, n);
  return take_text(&b, out, err);
}

rs_code shard_manifest_llm(const char *cmd, char *const *words, size_t n_words, char *const *inputs, size_t n_inputs,
                           const char *lines, size_t n, char **out, rs_error *err)
{
  rs__sb b = {0};
  rs_code rc = manifest_head(&b, cmd, words, n_words, inputs, n_inputs, err);
  if (rc) return rc;
  rs__sb_str(&b, lines);
  rs__sb_printf(&b, "shards %zu\n", n);
  return take_text(&b, out, err);
}

/* --- writing ---------------------------------------------------------------------- */

struct shard_writer {
  char *dir;
  char vals_tmp[4096], lat_tmp[4096];
  int vals_h, lat_h; /* rs__tmp_register handles */
  FILE *vals, *lat;
  size_t n_vals, n_records, n_latency;
  int blocks;         /* values.bin holds block records (shard.h), not query records */
  uint64_t vals_bytes, lat_bytes;
  unsigned char *rec; /* one record */
};

/* DIR/.NAME.tmp.PID, registered for removal on a fatal signal (util/tmpfiles.h). */
static FILE *open_tmp(const char *dir, const char *name, char *path, size_t cap, int *handle, rs_error *err)
{
  snprintf(path, cap, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
  *handle = rs__tmp_register(path);
  FILE *f = fopen(path, "wb");
  if (!f) {
    rs__fail(err, RS_IO, "%s: cannot create a file in the shard folder: %s", path, strerror(errno));
    rs__tmp_forget(*handle);
    *handle = -1;
    *path = 0;
  }
  return f;
}

rs_code shard_writer_open(const char *dir, size_t n_vals, int blocks, shard_writer **out, rs_error *err)
{
  *out = NULL;
  if (mkdir_p(dir) != 0)
    return rs__fail(err, RS_IO, "-o %s: cannot create the shard folder: %s", dir, strerror(errno));
  char path[4096];
  snprintf(path, sizeof path, "%s/" SHARD_MANIFEST, dir);
  if (unlink(path) != 0 && errno != ENOENT) /* no manifest: the folder is not a finished shard until commit */
    return rs__fail(err, RS_IO, "%s: cannot remove the older manifest: %s", path, strerror(errno));
  rs__tmp_sweep_stale(dir);
  shard_writer *w = rs__calloc(1, sizeof *w);
  if (w) w->vals_h = w->lat_h = -1;
  const size_t rec_size = blocks ? rs__shard_block_size(n_vals) : rs__shard_record_size(n_vals);
  if (!w || !(w->dir = strdup(dir)) || !(w->rec = rs__malloc(rec_size))) {
    shard_writer_abort(w);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  w->n_vals = n_vals;
  w->blocks = blocks;
  if (!(w->vals = open_tmp(dir, SHARD_VALUES, w->vals_tmp, sizeof w->vals_tmp, &w->vals_h, err)) ||
      !(w->lat = open_tmp(dir, SHARD_LATENCY, w->lat_tmp, sizeof w->lat_tmp, &w->lat_h, err))) {
    shard_writer_abort(w);
    return RS_IO;
  }
  *out = w;
  return RS_OK;
}

/* Appends the record of size bytes at w->rec to values.bin. */
static rs_code append_record(shard_writer *w, size_t size, rs_error *err)
{
  if (fwrite(w->rec, 1, size, w->vals) != size)
    return rs__fail(err, RS_IO, "%s: cannot write: %s", w->vals_tmp, strerror(errno));
  w->n_records++;
  w->vals_bytes += size;
  return RS_OK;
}

rs_code shard_writer_record(void *ctx, size_t result, size_t query, const double *v, rs_error *err)
{
  shard_writer *w = ctx;
  rs__shard_record_put(w->rec, result, query, v, w->n_vals);
  return append_record(w, rs__shard_record_size(w->n_vals), err);
}

rs_code shard_writer_latency(shard_writer *w, size_t result, const rs__latency *lat, const double *cdf,
                             rs_error *err)
{
  unsigned char buf[2048];
  const size_t size = rs__shard_latency_size(cdf != NULL);
  rs__shard_latency_put(buf, result, lat, cdf);
  if (fwrite(buf, 1, size, w->lat) != size)
    return rs__fail(err, RS_IO, "%s: cannot write: %s", w->lat_tmp, strerror(errno));
  w->n_latency++;
  w->lat_bytes += size;
  return RS_OK;
}

rs_code shard_writer_block(void *ctx, size_t result, const rs__block_sum *b, rs_error *err)
{
  shard_writer *w = ctx;
  rs__shard_block_put(w->rec, result, b, w->n_vals);
  return append_record(w, rs__shard_block_size(w->n_vals), err);
}

size_t shard_writer_n_records(const shard_writer *w) { return w->n_records; }

static rs_code close_into(FILE **f, char *tmp, int *handle, const char *dir, const char *name, rs_error *err)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  const int bad = fflush(*f) != 0 || ferror(*f);
  const int closed = fclose(*f) == 0;
  *f = NULL;
  if (bad || !closed) return rs__fail(err, RS_IO, "%s: cannot write: %s", tmp, strerror(errno));
  if (rename(tmp, path) != 0) return rs__fail(err, RS_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
  *tmp = 0;
  rs__tmp_forget(*handle);
  *handle = -1;
  return RS_OK;
}

rs_code shard_writer_commit(shard_writer *w, const char *common, size_t i, rs_error *err)
{
  rs_code rc = close_into(&w->vals, w->vals_tmp, &w->vals_h, w->dir, SHARD_VALUES, err);
  if (!rc) rc = close_into(&w->lat, w->lat_tmp, &w->lat_h, w->dir, SHARD_LATENCY, err);
  char tmp[4096] = "";
  int h = -1;
  FILE *f = rc ? NULL : open_tmp(w->dir, SHARD_MANIFEST, tmp, sizeof tmp, &h, err);
  if (!rc && !f) rc = RS_IO;
  if (!rc) {
    fprintf(f, "%s" THIS_SHARD "shard %zu\nrecords %zu\nrecord-kind %s\nvalues-bytes %" PRIu64 "\nlatency-records %zu\n"
            "latency-bytes %" PRIu64 "\n", common, i, w->n_records, w->blocks ? "blocks" : "queries", w->vals_bytes,
            w->n_latency, w->lat_bytes);
    rc = close_into(&f, tmp, &h, w->dir, SHARD_MANIFEST, err);
  }
  if (f) fclose(f);
  if (*tmp) unlink(tmp);
  rs__tmp_forget(h);
  shard_writer_abort(w);
  return rc;
}

void shard_writer_abort(shard_writer *w)
{
  if (!w) return;
  if (w->vals) fclose(w->vals);
  if (w->lat) fclose(w->lat);
  if (*w->vals_tmp) unlink(w->vals_tmp);
  if (*w->lat_tmp) unlink(w->lat_tmp);
  rs__tmp_forget(w->vals_h);
  rs__tmp_forget(w->lat_h);
  free(w->dir);
  free(w->rec);
  free(w);
}

rs_code shard_llm_begin(const char *dir, rs_error *err)
{
  if (mkdir_p(dir) != 0) return rs__fail(err, RS_IO, "-o %s: cannot create the shard folder: %s", dir, strerror(errno));
  char path[4096];
  snprintf(path, sizeof path, "%s/" SHARD_MANIFEST, dir);
  if (unlink(path) != 0 && errno != ENOENT) /* no manifest: the folder is not a finished shard until commit */
    return rs__fail(err, RS_IO, "%s: cannot remove the older manifest: %s", path, strerror(errno));
  rs__tmp_sweep_stale(dir);
  return RS_OK;
}

rs_code shard_llm_commit(const char *dir, const char *common, size_t i, const char *own, rs_error *err)
{
  char tmp[4096] = "";
  int h = -1;
  FILE *f = open_tmp(dir, SHARD_MANIFEST, tmp, sizeof tmp, &h, err);
  if (!f) return RS_IO;
  fprintf(f, "%s" THIS_SHARD "shard %zu\n%s", common, i, own);
  rs_code rc = close_into(&f, tmp, &h, dir, SHARD_MANIFEST, err);
  if (f) fclose(f);
  if (*tmp) unlink(tmp);
  rs__tmp_forget(h);
  return rc;
}

/* --- reading -------------------------------------------------------------------- */

/* The merge's first check, before any cache is touched: every shard
 * finished its share (a shard stopped at its budget or on an error that
 * cannot heal says so in its manifest). */
int shard_llm_complete(const shard_set *m, const char *what)
{
  for (size_t i = 0; i < m->n; i++) {
    size_t len = 0, not_sent = 0;
    const char *stop = shard_own_value(m, i, "stopped", &len);
    if (stop && len == 4 && strncmp(stop, "none", 4) == 0) continue;
    shard_own_size(m, i, "not-sent", &not_sent);
    fprintf(stderr, "ragsweep merge: shard %zu of %zu (%s) stopped before its share was done (%.*s): %zu %s not "
                    "asked; run it again (the same command, --shard %zu/%zu: it resumes from its cache, with a "
                    "larger --max-cost if the budget stopped it), then merge\n",
            i, m->n, m->dir[i], stop ? (int)len : 7, stop ? stop : "unknown", not_sent, what, i, m->n);
    return 0;
  }
  return 1;
}

/* Merge: the shards' caches into the job's cache, their sent requests into
 * *replay. */
rs_code shard_llm_merge_caches(const shard_set *m, const char *cache_path, rs__llm_replay **replay, int quiet,
                                  rs_error *err)
{
  rs__llm_cache *dst = NULL;
  rs_code rc = rs__llm_cache_open(cache_path, &dst, err);
  uint64_t total = 0;
  for (size_t i = 0; i < m->n && !rc; i++) {
    char path[4200];
    uint64_t added = 0;
    snprintf(path, sizeof path, "%s/" SHARD_CACHE, m->dir[i]);
    if (!(rc = rs__llm_cache_merge(dst, path, &added, err))) rc = rs__llm_replay_add(replay, path, err);
    total += added;
  }
  rs__llm_cache_close(dst);
  if (!rc && !quiet)
    fprintf(stderr, "ragsweep merge: %zu shard caches merged into %s (%llu new replies)\n", m->n, cache_path,
            (unsigned long long)total);
  return rc;
}

/* Merge: the pairs (rag: samples) no cache answered, by shard; 0 when none. */
int shard_llm_report_missing(const shard_set *m, const uint64_t *counts, const char *what)
{
  size_t bad = 0;
  for (size_t i = 0; i < m->n; i++)
    if (counts[i]) {
      fprintf(stderr, "ragsweep merge: shard %zu of %zu (%s): %llu %s without an answer in its cache (its cache "
                      "was replaced or emptied since it ran?); run it again with --shard %zu/%zu, then merge\n",
              i, m->n, m->dir[i], (unsigned long long)counts[i], what, i, m->n);
      bad++;
    }
  return bad != 0;
}



static char *read_text(const char *path, rs_error *err)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  rs__sb b = {0};
  
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) rs__sb_add(&b, buf, n);
  const int bad = ferror(f);
  fclose(f);
  if (bad || b.failed) {
    rs__sb_free(&b);
    rs__fail(err, RS_IO, "%s: cannot read", path);
    return NULL;
  }
  return rs__sb_take(&b);
}

/* The value of "key VALUE" among the lines of text (first match), or NULL;
 * *len its length. */
static const char *line_value(const char *text, const char *key, size_t *len)
{
  const size_t kl = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
      const char *v = p + kl + 1, *e = strchr(v, '\n');
      *len = e ? (size_t)(e - v) : strlen(v);
      return v;
    }
  }
  return NULL;
}

static int line_size(const char *text, const char *key, size_t *out)
{
  size_t len;
  const char *v = line_value(text, key, &len);
  if (!v || len == 0 || len > 19) return 0;
  size_t x = 0;
  for (size_t i = 0; i < len; i++) {
    if (v[i] < '0' || v[i] > '9') return 0;
    x = x * 10 + (size_t)(v[i] - '0');
  }
  *out = x;
  return 1;
}

/* Line number (from 1) and copies of the first line where a and b differ. */
static size_t first_difference(const char *a, const char *b, char *la, char *lb, size_t cap)
{
  size_t line = 1;
  const char *sa = a, *sb = b;
  while (*a && *a == *b) {
    if (*a == '\n') line++, sa = a + 1, sb = b + 1;
    a++, b++;
  }
  const char *ea = strchr(sa, '\n'), *eb = strchr(sb, '\n');
  snprintf(la, cap, "%.*s", (int)(ea ? ea - sa : (long)strlen(sa)), sa);
  snprintf(lb, cap, "%.*s", (int)(eb ? eb - sb : (long)strlen(sb)), sb);
  if (!*la) snprintf(la, cap, "(no line)");
  if (!*lb) snprintf(lb, cap, "(no line)");
  return line;
}

typedef struct {
  char *dir, *text; /* text: the manifest, split in place at THIS_SHARD (common, then own) */
  const char *own;
  size_t index;
} manifest;

static int by_index(const void *x, const void *y)
{
  const manifest *a = x, *b = y;
  return (a->index > b->index) - (a->index < b->index);
}

static rs_code read_manifest(const char *dir, manifest *m, rs_error *err)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/" SHARD_MANIFEST, dir);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return rs__fail(err, RS_IO, "%s: not a folder (expected a shard folder written by 'ragsweep eval --shard I/N -o %s')",
                    dir, dir);
  if (stat(path, &st) != 0)
    return rs__fail(err, RS_FORMAT, "%s: no " SHARD_MANIFEST ": not a finished shard (--shard writes it last; "
                    "run the shard again: a judge or rag shard resumes from its cache)", dir);
  if (!(m->text = read_text(path, err))) return RS_IO;
  if (!(m->dir = realpath(dir, NULL))) return rs__fail(err, RS_IO, "%s: %s", dir, strerror(errno));
  char *sep = strncmp(m->text, FORMAT_LINE "\n", sizeof FORMAT_LINE) == 0 ? strstr(m->text, "\n" THIS_SHARD) : NULL;
  if (!sep) return rs__fail(err, RS_FORMAT, "%s: expected a ragsweep shard manifest (first line '" FORMAT_LINE "')", path);
  sep[1] = 0;
  m->own = sep + 1 + strlen(THIS_SHARD);
  if (!line_size(m->own, "shard", &m->index))
    return rs__fail(err, RS_FORMAT, "%s: no 'shard I' line after '%.*s'", path, (int)strlen(THIS_SHARD) - 1, THIS_SHARD);
  return RS_OK;
}

void shard_set_close(shard_set *s)
{
  for (size_t i = 0; s->dir && i < s->n; i++) free(s->dir[i]);
  for (size_t i = 0; s->words && i < s->n_words; i++) free(s->words[i]);
  for (size_t i = 0; s->own && i < s->n; i++) free(s->own[i]);
  free(s->own);
  free(s->dir), free(s->common), free(s->cmd), free(s->cwd), free(s->words), free(s->n_records), free(s->n_latency);
  memset(s, 0, sizeof *s);
}

static char *copy_value(const char *v, size_t len)
{
  char *s = strndup(v, len);
  if (s && !unescape(s)) {
    free(s);
    return NULL;
  }
  return s;
}

rs_code shard_set_open(char *const *dirs, size_t n_dirs, shard_set *s, rs_error *err)
{
  memset(s, 0, sizeof *s);
  manifest *m = rs__calloc(n_dirs ? n_dirs : 1, sizeof *m);
  if (!m) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  for (size_t i = 0; i < n_dirs && !rc; i++) rc = read_manifest(dirs[i], &m[i], err);
  size_t n = 0;
  if (!rc && !line_size(m[0].text, "shards", &n))
    rc = rs__fail(err, RS_FORMAT, "%s/" SHARD_MANIFEST ": no 'shards N' line", dirs[0]);
  for (size_t i = 1; i < n_dirs && !rc; i++) {
    if (strcmp(m[i].text, m[0].text) == 0) continue;
    char la[512], lb[512];
    const size_t line = first_difference(m[0].text, m[i].text, la, lb, sizeof la);
    rc = rs__fail(err, RS_FORMAT, "%s and %s are not shards of one evaluation: line %zu of their " SHARD_MANIFEST
                  " is '%s' in the first, '%s' in the second (same inputs, options and share count needed)",
                  dirs[0], dirs[i], line, la, lb);
  }
  if (!rc) {
    /* Every index 0..N-1 exactly once. */
    for (size_t i = 0; i < n_dirs && !rc; i++)
      if (m[i].index >= n)
        rc = rs__fail(err, RS_FORMAT, "%s: shard %zu of %zu: expected an index below %zu", dirs[i], m[i].index, n, n);
    for (size_t i = 0; i < n_dirs && !rc; i++)
      for (size_t j = i + 1; j < n_dirs && !rc; j++)
        if (m[i].index == m[j].index)
          rc = rs__fail(err, RS_FORMAT, "shard %zu of %zu is given twice: %s and %s (give each shard folder once)",
                        m[i].index, n, dirs[i], dirs[j]);
  }
  if (!rc && n_dirs != n) {
    unsigned char *seen = rs__calloc(n, 1);
    if (!seen) rc = rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n_dirs; i++) seen[m[i].index] = 1;
    size_t missing = 0, n_missing = 0;
    for (size_t k = n; !rc && k-- > 0;)
      if (!seen[k]) missing = k, n_missing++;
    if (!rc) {
      rs__sb b = {0};
      
      for (size_t i = 0; i < n_dirs; i++) rs__sb_printf(&b, "%s%s (%zu)", i ? ", " : "", dirs[i], m[i].index);
      rc = rs__fail(err, RS_FORMAT, "shard %zu of %zu is missing%s: the %zu folders given are %s; evaluate it with "
                    "--shard %zu/%zu", missing, n, n_missing > 1 ? " (and more)" : "", n_dirs,
                    b.failed || !b.s ? "?" : b.s, missing, n);
      rs__sb_free(&b);
    }
    free(seen);
  }
  if (!rc) {
    qsort(m, n_dirs, sizeof *m, by_index);
    s->n = n;
    s->dir = rs__calloc(n, sizeof *s->dir);
    s->n_records = rs__calloc(n, sizeof *s->n_records);
    s->n_latency = rs__calloc(n, sizeof *s->n_latency);
    s->own = rs__calloc(n, sizeof *s->own);
    s->words = rs__calloc(strlen(m[0].text) / 4 + 1, sizeof *s->words); /* an "arg " line has >= 5 bytes */
    if (!s->dir || !s->n_records || !s->n_latency || !s->own || !s->words) rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  size_t cmd_len = 0;
  const char *cmd = rc ? NULL : line_value(m[0].text, "command", &cmd_len);
  const int llm = cmd && ((cmd_len == 5 && strncmp(cmd, "judge", 5) == 0) || (cmd_len == 3 && strncmp(cmd, "rag", 3) == 0));
  for (size_t i = 0; !rc && i < n; i++) {
    s->dir[i] = m[i].dir, m[i].dir = NULL;
    if (!(s->own[i] = strdup(m[i].own))) rc = rs__fail(err, RS_NOMEM, "out of memory");
    else if (!llm && (!line_size(m[i].own, "records", &s->n_records[i]) ||
                      !line_size(m[i].own, "latency-records", &s->n_latency[i])))
      rc = rs__fail(err, RS_FORMAT, "%s/" SHARD_MANIFEST ": no 'records N' or 'latency-records N' line", s->dir[i]);
  }
  if (!rc) {
    size_t len;
    const char *v;
    const char *text = m[0].text;
    if ((v = line_value(text, "command", &len))) s->cmd = strndup(v, len);
    if ((v = line_value(text, "cwd", &len))) s->cwd = copy_value(v, len);
    for (const char *p = text; !rc && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
      if (strncmp(p, "arg ", 4) != 0) continue;
      const char *e = strchr(p, '\n');
      if (!(s->words[s->n_words] = copy_value(p + 4, e ? (size_t)(e - p - 4) : strlen(p + 4))))
        rc = rs__fail(err, RS_FORMAT, "%s/" SHARD_MANIFEST ": a bad 'arg' line", s->dir[0]);
      else s->n_words++;
    }
    if (!rc && (!s->cmd || !s->cwd)) rc = rs__fail(err, RS_FORMAT, "%s/" SHARD_MANIFEST ": no command or cwd line", s->dir[0]);
    if (!rc && !(s->common = strdup(text))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < n_dirs; i++) free(m[i].dir), free(m[i].text);
  free(m);
  if (rc) shard_set_close(s);
  return rc;
}

rs_code shard_set_replay(const shard_set *s, const char *common, const rs__spec *spec, rs__run_result *res,
                         size_t n_results, size_t n_queries,
                         rs_code (*per_query)(void *ctx, size_t run, size_t query, const double *v, rs_error *err),
                         void *ctx, rs_error *err)
{
  if (strcmp(common, s->common) != 0) {
    char la[512], lb[512];
    const size_t line = first_difference(s->common, common, la, lb, sizeof la);
    return rs__fail(err, RS_FORMAT, "%s: the shards do not match their inputs now: line %zu of " SHARD_MANIFEST " is "
                    "'%s', the inputs and options give '%s' (an input changed since the shards ran, or another "
                    "ragsweep version merges): evaluate the shards again", s->dir[0], line, la, lb);
  }
  /* Block sums when the merge needs no query's values (the shard made the
   * same choice from the same options: its manifest says which). */
  const int blocks = per_query == NULL;
  for (size_t i = 0; i < s->n; i++) {
    size_t len = 0;
    const char *kind = shard_own_value(s, i, "record-kind", &len);
    const char *want = blocks ? "blocks" : "queries";
    if (!kind || len != strlen(want) || memcmp(kind, want, len) != 0)
      return rs__fail(err, RS_FORMAT, "%s/" SHARD_MANIFEST ": record-kind '%.*s', expected '%s' for these options: the "
                      "shard is from another ragsweep version; evaluate it again", s->dir[i], kind ? (int)len : 0,
                      kind ? kind : "", want);
  }
  rs__shard_merge m;
  rs_code rc = rs__shard_merge_init(&m, spec, res, n_results, n_queries, err);
  if (rc) return rc;
  const size_t rec = blocks ? rs__shard_block_size(spec->n_req) : rs__shard_record_size(spec->n_req),
               per_read = rec * (size_t)4096;
  unsigned char *buf = rs__malloc(per_read > 2048 ? per_read : 2048);
  double *cdf = rs__malloc(RS__LATENCY_CDF_N * sizeof *cdf);
  if (!buf || !cdf) rc = rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < s->n && !rc; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/" SHARD_VALUES, s->dir[i]);
    FILE *f = fopen(path, "rb");
    if (!f) {
      rc = rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
      break;
    }
    size_t got, total = 0;
    while (!rc && (got = fread(buf, 1, per_read, f)) > 0) {
      total += got;
      rc = blocks ? rs__shard_merge_blocks(&m, buf, got - got % rec, path, err)
                  : rs__shard_merge_records(&m, buf, got - got % rec, path, per_query, ctx, err);
      if (!rc && got % rec) rc = rs__fail(err, RS_FORMAT, "%s: cut short inside a record: evaluate the shard again", path);
    }
    if (!rc && ferror(f)) rc = rs__fail(err, RS_IO, "%s: cannot read", path);
    fclose(f);
    if (!rc && total != s->n_records[i] * rec)
      rc = rs__fail(err, RS_FORMAT, "%s: %zu bytes, its manifest says %zu records of %zu bytes: evaluate the shard again",
                    path, total, s->n_records[i], rec);
    if (rc) break;
    snprintf(path, sizeof path, "%s/" SHARD_LATENCY, s->dir[i]);
    if (!(f = fopen(path, "rb"))) {
      rc = rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
      break;
    }
    size_t n_lat = 0;
    const size_t head = rs__shard_latency_size(0);
    while (!rc && (got = fread(buf, 1, head, f)) > 0) {
      uint64_t has = 0;
      if (got == head) memcpy(&has, buf + head - sizeof has, sizeof has);
      if (got == head && has == 1) got += fread(buf + head, 1, rs__shard_latency_size(1) - head, f);
      size_t r;
      rs__latency lat;
      int has_cdf = 0;
      if (rs__shard_latency_get(buf, got, &r, &lat, &has_cdf, cdf) != got)
        rc = rs__fail(err, RS_FORMAT, "%s: latency record %zu is cut short or malformed: evaluate the shard again",
                      path, n_lat);
      else rc = rs__shard_merge_latency(&m, r, &lat, has_cdf ? cdf : NULL, err);
      n_lat++;
    }
    fclose(f);
    if (!rc && n_lat != s->n_latency[i])
      rc = rs__fail(err, RS_FORMAT, "%s: %zu latency records, its manifest says %zu: evaluate the shard again", path,
                    n_lat, s->n_latency[i]);
  }
  free(buf);
  free(cdf);
  if (rc) rs__shard_merge_abort(&m);
  else rs__shard_merge_finish(&m);
  return rc;
}

/* --- the commands' shared steps -------------------------------------------------------- */

void shard_drop_option_words(char *const *orig, int argc, char *const *argv, const char *arg, unsigned char *drop)
{
  const char *last = argv[optind - 1]; /* the option's last word */
  for (int k = 0; k < argc; k++) {
    if (orig[k] != last) continue;
    drop[k] = 1;
    if (arg && arg == last && k > 0) drop[k - 1] = 1; /* "--out DIR": the option word too */
  }
}

rs_code shard_write(const char *dir, rs__sweep_cfg *cfg, const sweep_input *in, const rs__shard_plan *plan, size_t i,
                    size_t n, int per_query, const char *common, rs_error *err)
{
  shard_writer *w = NULL;
  const int blocks = rs__shard_by_block(plan, per_query);
  rs_code rc = shard_writer_open(dir, cfg->spec->n_req, blocks, &w, err);
  if (rc) return rc;
  rs__run_result *res = rs__calloc(in->n_runs ? in->n_runs : 1, sizeof *res);
  if (!res) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (blocks) cfg->per_block = shard_writer_block, cfg->per_block_ctx = w;
  else cfg->per_query = shard_writer_record, cfg->per_query_ctx = w;
  if (!rc) rc = rs__shard_eval(cfg, in->corpus, in->runs, plan, i, n, res, err);
  size_t n_lat = 0; /* the runs whose latencies this share owns (engine/shard.h) */
  for (size_t r = 0; !rc && r < in->n_runs; r++)
    if (res[r].has_latency && !(rc = shard_writer_latency(w, r, &res[r].latency, res[r].latency_cdf, err))) n_lat++;
  const size_t n_records = shard_writer_n_records(w);
  if (!rc) rc = shard_writer_commit(w, common, i, err);
  else shard_writer_abort(w);
  for (size_t r = 0; res && r < in->n_runs; r++) rs__run_result_free(&res[r]);
  free(res);
  if (rc) return rc;
  size_t u0, u1;
  rs__shard_share_units(plan, i, n, &u0, &u1);
  printf(blocks ? "shard %zu/%zu: units %zu..%zu of %zu (%zu block sums, latencies of %zu run%s)\n"
                : "shard %zu/%zu: units %zu..%zu of %zu (%zu queries evaluated, latencies of %zu run%s)\n"
         "wrote %s/" SHARD_MANIFEST "\n      %s/" SHARD_VALUES "\n      %s/" SHARD_LATENCY "\n"
         "merge every shard with: ragsweep merge SHARD_DIR... -o OUTDIR\n",
         i, n, u0, u1, plan->n_units, n_records, n_lat, n_lat == 1 ? "" : "s", dir, dir, dir);
  return RS_OK;
}

char **shard_merge_argv(const shard_set *s, const char *cmd, const char *out_dir, int quiet, int *argc)
{
  char **argv = calloc(s->n_words + 5, sizeof *argv);
  if (!argv) return NULL;
  static char w_out[] = "-o", w_quiet[] = "--quiet";
  int n = 0;
  argv[n++] = (char *)cmd; /* getopt_long never writes argv's strings */
  for (size_t i = 0; i < s->n_words; i++) argv[n++] = s->words[i];
  argv[n++] = w_out;
  argv[n++] = (char *)out_dir;
  if (quiet) argv[n++] = w_quiet;
  *argc = n;
  return argv;
}

int shard_own_size(const shard_set *s, size_t i, const char *key, size_t *out) { return line_size(s->own[i], key, out); }

const char *shard_own_value(const shard_set *s, size_t i, const char *key, size_t *len)
{
  return line_value(s->own[i], key, len);
}
