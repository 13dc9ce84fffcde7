/* pivot.h: pivot tables of an aggregate.csv (internal): measures across
 * configurations, laid out on row and column keys, with significance marks
 * from the compare.csv that `ragsweep compare` writes beside it.  The
 * library part of `ragsweep table`, shared with the reports.
 *
 * The work is here (loading, key and measure resolution, filters, axis
 * positions, cell lookup, ambiguity checks, which cells are significant);
 * the caller formats and prints.  Messages name the options as `ragsweep
 * table` spells them (--rows, --cols, --where, -m, --baseline), as they tell
 * the user what to change.  Nothing here is for sharing across threads. */
#ifndef RAGSWEEP_REPORT_PIVOT_H
#define RAGSWEEP_REPORT_PIVOT_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"
#include "util/strdict.h"

/* aggregate.csv as read: one row per (run, attributes, measure) with a
 * value.  Keys: 0 is run, 1 .. n_keys-2 the attributes (the columns between
 * run and measure), n_keys-1 the measure. */
typedef struct rs__agg {
  const char *path; /* borrowed from rs__agg_load's caller */
  int have_header;
  size_t n_cols, col_value;
  char **key;  /* [n_keys] names */
  size_t *col; /* [n_keys] the column each key reads */
  size_t n_keys;
  size_t k_measure;  /* the measure's key: keys 1..k_measure-1 are the attributes, any after it (base,
                        cutoff) follow from the measure */
  rs__strdict *val; /* [n_keys] the values of each key */
  uint32_t *id;     /* [n_rows * n_keys] value ids */
  double *value;    /* [n_rows]; NaN: the file says NaN */
  size_t *line;     /* [n_rows] line in the file */
  size_t n_rows, cap;
  size_t n_config_cols; /* rag's aggregate.csv: the configuration columns that make the run (col[0] is SIZE_MAX) */
} rs__agg;

#define RS__AGG_RUN 0
#define RS__AGG_MEASURE(t) ((t)->k_measure)

/* Reads aggregate.csv at path (kept as t->path, so it must outlive t) into
 * a zeroed *t: eval's and compare's run,<attributes>,measure,value, or
 * rag's <configuration>,[judge],metric,mean,..., whose run is the
 * configuration's values joined by '/' and whose measure key is metric.
 * Rows with an empty value are skipped.  RS_IO, RS_FORMAT (header, field
 * count, number; an empty file or no rows) or RS_NOMEM.
 * Free *t with rs__agg_free even on failure. */
rs_code rs__agg_load(const char *path, rs__agg *t, rs_error *err);
/* Frees what *t holds; accepts a zeroed or half-loaded *t. */
void rs__agg_free(rs__agg *t);
/* The value of key k in table row `row` (a view into t). */
const char *rs__agg_value(const rs__agg *t, size_t row, size_t k);

/* What to lay out: option texts, borrowed for the call. */
typedef struct rs__pivot_spec {
  const char *rows, *cols;      /* KEYS joined by commas, or NULL (defaults below) */
  const char *const *measures;  /* -m names: verbatim names of the file, or eval's spellings */
  size_t n_measures;            /* 0: every measure but the num_q counts */
  const char *const *where;     /* KEY=VALUE filters */
  size_t n_where;
} rs__pivot_spec;

/* A pivot: rows and columns are the distinct key tuples of the selected
 * table rows, in the order of their keys' ranks (first appearance in the
 * file; measures: -m order). */
typedef struct rs__pivot {
  const rs__agg *t;    /* borrowed */
  size_t *mrank;       /* [measures of t] rank of each measure; SIZE_MAX: not shown */
  unsigned char **allow; /* [n_keys] NULL (any value) or a flag per value id */
  size_t *rows, *cols; /* the keys of each axis */
  size_t n_rkeys, n_ckeys;
  size_t *sel; /* selected table rows */
  size_t n_sel;
  size_t *r_of, *c_of;       /* axis positions of sel[i] */
  size_t *r_first, *c_first; /* a table row of each axis position (its labels) */
  size_t n_r, n_c;
  size_t *cell; /* [n_r * n_c] table row, or SIZE_MAX (empty cell) */
} rs__pivot;

/* Builds the pivot of t (borrowed until rs__pivot_free) into a zeroed *p.
 * Axes default to rows = run and cols = measure (rows = measure when cols
 * lacks it; cols = run when rows has measure).  RS_USAGE for an unknown key,
 * measure or --where value, a key given twice, no row left, or a cell that
 * several rows match (the message names what differs among them);
 * RS_FORMAT when the cell's rows differ in nothing or the file has only
 * num_q counts; RS_NOMEM.  Free *p with rs__pivot_free even on failure. */
rs_code rs__pivot_make(rs__pivot *p, const rs__agg *t, const rs__pivot_spec *spec, rs_error *err);
/* Frees what *p holds (not the table); accepts a zeroed *p. */
void rs__pivot_free(rs__pivot *p);
/* 1 when key k is among keys[0..n). */
int rs__pivot_has_key(const size_t *keys, size_t n, size_t k);

/* Significance marks from compare.csv, per table row. */
typedef struct rs__pivot_sig {
  int on;              /* compare.csv was read and a baseline chosen */
  char *baseline;      /* its name */
  long base_run;       /* its id among the table's runs, or -1 */
  unsigned char *mark; /* [n_rows] 1: differs from the baseline, adjusted p < alpha */
  char **untested;     /* measures shown without a comparison (views into the table), in rank order */
  size_t n_untested;
} rs__pivot_sig;

/* Reads compare.csv at path for the pivot p into a zeroed *s (base_run -1):
 * the comparisons with `baseline` (NULL: the only baseline in the file),
 * p_ttest_adj when ttest else p_perm_adj, against alpha.  A file with no
 * comparisons leaves s->on 0 (no marks).  RS_USAGE (unknown baseline,
 * several baselines and none chosen), RS_FORMAT, RS_IO, RS_NOMEM.  Free *s
 * with rs__pivot_sig_free even on failure. */
rs_code rs__pivot_sig_load(const rs__pivot *p, const char *path, const char *baseline, int ttest, double alpha,
                           rs__pivot_sig *s, rs_error *err);
/* Frees what *s holds; accepts a zeroed *s. */
void rs__pivot_sig_free(rs__pivot_sig *s);

#endif
