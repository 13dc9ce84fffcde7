/* sweep_io.h: what `eval` and `compare` share: opening a corpus with its
 * run files, the runs' attribute columns, aggregate.csv, gates and the
 * worst-queries file. */
#ifndef RAGSWEEP_CLI_SWEEP_IO_H
#define RAGSWEEP_CLI_SWEEP_IO_H

#include <stddef.h>

#include "formats/corpus.h"
#include "formats/csvio.h"
#include "metrics/spec.h"
#include "engine/latency.h"
#include "engine/sweep.h"

typedef struct sweep_input {
  rs__corpus *corpus;
  rs__runset *files;
  size_t n_files;
  const rs__run **runs;
  size_t n_runs;
  char **keys; /* attribute columns: union of the runs' keys, bytewise order */
  size_t n_keys;
  /* --depths: the virtual runs runs[] then points to, and their strings */
  rs__run *cut;
  size_t n_cut;
  char *cut_text; /* "top_k" and each depth's digits */
} sweep_input;

/* Opens the corpus and the run files (which follow its query order);
 * run names must be unique across them. */
rs_code sweep_input_open(sweep_input *in, const char *corpus, char **run_paths, size_t n_paths, rs_error *err);
/* The same for a corpus already open (an in-memory one, built from text
 * inputs), with no run files; in owns it from here on, also after an error. */
rs_code sweep_input_adopt(sweep_input *in, rs__corpus *corpus, rs_error *err);
void sweep_input_close(sweep_input *in);
/* RS_FORMAT when one of r's attributes has the name of a fixed output
 * column (run, measure, value, n, mean_ms, ...), naming the file, the run,
 * the attribute and how to rename it.  sweep_input_open checks every run. */
rs_code check_run_attrs(const rs__run *r, rs_error *err);
/* Scores with the TREC qrels file at path (eval/compare --qrels) in place of
 * the corpus's /qrels: ids are matched to the corpus, an unknown one is an
 * error naming the file, line and id. */
rs_code sweep_input_use_qrels(sweep_input *in, const char *path, rs_error *err);
/* eval/compare --depths K1,...,Kn: replaces every run R by n virtual runs
 * "R/top_k=K", R's rankings cut at their top K docs, with the attribute
 * top_k = K beside R's own (runs[] and keys[] change; the engine reads R's
 * rows once for all of them).  RS_FORMAT when a run already has a top_k
 * attribute or a name clashes. */
rs_code sweep_input_add_depths(sweep_input *in, const size_t *depths, size_t n_depths, rs_error *err);
/* The longest ranking of the non-CSR runs (sizes the discount table). */
size_t sweep_input_max_k(const sweep_input *in);
/* Index of the run named name, or SIZE_MAX. */
size_t sweep_input_find(const sweep_input *in, const char *name);

/* The run's name and its attribute columns (empty where it has none). */
void csv_run_columns(rs__csv *w, const sweep_input *in, size_t run);

/* The query policy of a result, for the "queries" column of aggregate.csv,
 * compare.csv and summary.csv and the printed summary: eval and compare
 * default to different sets (trec_eval's, and the same set for every run
 * that paired tests need), so every aggregate says which it is. */
#define POLICY_RANKED "ranked" /* the judged queries the run ranks (eval's default, trec_eval's) */
#define POLICY_ALL "all"       /* every judged query; one the run does not rank scores 0 (trec_eval -c) */
#define POLICY_COMMON "common" /* the judged queries every compared run ranks (compare --queries=judged) */
#define POLICY_VALUES "values" /* the queries with a value for every run in the per_query.csv read */

/* The measure, base and cutoff columns of aggregate.csv and per_query.csv
 * (nDCG@10 -> nDCG@10, nDCG, 10; P(rel=2)@5 -> ..., P(rel=2), 5; AP -> AP,
 * AP, empty), so that the cutoff pivots without parsing names.  Split once
 * per measure, put on every row. */
typedef struct measure_cols {
  const char *const *name; /* [n], not owned */
  char **base;             /* [n] */
  char (*cutoff)[24];      /* [n]: the digits, or "" */
  size_t n;
} measure_cols;
rs_code measure_cols_init(measure_cols *mc, const char *const *names, size_t n, rs_error *err);
void measure_cols_free(measure_cols *mc);
void measure_cols_header(rs__csv *w);                         /* measure,base,cutoff */
void measure_cols_put(rs__csv *w, const measure_cols *mc, size_t k); /* name k's three fields */
void measure_cols_put_name(rs__csv *w, const char *name); /* the same, split on the spot */

/* aggregate.csv: run, attributes, measure, base, cutoff, value, queries (the policy);
 * one row per run and visible measure, then the num_q counts (all three
 * when with_counts, else num_q only).  in may be NULL (no attributes):
 * names[r] then names the runs.  The policy column comes last so that
 * readers keyed on run..measure (ragsweep table) read the file as before. */
rs_code write_aggregate(rs__csv *w, const sweep_input *in, const char *const *run_names, size_t n_runs,
                        const char *const *measures, size_t n_measures, const rs__run_result *res, int with_counts,
                        const char *policy, rs_error *err);

/* latency.csv: run, attributes, n, mean_ms, p50_ms, ..., max_ms, one row
 * per run whose latency `of` gives (NULL: the run has none), in run order. */
typedef const rs__latency *(*latency_of_fn)(const void *ctx, size_t run);
rs_code write_latency_csv(rs__csv *w, const sweep_input *in, latency_of_fn of, const void *ctx, rs_error *err);

/* Removes dir/names[i] for each non-NULL name, ignoring files that are not
 * there.  eval and compare call it once their new files are in place, on
 * the files of their output set that this run does not write, so a re-run
 * never leaves an older run's per_query.csv or gates.csv beside the new
 * aggregate.csv. */
void remove_outputs(const char *dir, const char *const *names, size_t n);
/* mkdir -p. */
int mkdir_p(const char *dir);
/* A finite decimal number (whole string); 1 on success. */
int parse_real(const char *s, double *out);
/* A base-10 integer >= min (whole string); 1 on success. */
int parse_count(const char *s, long min, long *out);

#endif
