/* prom.h: the results as Prometheus metrics (internal): the text exposition
 * format 0.0.4, written to a file for node_exporter's textfile collector or
 * pushed to a Pushgateway.
 *
 * Families:
 *   ragsweep_measure (gauge)  one sample per aggregate.csv row: labels run,
 *       the row's attributes (eval's and compare's attribute columns; rag's
 *       configuration columns and judge), measure (the canonical name as
 *       written, nDCG@10), command (eval, compare or rag: which folder).
 *   ragsweep_latency_seconds (summary)  per run with a latency: run, its
 *       configuration attributes, command; quantile 0.5 0.9 0.95 0.99 0.999
 *       (those the folder has), _sum (mean x n) and _count (n) when known.
 * An attribute whose value is empty has no label (Prometheus reads an
 * empty label as an absent one).  No timestamps: the textfile collector and
 * the Pushgateway refuse them.
 *
 * Label names.  An attribute name becomes a label name by replacing each
 * character outside [A-Za-z0-9_] (a UTF-8 sequence, or an invalid byte,
 * counts as one character) by '_', and putting '_' before a leading digit.
 * It is an error (RS_USAGE, naming both) when two attributes become the same
 * label, or an attribute becomes one of ragsweep's labels (run, measure,
 * command, quantile) or a label of the push (job and the grouping labels),
 * or the name is empty or starts with "__" (reserved by Prometheus).  Label
 * values are escaped (\\, \", \n), invalid UTF-8 becoming U+FFFD. */
#ifndef RAGSWEEP_REPORT_PROM_H
#define RAGSWEEP_REPORT_PROM_H

#include "ragsweep/error.h"
#include "report/results.h"
#include "util/strbuf.h"

/* A label given by the caller: a Pushgateway grouping label. */
typedef struct rs__prom_label {
  const char *name, *value;
} rs__prom_label;

/* Appends r's metrics to *out.  `reserved` are the labels the push adds
 * (job, grouping labels): no attribute may become one of their names.
 * RS_USAGE for a label name clash (see above), RS_FORMAT for two
 * aggregate.csv rows with the same labels (the exposition would repeat a
 * series), RS_NOMEM. */
rs_code rs__prom_text(const rs__results *r, const rs__prom_label *reserved, size_t n_reserved, rs__sb *out,
                      rs_error *err);

/* Writes r's metrics to path, under a temporary name in the same folder
 * (.NAME.tmp.PID, which node_exporter's *.prom pattern does not match)
 * renamed into place. */
rs_code rs__prom_write_file(const rs__results *r, const char *path, rs_error *err);

/* PUTs r's metrics to the Pushgateway at url (its base: http://host:9091,
 * a path prefix kept) under the grouping key job=`job`, command=eval|
 * compare|rag, then grouping[0..n_grouping): URL/metrics/job/JOB/command/
 * KIND/NAME/VALUE..., each value percent-encoded, or in the NAME@base64
 * form (base64url) when it is empty or holds a '/'.  PUT replaces every
 * metric of that group.  RS_USAGE for a bad grouping label (a name that is
 * not a label name, job, command, a name given twice, or one an attribute
 * takes), RS_IO when the push fails (the message names the URL, without a
 * password, and the HTTP status and the first line of the reply). */
rs_code rs__prom_push(const rs__results *r, const char *url, const char *job, const rs__prom_label *grouping,
                      size_t n_grouping, rs_error *err);

/* The label name of attribute `name` by the rule above, into *out (empty
 * when the name has no character). */
void rs__prom_label_name(const char *name, rs__sb *out);

#endif
