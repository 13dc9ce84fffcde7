/* detect.c: which input a path is, from its content (see detect.h). */
#define _POSIX_C_SOURCE 200809L
#include "formats/detect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/annb.h"
#include "formats/evalset.h"
#include "formats/textio.h"

const char *rs__input_kind_name(rs__input_kind k)
{
  switch (k) {
  case RS_INPUT_HDF5: return "HDF5 file";
  case RS_INPUT_ANNB_DATASET: return "ann-benchmarks dataset";
  case RS_INPUT_ANNB_RESULT: return "ann-benchmarks result";
  case RS_INPUT_TREC_RUN: return "TREC run";
  case RS_INPUT_TREC_QRELS: return "TREC qrels";
  case RS_INPUT_BEIR_QRELS: return "BEIR qrels TSV";
  case RS_INPUT_JSONL_RUN: return "JSONL run";
  case RS_INPUT_CSV_RUN: return "CSV/TSV run";
  case RS_INPUT_BEIR_DIR: return "BEIR folder";
  case RS_INPUT_JSON_EVALSET: return "JSON eval set";
  case RS_INPUT_TEXTS: return "JSONL text collection";
  case RS_INPUT_UNKNOWN:
  case RS_INPUT_N_KINDS: break;
  }
  return "unrecognised input";
}

const char *rs__input_kind_article(rs__input_kind k)
{
  switch (k) {
  case RS_INPUT_HDF5: return "an HDF5 file";
  case RS_INPUT_ANNB_DATASET: return "an ann-benchmarks dataset";
  case RS_INPUT_ANNB_RESULT: return "an ann-benchmarks result";
  case RS_INPUT_TREC_RUN: return "a TREC run";
  case RS_INPUT_TREC_QRELS: return "TREC qrels";
  case RS_INPUT_BEIR_QRELS: return "BEIR qrels (TSV)";
  case RS_INPUT_JSONL_RUN: return "a JSONL run";
  case RS_INPUT_CSV_RUN: return "a CSV/TSV run";
  case RS_INPUT_BEIR_DIR: return "a BEIR folder";
  case RS_INPUT_JSON_EVALSET: return "a JSON eval set";
  case RS_INPUT_TEXTS: return "a JSONL text collection";
  case RS_INPUT_UNKNOWN:
  case RS_INPUT_N_KINDS: break;
  }
  return "an unrecognised input";
}

rs_code rs__detect_fail(rs_error *err, const char *path, const rs__detected *d, const char *role,
                        const char *expected)
{
  if (d->kind != RS_INPUT_UNKNOWN)
    return rs__fail(err, RS_FORMAT, "%s: %s, not a %s; expected %s", path, d->found, role, expected);
  return rs__fail(err, RS_FORMAT, "%s: not a %s ragsweep reads (found: %s); expected %s", path, role, d->found,
                  expected);
}

/* --- description of what was found -------------------------------------------- */

/* s[0, n) quoted for a message: at most 60 bytes, control bytes as \xNN. */
static void describe_line(char *out, size_t cap, size_t n_fields, const char *s, size_t n)
{
  char q[200];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 5 < sizeof q && i < 60; i++) {
    const unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(q + k, sizeof q - k, c == '\t' ? "\\t" : "\\x%02x", c);
    else q[k++] = (char)c;
  }
  q[k] = '\0';
  snprintf(out, cap, "a first line of %zu field%s: '%s%s'", n_fields, n_fields == 1 ? "" : "s", q,
           n > 60 ? "..." : "");
}

static void describe_bytes(char *out, size_t cap, const unsigned char *b, size_t n)
{
  size_t k = (size_t)snprintf(out, cap, "binary data, first bytes");
  for (size_t i = 0; i < n && i < 8 && k < cap; i++) k += (size_t)snprintf(out + k, cap - k, " %02x", b[i]);
}

/* --- folders -------------------------------------------------------------------- */

static int is_file(const char *dir, const char *name)
{
  char p[4200];
  struct stat st;
  if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p) return 0;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *dir, const char *name)
{
  char p[4200];
  struct stat st;
  if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p) return 0;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void detect_dir(const char *path, rs__detected *d)
{
  const int corpus = is_file(path, "corpus.jsonl"), queries = is_file(path, "queries.jsonl"),
            qrels = is_dir(path, "qrels");
  if (qrels && (corpus || queries)) {
    d->kind = RS_INPUT_BEIR_DIR;
    return;
  }
  snprintf(d->found, sizeof d->found, "a folder with%s%s%s%s", corpus ? " corpus.jsonl" : "",
           queries ? " queries.jsonl" : "", qrels ? " qrels/" : "",
           corpus || queries || qrels ? " only" : "out corpus.jsonl, queries.jsonl or qrels/");
}

/* --- HDF5 ------------------------------------------------------------------------ */

/* The HDF5 signature sits at 0 or at 512, 1024, 2048, ... bytes (after a
 * user block); 1 when the file has it. */
static int has_hdf5_signature(int fd, off_t size)
{
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (off_t at = 0; at + 8 <= size; at = at ? 2 * at : 512) {
    unsigned char b[8];
    if (pread(fd, b, 8, at) != 8) return 0;
    if (memcmp(b, sig, 8) == 0) return 1;
  }
  return 0;
}

/* An ann-benchmarks dataset or result file (formats/annb.h: root links
 * looked up in a forked child, so a corrupt file cannot crash this process
 * and libhdf5's state here is untouched), else RS_INPUT_HDF5: a ragsweep
 * corpus or run file, which corpus_h5.c validates (naming what is wrong). */
static rs__input_kind hdf5_kind(const char *path)
{
  switch (rs__annb_kind_of(path)) {
  case RS_ANNB_DATASET: return RS_INPUT_ANNB_DATASET;
  case RS_ANNB_RESULT: return RS_INPUT_ANNB_RESULT;
  default: return RS_INPUT_HDF5;
  }
}

/* --- text ------------------------------------------------------------------------ */

enum { SNIFF_MAX = 4 << 20 }; /* a JSONL run's line of 10,000 doc ids fits */

static int blank_or_comment(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
  return i == n || s[i] == '#';
}

/* A whole-token integer (optional sign, digits). */
static int is_int(const char *s, size_t n)
{
  size_t i = s[0] == '-' || s[0] == '+';
  if (i == n) return 0;
  for (; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

static int is_number(const char *s, size_t n)
{
  char buf[64], *end;
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, s, n);
  buf[n] = '\0';
  strtod(buf, &end);
  return *end == '\0';
}

/* Field names of a header line: trimmed of spaces and one pair of quotes. */
static int header_has(const char *s, size_t n, char delim, const char *a, const char *b)
{
  size_t i = 0;
  while (i <= n) {
    size_t j = i;
    while (j < n && s[j] != delim) j++;
    size_t x = i, y = j;
    while (x < y && s[x] == ' ') x++;
    while (y > x && (s[y - 1] == ' ' || s[y - 1] == '\r')) y--;
    if (y - x >= 2 && s[x] == '"' && s[y - 1] == '"') x++, y--;
    if ((strlen(a) == y - x && memcmp(s + x, a, y - x) == 0) || (b && strlen(b) == y - x && memcmp(s + x, b, y - x) == 0))
      return 1;
    i = j + 1;
  }
  return 0;
}

/* 1 when s[0, n) contains the string w. */
static int contains(const char *s, size_t n, const char *w)
{
  const size_t k = strlen(w);
  for (size_t i = 0; i + k <= n; i++)
    if (s[i] == w[0] && memcmp(s + i, w, k) == 0) return 1;
  return 0;
}

static void detect_json_line(const char *path, size_t line_no, const char *s, size_t n, int complete,
                             const char *buf, size_t have, rs__detected *d)
{
  rs__jsonl *p = NULL;
  rs_error e = {0};
  size_t n_members = 0;
  int has_qid = 0, has_docs = 0, has_queries = 0, has_id = 0, has_text = 0;
  if (complete && rs__jsonl_new(&p, &e) == RS_OK &&
      rs__jsonl_object(p, path, line_no, s, n, &n_members, &e) == RS_OK) {
    for (size_t i = 0; i < n_members; i++) {
      const rs__json *v;
      const char *k = rs__jsonl_member(p, i, &v);
      has_qid |= strcmp(k, "query_id") == 0 || strcmp(k, "qid") == 0;
      has_docs |= strcmp(k, "doc_ids") == 0 || strcmp(k, "docs") == 0;
      has_queries |= strcmp(k, "queries") == 0;
      has_id |= strcmp(k, "_id") == 0 || strcmp(k, "id") == 0 || strcmp(k, "docid") == 0;
      has_text |= strcmp(k, "text") == 0 || strcmp(k, "contents") == 0;
    }
    if (has_qid && has_docs) d->kind = RS_INPUT_JSONL_RUN;
    else if (has_queries) d->kind = RS_INPUT_JSON_EVALSET;
    else if (has_id && has_text) d->kind = RS_INPUT_TEXTS;
    else snprintf(d->found, sizeof d->found, "a JSON object on line %zu without query_id/qid and doc_ids/docs",
                  line_no);
  } else {
    /* A pretty-printed eval set opens with "{" alone; a run's line may be
     * longer than what was read. */
    const size_t m = have < 65536 ? have : 65536;
    if (contains(buf, m, "\"queries\"")) d->kind = RS_INPUT_JSON_EVALSET;
    else if (!complete && (contains(buf, m, "\"query_id\"") || contains(buf, m, "\"qid\"")))
      d->kind = RS_INPUT_JSONL_RUN;
    else snprintf(d->found, sizeof d->found, "text starting with '{' that is not one JSON object a line (%s)",
                  complete ? e.msg : "a line longer than 4 MiB");
  }
  rs__jsonl_free(p);
}

static void detect_line(const char *path, size_t line_no, const char *s, size_t n, int complete, const char *buf,
                        size_t have, rs__detected *d)
{
  while (n && s[n - 1] == '\r') n--;
  if (s[0] == '{' || s[0] == '[') {
    detect_json_line(path, line_no, s, n, complete, buf, have, d);
    return;
  }
  const char delim = memchr(s, '\t', n) ? '\t' : ',';
  if (header_has(s, n, delim, "query_id", "qid") && header_has(s, n, delim, "doc_id", "docid")) {
    d->kind = RS_INPUT_CSV_RUN;
    d->delim = delim;
    return;
  }
  if (header_has(s, n, delim, "query-id", NULL) && header_has(s, n, delim, "corpus-id", NULL)) {
    d->kind = RS_INPUT_BEIR_QRELS;
    d->delim = delim;
    return;
  }
  /* White-space separated fields, as trec_eval splits them. */
  const char *f[7];
  size_t len[7], nf = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i == n) break;
    size_t j = i;
    while (j < n && s[j] != ' ' && s[j] != '\t') j++;
    if (nf < 7) f[nf] = s + i, len[nf] = j - i;
    nf++;
    i = j;
  }
  if (nf >= 6 && is_int(f[3], len[3]) && is_number(f[4], len[4])) d->kind = RS_INPUT_TREC_RUN;
  else if (nf == 4 && is_int(f[3], len[3])) d->kind = RS_INPUT_TREC_QRELS;
  else describe_line(d->found, sizeof d->found, nf, s, n);
}

/* Reads the start of the (decompressed) text: up to the end of its first
 * line that is not blank or a comment, at most SNIFF_MAX bytes. */
static rs_code detect_text(const char *path, rs__detected *d, rs_error *err)
{
  rs__input *in = NULL;
  size_t cap = 65536, have = 0;
  char *buf = rs__malloc(cap);
  if (!buf) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = rs__input_open(path, &in, err);
  size_t ls = 0, le = 0, line_no = 1, scanned = 0;
  int eof = 0, have_line = 0, complete = 0;
  while (!rc) {
    const char *nl;
    while ((nl = memchr(buf + scanned, '\n', have - scanned)) != NULL) {
      const size_t end = (size_t)(nl - buf);
      scanned = end + 1;
      if (!blank_or_comment(buf + ls, end - ls)) {
        le = end, have_line = complete = 1;
        break;
      }
      ls = scanned;
      line_no++;
    }
    if (have_line) break;
    scanned = have;
    if (eof || have >= SNIFF_MAX) { /* the last line, or one longer than SNIFF_MAX */
      if (ls < have && !blank_or_comment(buf + ls, have - ls)) le = have, have_line = 1, complete = eof;
      break;
    }
    if (have == cap) {
      char *nb = rs__realloc(buf, cap * 2);
      if (!nb) { rc = rs__fail(err, RS_NOMEM, "out of memory"); break; }
      buf = nb;
      cap *= 2;
    }
    size_t got = 0;
    if ((rc = rs__input_read(in, buf + have, cap - have, &got, err))) break;
    eof = got == 0;
    have += got;
  }
  if (!rc) {
    d->text = !memchr(buf, '\0', have);
    if (have == 0) snprintf(d->found, sizeof d->found, "an empty file");
    else if (memchr(buf, '\0', have)) describe_bytes(d->found, sizeof d->found, (unsigned char *)buf, have);
    else if (!have_line) snprintf(d->found, sizeof d->found, "only blank or comment lines");
    else {
      size_t s = ls;
      if (s == 0 && le >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) s = 3; /* UTF-8 byte order mark */
      while (s < le && (buf[s] == ' ' || buf[s] == '\t')) s++;
      detect_line(path, line_no, buf + s, le - s, complete, buf, have, d);
    }
  }
  rs__input_close(in);
  free(buf);
  return rc;
}

rs_code rs__detect(const char *path, rs__detected *out, rs_error *err)
{
  rs__detected d = {.kind = RS_INPUT_UNKNOWN};
  if (strcmp(path, "-") == 0) {
    snprintf(d.found, sizeof d.found, "standard input");
    *out = d;
    return RS_OK;
  }
  struct stat st;
  if (stat(path, &st) != 0) return rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) {
    detect_dir(path, &d);
    if (d.kind != RS_INPUT_UNKNOWN) snprintf(d.found, sizeof d.found, "%s", rs__input_kind_article(d.kind));
    *out = d;
    return RS_OK;
  }
  int fd = open(path, O_RDONLY);
  if (fd < 0) return rs__fail(err, RS_IO, "%s: cannot open: %s", path, strerror(errno));
  const int hdf5 = S_ISREG(st.st_mode) && has_hdf5_signature(fd, st.st_size);
  close(fd);
  if (hdf5) {
    d.kind = hdf5_kind(path);
    snprintf(d.found, sizeof d.found, "%s", rs__input_kind_article(d.kind));
    *out = d;
    return RS_OK;
  }
  rs_code rc = detect_text(path, &d, err);
  if (rc) return rc;
  if (d.kind != RS_INPUT_UNKNOWN) snprintf(d.found, sizeof d.found, "%s", rs__input_kind_article(d.kind));
  *out = d;
  return RS_OK;
}
