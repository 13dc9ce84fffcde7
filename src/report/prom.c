/* prom.c: the results as Prometheus text exposition (see prom.h). */
#define _GNU_SOURCE
#include "report/prom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/numparse.h"
#include "internal.h"
#include "llm/http.h"
#include "util/tmpfiles.h"

/* Labels ragsweep sets itself, and what each holds (for the messages). */
static const char *const own_label[] = {"run", "measure", "command", "quantile"};
static const char *const own_label_what[] = {"the run's name", "the measure's name", "the command (eval, compare, rag)",
                                             "the latency quantile"};

void rs__prom_label_name(const char *name, rs__sb *out)
{
  const unsigned char *u = (const unsigned char *)name;
  const size_t n = strlen(name);
  if (n && u[0] >= '0' && u[0] <= '9') rs__sb_add(out, "_", 1);
  for (size_t i = 0; i < n;) {
    const unsigned c = u[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
      rs__sb_add(out, name + i, 1);
      i++;
      continue;
    }
    size_t len = 1, bad = 1;
    if (c >= 0x80 && !(len = rs__utf8_seq_len(u + i, n - i, &bad))) len = bad;
    rs__sb_add(out, "_", 1);
    i += len;
  }
}

static int is_label_name(const char *s)
{
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

static void free_names(char **names, size_t n)
{
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

/* The label name of every attribute, checked against each other, against
 * ragsweep's own and against the push's (reserved). */
static rs_code label_names(const rs__results *r, const rs__prom_label *reserved, size_t n_reserved, char ***out,
                           rs_error *err)
{
  const size_t n = rs__results_n_labels(r);
  char **names = rs__calloc(n, sizeof *names);
  if (!names) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  for (size_t l = 0; l < n && !rc; l++) {
    const char *attr = rs__results_label_name(r, l);
    rs__sb b = {0};
    rs__prom_label_name(attr, &b);
    if (!(names[l] = rs__sb_take(&b))) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    const char *name = names[l];
    if (!*name)
      rc = rs__fail(err, RS_USAGE, "%s: an attribute column has an empty name: Prometheus needs a label name",
                    r->agg_path);
    else if (strncmp(name, "__", 2) == 0)
      rc = rs__fail(err, RS_USAGE, "%s: attribute '%s' becomes the label name '%s', and names starting with __ are "
                                   "reserved by Prometheus: rename the attribute", r->agg_path, attr, name);
    for (size_t k = 0; !rc && k < sizeof own_label / sizeof *own_label; k++)
      if (strcmp(name, own_label[k]) == 0)
        rc = rs__fail(err, RS_USAGE, "%s: attribute '%s' becomes the label '%s', which ragsweep uses for %s: rename "
                                     "the attribute", r->agg_path, attr, name, own_label_what[k]);
    for (size_t k = 0; !rc && k < n_reserved; k++)
      if (strcmp(name, reserved[k].name) == 0)
        rc = rs__fail(err, RS_USAGE, "%s: attribute '%s' becomes the label '%s', which is also a grouping label of "
                                     "the push ('%s'; the Pushgateway would overwrite the attribute's values): "
                                     "choose another grouping label or rename the attribute",
                      r->agg_path, attr, name, reserved[k].name);
    for (size_t k = 0; !rc && k < l; k++)
      if (strcmp(name, names[k]) == 0)
        rc = rs__fail(err, RS_USAGE, "%s: attributes '%s' and '%s' both become the label '%s' (characters outside "
                                     "[A-Za-z0-9_] become '_'): rename one of them",
                      r->agg_path, rs__results_label_name(r, k), attr, name);
  }
  if (rc) {
    free_names(names, n);
    return rc;
  }
  *out = names;
  return RS_OK;
}

static const char *prom_escape(unsigned c, char hex[8])
{
  return c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : NULL;
}

/* A label value: \\, \" and \n escaped; invalid UTF-8 as U+FFFD. */
static void put_value(rs__sb *b, const char *s) { rs__sb_escaped(b, s, strlen(s), prom_escape); }

static void put_label(rs__sb *b, int *first, const char *name, const char *value)
{
  if (!*value) return; /* Prometheus reads an empty value as an absent label */
  rs__sb_str(b, *first ? "{" : ",");
  *first = 0;
  rs__sb_str(b, name);
  rs__sb_str(b, "=\"");
  put_value(b, value);
  rs__sb_str(b, "\"");
}

/* {run=...,<attributes>,measure=...,command=...,quantile=...}: the labels of
 * table row `row`; config_only leaves out what qualifies a measure only
 * (rag's judge); measure and quantile may be NULL. */
static void put_labels(rs__sb *b, const rs__results *r, char *const *names, size_t row, int config_only,
                       const char *measure, const char *quantile)
{
  int first = 1;
  put_label(b, &first, "run", rs__results_run(r, row));
  for (size_t l = 0; l < rs__results_n_labels(r); l++)
    if (!config_only || rs__results_label_is_config(r, l))
      put_label(b, &first, names[l], rs__results_label_value(r, row, l));
  if (measure) put_label(b, &first, "measure", measure);
  put_label(b, &first, "command", rs__results_kind_name(r->kind));
  if (quantile) put_label(b, &first, "quantile", quantile);
  rs__sb_str(b, first ? "" : "}");
}

/* A sample value: the shortest text that reads back as v (as the CSVs),
 * and Prometheus's spellings NaN, +Inf, -Inf. */
static void put_number(rs__sb *b, double v)
{
  if (isnan(v)) rs__sb_str(b, "NaN");
  else if (isinf(v)) rs__sb_str(b, v > 0 ? "+Inf" : "-Inf");
  else {
    char buf[32];
    rs__format_double(v, buf);
    rs__sb_str(b, buf);
  }
}

typedef struct {
  char *labels;
  size_t row;
} labelled_row;

static int by_labels(const void *a, const void *b)
{
  const labelled_row *x = a, *y = b;
  const int c = strcmp(x->labels, y->labels);
  return c ? c : (x->row > y->row) - (x->row < y->row);
}

static rs_code measure_family(const rs__results *r, char *const *names, rs__sb *out, rs_error *err)
{
  const size_t n = r->agg.n_rows;
  labelled_row *lr = rs__calloc(n, sizeof *lr);
  if (!lr) return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  for (size_t row = 0; row < n && !rc; row++) {
    rs__sb b = {0};
    put_labels(&b, r, names, row, 0, rs__results_measure(r, row), NULL);
    lr[row].row = row;
    if (!(lr[row].labels = rs__sb_take(&b))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  if (!rc) {
    rs__sb_str(out, "# HELP ragsweep_measure A measure of a configuration as ragsweep's aggregate.csv holds it (label "
                    "measure: its canonical name, such as nDCG@10).\n"
                    "# TYPE ragsweep_measure gauge\n");
    for (size_t row = 0; row < n; row++) {
      rs__sb_str(out, "ragsweep_measure");
      rs__sb_str(out, lr[row].labels);
      rs__sb_str(out, " ");
      put_number(out, r->agg.value[row]);
      rs__sb_str(out, "\n");
    }
    /* A repeated label set would be a repeated series, which Prometheus
     * refuses: find it, so the message names both lines. */
    qsort(lr, n, sizeof *lr, by_labels);
    for (size_t i = 1; i < n && !rc; i++)
      if (strcmp(lr[i - 1].labels, lr[i].labels) == 0)
        rc = rs__fail(err, RS_FORMAT, "%s: lines %zu and %zu have the same run, attributes and measure (%s): one "
                                      "Prometheus series each is needed",
                      r->agg_path, r->agg.line[lr[i - 1].row], r->agg.line[lr[i].row], lr[i].labels);
  }
  for (size_t row = 0; row < n; row++) free(lr[row].labels);
  free(lr);
  return rc;
}

static void latency_family(const rs__results *r, char *const *names, rs__sb *out)
{
  static const char *const q_name[] = {"0.5", "0.9", "0.95", "0.99", "0.999"};
  int any = 0;
  for (size_t run = 0; run < r->n_runs; run++) any |= r->has_latency[run];
  if (!any) return;
  rs__sb_str(out, "# HELP ragsweep_latency_seconds Latency of a configuration's queries (rag: samples) in seconds, "
                  "from ragsweep's latency.csv: exact percentiles (numpy's linear definition).\n"
                  "# TYPE ragsweep_latency_seconds summary\n");
  for (size_t run = 0; run < r->n_runs; run++) {
    if (!r->has_latency[run]) continue;
    const rs__results_latency *l = &r->latency[run];
    const size_t row = rs__results_run_rows(r)[run];
    const double q_ms[] = {l->p50_ms, l->p90_ms, l->p95_ms, l->p99_ms, l->p999_ms};
    for (size_t q = 0; q < sizeof q_ms / sizeof *q_ms; q++) {
      if (isnan(q_ms[q])) continue;
      rs__sb_str(out, "ragsweep_latency_seconds");
      put_labels(out, r, names, row, 1, NULL, q_name[q]);
      rs__sb_str(out, " ");
      put_number(out, q_ms[q] / 1000.0);
      rs__sb_str(out, "\n");
    }
    /* _sum and _count only when the folder gives n and the mean: a
     * summary re-exposed by the Pushgateway or node_exporter shows a
     * missing one as 0, which would be a wrong value. */
    if (l->n > 0 && !isnan(l->mean_ms)) {
      rs__sb_str(out, "ragsweep_latency_seconds_sum");
      put_labels(out, r, names, row, 1, NULL, NULL);
      rs__sb_str(out, " ");
      put_number(out, l->mean_ms * (double)l->n / 1000.0);
      rs__sb_str(out, "\nragsweep_latency_seconds_count");
      put_labels(out, r, names, row, 1, NULL, NULL);
      rs__sb_printf(out, " %zu\n", l->n);
    }
  }
}

rs_code rs__prom_text(const rs__results *r, const rs__prom_label *reserved, size_t n_reserved, rs__sb *out,
                      rs_error *err)
{
  char **names = NULL;
  rs_code rc = label_names(r, reserved, n_reserved, &names, err);
  if (rc) return rc;
  rc = measure_family(r, names, out, err);
  if (!rc) latency_family(r, names, out);
  if (!rc && out->failed) rc = rs__fail(err, RS_NOMEM, "out of memory");
  free_names(names, rs__results_n_labels(r));
  return rc;
}

/* --- the file ------------------------------------------------------------------------------ */

rs_code rs__prom_write_file(const rs__results *r, const char *path, rs_error *err)
{
  const char *slash = strrchr(path, '/');
  if (!*(slash ? slash + 1 : path))
    return rs__fail(err, RS_USAGE, "%s: expected a file name (such as ragsweep.prom), found a folder", path);
  rs__sb text = {0};
  rs_code rc = rs__prom_text(r, NULL, 0, &text, err);
  if (!rc) rc = text.failed ? rs__fail(err, RS_NOMEM, "out of memory") : rs__write_file_atomic(path, text.s ? text.s : "", text.n, "ragsweep.prom", err);
  rs__sb_free(&text);
  return rc;
}

/* --- the push ------------------------------------------------------------------------------ */

/* A path segment of the grouping key: "/name/value", percent-encoded, or
 * "/name@base64/value" in base64url when the value is empty or has a '/'
 * (which no percent-encoding gets past the Pushgateway's router). */
static void put_segment(rs__sb *b, const char *name, const char *value)
{
  static const char hex[] = "0123456789ABCDEF";
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const unsigned char *u = (const unsigned char *)value;
  const size_t n = strlen(value);
  rs__sb_str(b, "/");
  rs__sb_str(b, name);
  if (n == 0 || strchr(value, '/')) {
    rs__sb_str(b, "@base64/");
    if (n == 0) rs__sb_str(b, "=");
    for (size_t i = 0; i < n; i += 3) {
      const unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
      char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63], i + 1 < n ? b64[v >> 6 & 63] : '=', i + 2 < n ? b64[v & 63] : '='};
      rs__sb_add(b, q, 4);
    }
    return;
  }
  rs__sb_str(b, "/");
  for (size_t i = 0; i < n; i++) {
    const unsigned c = u[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      rs__sb_add(b, value + i, 1);
    } else {
      const char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      rs__sb_add(b, e, 3);
    }
  }
}

rs_code rs__prom_push(const rs__results *r, const char *url, const char *job, const rs__prom_label *grouping,
                      size_t n_grouping, rs_error *err)
{
  for (size_t i = 0; i < n_grouping; i++) {
    const char *name = grouping[i].name;
    if (!is_label_name(name) || strncmp(name, "__", 2) == 0)
      return rs__fail(err, RS_USAGE, "grouping label '%s': expected a label name ([a-zA-Z_][a-zA-Z0-9_]*, not "
                                     "starting with __)", name);
    if (strcmp(name, "job") == 0 || strcmp(name, "command") == 0)
      return rs__fail(err, RS_USAGE, "grouping label '%s': ragsweep sets it (job from the job name, command from "
                                     "the folder): choose another name", name);
    for (size_t j = 0; j < i; j++)
      if (strcmp(name, grouping[j].name) == 0)
        return rs__fail(err, RS_USAGE, "grouping label '%s' is given twice", name);
    for (size_t k = 0; k < sizeof own_label / sizeof *own_label; k++)
      if (strcmp(name, own_label[k]) == 0)
        return rs__fail(err, RS_USAGE, "grouping label '%s': every metric has this label (%s), which the grouping "
                                       "label would overwrite: choose another name", name, own_label_what[k]);
  }
  rs__prom_label *reserved = rs__calloc(n_grouping + 1, sizeof *reserved);
  if (!reserved) return rs__fail(err, RS_NOMEM, "out of memory");
  reserved[0] = (rs__prom_label){"job", job};
  for (size_t i = 0; i < n_grouping; i++) reserved[1 + i] = grouping[i];
  rs__sb text = {0}, u = {0};
  rs_code rc = rs__prom_text(r, reserved, n_grouping + 1, &text, err);
  free(reserved);
  if (rc) {
    rs__sb_free(&text);
    return rc;
  }
  size_t base = strlen(url);
  while (base && url[base - 1] == '/') base--;
  rs__sb_add(&u, url, base);
  rs__sb_str(&u, "/metrics");
  put_segment(&u, "job", job);
  put_segment(&u, "command", rs__results_kind_name(r->kind));
  for (size_t i = 0; i < n_grouping; i++) put_segment(&u, grouping[i].name, grouping[i].value);
  const size_t len = text.n;
  char *body = rs__sb_take(&text), *full = rs__sb_take(&u);
  if (!body || !full) rc = rs__fail(err, RS_NOMEM, "out of memory");
  else rc = rs__http_request("PUT", full, "text/plain; version=0.0.4; charset=utf-8", body, len, 30, NULL, err);
  free(body);
  free(full);
  return rc;
}
