/* import.h: TREC files and JSON evaluation sets -> a corpus (internal).
 *
 * The judgments come from TREC qrels or from the seeds' JSON format
 * (evalset.h).  Queries are written in trec_eval's order (strcmp of the
 * ids), so sums over queries run in the order trec_eval sums them and the
 * corpus evaluates to trec_eval's bits.  Doc ids (from the qrels and every
 * run) are interned and written in strcmp order to /docs/id (but with
 * rs__import_cfg.rows_only, below).  Each run's
 * ranking of a judged query is stored in trec_eval's order (score
 * descending, ties by docno descending) with its float64 scores; topics the
 * qrels do not judge are dropped, as trec_eval ignores them.  Runs are
 * stored dense [nq, K] unless padding would take more than half the space,
 * then in CSR form.
 *
 * Without qrels or a JSON eval set, the queries file gives the queries
 * (its ids, in strcmp order, with their texts) and the qrels are empty: a
 * corpus for a team that has no judgments yet ('ragsweep judge' labels
 * it, 'ragsweep eval --qrels' scores it).  Each run's rankings of those
 * queries are stored as above; its other topics are dropped and counted
 * (rs__import_cfg.dropped) for the caller to report.  A query of a JSON
 * eval set without judgments keeps its rankings in the same way. */
#ifndef RAGSWEEP_IMPORT_H
#define RAGSWEEP_IMPORT_H

#include <stddef.h>

#include "formats/corpus.h"

typedef struct rs__import_run {
  const char *name;
  const char *path; /* a TREC, JSONL or CSV/TSV run (plain or gzip; detect.h tells which) */
  rs__attr *attrs;  /* configuration attributes to store */
  size_t n_attrs;
} rs__import_run;

typedef struct rs__import_cfg {
  const char *qrels_path; /* TREC qrels, BEIR qrels TSV or a JSON eval set (detect.h), or NULL */
  const char *json_path;  /* JSON evaluation set, or NULL (at most one is set) */
  /* Text collections (texts.h), or NULL.  docs_path writes /docs/text:
   * every doc id of the corpus (judged or retrieved) needs a text.
   * queries_path writes /queries/text (replacing the JSON eval set's
   * "query" texts): every query id needs one.  A missing one is RS_FORMAT
   * naming the id and the file; texts of other ids are ignored.  With
   * neither qrels_path nor json_path, queries_path is required and its
   * ids are the corpus's queries. */
  const char *docs_path;
  const char *queries_path;
  const rs__import_run *runs;
  size_t n_runs;
  int threads;
  /* [n_runs] out, or NULL: without qrels_path and json_path, the number
   * of distinct topics of each run that are not in queries_path (their
   * rankings were dropped); 0 otherwise. */
  size_t *dropped;
  /* [n_runs] out, or NULL: for a run that gives latencies (JSONL, CSV),
   * the number of corpus queries it gives none for (it does not name
   * them); the latencies are then not stored.  0 otherwise. */
  size_t *no_latency;
  /* rs__import_corpus only, for callers that only score the rows (eval,
   * compare): doc numbers need only tell a query's docs apart, so with
   * TREC or BEIR qrels no doc id is interned (the corpus has no /docs/id,
   * see rs__corpus.rows_ranked).  Ignored with other judgments. */
  int rows_only;
} rs__import_cfg;

/* Writes the corpus to out_path (under a temporary name, renamed when
 * complete). */
rs_code rs__import(const rs__import_cfg *cfg, const char *out_path, rs_error *err);

/* The same corpus in memory, with no file: what rs__corpus_open would give
 * for the file rs__import writes (queries, doc ids, qrels, runs in name
 * order with the same rows, scores, latencies and layout), but the rows are
 * read from memory (formats/corpus_mem.h).  Its path, for messages, is the
 * judgments' file (qrels, JSON eval set or queries file).  The same errors
 * as rs__import, and the query id checks of rs__corpus_open. */
rs_code rs__import_corpus(const rs__import_cfg *cfg, rs__corpus **out, rs_error *err);

#endif
