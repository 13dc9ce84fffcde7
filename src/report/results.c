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

size_t rs__results_n_labels(const rs__results *r) { return r->agg.n_keys - 2; }

const char *rs__results_label_name(const rs__results *r, size_t label) { return r->agg.key[1 + label]; }

const char *rs__results_label_value(const rs__results *r, size_t row, size_t label)
{
  return rs__agg_value(&r->agg, row, 1 + label);
}

size_t rs__results_run_id(const rs__results *r, size_t row) { return r->agg.id[row * r->agg.n_keys + RS__AGG_RUN]; }

void rs__results_free(rs__results *r)
{
  rs__agg_free(&r->agg);
  free(r->dir);
  free(r->agg_path);
  free(r->latency);
  free(r->has_latency);
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
  long run;
  if (lr->col_run != SIZE_MAX) {
    run = rs__strdict_find(&r->agg.val[RS__AGG_RUN], fields[lr->col_run]);
  } else {
    rs__sb b = {0};
    for (size_t c = 0; c < r->agg.n_config_cols; c++) {
      if (c) rs__sb_str(&b, "/");
      rs__sb_str(&b, fields[c]);
    }
    char *name = r->agg.n_config_cols ? rs__sb_take(&b) : strdup("all");
    if (!name) return rs__fail(err, RS_NOMEM, "out of memory");
    run = rs__strdict_find(&r->agg.val[RS__AGG_RUN], name);
    free(name);
  }
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
  if (!(r->latency = calloc(r->n_runs, sizeof *r->latency)) || !(r->has_latency = calloc(r->n_runs, 1)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  lat_reader lr = {.r = r};
  if (r->kind == RS__RESULTS_RAG) {
    lr.path = r->agg_path;
    lr.names = rag_lat_col_name;
    lr.col_run = SIZE_MAX;
    return rs__csv_read(r->agg_path, lat_row, &lr, err);
  }
  if (!file_exists(dir, "latency.csv")) return RS_OK;
  char *lat_path = path_in(dir, "latency.csv");
  if (!lat_path) return rs__fail(err, RS_NOMEM, "out of memory");
  lr.path = lat_path;
  lr.names = lat_col_name;
  lr.col_run = 0;
  rc = rs__csv_read(lat_path, lat_row, &lr, err);
  free(lat_path);
  return rc;
}
