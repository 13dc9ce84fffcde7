/* results.h: what one command left in its output folder, read back for the
 * morning-after view (internal): the HTML report, the Prometheus and OTLP
 * exports and the history all start from here, so they agree on what a
 * run, a measure and a latency are.
 *
 * A folder is recognised by its files:
 *   eval     aggregate.csv (run,<attributes>,measure,value,queries),
 *            latency.csv (run,<attributes>,n,mean_ms,p50_ms,...,max_ms) and
 *            latency_hist.csv (run,<attributes>,le_ms,count);
 *   compare  the same aggregate.csv beside compare.csv (no latency.csv);
 *   rag      aggregate.csv (<configuration>,[judge],metric,mean,n,...), whose
 *            run is the configuration's values joined by '/', and, when the
 *            samples have latencies, latency.csv and latency_hist.csv as
 *            eval's with the configuration columns in place of run and
 *            attributes (a folder without latency.csv: aggregate.csv's
 *            latency_p50_ms / latency_p99_ms columns, n unknown).
 *   judge    no aggregate.csv, but qrels.txt, judgments.jsonl or
 *            agreement.csv (`ragsweep judge`): rs__results_detect tells it
 *            apart; rs__results_load reads the other three only.
 * Every value is as written: nothing is recomputed (the one sum is rag's
 * evaluations, below). */
#ifndef RAGSWEEP_REPORT_RESULTS_H
#define RAGSWEEP_REPORT_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"
#include "report/pivot.h"

typedef enum { RS__RESULTS_EVAL, RS__RESULTS_COMPARE, RS__RESULTS_RAG, RS__RESULTS_JUDGE } rs__results_kind;

/* The latency of one run, in milliseconds; NaN where the folder does not
 * say (rag gives only p50 and p99; n is 0 then). */
typedef struct rs__results_latency {
  size_t n;
  double mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms;
} rs__results_latency;

typedef struct rs__results {
  char *dir;             /* the folder, as given */
  char *agg_path;        /* dir/aggregate.csv */
  rs__results_kind kind;
  size_t *run_row;       /* [n_runs] the first row of each run */
  rs__agg agg;           /* aggregate.csv: rows of (run, labels..., measure) -> value */
  /* Labels of a row: the keys between run and measure (eval's and compare's
   * attributes; rag's configuration columns, then judge when present). */
  size_t n_runs;                 /* the distinct runs: ids of agg.val[RS__AGG_RUN] */
  rs__results_latency *latency;  /* [n_runs] by run id */
  unsigned char *has_latency;    /* [n_runs] */
  /* The latency histogram (latency_hist.csv), when the folder has one:
   * bucket b of run i holds hist_count[i * (n_hist_bounds + 1) + b]
   * latencies in (hist_le_ms[b-1], hist_le_ms[b]] (from 0 for b = 0; above
   * the last bound for b = n_hist_bounds).  The same bounds for every run. */
  size_t n_hist_bounds;
  double *hist_le_ms;       /* [n_hist_bounds] ascending, finite */
  uint64_t *hist_count;     /* [n_runs * (n_hist_bounds + 1)] */
  unsigned char *has_hist;  /* [n_runs] */
  /* How many queries (eval, compare: the run's num_q row) or samples (rag:
   * n + failures + undefined of the configuration's rows, the largest when
   * they differ) were evaluated; unknown where the folder does not say
   * (compare --per-query). */
  uint64_t *evaluations;           /* [n_runs] */
  unsigned char *has_evaluations;  /* [n_runs] */
} rs__results;

/* Reads dir into a zeroed *r.  RS_IO when dir or its aggregate.csv cannot
 * be read (the message names the folder and says which command writes it),
 * RS_FORMAT for a malformed file (its path and line), RS_NOMEM.  Free *r
 * with rs__results_free even on failure. */
rs_code rs__results_load(const char *dir, rs__results *r, rs_error *err);
void rs__results_free(rs__results *r);

/* What dir holds, from its file names alone: RS__RESULTS_JUDGE (no
 * aggregate.csv, and judge's qrels.txt, judgments.jsonl or agreement.csv),
 * else RS__RESULTS_EVAL standing for "an aggregate.csv to load" (its kind is
 * then rs__results_load's).  RS_IO when dir is missing, not a folder, or
 * holds none of these files (the message names dir and says which command
 * writes what). */
rs_code rs__results_detect(const char *dir, rs__results_kind *kind, rs_error *err);

/* The folder's kind as a word: "eval", "compare", "rag" or "judge". */
const char *rs__results_kind_name(rs__results_kind k);
/* Convenience views of row i of r->agg. */
const char *rs__results_run(const rs__results *r, size_t row);
const char *rs__results_measure(const rs__results *r, size_t row);
/* Labels: keys 1 .. n_labels of the table. */
size_t rs__results_n_labels(const rs__results *r);
const char *rs__results_label_name(const rs__results *r, size_t label);
const char *rs__results_label_value(const rs__results *r, size_t row, size_t label);
/* The run id of row i (an index into latency / has_latency). */
size_t rs__results_run_id(const rs__results *r, size_t row);
/* 1 when label `label` is one of the run's configuration attributes, 0 when
 * it qualifies a measure only (rag's judge): the run's latency and
 * evaluations carry the former. */
int rs__results_label_is_config(const rs__results *r, size_t label);
/* A row of each run (its first in the file), [n_runs]: where the run's
 * attribute values are read.  Computed at load. */
const size_t *rs__results_run_rows(const rs__results *r);

#endif
