/* otlp.c: the results as an OTLP/HTTP JSON ExportMetricsServiceRequest
 * (see otlp.h).  Written with a string builder: the request is a fixed
 * shape, and json-c stays wire.c's. */
#define _GNU_SOURCE
#include "report/otlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/numparse.h"
#include "internal.h"
#include "llm/http.h"

#ifndef RAGSWEEP_VERSION
#define RAGSWEEP_VERSION "0.1.0"
#endif

/* Aggregation temporality, as the proto's enum number (JSON carries the
 * number). */
#define TEMPORALITY_CUMULATIVE 2

static const char *const own_attr[] = {"run", "measure", "cutoff", "command"};

/* The metric of a measure: a named gauge of the retrieval guides' four, or
 * the catch-all. */
enum { G_PRECISION, G_RECALL, G_MRR, G_NDCG, G_MEASURE, N_GAUGES };
static const char *const gauge_name[N_GAUGES] = {"ragsweep.retrieval.precision", "ragsweep.retrieval.recall",
                                                 "ragsweep.retrieval.mrr", "ragsweep.retrieval.ndcg",
                                                 "ragsweep.measure"};
static const char *const gauge_desc[N_GAUGES] = {
    "Precision at a cutoff (P@k) of a configuration, mean over its queries",
    "Recall at a cutoff (R@k) of a configuration, mean over its queries",
    "Reciprocal rank of the first relevant document (RR, RR@k), mean over a configuration's queries",
    "Normalised discounted cumulative gain (nDCG, nDCG@k), mean over a configuration's queries",
    "Any other measure of a configuration, as ragsweep's aggregate.csv holds it (attribute measure)"};

/* Which gauge a measure goes to; *cutoff is its k, or -1.  Only the plain
 * names: P(rel=2)@5 and the like stay in ragsweep.measure, so a named gauge
 * never mixes definitions. */
static int gauge_of(const char *m, long *cutoff)
{
  static const struct {
    const char *prefix;
    int gauge, cutoff_needed;
  } fam[] = {{"P", G_PRECISION, 1}, {"R", G_RECALL, 1}, {"RR", G_MRR, 0}, {"nDCG", G_NDCG, 0}};
  *cutoff = -1;
  for (size_t f = 0; f < sizeof fam / sizeof *fam; f++) {
    const size_t n = strlen(fam[f].prefix);
    if (strncmp(m, fam[f].prefix, n) != 0) continue;
    if (m[n] == '\0' && !fam[f].cutoff_needed) return fam[f].gauge;
    if (m[n] != '@' || m[n + 1] < '1' || m[n + 1] > '9' || strlen(m + n + 1) > 9) continue;
    char *end;
    const long k = strtol(m + n + 1, &end, 10);
    if (*end) continue;
    *cutoff = k;
    return fam[f].gauge;
  }
  return G_MEASURE;
}

static void key(rs__sb *b, const char *k)
{
  rs__sb_json_str(b, k, strlen(k));
  rs__sb_str(b, ":");
}

/* A double by proto3's JSON mapping: a number, or "NaN", "Infinity",
 * "-Infinity". */
static void put_double(rs__sb *b, double v)
{
  if (isnan(v)) rs__sb_str(b, "\"NaN\"");
  else if (isinf(v)) rs__sb_str(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else {
    char buf[32];
    rs__format_double(v, buf);
    rs__sb_str(b, buf);
  }
}

/* A 64-bit integer: a decimal string. */
static void put_u64(rs__sb *b, uint64_t v) { rs__sb_printf(b, "\"%llu\"", (unsigned long long)v); }

static void put_str_attr(rs__sb *b, int *first, const char *k, const char *v)
{
  if (!*v) return;
  rs__sb_str(b, *first ? "" : ",");
  *first = 0;
  rs__sb_str(b, "{\"key\":");
  rs__sb_json_str(b, k, strlen(k));
  rs__sb_str(b, ",\"value\":{\"stringValue\":");
  rs__sb_json_str(b, v, strlen(v));
  rs__sb_str(b, "}}");
}

/* "attributes":[...] of table row `row`: run, [measure, cutoff], the
 * attributes (config_only: the configuration's only), command. */
static void put_attrs(rs__sb *b, const rs__results *r, size_t row, int config_only, const char *measure, long cutoff)
{
  int first = 1;
  key(b, "attributes");
  rs__sb_str(b, "[");
  put_str_attr(b, &first, "run", rs__results_run(r, row));
  if (measure) put_str_attr(b, &first, "measure", measure);
  if (cutoff >= 0) {
    rs__sb_str(b, first ? "" : ",");
    first = 0;
    rs__sb_printf(b, "{\"key\":\"cutoff\",\"value\":{\"intValue\":\"%ld\"}}", cutoff);
  }
  for (size_t l = 0; l < rs__results_n_labels(r); l++)
    if (!config_only || rs__results_label_is_config(r, l))
      put_str_attr(b, &first, rs__results_label_name(r, l), rs__results_label_value(r, row, l));
  put_str_attr(b, &first, "command", rs__results_kind_name(r->kind));
  rs__sb_str(b, "]");
}

static void metric_head(rs__sb *b, int *first_metric, const char *name, const char *desc, const char *unit)
{
  rs__sb_str(b, *first_metric ? "{" : ",{");
  *first_metric = 0;
  key(b, "name");
  rs__sb_json_str(b, name, strlen(name));
  rs__sb_str(b, ",");
  key(b, "description");
  rs__sb_json_str(b, desc, strlen(desc));
  rs__sb_str(b, ",");
  key(b, "unit");
  rs__sb_json_str(b, unit, strlen(unit));
  rs__sb_str(b, ",");
}

static void gauges(rs__sb *b, const rs__results *r, int *first_metric, char *time_ns)
{
  for (int g = 0; g < N_GAUGES; g++) {
    int first_point = 1;
    for (size_t row = 0; row < r->agg.n_rows; row++) {
      const char *m = rs__results_measure(r, row);
      long cutoff;
      if (gauge_of(m, &cutoff) != g) continue;
      /* num_q is the evaluations counter wherever it gives one */
      if (strcmp(m, "num_q") == 0 && r->has_evaluations[rs__results_run_id(r, row)]) continue;
      if (first_point) {
        metric_head(b, first_metric, gauge_name[g], gauge_desc[g], "1");
        rs__sb_str(b, "\"gauge\":{\"dataPoints\":[");
      }
      rs__sb_str(b, first_point ? "{" : ",{");
      first_point = 0;
      put_attrs(b, r, row, 0, m, cutoff);
      rs__sb_printf(b, ",\"timeUnixNano\":\"%s\",\"asDouble\":", time_ns);
      put_double(b, r->agg.value[row]);
      rs__sb_str(b, "}");
    }
    if (!first_point) rs__sb_str(b, "]}}");
  }
}

static void evaluations(rs__sb *b, const rs__results *r, int *first_metric, const char *time_ns)
{
  int first_point = 1;
  for (size_t run = 0; run < r->n_runs; run++) {
    if (!r->has_evaluations[run]) continue;
    if (first_point) {
      metric_head(b, first_metric, "ragsweep.evaluations",
                  "Queries (rag: samples) evaluated for a configuration by one ragsweep run", "{query}");
      rs__sb_str(b, "\"sum\":{\"dataPoints\":[");
    }
    rs__sb_str(b, first_point ? "{" : ",{");
    first_point = 0;
    put_attrs(b, r, rs__results_run_rows(r)[run], 1, NULL, -1);
    rs__sb_printf(b, ",\"startTimeUnixNano\":\"%s\",\"timeUnixNano\":\"%s\",\"asInt\":", time_ns, time_ns);
    put_u64(b, r->evaluations[run]);
    rs__sb_str(b, "}");
  }
  if (!first_point)
    rs__sb_printf(b, "],\"aggregationTemporality\":%d,\"isMonotonic\":true}}", TEMPORALITY_CUMULATIVE);
}

static void latency(rs__sb *b, const rs__results *r, int *first_metric, const char *time_ns)
{
  int first_point = 1;
  const size_t nb = r->n_hist_bounds + 1;
  for (size_t run = 0; r->has_hist && run < r->n_runs; run++) {
    if (!r->has_hist[run]) continue;
    if (first_point) {
      metric_head(b, first_metric, "ragsweep.latency",
                  "Latency of a configuration's queries (rag: samples), from ragsweep's latency_hist.csv", "s");
      rs__sb_str(b, "\"histogram\":{\"dataPoints\":[");
    }
    rs__sb_str(b, first_point ? "{" : ",{");
    first_point = 0;
    put_attrs(b, r, rs__results_run_rows(r)[run], 1, NULL, -1);
    rs__sb_printf(b, ",\"startTimeUnixNano\":\"%s\",\"timeUnixNano\":\"%s\",\"count\":", time_ns, time_ns);
    const uint64_t *c = &r->hist_count[run * nb];
    uint64_t total = 0;
    for (size_t k = 0; k < nb; k++) total += c[k];
    put_u64(b, total);
    const rs__results_latency *l = &r->latency[run];
    if (r->has_latency[run] && l->n == total && !isnan(l->mean_ms)) {
      rs__sb_str(b, ",\"sum\":");
      put_double(b, l->mean_ms * (double)l->n / 1000.0);
    }
    rs__sb_str(b, ",\"bucketCounts\":[");
    for (size_t k = 0; k < nb; k++) {
      if (k) rs__sb_str(b, ",");
      put_u64(b, c[k]);
    }
    rs__sb_str(b, "],\"explicitBounds\":[");
    for (size_t k = 0; k + 1 < nb; k++) {
      if (k) rs__sb_str(b, ",");
      put_double(b, r->hist_le_ms[k] / 1000.0);
    }
    rs__sb_str(b, "]");
    if (r->has_latency[run] && total > 0 && !isnan(l->max_ms)) {
      rs__sb_str(b, ",\"max\":");
      put_double(b, l->max_ms / 1000.0);
    }
    rs__sb_str(b, "}");
  }
  if (!first_point) rs__sb_printf(b, "],\"aggregationTemporality\":%d}}", TEMPORALITY_CUMULATIVE);
}

rs_code rs__otlp_json(const rs__results *r, uint64_t time_unix_nano, rs__sb *out, rs_error *err)
{
  for (size_t l = 0; l < rs__results_n_labels(r); l++)
    for (size_t k = 0; k < sizeof own_attr / sizeof *own_attr; k++)
      if (strcmp(rs__results_label_name(r, l), own_attr[k]) == 0)
        return rs__fail(err, RS_USAGE, "%s: attribute '%s' has the name of an attribute every OTLP data point "
                                       "carries (run, measure, cutoff, command): rename the attribute",
                        r->agg_path, own_attr[k]);
  char time_ns[32];
  snprintf(time_ns, sizeof time_ns, "%llu", (unsigned long long)time_unix_nano);
  rs__sb_str(out, "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
                  "{\"stringValue\":\"ragsweep\"}}]},\"scopeMetrics\":[{\"scope\":{\"name\":\"ragsweep\","
                  "\"version\":\"" RAGSWEEP_VERSION "\"},\"metrics\":[");
  int first_metric = 1;
  gauges(out, r, &first_metric, time_ns);
  evaluations(out, r, &first_metric, time_ns);
  latency(out, r, &first_metric, time_ns);
  rs__sb_str(out, "]}]}]}");
  if (out->failed) return rs__fail(err, RS_NOMEM, "out of memory");
  return RS_OK;
}

/* A reply's partialSuccess.rejectedDataPoints (0 when absent): the
 * collector accepted the request but dropped that many points. */
static unsigned long long rejected_points(const char *body)
{
  const char *p = strstr(body, "\"rejectedDataPoints\"");
  if (!p) return 0;
  p += strlen("\"rejectedDataPoints\"");
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':' || *p == '"') p++;
  return strtoull(p, NULL, 10);
}

rs_code rs__otlp_push(const rs__results *r, const char *url, rs_error *err)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  rs__sb b = {0};
  rs_code rc = rs__otlp_json(r, now, &b, err);
  const size_t len = b.n;
  char *body = rs__sb_take(&b);
  if (!rc && !body) rc = rs__fail(err, RS_NOMEM, "out of memory");
  rs__http_reply reply = {0};
  if (!rc) rc = rs__http_request("POST", url, "application/json", body, len, 30, &reply, err);
  if (!rc && reply.body) {
    const unsigned long long n = rejected_points(reply.body);
    if (n) {
      char shown[512];
      rs__http_url_redacted(url, shown, sizeof shown);
      const size_t line = strcspn(reply.body, "\r\n");
      rc = rs__fail(err, RS_IO, "POST %s: the collector rejected %llu data points: %.*s", shown, n,
                    (int)(line < 200 ? line : 200), reply.body);
    }
  }
  rs__http_reply_free(&reply);
  free(body);
  return rc;
}
