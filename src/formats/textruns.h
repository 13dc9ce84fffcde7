/* textruns.h: JSONL and CSV/TSV runs, and BEIR qrels, as TREC text
 * (internal).
 *
 * import reads every run with the trec_eval engine (trecrun.h), so that a
 * ranking is built the same way whatever file it came from: these readers
 * write a run's rows as TREC run lines ("qid Q0 doc rank score ragsweep",
 * the score written as the file wrote it, -rank without one) into a stream
 * the caller owns, and keep what TREC cannot carry (latency) aside.  The
 * readers check everything the TREC reader would otherwise report about a
 * temporary file, and name the original file, line and field instead.
 *
 * JSONL run, one query a line:
 *   {"query_id": "q1", "doc_ids": ["d3", "d1"], "scores": [2.5, 1.0], "latency_ms": 12.5}
 *   query_id (or qid): a string or an integer; doc_ids (or docs): an array
 *   of strings or integers; scores: optional, an array of numbers as long
 *   as doc_ids; latency_ms: optional, a number >= 0.  Other keys are
 *   ignored; null counts as absent.  A query on two lines, a doc twice on
 *   a line, and latency_ms on some lines but not others are errors.
 *
 * CSV/TSV run, a header then one row per (query, doc):
 *   query_id,doc_id,rank,score,latency_ms
 *   query_id (or qid) and doc_id (or docid) are required; rank, score and
 *   latency_ms are optional columns; others are ignored.  Rows of a query
 *   need not be adjacent.  With latency_ms, every row gives it and the
 *   rows of a query agree.
 *
 * Without scores the listed order is the ranking: the doc at rank r (its
 * position in the line, or the rank column, or its position among the
 * query's rows) gets the score -r, so trec_eval's order (score descending)
 * is the listed order.  With a score column, rank is ignored, as trec_eval
 * ignores it.  Ids may not be empty or hold white space (TREC splits on
 * it); latency_ms is divided by 1000: the corpus stores seconds.
 *
 * BEIR qrels: TSV "query-id<TAB>corpus-id<TAB>score" with that header (or
 * without it), integer scores; written as TREC qrels "qid 0 doc grade". */
#ifndef RAGSWEEP_TEXTRUNS_H
#define RAGSWEEP_TEXTRUNS_H

#include <stdio.h>

#include "internal.h"

/* A run's latencies by query id (seconds). */
typedef struct rs__run_latency rs__run_latency;

/* Writes the run at path as TREC lines to out.  *lat is set to the run's
 * latencies, or NULL when it gives none.  Errors (RS_FORMAT) name
 * path:line, the field, what was expected and what was found. */
rs_code rs__jsonl_run_to_trec(const char *path, FILE *out, rs__run_latency **lat, rs_error *err);
rs_code rs__csv_run_to_trec(const char *path, char delim, FILE *out, rs__run_latency **lat, rs_error *err);
/* The latency of query qid in seconds: 1 and *sec set, or 0 when the run
 * does not name the query. */
int rs__run_latency_get(const rs__run_latency *l, const char *qid, double *sec);
void rs__run_latency_free(rs__run_latency *l);

rs_code rs__beir_qrels_to_trec(const char *path, char delim, FILE *out, rs_error *err);

#endif
