/* otlp.h: the results as OpenTelemetry metrics over OTLP/HTTP JSON
 * (internal): one ExportMetricsServiceRequest, encoded by the OTLP
 * specification's JSON rules (lowerCamelCase fields, 64-bit integers as
 * decimal strings, enums as integers, NaN as the string "NaN").
 *
 * Resource: service.name = ragsweep.  Scope: ragsweep and its version.
 * Every aggregate.csv row goes to exactly one metric:
 *   ragsweep.retrieval.precision  gauge  P@k           (attribute cutoff = k)
 *   ragsweep.retrieval.recall     gauge  R@k           (cutoff = k)
 *   ragsweep.retrieval.mrr        gauge  RR, RR@k      (cutoff = k when given)
 *   ragsweep.retrieval.ndcg       gauge  nDCG, nDCG@k  (cutoff = k when given)
 *   ragsweep.measure              gauge  every other measure (AP, Success@k,
 *                                        P(rel=2)@5, rag's metrics, ...)
 *   ragsweep.evaluations          sum    the queries (eval, compare: num_q)
 *                                        or samples (rag) evaluated per
 *                                        configuration; monotonic, cumulative
 * and, per configuration with a histogram (eval's latency_hist.csv):
 *   ragsweep.latency              histogram, unit s, the fixed buckets of
 *                                 latency_hist.csv, count, sum (mean x n),
 *                                 max.
 * Gauge points carry run, measure (the canonical name as written), [cutoff,
 * an int], the row's attributes and command (eval, compare or rag); the sum
 * and the histogram run, the configuration's attributes and command.
 * Attributes with an empty value are left out, as in the Prometheus export.
 * Every point has the same timeUnixNano (the push's time); the sum and the
 * histogram have startTimeUnixNano = timeUnixNano: each push is the whole
 * of one finished evaluation. */
#ifndef RAGSWEEP_REPORT_OTLP_H
#define RAGSWEEP_REPORT_OTLP_H

#include <stdint.h>

#include "ragsweep/error.h"
#include "report/results.h"
#include "util/strbuf.h"

/* Appends the request for r, stamped time_unix_nano, to *out.  RS_USAGE
 * when an attribute is named like one of the points' own attributes (run,
 * measure, cutoff, command), RS_NOMEM. */
rs_code rs__otlp_json(const rs__results *r, uint64_t time_unix_nano, rs__sb *out, rs_error *err);

/* POSTs r's metrics to url (an OTLP/HTTP metrics endpoint, .../v1/metrics)
 * as application/json.  RS_IO when the collector refuses them, in whole
 * (the HTTP status and the first line of its reply) or in part (a
 * partialSuccess with rejectedDataPoints > 0), or cannot be reached. */
rs_code rs__otlp_push(const rs__results *r, const char *url, rs_error *err);

#endif
