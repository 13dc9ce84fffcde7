/* html.h: the self-contained HTML report of one or more output folders
 * (internal). */
#ifndef RAGSWEEP_REPORT_HTML_H
#define RAGSWEEP_REPORT_HTML_H

#include <stddef.h>

#include "ragsweep/error.h"

/* Writes the report of dirs[0..n_dirs) (and of the history database at
 * history_db, or NULL) to out_path, under a temporary name renamed into
 * place. */
rs_code rs__report_write(const char *const *dirs, size_t n_dirs, const char *history_db, const char *out_path,
                         rs_error *err);

#endif
