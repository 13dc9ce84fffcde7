/* folder.h: everything the HTML report reads from one output folder
 * (internal).  rs__results (results.h) gives the aggregate and the
 * latency; this adds the files only the report needs, each optional:
 *
 *   curves.csv       eval --report: measure-vs-k values and the 11-point
 *                    interpolated precision (without it: the cutoffs of
 *                    aggregate.csv's own measures);
 *   latency_cdf.csv  eval --report: latency quantiles (without it: the
 *                    percentiles of latency.csv);
 *   per_query.csv    eval --per-query: the lead measure's t-interval;
 *   compare.csv      compare: differences, bootstrap intervals, p-values;
 *   gates.csv        eval/compare/rag --gate;
 *   worst.csv        eval/compare --worst (the "worst" lists; the
 *                    no-relevant-retrieved lists are counted per run),
 *                    with query_texts.csv for the texts;
 *   agreement.csv, qrels.txt   judge (and rag's agreement.csv).
 *
 * Every value is as written; the only computed figures are the t-interval
 * (from per_query.csv) and means of the lead measure over configurations
 * (heatmaps), both in file order.  Malformed files are RS_FORMAT naming the
 * path and line. */
#ifndef RAGSWEEP_REPORT_FOLDER_H
#define RAGSWEEP_REPORT_FOLDER_H

#include <stddef.h>

#include "ragsweep/error.h"
#include "report/results.h"
#include "util/strdict.h"

/* A configuration as the report draws it: a run (eval, compare), or a
 * rag configuration with its judge when rag used several. */
typedef struct rs__entry {
  char *name;       /* the run; "run [judge]" for a rag judge */
  size_t run;       /* run id in res (latency) */
  char *attrs_json; /* {"attribute":"value",...}: the row's labels */
  size_t first_row; /* an aggregate row of this entry (its labels) */
} rs__entry;

typedef struct rs__curve_pt {
  size_t entry, family; /* family: index into fam */
  double cutoff, value;
} rs__curve_pt;

typedef struct rs__cdf {
  double *q, *ms; /* [n] */
  size_t n;
} rs__cdf;

typedef struct rs__cmp_row {
  char *run, *baseline, *measure;
  size_t entry; /* the run's entry, or SIZE_MAX */
  double n, mean, base_mean, diff, ci_low, ci_high, p_ttest, p_perm, p_ttest_adj, p_perm_adj;
} rs__cmp_row;

typedef struct rs__gate_row {
  char *run, *check, *measure, *op, *threshold;
  double value;
  int pass;
} rs__gate_row;

typedef struct rs__worst_row {
  char *run, *measure, *query;
  size_t position, entry;
  double value, first_rank, num_rel; /* NaN: empty */
} rs__worst_row;

typedef struct rs__stat_row {
  char *name;
  double value; /* NaN: empty */
} rs__stat_row;

typedef struct rs__folder {
  rs__results_kind kind;
  const char *dir; /* borrowed */
  rs__results res; /* eval, compare, rag (zeroed for judge) */

  rs__entry *entry;
  size_t n_entries;
  rs__strdict entry_ids; /* entry names -> index (the first of a repeated name) */
  size_t *entry_of_row; /* [res.agg.n_rows] */
  size_t n_meas;        /* the measures, ids of res.agg's measure key, num_q counts excluded */
  size_t *meas;         /* [n_meas] value ids of the measure key, in file order */
  double *value;        /* [n_entries * n_meas]; NaN: absent */
  size_t *num_q;        /* [n_entries] SIZE_MAX: none */

  rs__strdict fam;      /* curve families (Success, R, P, nDCG, ...) in order */
  rs__curve_pt *curve;  /* sorted by entry, family, cutoff */
  size_t n_curve;
  int curves_file;      /* curves.csv was read */
  double *pr;           /* [n_entries * 11] iprec_at_recall at 0.0..1.0; NaN: absent */
  int has_pr;

  rs__cdf *cdf;         /* [n_entries] */
  int cdf_file;         /* latency_cdf.csv was read (else from latency.csv) */

  double *ci_lo, *ci_hi; /* [n_entries] the lead measure's t-interval; NaN: none */
  int has_ci;

  rs__cmp_row *cmp;
  size_t n_cmp;
  int has_cmp;
  rs__gate_row *gate;
  size_t n_gate;
  int has_gates;
  rs__worst_row *worst;
  size_t n_worst;
  size_t *no_hit; /* [n_entries] the no_relevant_retrieved list's length */
  int has_worst;
  rs__strdict text_ids; /* query_texts.csv: id -> texts[id] */
  char **texts;

  rs__stat_row *agree;  /* judge's or rag's agreement.csv */
  size_t n_agree;
  int has_agree;
  size_t label_count[16]; /* judge's qrels.txt: labels 0..14, 15 = other */
  size_t n_labels;        /* qrels lines */
  int has_qrels;
  size_t n_judgments;     /* judgments.jsonl lines */
  int has_judgments;

  size_t lead; /* index into meas of the lead measure (SIZE_MAX: no measures) */
} rs__folder;

/* Reads dir into a zeroed *f (dir borrowed until rs__folder_free).  lead:
 * the measure to lead with, or NULL for the first (a folder without it
 * leads with its first, *lead_found left alone; found: set to 1).
 * Free *f with rs__folder_free even on failure. */
rs_code rs__folder_load(const char *dir, const char *lead, int *lead_found, rs__folder *f, rs_error *err);
void rs__folder_free(rs__folder *f);

/* The name of measure m (index into f->meas). */
const char *rs__folder_measure(const rs__folder *f, size_t m);
/* Index into f->meas of the measure named name, or SIZE_MAX. */
size_t rs__folder_find_measure(const rs__folder *f, const char *name);
/* The value of entry e on measure m (NaN when absent). */
double rs__folder_value(const rs__folder *f, size_t e, size_t m);
/* The text of query id, or NULL. */
const char *rs__folder_text(const rs__folder *f, const char *query);
/* The entry named name, or SIZE_MAX. */
size_t rs__folder_entry(const rs__folder *f, const char *name);

/* Student's t quantile: the t with P(|T| >= t) = p2 (two-sided), df > 0. */
double rs__t_quantile2(double p2, double df);

#endif
