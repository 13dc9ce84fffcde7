/* output_csv.h: CSV files for pandas, DuckDB and spreadsheets (internal).
 *
 * A file is written under a temporary name beside its final one and renamed
 * into place by rs__csv_commit, so a half-written CSV never looks finished.
 * Fields are quoted only when they must be (a comma, a quote, CR, LF, or
 * leading/trailing space); numbers use the shortest text that reads back to
 * the same double.  src/output_csv.c is the only file that includes <csv.h>. */
#ifndef RAGSWEEP_OUTPUT_CSV_H
#define RAGSWEEP_OUTPUT_CSV_H

#include <stddef.h>

#include "internal.h"

typedef struct rs__csv rs__csv;

/* Creates dir/name (under a temporary name until committed). */
rs_code rs__csv_create(const char *dir, const char *name, rs__csv **out, rs_error *err);
/* Fields of the current row, then rs__csv_end_row. */
void rs__csv_str(rs__csv *w, const char *s);
void rs__csv_num(rs__csv *w, double v);
void rs__csv_uint(rs__csv *w, unsigned long long v);
rs_code rs__csv_end_row(rs__csv *w, rs_error *err);
/* Flushes, closes and renames into place; the final path. */
rs_code rs__csv_commit(rs__csv *w, rs_error *err);
const char *rs__csv_path(const rs__csv *w);
/* Removes the temporary file; accepts NULL. */
void rs__csv_abort(rs__csv *w);

#endif
