/* prom.h: the results as Prometheus metrics (internal): the text exposition
 * format, written to a file for node_exporter's textfile collector or pushed
 * to a Pushgateway. */
#ifndef RAGSWEEP_REPORT_PROM_H
#define RAGSWEEP_REPORT_PROM_H

#include "ragsweep/error.h"
#include "report/results.h"

/* Writes r's metrics to path, under a temporary name renamed into place. */
rs_code rs__prom_write_file(const rs__results *r, const char *path, rs_error *err);
/* PUTs r's metrics to the Pushgateway at url under job `job`. */
rs_code rs__prom_push(const rs__results *r, const char *url, const char *job, rs_error *err);

#endif
