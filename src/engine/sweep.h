/* sweep.h: the evaluation engine of `ragsweep eval` (internal).
 *
 * Every run is read in blocks of queries; a batch gathers blocks (of one
 * run, or of several when runs are small) up to a budget of docs.  While
 * the threads score batch b, one of them reads batch b+1 (HDF5 is used by
 * one thread at a time).  Each query's values go to its own slot; after a
 * batch they are added to the run's sums in query order, in blocks of
 * RS__SUM_BLOCK_ROWS (below): by one thread, or, when every thread reads
 * its own blocks, each block sum by the thread that read its rows and the
 * block sums in order by the caller's thread (sweep.c, own sums).  So
 * every figure is the same at any thread count.  Memory: the qrels, the
 * per-query grade levels and two batches, whatever the number of queries
 * or runs. */
#ifndef RAGSWEEP_SWEEP_H
#define RAGSWEEP_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "formats/corpus.h"
#include "engine/latency.h"
#include "metrics/spec.h"

/* Means are summed in blocks: a result's queries are cut into blocks of
 * RS__SUM_BLOCK_ROWS consecutive rows (row q is in block q / RS__SUM_BLOCK_ROWS),
 * each block's values are added in query order from zero, and the blocks'
 * sums are added in block order.  The blocks depend only on row numbers, so
 * the bits are the same at any thread count; and a share of the work
 * (engine/shard.h: its units are these blocks) can hand over a few numbers
 * per block instead of every query's values, and still give the same bits
 * as one process.  (Blocks also add fewer rounding errors than one long
 * running sum.) */
#define RS__SUM_BLOCK_ROWS 1024

/* One block of one result, summed. */
typedef struct rs__block_sum {
  size_t block;                         /* rows [block·RS__SUM_BLOCK_ROWS, ...) */
  size_t num_q, no_rel_ret, perfect_p1; /* the block's queries, as in rs__run_result */
  const double *sum;                    /* [spec->n_req]: their values added in query order */
} rs__block_sum;

/* The rows of one run a sweep evaluates, and whether it reads the run's
 * latencies (see rs__sweep_cfg.ranges). */
typedef struct rs__sweep_range {
  size_t q0, q1; /* rows [q0, q1) */
  int latency;   /* read, summarise (and with latency_cdf, the CDF of) the run's latencies */
} rs__sweep_range;

typedef struct rs__sweep_cfg {
  const rs__spec *spec;
  int all_queries; /* --queries=all: judged queries the run misses score 0 (trec_eval -c) */
  int ties_stored; /* --ties=stored: the stored order is the ranking */
  int threads;     /* 0: all cores */
  size_t batch_docs; /* docs per batch (0: default) */
  int baseline_simd; /* score rows with the baseline build's kernels even where AVX2's run (tests, comparisons) */
  /* Called on the caller's thread for every evaluated query, in run order
   * then query order (runs cut from the same rows, eval --depths: block by
   * block, each block in the runs' order); a non-zero return stops the
   * sweep with that code. */
  rs_code (*per_query)(void *ctx, size_t run, size_t query, const double *values, rs_error *err);
  void *per_query_ctx;
  /* Called on the caller's thread with each run's block sums as they
   * close (see RS__SUM_BLOCK_ROWS), in block order per run; a non-zero
   * return stops the sweep. */
  rs_code (*per_block)(void *ctx, size_t run, const rs__block_sum *b, rs_error *err);
  void *per_block_ctx;
  /* Called after every batch. */
  void (*progress)(void *ctx, size_t run, size_t n_runs, uint64_t rows_done, uint64_t rows_total);
  void *progress_ctx;
  /* Also the latency CDF of every run with latencies (eval --report):
   * rs__run_result.latency_cdf. */
  int latency_cdf;
  /* When set, filled with where the wall time went (eval --timing). */
  struct rs__sweep_timing *timing;
  /* [n_runs], or NULL for every row of every run and every run's latencies
   * (when it has them).  A share of the work (engine/shard.h): only the
   * given rows are read and scored, so a result's values, num_q and counts
   * cover those rows only; its latency is read only where .latency is set
   * (latencies are summarised over the whole run, never over a part). */
  const rs__sweep_range *ranges;
} rs__sweep_cfg;

enum { RS__TIMING_THREADS = 64 }; /* scoring threads whose time rs__sweep_timing keeps */

/* Seconds of wall time per phase of rs__sweep: setup (grade levels, doc-id
 * ranks), read (time inside the reader, which runs beside the scoring on
 * one thread, except for the first batch), score (wall time of the
 * parallel sections, reading and combining included), combine (time in the
 * in-order sums, which also run beside the scoring, a batch behind). */
typedef struct rs__sweep_timing {
  double setup, read, score, combine;
  uint64_t batches;
  /* Each scoring thread's time in rows (seconds, the side task's reading
   * and combining not counted) and rows scored, for the first
   * RS__TIMING_THREADS threads: on a VM whose vCPUs run at different
   * speeds, the rows a thread scores cost more on the slower one. */
  int n_threads;
  double thread_s[RS__TIMING_THREADS];
  uint64_t thread_rows[RS__TIMING_THREADS];
} rs__sweep_timing;

typedef struct rs__run_result {
  double *value;      /* [spec->n_req]: means, or sums for counts */
  size_t num_q;       /* queries evaluated */
  size_t no_rel_ret;  /* ... with no relevant doc retrieved (level 1) */
  size_t perfect_p1;  /* ... whose first doc is relevant (level 1) */
  int has_latency;
  rs__latency latency;
  double *latency_cdf; /* [RS__LATENCY_CDF_N] seconds, with cfg->latency_cdf and latencies; else NULL */
} rs__run_result;

/* Evaluates runs[0..n_runs) against corpus c into results[0..n_runs)
 * (free each with rs__run_result_free).  Consecutive runs with the same
 * source (rs__run.source) are read once and scored at each one's depth.
 * Bad rows stop the sweep with one
 * message naming the file, dataset, row (and query) and column. */
rs_code rs__sweep(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs, size_t n_runs,
                  rs__run_result *results, rs_error *err);
void rs__run_result_free(rs__run_result *r);

/* The arithmetic that turns per-query values into a result: rs__sweep uses
 * it, and so does every merge of shares (engine/shard.h), so a sharded run
 * adds the same doubles in the same order and gives the same bits.
 * Finishing turns the sums into means (sums for RS_SUM_TOTAL, exp of the
 * mean log for RS_SUM_GEOM) over num_q. */
typedef struct rs__result_acc {
  const rs__spec *spec;
  rs__run_result *res; /* [n] */
  size_t n;
  double *sum;         /* [n * spec->n_req]: the finished blocks */
  double *part;        /* [n * spec->n_req]: the open block */
  size_t *part_block;  /* [n]: the open block's index, or SIZE_MAX when none is open */
  size_t *part_count;  /* [n * 3]: the open block's num_q, no_rel_ret, perfect_p1 */
  /* When set, called with each block as it closes (in block order per result). */
  rs_code (*on_block)(void *ctx, size_t r, const rs__block_sum *b, rs_error *err);
  void *on_block_ctx;
} rs__result_acc;

/* Zeroes res[0..n) and gives each its value array; 0 results are fine. */
rs_code rs__result_acc_init(rs__result_acc *a, const rs__spec *spec, rs__run_result *res, size_t n, rs_error *err);
/* One evaluated query (row q) of result r (v: spec->n_req values); a
 * result's queries come in row order.  Fails only when on_block does. */
rs_code rs__result_acc_add(rs__result_acc *a, size_t r, size_t q, const double *v, rs_error *err);
/* A whole block of result r summed elsewhere (its rows after every row
 * added so far): the same bits as adding its queries one by one. */
rs_code rs__result_acc_add_block(rs__result_acc *a, size_t r, const rs__block_sum *b, rs_error *err);
/* Result r's values from its sums (once all its queries are in). */
rs_code rs__result_acc_finish(rs__result_acc *a, size_t r, rs_error *err);
/* Frees the sums (not the results). */
void rs__result_acc_free(rs__result_acc *a);

/* Called once per query of a run, in query order, with its top docs in the
 * ranking eval scores (n <= depth; n = 0 for a query the run does not rank). */
typedef rs_code (*rs__top_docs_fn)(void *ctx, size_t query, const int32_t *docs, size_t n, rs_error *err);

/* The top depth docs of every query of a run, ranked as rs__sweep ranks them
 * (score descending, ties by doc id descending; the stored order with
 * ties_stored or without scores).  Rows are checked as in rs__sweep: a doc
 * index out of range or a NaN score is an error naming file, run and row. */
rs_code rs__run_top_docs(const rs__corpus *c, const rs__run *run, size_t depth, int ties_stored, rs__top_docs_fn emit,
                         void *ctx, rs_error *err);

#endif
