/* annb_cli.h: ann-benchmarks inputs of `eval` and `import`.
 *
 * `ragsweep eval DATASET.hdf5 RESULT.hdf5 [...] -o OUT` and `ragsweep import
 * -o OUT.h5 DATASET.hdf5 RESULT.hdf5 [...]` take an ann-benchmarks dataset
 * and the result files of runs on it (formats/annb.h).  eval writes eval's
 * files: aggregate.csv with ann-benchmarks' own figures (k-nn, epsilon,
 * largeepsilon, qps, build, indexsize, candidates, distcomps, as its
 * plotting/metrics.py defines them) beside any id-based measure (R@10,
 * nDCG@10, ...: the first `count` true neighbours are the relevant docs,
 * grade 1, and the result's neighbours in their stored order the ranking),
 * per_query.csv and latency.csv from the result's per-query times.
 * Id-based measures are scored by the ordinary engine on the corpus that
 * `import` writes from the same files (a temporary one in OUT), so eval on
 * the files and eval --queries=all on the imported corpus agree byte for
 * byte. */
#ifndef RAGSWEEP_CLI_ANNB_H
#define RAGSWEEP_CLI_ANNB_H

#include <stddef.h>

#include "publish.h"
#include "sweep_opts.h"

/* 1 when path is an ann-benchmarks dataset file (never an error: any other
 * file, readable or not, is 0 and goes the ordinary way). */
int annb_is_dataset(const char *path);

typedef struct annb_eval_args {
  const char *dataset;
  char **results; /* RESULT.hdf5 or NAME=RESULT.hdf5 */
  size_t n_results;
  const sweep_opts *so;
  const publish_opts *po;
  int per_query, quiet;
  long top, batch_docs;
  int argc; /* eval's command line, for --json */
  char **argv;
} annb_eval_args;

/* eval on ann-benchmarks files; returns the exit status, after its own
 * messages on stderr and its summary on stdout. */
int annb_eval(const annb_eval_args *a);

/* import: writes out from args[0] (the dataset) and args[1..n) (results);
 * returns the exit status. */
int annb_import(const char *out, char **args, size_t n);

#endif
