/* summary_json.c: the evaluation as one JSON document (see summary_json.h). */
#define _GNU_SOURCE
#include "report/summary_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "formats/csvio.h"
#include "internal.h"
#include "util/strbuf.h"
#include "util/tmpfiles.h"

static void json_text(rs__sb *b, const char *s) { rs__sb_json_str(b, s, strlen(s)); }

static void json_key(rs__sb *b, const char *key)
{
  json_text(b, key);
  rs__sb_str(b, ": ");
}

/* --- gates.csv and tiers.csv, copied as they are -------------------------------------- */

/* A checks file read row by row into a JSON array of objects: every
 * column by its header name; numbers where the column holds numbers
 * (value, mean, ...), the pass column as "passed": true/false. */
typedef struct {
  rs__sb *b;
  const char *path;
  char **header;
  size_t n_cols;
  size_t rows, failed;
  const char *pass_col; /* "pass" (gates.csv) or "tier" (tiers.csv: "below" fails) */
} checks_reader;

static int is_number_col(const char *name)
{
  static const char *const numeric[] = {"value", "mean", "minimum", "target", "excellent"};
  for (size_t i = 0; i < sizeof numeric / sizeof *numeric; i++)
    if (strcmp(name, numeric[i]) == 0) return 1;
  return 0;
}

static rs_code checks_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  checks_reader *c = ctx;
  if (!c->header) {
    if (!(c->header = calloc(n ? n : 1, sizeof *c->header))) return rs__fail(err, RS_NOMEM, "out of memory");
    c->n_cols = n;
    for (size_t i = 0; i < n; i++)
      if (!(c->header[i] = strdup(fields[i]))) return rs__fail(err, RS_NOMEM, "out of memory");
    return RS_OK;
  }
  if (n != c->n_cols)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", c->path, line, c->n_cols,
                    n);
  rs__sb_str(c->b, c->rows++ ? ",\n    {" : "\n    {");
  int passed = 1;
  for (size_t i = 0; i < n; i++) {
    if (i) rs__sb_str(c->b, ", ");
    if (strcmp(c->header[i], c->pass_col) == 0 && strcmp(c->pass_col, "pass") == 0) {
      if (strcmp(fields[i], "true") != 0 && strcmp(fields[i], "false") != 0)
        return rs__fail(err, RS_FORMAT, "%s:%zu: expected true or false in column pass, found '%s'", c->path, line,
                        fields[i]);
      passed = strcmp(fields[i], "true") == 0;
      json_key(c->b, "passed");
      rs__sb_str(c->b, passed ? "true" : "false");
      continue;
    }
    json_key(c->b, c->header[i]);
    char *end;
    errno = 0;
    const double v = is_number_col(c->header[i]) && fields[i][0] ? strtod(fields[i], &end) : 0.0;
    if (is_number_col(c->header[i]) && fields[i][0] && !*end && errno != ERANGE) rs__sb_json_num(c->b, v);
    else if (is_number_col(c->header[i]) && !fields[i][0]) rs__sb_str(c->b, "null");
    else json_text(c->b, fields[i]);
  }
  if (strcmp(c->pass_col, "tier") == 0) {
    for (size_t i = 0; i < n; i++)
      if (strcmp(c->header[i], "tier") == 0) passed = strcmp(fields[i], "below") != 0;
    rs__sb_str(c->b, ", ");
    json_key(c->b, "passed");
    rs__sb_str(c->b, passed ? "true" : "false");
  }
  c->failed += !passed;
  rs__sb_str(c->b, "}");
  return RS_OK;
}

static rs_code write_checks(rs__sb *b, const char *dir, const char *name, const char *pass_col, size_t *n_rows,
                            size_t *n_failed, rs_error *err)
{
  rs__sb path_b = {0};
  rs__sb_printf(&path_b, "%s/%s", dir, name);
  char *path = rs__sb_take(&path_b);
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  struct stat st;
  rs_code rc = RS_OK;
  checks_reader c = {.b = b, .path = path, .pass_col = pass_col};
  rs__sb_str(b, "[");
  if (stat(path, &st) == 0) rc = rs__csv_read(path, checks_row, &c, err);
  rs__sb_str(b, c.rows ? "\n  ]" : "]");
  *n_rows += c.rows;
  *n_failed += c.failed;
  for (size_t i = 0; c.header && i < c.n_cols; i++) free(c.header[i]);
  free(c.header);
  free(path);
  return rc;
}

/* --- the document ------------------------------------------------------------------------ */

static void configurations(rs__sb *b, const rs__results *r)
{
  const size_t n_labels = rs__results_n_labels(r);
  rs__sb_str(b, "[");
  for (size_t run = 0; run < r->n_runs; run++) {
    const size_t first = r->run_row[run];
    rs__sb_str(b, run ? ",\n    {" : "\n    {");
    json_key(b, "run");
    json_text(b, rs__results_run(r, first));
    rs__sb_str(b, ", ");
    json_key(b, "attributes");
    rs__sb_str(b, "{");
    size_t shown = 0;
    for (size_t l = 0; l < n_labels; l++) {
      const char *v = rs__results_label_value(r, first, l);
      if (!*v) continue; /* a run without this attribute */
      rs__sb_str(b, shown++ ? ", " : "");
      json_key(b, rs__results_label_name(r, l));
      json_text(b, v);
    }
    rs__sb_str(b, "}, ");
    /* rag with several judges: a configuration's rows differ by judge, so
     * the measure key carries it (faithfulness[gpt-4o]), as compare names it. */
    json_key(b, "measures");
    rs__sb_str(b, "{");
    shown = 0;
    for (size_t row = 0; row < r->agg.n_rows; row++) {
      if (rs__results_run_id(r, row) != run) continue;
      rs__sb_str(b, shown++ ? ", " : "");
      const char *judge = NULL;
      for (size_t l = 0; l < n_labels; l++)
        if (r->kind == RS__RESULTS_RAG && strcmp(rs__results_label_name(r, l), "judge") == 0)
          judge = rs__results_label_value(r, row, l);
      if (judge && *judge) {
        rs__sb key = {0};
        rs__sb_printf(&key, "%s[%s]", rs__results_measure(r, row), judge);
        json_text(b, key.s ? key.s : "");
        rs__sb_str(b, ": ");
        if (key.failed) b->failed = 1;
        rs__sb_free(&key);
      } else {
        json_key(b, rs__results_measure(r, row));
      }
      rs__sb_json_num(b, r->agg.value[row]);
    }
    rs__sb_str(b, "}");
    if (r->has_latency[run]) {
      const rs__results_latency *l = &r->latency[run];
      const struct { const char *name; double v; } ms[] = {{"mean", l->mean_ms}, {"p50", l->p50_ms}, {"p90", l->p90_ms},
                                                           {"p95", l->p95_ms},   {"p99", l->p99_ms}, {"p999", l->p999_ms},
                                                           {"max", l->max_ms}};
      rs__sb_str(b, ", ");
      json_key(b, "latency_ms");
      rs__sb_str(b, "{");
      shown = 0;
      for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        if (isnan(ms[i].v)) continue;
        rs__sb_str(b, shown++ ? ", " : "");
        json_key(b, ms[i].name);
        rs__sb_json_num(b, ms[i].v);
      }
      rs__sb_str(b, "}");
    }
    rs__sb_str(b, "}");
  }
  rs__sb_str(b, r->n_runs ? "\n  ]" : "]");
}

static void string_array(rs__sb *b, const char *const *items, size_t n)
{
  rs__sb_str(b, "[");
  for (size_t i = 0; i < n; i++) {
    rs__sb_str(b, i ? ", " : "");
    json_text(b, items[i]);
  }
  rs__sb_str(b, "]");
}

rs_code rs__summary_json_write(const rs__results *r, const rs__summary_info *info, const char *path, rs_error *err)
{
  rs__sb checks = {0}, b = {0};
  size_t n_checks = 0, n_failed = 0;
  rs__sb_str(&checks, ",\n  \"gates\": ");
  rs_code rc = write_checks(&checks, r->dir, "gates.csv", "pass", &n_checks, &n_failed, err);
  if (!rc && r->kind == RS__RESULTS_RAG) {
    rs__sb_str(&checks, ",\n  \"tiers\": ");
    rc = write_checks(&checks, r->dir, "tiers.csv", "tier", &n_checks, &n_failed, err);
  }
  if (rc) {
    rs__sb_free(&checks);
    return rc;
  }
  char stamp[32] = "";
  const time_t t = (time_t)info->unix_time;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const int passed = info->exit_status == 0;
  rs__sb_str(&b, "{\n  \"tool\": \"ragsweep\",\n  \"version\": ");
  json_text(&b, RAGSWEEP_VERSION);
  rs__sb_str(&b, ",\n  \"command\": ");
  json_text(&b, info->command);
  rs__sb_str(&b, ",\n  \"timestamp\": ");
  json_text(&b, stamp);
  rs__sb_printf(&b, ",\n  \"unix_time\": %lld", (long long)info->unix_time);
  rs__sb_str(&b, ",\n  \"status\": ");
  json_text(&b, passed ? "passed" : "failed");
  rs__sb_printf(&b, ",\n  \"passed\": %s,\n  \"exit_status\": %d,\n  \"failures\": %zu,\n  \"checks\": %zu",
                passed ? "true" : "false", info->exit_status, n_failed, n_checks);
  rs__sb_str(&b, ",\n  \"inputs\": ");
  string_array(&b, info->inputs, info->n_inputs);
  rs__sb_str(&b, ",\n  \"arguments\": ");
  string_array(&b, info->arguments, info->n_arguments);
  rs__sb_str(&b, ",\n  \"output_dir\": ");
  json_text(&b, r->dir);
  rs__sb_str(&b, ",\n  \"configurations\": ");
  configurations(&b, r);
  rs__sb_add(&b, checks.s ? checks.s : "", checks.n);
  rs__sb_str(&b, "\n}\n");
  if (b.failed || checks.failed) rc = rs__fail(err, RS_NOMEM, "out of memory");
  else rc = rs__write_file_atomic(path, b.s, b.n, "results.json", err);
  rs__sb_free(&b);
  rs__sb_free(&checks);
  return rc;
}
