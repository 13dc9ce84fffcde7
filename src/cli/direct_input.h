/* direct_input.h: eval, compare and judge on text inputs, and import's
 * reading of its positional arguments.
 *
 * The positional arguments are one of:
 *   CORPUS.h5 [RUNS.h5 ...]           a ragsweep corpus and run files, as before
 *   JUDGMENTS RUN [RUN ...]           TREC qrels, BEIR qrels TSV, a JSON eval set
 *                                     or a BEIR folder, then runs
 *   --qrels QRELS RUN [RUN ...]       every positional is a run
 * A RUN is a TREC, JSONL or CSV/TSV run (detect.h), as PATH (named after the
 * file without its extensions) or NAME=PATH.  With a BEIR folder, --qrels
 * replaces its qrels/SPLIT.tsv.
 *
 * Direct evaluation is import followed by the unchanged engine: the inputs
 * are read by the code of `ragsweep import` (rs__import_corpus) into a
 * corpus held in memory, the one rs__corpus_open would give for the file
 * import writes, and no file is written (only the temporary TREC forms of
 * JSONL/CSV runs and BEIR or JSON judgments while they are read, removed at
 * once or on SIGINT/SIGTERM/SIGHUP, util/tmpfiles.h).  So the values are
 * those of import and eval by construction. */
#ifndef RAGSWEEP_CLI_DIRECT_INPUT_H
#define RAGSWEEP_CLI_DIRECT_INPUT_H

#include <stddef.h>

#include "formats/import.h"
#include "sweep_io.h"

typedef struct direct_opts {
  const char *cmd;          /* "eval", "compare", "judge", "import": messages and the folder's name */
  const char *qrels_path;   /* --qrels, or NULL */
  const char *split;        /* --split (BEIR qrels/SPLIT.tsv), or NULL: test */
  const char *queries_path; /* judge, import: a queries file that gives the queries when there are no judgments */
  int threads;              /* reading runs (0: default) */
  int runs_optional;        /* import: judgments alone make a corpus */
  int rows_only;            /* eval, compare: only the rows are scored, no doc id is needed (rs__import_cfg) */
} direct_opts;

/* The positionals sorted out: judgments and runs (not a corpus). */
typedef struct direct_plan {
  int corpus;               /* 1: the first positional is HDF5 (a ragsweep corpus): the old route, nothing else set */
  const char *qrels_path;   /* for rs__import_cfg.qrels_path (TREC, BEIR TSV or JSON eval set), or NULL */
  const char *beir_dir;     /* the BEIR folder, or NULL */
  char beir_qrels[4096], beir_queries[4096], beir_corpus[4096]; /* its files ("" when absent) */
  rs__import_run *runs;
  size_t n_runs;
} direct_plan;

/* Sorts the positionals out.  Errors: RS_IO (unreadable), RS_FORMAT (a
 * first positional of no known format: the message lists the formats),
 * RS_USAGE (no runs, no judgments, a bad run name). */
rs_code direct_plan_make(direct_plan *p, char **pos, size_t n_pos, const direct_opts *o, rs_error *err);
void direct_plan_free(direct_plan *p);

/* The run name of a path: its file name without the extensions .gz .txt
 * .run .trec .tsv .csv .jsonl .json (repeatedly: a.run.txt.gz -> a);
 * malloc'd. */
char *direct_run_name(const char *path);

/* eval, compare, judge: opens the positionals as a sweep_input: a corpus
 * (then o->qrels_path replaces its qrels, sweep_input_use_qrels), or the
 * corpus imported from text inputs.  Notes (dropped topics, runs whose
 * latencies are left out) go to stderr.  plan (may be NULL) receives the
 * plan, for judge's BEIR texts; free it with direct_plan_free. */
rs_code sweep_input_open_args(sweep_input *in, char **pos, size_t n_pos, const direct_opts *o, direct_plan *plan,
                              rs_error *err);

#endif
