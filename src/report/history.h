/* history.h: every evaluation's aggregates over time, in SQLite (internal). */
#ifndef RAGSWEEP_REPORT_HISTORY_H
#define RAGSWEEP_REPORT_HISTORY_H

#include "ragsweep/error.h"
#include "report/results.h"

/* Appends r's aggregates to the database at path (created when missing),
 * as one evaluation of `command` at unix_time with `label` (or NULL). */
rs_code rs__history_append(const char *path, const rs__results *r, const char *command, const char *label,
                           double unix_time, rs_error *err);

#endif
