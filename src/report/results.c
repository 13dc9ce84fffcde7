/* results.c: an output folder read back (see results.h). */
#define _GNU_SOURCE
#include "report/results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/csvio.h"
#include "internal.h"
#include "util/strbuf.h"

const char *rs__results_kind_name(rs__results_kind k)
{
  return k == RS__RESULTS_JUDGE ? "judge" : k == RS__RESULTS_RAG ? "rag" : k == RS__RESULTS_COMPARE ? "compare" : "eval";
}

const char *rs__results_run(const rs__results *r, size_t row) { return rs__agg_value(&r->agg, row, RS__AGG_RUN); }

const char *rs__results_measure(const rs__results *r, size_t row)
{
  return rs__agg_value(&r->agg, row, RS__AGG_MEASURE(&r->agg));
}

size_t rs__results_n_labels(const rs__results *r) { return RS__AGG_MEASURE(&r->agg) - 1; }

const char *rs__results_label_name(const rs__results *r, size_t label) { return r->agg.key[1 + label]; }

const char *rs__results_label_value(const rs__results *r, size_t row, size_t label)
{
  return rs__agg_value(&r->agg, row, 1 + label);
}

size_t rs__results_run_id(const rs__results *r, size_t row) { return r->agg.id[row * r->agg.n_keys + RS__AGG_RUN]; }

int rs__results_label_is_config(const rs__results *r, size_t label)
{
  return r->kind != RS__RESULTS_RAG || label < r->agg.n_config_cols;
}

const size_t *rs__results_run_rows(const rs__results *r) { return r->run_row; }

void rs__results_free(rs__results *r)
{
  rs__agg_free(&r->agg);
  free(r->dir);
  free(r->agg_path);
  free(r->latency);
  free(r->has_latency);
  free(r->run_row);
  free(r->hist_le_ms);
  free(r->hist_count);
  free(r->has_hist);
  free(r->evaluations);
  free(r->has_evaluations);
  *r = (rs__results){0};
}

static char *path_in(const char *dir, const char *name)
{
  rs__sb b = {0};
  rs__sb_str(&b, dir);
  rs__sb_str(&b, "/");
  rs__sb_str(&b, name);
  return rs__sb_take(&b);
}

static int file_exists(const char *dir, const char *name)
{
  char *p = path_in(dir, name);
  struct stat st;
  const int ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
  free(p);
  return ok;
}

/* The run id of a row of a file laid out as eval's (a run column) or rag's
 * (the configuration columns first, joined by '/'); -1 when aggregate.csv
 * has no such run (no measure to pair with), -2 out of memory. */
static long row_run(const rs__results *r, char **fields, size_t col_run)
{
  if (col_run != SIZE_MAX) return rs__strdict_find(&r->agg.val[RS__AGG_RUN], fields[col_run]);
  rs__sb b = {0};
  for (size_t c = 0; c < r->agg.n_config_cols; c++) {
    if (c) rs__sb_str(&b, "/");
    rs__sb_str(&b, fields[c]);
  }
  char *name = r->agg.n_config_cols ? rs__sb_take(&b) : strdup("all");
  if (!name) return -2;
  const long run = rs__strdict_find(&r->agg.val[RS__AGG_RUN], name);
  free(name);
  return run;
}

/* --- latency ------------------------------------------------------------------------- */

enum { LAT_N, LAT_MEAN, LAT_P50, LAT_P90, LAT_P95, LAT_P99, LAT_P999, LAT_MAX, LAT_COLS };
static const char *const lat_col_name[LAT_COLS] = {"n",      "mean_ms", "p50_ms",  "p90_ms",
                                                   "p95_ms", "p99_ms",  "p999_ms", "max_ms"};
static const char *const rag_lat_col_name[LAT_COLS] = {NULL, NULL, "latency_p50_ms", NULL, NULL, "latency_p99_ms",
                                                       NULL, NULL};

typedef struct {
  rs__results *r;
  const char *path;
  const char *const *names; /* lat_col_name or rag_lat_col_name */
  size_t col[LAT_COLS];     /* SIZE_MAX: absent */
  size_t col_run;           /* eval's run column; SIZE_MAX for rag (run made of the configuration) */
  size_t n_fields;
  int have_header;
} lat_reader;

static rs_code lat_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  lat_reader *lr = ctx;
  if (!lr->have_header) {
    lr->have_header = 1;
    lr->n_fields = n;
    for (size_t c = 0; c < LAT_COLS; c++) {
      lr->col[c] = SIZE_MAX;
      for (size_t i = 0; lr->names[c] && i < n; i++)
        if (strcmp(fields[i], lr->names[c]) == 0) lr->col[c] = i;
    }
    if (lr->col_run != SIZE_MAX) {
      lr->col_run = SIZE_MAX;
      for (size_t i = 0; i < n && lr->col_run == SIZE_MAX; i++)
        if (strcmp(fields[i], "run") == 0) lr->col_run = i;
      if (lr->col_run == SIZE_MAX || lr->col[LAT_P50] == SIZE_MAX)
        return rs__fail(err, RS_FORMAT,
                        "%s:%zu: expected a header run,<attributes...>,n,mean_ms,p50_ms,... (as 'ragsweep eval' "
                        "writes latency.csv), found no column '%s'",
                        lr->path, line, lr->col_run == SIZE_MAX ? "run" : "p50_ms");
    }
    return RS_OK;
  }
  if (n != lr->n_fields)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", lr->path, line,
                    lr->n_fields, n);
  rs__results *r = lr->r;
  const long run = row_run(r, fields, lr->col_run);
  if (run == -2) return rs__fail(err, RS_NOMEM, "out of memory");
  if (run < 0) return RS_OK; /* a run with no measure row: nothing to pair its latency with */
  rs__results_latency l = {0};
  double *dst[LAT_COLS] = {NULL, &l.mean_ms, &l.p50_ms, &l.p90_ms, &l.p95_ms, &l.p99_ms, &l.p999_ms, &l.max_ms};
  for (size_t c = 0; c < LAT_COLS; c++) {
    const char *s = lr->col[c] == SIZE_MAX ? "" : fields[lr->col[c]];
    double v = NAN;
    if (*s) {
      char *end;
      errno = 0;
      v = strtod(s, &end);
      if (end == s || *end || errno == ERANGE || !(v >= 0))
        return rs__fail(err, RS_FORMAT, "%s:%zu: expected a non-negative number in column '%s', found '%s'",
                        lr->path, line, lr->names[c], s);
    }
    if (c == LAT_N) l.n = isnan(v) ? 0 : (size_t)v;
    else *dst[c] = v;
  }
  if (isnan(l.p50_ms)) return RS_OK; /* rag: this configuration has no latencies */
  r->latency[run] = l;
  r->has_latency[run] = 1;
  return RS_OK;
}

/* --- the histogram: latency_hist.csv ----------------------------------------------------- */

typedef struct {
  long run; /* -1: a run aggregate.csv lacks */
  double le;
  uint64_t count;
  size_t line;
} hist_entry;

typedef struct {
  rs__results *r;
  const char *path;
  size_t col_run, col_le, col_count, n_fields;
  int have_header;
  hist_entry *e;
  size_t n, cap;
} hist_reader;

static rs_code hist_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  hist_reader *h = ctx;
  if (!h->have_header) {
    h->have_header = 1;
    h->n_fields = n;
    h->col_le = h->col_count = SIZE_MAX;
    const int by_run = h->col_run != SIZE_MAX;
    h->col_run = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(fields[i], "le_ms") == 0) h->col_le = i;
      if (strcmp(fields[i], "count") == 0) h->col_count = i;
      if (by_run && strcmp(fields[i], "run") == 0 && h->col_run == SIZE_MAX) h->col_run = i;
    }
    const char *missing = h->col_le == SIZE_MAX                ? "le_ms"
                          : h->col_count == SIZE_MAX           ? "count"
                          : by_run && h->col_run == SIZE_MAX ? "run"
                                                               : NULL;
    if (missing)
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected a header <run or configuration>,...,le_ms,count (as "
                                      "'ragsweep eval' writes latency_hist.csv), found no column '%s'",
                      h->path, line, missing);
    return RS_OK;
  }
  if (n != h->n_fields)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", h->path, line,
                    h->n_fields, n);
  hist_entry e = {.line = line};
  if ((e.run = row_run(h->r, fields, h->col_run)) == -2) return rs__fail(err, RS_NOMEM, "out of memory");
  const char *le = fields[h->col_le], *c = fields[h->col_count];
  char *end;
  errno = 0;
  e.le = strtod(le, &end);
  if (end == le || *end || !(e.le > 0) || (errno == ERANGE && !isinf(e.le)))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a bucket bound in milliseconds > 0 (or inf) in column "
                                    "'le_ms', found '%s'", h->path, line, le);
  errno = 0;
  const unsigned long long count = strtoull(c, &end, 10);
  if (!*c || *end || *c == '-' || *c == '+' || *c == ' ' || errno == ERANGE)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a count (an integer >= 0) in column 'count', found '%s'",
                    h->path, line, c);
  e.count = count;
  if (h->n == h->cap) {
    size_t cap = h->cap ? 2 * h->cap : 64;
    hist_entry *ne = realloc(h->e, rs__mul(cap, sizeof *ne));
    if (!ne) return rs__fail(err, RS_NOMEM, "out of memory");
    h->e = ne;
    h->cap = cap;
  }
  h->e[h->n++] = e;
  return RS_OK;
}

/* The bounds are the first run's le_ms up to inf; every run lists the same
 * buckets in the same order, and its counts add up to latency.csv's n. */
static rs_code hist_build(rs__results *r, const hist_reader *h, rs_error *err)
{
  size_t first = 0;
  while (first < h->n && h->e[first].run < 0) first++;
  if (first == h->n) return RS_OK;
  size_t nb = 0;
  for (size_t i = first; i < h->n && h->e[i].run == h->e[first].run; i++) {
    nb++;
    if (i > first && !(h->e[i].le > h->e[i - 1].le))
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected bucket bounds in ascending order, found %g after %g",
                      h->path, h->e[i].line, h->e[i].le, h->e[i - 1].le);
    if (isinf(h->e[i].le)) break;
  }
  const hist_entry *last = &h->e[first + nb - 1];
  if (!isinf(last->le))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected the buckets of run '%s' to end with le_ms = inf", h->path,
                    last->line, r->agg.val[RS__AGG_RUN].str[h->e[first].run]);
  r->n_hist_bounds = nb - 1;
  if (!(r->hist_le_ms = rs__calloc(nb, sizeof *r->hist_le_ms)) ||
      !(r->hist_count = rs__calloc(rs__mul(r->n_runs, nb), sizeof *r->hist_count)) ||
      !(r->has_hist = rs__calloc(r->n_runs, 1)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t b = 0; b + 1 < nb; b++) r->hist_le_ms[b] = h->e[first + b].le;
  size_t *pos = rs__calloc(r->n_runs, sizeof *pos);
  if (!pos) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  for (size_t i = 0; i < h->n && !rc; i++) {
    const hist_entry *e = &h->e[i];
    if (e->run < 0) continue;
    const size_t b = pos[e->run]++;
    const char *name = r->agg.val[RS__AGG_RUN].str[e->run];
    const double want = b + 1 < nb ? r->hist_le_ms[b] : INFINITY;
    if (b >= nb)
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: run '%s' has more than the %zu buckets of the first run", h->path,
                    e->line, name, nb);
    else if (e->le != want)
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: expected le_ms %g for bucket %zu of run '%s' (every run has the first "
                                    "run's buckets), found %g", h->path, e->line, want, b + 1, name, e->le);
    else r->hist_count[(size_t)e->run * nb + b] = e->count;
  }
  for (size_t run = 0; run < r->n_runs && !rc; run++) {
    if (!pos[run]) continue;
    const char *name = r->agg.val[RS__AGG_RUN].str[run];
    if (pos[run] != nb) {
      rc = rs__fail(err, RS_FORMAT, "%s: run '%s' has %zu buckets, expected the first run's %zu", h->path, name,
                    pos[run], nb);
      break;
    }
    uint64_t total = 0;
    for (size_t b = 0; b < nb; b++) total += r->hist_count[run * nb + b];
    if (r->has_latency[run] && r->latency[run].n && total != r->latency[run].n) {
      rc = rs__fail(err, RS_FORMAT, "%s: the buckets of run '%s' count %llu latencies, latency.csv's n says %zu "
                                    "(are the two files from different runs?)",
                    h->path, name, (unsigned long long)total, r->latency[run].n);
      break;
    }
    r->has_hist[run] = 1;
  }
  free(pos);
  return rc;
}

static rs_code load_hist(rs__results *r, int by_run, rs_error *err)
{
  if (!file_exists(r->dir, "latency_hist.csv")) return RS_OK;
  char *path = path_in(r->dir, "latency_hist.csv");
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  hist_reader h = {.r = r, .path = path, .col_run = by_run ? 0 : SIZE_MAX};
  rs_code rc = rs__csv_read(path, hist_row, &h, err);
  if (!rc) rc = hist_build(r, &h, err);
  free(h.e);
  free(path);
  return rc;
}

/* --- evaluations ------------------------------------------------------------------------- */

/* eval and compare: the run's num_q row. */
static rs_code evaluations_from_num_q(rs__results *r, rs_error *err)
{
  for (size_t row = 0; row < r->agg.n_rows; row++) {
    if (strcmp(rs__results_measure(r, row), "num_q") != 0) continue;
    const double v = r->agg.value[row];
    if (!(v >= 0) || v != floor(v) || v > 9007199254740992.0)
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected num_q to be a count (an integer >= 0), found %g",
                      r->agg_path, r->agg.line[row], v);
    const size_t run = rs__results_run_id(r, row);
    r->evaluations[run] = (uint64_t)v;
    r->has_evaluations[run] = 1;
  }
  return RS_OK;
}

/* rag: n + failures + undefined of each row (each sample of a configuration
 * is one of the three for each metric). */
typedef struct {
  rs__results *r;
  size_t col[3], n_fields;
  int have_header;
} rag_count_reader;

static rs_code rag_count_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  rag_count_reader *c = ctx;
  static const char *const names[3] = {"n", "failures", "undefined"};
  if (!c->have_header) {
    c->have_header = 1;
    c->n_fields = n;
    for (size_t k = 0; k < 3; k++) {
      c->col[k] = SIZE_MAX;
      for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i], names[k]) == 0) c->col[k] = i;
    }
    return RS_OK;
  }
  if (n != c->n_fields || c->col[0] == SIZE_MAX) return RS_OK; /* rs__agg_load has checked the layout */
  const long run = row_run(c->r, fields, SIZE_MAX);
  if (run == -2) return rs__fail(err, RS_NOMEM, "out of memory");
  if (run < 0) return RS_OK;
  uint64_t total = 0;
  for (size_t k = 0; k < 3; k++) {
    if (c->col[k] == SIZE_MAX) continue;
    const char *s = fields[c->col[k]];
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || *s == '+' || *s == ' ' || errno == ERANGE)
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected a count (an integer >= 0) in column '%s', found '%s'",
                      c->r->agg_path, line, names[k], s);
    total += v;
  }
  if (!c->r->has_evaluations[run] || total > c->r->evaluations[run]) c->r->evaluations[run] = total;
  c->r->has_evaluations[run] = 1;
  return RS_OK;
}

/* --- loading ------------------------------------------------------------------------- */

rs_code rs__results_detect(const char *dir, rs__results_kind *kind, rs_error *err)
{
  struct stat st;
  if (stat(dir, &st) != 0)
    return rs__fail(err, RS_IO, "%s: cannot read the folder: %s (expected an output folder of 'ragsweep eval', "
                                "'compare', 'rag' or 'judge')", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return rs__fail(err, RS_IO, "%s: is a file, expected an output folder of 'ragsweep eval', 'compare', 'rag' or "
                                "'judge'", dir);
  if (file_exists(dir, "aggregate.csv")) {
    *kind = RS__RESULTS_EVAL;
    return RS_OK;
  }
  if (file_exists(dir, "qrels.txt") || file_exists(dir, "judgments.jsonl") || file_exists(dir, "agreement.csv")) {
    *kind = RS__RESULTS_JUDGE;
    return RS_OK;
  }
  return rs__fail(err, RS_IO, "%s: no aggregate.csv (written by 'ragsweep eval', 'compare' and 'rag') and no qrels.txt, "
                              "judgments.jsonl or agreement.csv (written by 'ragsweep judge'); check the -o folder of "
                              "that run", dir);
}

rs_code rs__results_load(const char *dir, rs__results *r, rs_error *err)
{
  struct stat st;
  if (stat(dir, &st) != 0)
    return rs__fail(err, RS_IO, "%s: cannot read the folder: %s (expected an output folder of 'ragsweep eval', "
                                "'compare' or 'rag')", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return rs__fail(err, RS_IO, "%s: is a file, expected an output folder of 'ragsweep eval', 'compare' or 'rag'",
                    dir);
  if (!(r->dir = strdup(dir)) || !(r->agg_path = path_in(dir, "aggregate.csv")))
    return rs__fail(err, RS_NOMEM, "out of memory");
  if (!file_exists(dir, "aggregate.csv"))
    return rs__fail(err, RS_IO, "%s: no aggregate.csv (expected an output folder of 'ragsweep eval', 'compare' or "
                                "'rag'; check the -o folder of that run)", dir);
  rs_code rc = rs__agg_load(r->agg_path, &r->agg, err);
  if (rc) return rc;
  r->kind = r->agg.col[RS__AGG_RUN] == SIZE_MAX      ? RS__RESULTS_RAG
            : file_exists(dir, "compare.csv") ? RS__RESULTS_COMPARE
                                                     : RS__RESULTS_EVAL;
  r->n_runs = r->agg.val[RS__AGG_RUN].n;
  if (!(r->latency = calloc(r->n_runs, sizeof *r->latency)) || !(r->has_latency = calloc(r->n_runs, 1)) ||
      !(r->run_row = calloc(r->n_runs, sizeof *r->run_row)) ||
      !(r->evaluations = calloc(r->n_runs, sizeof *r->evaluations)) || !(r->has_evaluations = calloc(r->n_runs, 1)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t run = 0; run < r->n_runs; run++) r->run_row[run] = SIZE_MAX;
  for (size_t row = 0; row < r->agg.n_rows; row++)
    if (r->run_row[rs__results_run_id(r, row)] == SIZE_MAX) r->run_row[rs__results_run_id(r, row)] = row;
  lat_reader lr = {.r = r};
  const int rag = r->kind == RS__RESULTS_RAG;
  if (rag) {
    rag_count_reader cr = {.r = r};
    if ((rc = rs__csv_read(r->agg_path, rag_count_row, &cr, err))) return rc;
  } else if ((rc = evaluations_from_num_q(r, err))) {
    return rc;
  }
  if (file_exists(dir, "latency.csv")) {
    /* eval's, or rag's in the same layout (the configuration columns
     * first, in aggregate.csv's order) */
    char *lat_path = path_in(dir, "latency.csv");
    if (!lat_path) return rs__fail(err, RS_NOMEM, "out of memory");
    lr.path = lat_path;
    lr.names = lat_col_name;
    lr.col_run = rag ? SIZE_MAX : 0;
    rc = rs__csv_read(lat_path, lat_row, &lr, err);
    free(lat_path);
    if (rc) return rc;
  } else if (rag) {
    /* a rag folder of an older ragsweep: aggregate.csv's p50 and p99 */
    lr.path = r->agg_path;
    lr.names = rag_lat_col_name;
    lr.col_run = SIZE_MAX;
    if ((rc = rs__csv_read(r->agg_path, lat_row, &lr, err))) return rc;
  }
  return load_hist(r, !rag, err);
}
