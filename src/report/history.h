/* history.h: every evaluation's aggregates over time, in an SQLite file
 * (internal): `eval`, `compare` and `rag` append with --history FILE,
 * `ragsweep history FILE` prints the trends and checks the alerts, and the
 * HTML report draws the time series.
 *
 * The file (schema RS_HISTORY_VERSION, PRAGMA application_id 0x52534849,
 * "RSHI"; the CREATE statements are in README, "History and alerts"):
 *   evaluations  one row per append: id, time (ISO-8601 UTC text) and
 *                unix_time, label, command, output_dir, ragsweep_version,
 *                hostname;
 *   results      (evaluation_id, run, measure, value): every row of the
 *                folder's aggregate.csv with the value as read (NaN as
 *                NULL), plus latency_p50_ms, latency_p95_ms and
 *                latency_p99_ms per run where the folder has them;
 *   attributes   (evaluation_id, run, name, value): the run's configuration
 *                attributes (eval's and compare's attribute columns, rag's
 *                configuration columns), empty values left out;
 *   series       a view joining results to their evaluation's time and label.
 * A run is aggregate.csv's run.  When a label column takes several values
 * within one run (rag's judge column with several --judge-model), each
 * value is its own series, named "<run> <name>=<value>" (in label order).
 *
 * Several processes may append to one file at once (WAL, busy timeout; an
 * append is one transaction).  Nothing here prints. */
#ifndef RAGSWEEP_REPORT_HISTORY_H
#define RAGSWEEP_REPORT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"
#include "report/results.h"
#include "util/strdict.h"

#define RS_HISTORY_VERSION 1

/* Appends r's aggregates to the database at path (created when missing;
 * its folder must exist) as one evaluation of `command` ("eval", "compare"
 * or "rag") at unix_time (seconds since 1970, UTC) with `label` (or NULL),
 * in one transaction: all of it is appended or none.  *evaluation_id (if
 * non-NULL) receives the new evaluation's id.  Errors name path: RS_IO (a
 * missing folder, a folder given as the file, a file that cannot be
 * written), RS_FORMAT (not SQLite, not a ragsweep history, another schema
 * version; a run and measure given twice in aggregate.csv), RS_NOMEM. */
rs_code rs__history_append(const char *path, const rs__results *r, const char *command, const char *label,
                           int64_t unix_time, int64_t *evaluation_id, rs_error *err);

/* What to read back.  Texts are borrowed for the call. */
typedef struct rs__history_filter {
  const char *const *runs; /* runs, verbatim; none: every run */
  size_t n_runs;
  /* Measures: a name the file has verbatim is taken as it is (rag's
   * metrics, num_q); any other is read as `eval -m` reads it (ndcg_cut.10
   * is nDCG@10; R@{5,10} is two).  None: every measure but the num_q
   * counts. */
  const char *const *measures;
  size_t n_measures;
  size_t last; /* 0: every point; else the last `last` points of each series */
} rs__history_filter;

/* One evaluation, as appended. */
typedef struct rs__history_eval {
  int64_t id, unix_time;
  char *time;       /* ISO-8601 UTC, "2026-11-23T02:00:00Z" */
  char *label;      /* NULL: none */
  char *command;    /* eval, compare, rag */
  char *output_dir; /* the output folder (absolute when it could be resolved) */
} rs__history_eval;

/* One value of one series. */
typedef struct rs__history_point {
  uint32_t run, measure; /* ids into runs.str and measures.str */
  size_t eval;           /* index into evals */
  double value;          /* NaN: the folder had no value */
} rs__history_point;

/* The series of a history: points ordered by run, then measure (both
 * bytewise), then time (then evaluation id), so each (run, measure) series
 * is a run of consecutive points, oldest first. */
typedef struct rs__history_series {
  rs__strdict runs, measures;  /* the names, by id (ids in order of first appearance in points) */
  rs__history_eval *evals;     /* every evaluation of the file, by time then id */
  size_t n_evals;
  rs__history_point *points;
  size_t n_points;
} rs__history_series;

/* Reads the series of the history at path that f selects (NULL: all) into
 * a zeroed *s.  RS_IO for a missing file (the message says how one is
 * made), a folder, an unreadable file; RS_FORMAT as for append; RS_USAGE
 * for a run or measure the file does not have (the message lists those it
 * has); RS_NOMEM.  Free *s with rs__history_series_free even on failure. */
rs_code rs__history_series_load(const char *path, const rs__history_filter *f, rs__history_series *s, rs_error *err);
void rs__history_series_free(rs__history_series *s);

#endif
