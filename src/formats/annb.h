/* annb.h: ann-benchmarks HDF5 files (internal).
 *
 * Layouts, from erikbern/ann-benchmarks at commit
 * f402b2cc17b980d7cd45241ab5a7a4cc0f965e55:
 *
 * - a dataset (ann_benchmarks/datasets.py, write_output): root datasets
 *   train [n, dim], test [nq, dim], neighbors [nq, K] (integer indexes of
 *   train rows, nearest first) and distances [nq, K] (float32 in the
 *   downloadable files, float64 from write_output), root attribute
 *   distance ("angular", "euclidean", ...);
 * - a result (ann_benchmarks/results.py, store_results, with the attributes
 *   of runner.py, run_individual_query and run): root datasets neighbors
 *   [nq, count] int32 (-1 pads a short answer), distances [nq, count]
 *   float32 (the runner's own distance of each returned point to the query,
 *   +inf for padding) and times [nq] float32 (seconds per query), root
 *   attributes algo, name, count, build_time, index_size,
 *   best_search_time, candidates, batch_mode, expect_extra, run_count,
 *   distance, dataset and the algorithm's own extras (dist_comps, ...).
 *
 * Reading goes through formats/h5read.h (corpus_h5.c owns HDF5).  Every
 * problem is RS_FORMAT naming the file and the dataset or attribute. */
#ifndef RAGSWEEP_ANNB_H
#define RAGSWEEP_ANNB_H

#include <stddef.h>
#include <stdint.h>

#include "formats/corpus.h"

typedef enum {
  RS_ANNB_NONE,    /* not an ann-benchmarks file (or not readable as HDF5) */
  RS_ANNB_DATASET, /* root datasets train, test, neighbors, distances */
  RS_ANNB_RESULT   /* root datasets neighbors, distances, times; no train or test */
} rs__annb_kind;

/* What path holds, from its root links: opens it (probed like any HDF5
 * input) and closes it again.  A file that is not HDF5, is a ragsweep
 * corpus or run file, or cannot be read is RS_ANNB_NONE: the caller's own
 * open then says why. */
rs__annb_kind rs__annb_kind_of(const char *path);

typedef struct rs__annb_dataset {
  char *path;
  size_t nq;          /* rows of test, neighbors and distances */
  size_t k;           /* columns of neighbors and distances */
  size_t n_train;     /* rows of train: neighbour indexes are below it */
  int32_t *neighbors; /* [nq * k] */
  double *distances;  /* [nq * k], the stored values */
  int distances_f32;  /* distances stored as float32 (see metrics/knn.h) */
  char *distance;     /* root attribute distance, or NULL */
} rs__annb_dataset;

typedef struct rs__annb_result {
  char *path;
  char *name;         /* the run's name: given, else attribute name, else the file name without .hdf5/.h5 */
  size_t nq;
  size_t cols;        /* columns of neighbors and distances (count, as the runner writes them) */
  size_t count;       /* attribute count */
  int32_t *neighbors; /* [nq * cols], -1 padding */
  double *distances;  /* [nq * cols] */
  double *times;      /* [nq] seconds */
  rs__attr *attrs;    /* every root attribute but name, sorted by key */
  size_t n_attrs;
} rs__annb_result;

/* Reads a dataset file whole but for train and test (only their row
 * counts are read).  Checks: the four datasets present, neighbors and
 * distances 2-D of the same shape with test's row count and K >= 1,
 * neighbors integers in [0, n_train), distances floating point. */
rs_code rs__annb_dataset_open(const char *path, rs__annb_dataset **out, rs_error *err);
void rs__annb_dataset_close(rs__annb_dataset *d);

/* Reads a result file of runs on ds.  name: the run's name, or NULL (the
 * attribute name, else the file name).  Checks: neighbors, distances and
 * times present, with ds->nq rows (a result of another dataset or a
 * partial run is refused); neighbors and distances of one shape; neighbors
 * in [-1, ds->n_train); times 1-D; an integer attribute count with
 * 1 <= count <= ds->k (ann-benchmarks reads the count-th true distance);
 * a run name that is not empty and has no '/'. */
rs_code rs__annb_result_open(const char *path, const char *name, const rs__annb_dataset *ds, rs__annb_result **out,
                             rs_error *err);
void rs__annb_result_close(rs__annb_result *r);

/* The attribute key of r, or NULL. */
const rs__attr *rs__annb_attr(const rs__annb_result *r, const char *key);

/* Writes a ragsweep corpus of ds and the runs res[0..n) (names unique):
 * queries "0".."nq-1" in test order; qrels: each query's first `depth`
 * true neighbours, grade 1 (depth 0: no judgments); a run per result with
 * its neighbors as the ranking (stored order, no scores), times as its
 * latency and its attributes.  No /docs/id: a doc's id is its train index.
 * depth <= ds->k. */
rs_code rs__annb_write_corpus(const rs__annb_dataset *ds, const rs__annb_result *const *res, size_t n, size_t depth,
                              const char *out_path, rs_error *err);

#endif
