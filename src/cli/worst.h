/* worst.h: worst.csv, the failure analysis of --worst N (eval, compare).
 *
 * For every run and measure: the N queries with the lowest values (ties:
 * corpus order), each with its external id, value, the rank of its first
 * relevant doc (relevance >= 1) and its number of relevant docs; then
 * every query of the run with no relevant doc retrieved.  Fed one query
 * at a time in run order (the sweep's per-query callback), it keeps N
 * values per measure, not the whole run.
 *
 * When the corpus has /queries/text, query_texts.csv (query,text) is
 * written beside it with the text of every query worst.csv names, in
 * corpus order: the report shows the worst queries with their words. */
#ifndef RAGSWEEP_CLI_WORST_H
#define RAGSWEEP_CLI_WORST_H

#include <stddef.h>

#include "formats/corpus.h"
#include "metrics/spec.h"

typedef struct worst_file worst_file;

/* Creates dir/worst.csv (and dir/query_texts.csv; both renamed into place
 * by worst_commit).  The corpus's query ids must be loaded. */
rs_code worst_open(worst_file **out, const char *dir, size_t n_worst, const rs__spec *spec, const rs__corpus *c,
                   rs_error *err);
/* One evaluated query of run `run` (runs in order, queries in order). */
rs_code worst_add(worst_file *w, size_t run, const char *run_name, size_t query, const double *values, rs_error *err);
rs_code worst_commit(worst_file *w, rs_error *err);
/* Whether worst_commit writes query_texts.csv (the corpus has texts). */
int worst_has_texts(const worst_file *w);
void worst_abort(worst_file *w);

#endif
