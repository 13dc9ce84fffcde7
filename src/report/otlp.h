/* otlp.h: the results as OpenTelemetry metrics over OTLP/HTTP JSON (internal). */
#ifndef RAGSWEEP_REPORT_OTLP_H
#define RAGSWEEP_REPORT_OTLP_H

#include "ragsweep/error.h"
#include "report/results.h"

/* POSTs r's metrics to url (an OTLP/HTTP metrics endpoint, .../v1/metrics). */
rs_code rs__otlp_push(const rs__results *r, const char *url, rs_error *err);

#endif
