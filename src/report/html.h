/* html.h: the self-contained HTML report of one or more output folders
 * (internal): `ragsweep report`, and `eval --report` / `compare --report`.
 *
 * One file, no external resource (no URL, no font, no script or style
 * from elsewhere): inline CSS, inline SVG charts written by svg.c, and a
 * small inline script for the sortable tables and the attribute filter.
 * The charts draw without the script, and the page prints (@media print).
 * What each section shows is in README.md, "The morning-after view". */
#ifndef RAGSWEEP_REPORT_HTML_H
#define RAGSWEEP_REPORT_HTML_H

#include <stddef.h>

#include "ragsweep/error.h"
#include "util/strbuf.h"

/* One value of the history: the time series section draws one chart per
 * measure, one series per run, x the time. */
typedef struct rs__report_point {
  const char *run;
  const char *measure;
  const char *label; /* the evaluation's --label (a commit, a model version), or NULL */
  double time;       /* Unix seconds */
  double value;
} rs__report_point;

typedef struct rs__report_opts {
  const char *title;    /* the page's title; NULL: "ragsweep report" */
  const char *lead;     /* the lead measure; NULL: each folder's first measure in aggregate.csv */
  const char *baseline; /* the baseline of compare.csv's rows; NULL: the file's only (else first) baseline */
  /* The history (points borrowed for the call), drawn when n_history > 0;
   * history_source names where they came from (the database), or NULL. */
  const rs__report_point *history;
  size_t n_history;
  const char *history_source;
  /* Or the history database to read them from (`ragsweep report --history
   * FILE`), with the measures to chart (none: every measure but the num_q
   * counts); points given above come first. */
  const char *history_path;
  const char *const *history_measures;
  size_t n_history_measures;
} rs__report_opts;

/* Writes the report of dirs[0..n_dirs) (output folders of eval, compare,
 * rag or judge, in that order on the page) to out_path, under a temporary
 * name renamed into place once complete: on failure no file is left and
 * an older out_path is untouched.  o may be NULL (defaults).  RS_IO for a
 * missing or unrecognised folder (the message names it and says which
 * command writes what), RS_FORMAT for a malformed file (path and line),
 * RS_USAGE for a --lead or --baseline that no folder has, RS_NOMEM. */
rs_code rs__report_write(const char *const *dirs, size_t n_dirs, const rs__report_opts *o, const char *out_path,
                         rs_error *err);

/* The history hook: the time-series charts of pts[0..n) (one figure per
 * measure, in first-appearance order; id "chart-history-<k>"), appended to
 * b.  The points of a run need not be sorted by time. */
void rs__report_timeseries(rs__sb *b, const rs__report_point *pts, size_t n);

/* Appends s with & < > " ' escaped as entities: safe in HTML text and in
 * quoted attribute values. */
void rs__html_esc(rs__sb *b, const char *s);

#endif
