/* shard.h: eval's work split into shares that separate processes evaluate
 * (Slurm array tasks with `eval --shard I/N`, MPI ranks), and the merge of
 * their per-query values into the very results one process computes
 * (internal).
 *
 * Units.  The work is a list of units, in run order then query order: a
 * unit is a block of up to unit_rows consecutive queries of one run (a run
 * without rows is one empty unit, so that it still has an owner), or of
 * the runs cut from one run's rows at several depths (eval --depths), which
 * the engine reads and scores together.  Share I
 * of N is the contiguous range of units [floor(U·I/N), floor(U·(I+1)/N)):
 * shares differ by at most one unit, a share may hold no unit (N > U), and
 * the shares in order I = 0..N-1 are the units in order.  The split
 * depends only on the runs' row counts and unit_rows, never on threads,
 * batch sizes or the machine.
 *
 * Values.  A share yields, for every query it evaluates, its result index
 * (the run), the query and the spec->n_req doubles rs__sweep computes; or,
 * when no caller needs every query's values (an MPI eval that writes no
 * per-query file), each unit's sums (a block record: units are the
 * engine's summing blocks, RS__SUM_BLOCK_ROWS).  rs__result_acc (sweep.h)
 * adds either in unit order, which is every result's query order: the same
 * additions in the same order as one process, so the same bits.  (Runs cut
 * from one run's rows hand over their values block by block, the blocks
 * dividing a unit, so the order of the records is the same in any share as
 * in one process.)  A record
 * is result (uint64), query (uint64), then n_vals doubles, in the byte
 * order of the machine (the shard manifest records it).
 *
 * Latencies.  Exact percentiles need every latency of a run at once (they
 * cannot be made from per-share summaries), so one share reads them all:
 * the share that holds the run's first unit.  It is the only share sure to
 * exist for every run, and a run's latencies are 8 bytes a query, small
 * next to its rankings.  That share summarises them with the functions of
 * latency.h (percentiles, histogram, CDF) exactly as one process does; the
 * merge takes its summary as it is. */
#ifndef RAGSWEEP_SHARD_H
#define RAGSWEEP_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sweep.h"

/* Queries per unit unless the caller asks otherwise: the engine's summing
 * blocks (sweep.h), so that a share can hand over block sums; small enough
 * that a few thousand queries already split, large enough that a million
 * queries × a hundred runs stay at ~100k units. */
#define RS__SHARD_UNIT_ROWS RS__SUM_BLOCK_ROWS

/* The most shares (a million: more than any array job or MPI world). */
#define RS__SHARD_MAX_N 1000000

typedef struct rs__shard_unit {
  size_t run, n_runs; /* runs [run, run + n_runs): one, or the runs cut from one run's rows (eval --depths) */
  size_t q0, q1;      /* their rows [q0, q1) */
} rs__shard_unit;

typedef struct rs__shard_plan {
  rs__shard_unit *unit; /* [n_units], in run order then query order */
  size_t n_units, n_runs, unit_rows;
} rs__shard_plan;

/* The units of runs[0..n_runs) (unit_rows 0: RS__SHARD_UNIT_ROWS). */
rs_code rs__shard_plan_make(const rs__run *const *runs, size_t n_runs, size_t unit_rows, rs__shard_plan *out,
                            rs_error *err);
void rs__shard_plan_free(rs__shard_plan *p);

/* Share i of n (0 <= i < n <= RS__SHARD_MAX_N) of any n_items items in a
 * fixed order: items [floor(n_items·i/n), floor(n_items·(i+1)/n)), so
 * shares differ by one item at most and may be empty (judge's pairs, rag's
 * samples; eval's units below). */
void rs__share_bounds(size_t n_items, size_t i, size_t n, size_t *lo, size_t *hi);
/* The share (of n) that holds item k of n_items (k < n_items). */
size_t rs__share_of(size_t n_items, size_t k, size_t n);

/* Share i of n (0 <= i < n <= RS__SHARD_MAX_N): units [*u0, *u1). */
void rs__shard_share_units(const rs__shard_plan *p, size_t i, size_t n, size_t *u0, size_t *u1);

/* Parses "I/N" (0 <= I < N <= RS__SHARD_MAX_N, decimal, whole string); 1 on success. */
int rs__shard_parse(const char *s, size_t *i, size_t *n);

/* The rows of every run share i of n evaluates, with .latency set where it
 * holds the run's first unit: ranges[0..p->n_runs), to pass as
 * rs__sweep_cfg.ranges. */
void rs__shard_ranges(const rs__shard_plan *p, size_t i, size_t n, rs__sweep_range *ranges);

/* Evaluates share i of n through rs__sweep: cfg->per_query receives each
 * evaluated query's values in unit order (cfg->ranges is ignored; the
 * plan's are used).  res[0..n_runs) as rs__sweep fills them, over the
 * share's rows only; res[r].has_latency, .latency and .latency_cdf are
 * valid for the runs whose first unit the share holds (the latency owner,
 * see above). */
rs_code rs__shard_eval(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs,
                       const rs__shard_plan *p, size_t i, size_t n, rs__run_result *res, rs_error *err);

/* --- per-query records ---------------------------------------------------------- */

/* Bytes of one record with n_vals values. */
static inline size_t rs__shard_record_size(size_t n_vals) { return 16 + 8 * n_vals; }
void rs__shard_record_put(unsigned char *dst, size_t result, size_t query, const double *v, size_t n_vals);
void rs__shard_record_get(const unsigned char *src, size_t n_vals, size_t *result, size_t *query, double *v);

/* Whether a share hands over block records rather than every query's
 * values: when nobody needs the values one by one (per_query 0), and the
 * plan's units are the summing blocks (other unit sizes are for tests). */
static inline int rs__shard_by_block(const rs__shard_plan *p, int per_query)
{
  return !per_query && p->unit_rows == RS__SUM_BLOCK_ROWS;
}

/* A block record (a share's block sums, when no caller needs every
 * query's values): result, block, num_q, no_rel_ret, perfect_p1 (uint64),
 * then n_vals doubles (rs__block_sum). */
static inline size_t rs__shard_block_size(size_t n_vals) { return 40 + 8 * n_vals; }
void rs__shard_block_put(unsigned char *dst, size_t result, const rs__block_sum *b, size_t n_vals);
/* b->sum points into sum[n_vals], which the values are copied to. */
void rs__shard_block_get(const unsigned char *src, size_t n_vals, size_t *result, rs__block_sum *b, double *sum);

/* A latency record: result (uint64), n (uint64), mean, p50, p90, p95, p99,
 * p999, max (doubles), the RS__LATENCY_N_BOUNDS + 1 bucket counts (uint64),
 * has_cdf (uint64: 0 or 1), then RS__LATENCY_CDF_N doubles when has_cdf. */
size_t rs__shard_latency_size(int has_cdf);
void rs__shard_latency_put(unsigned char *dst, size_t result, const rs__latency *lat, const double *cdf);
/* Reads a record of at most avail bytes: 0 when it does not fit (or has_cdf
 * is neither 0 nor 1), else its size; *has_cdf tells whether cdf (room for
 * RS__LATENCY_CDF_N) was filled. */
size_t rs__shard_latency_get(const unsigned char *src, size_t avail, size_t *result, rs__latency *lat, int *has_cdf,
                             double *cdf);

/* --- the merge ------------------------------------------------------------------------ */

/* Rebuilds rs__sweep's results from the records of all shares, fed in
 * share order (I = 0..N-1) and within a share in the order it produced
 * them.  Every record is checked: a result index beyond n_results, or a
 * query not after the same result's previous one, means the shares do not
 * fit together (RS_FORMAT naming `where`). */
typedef struct rs__shard_merge {
  rs__result_acc acc;
  size_t n_results, n_queries;
  size_t *next_query; /* [n_results]: the smallest query a result's next record may have */
  double *v;          /* scratch [n_vals] */
} rs__shard_merge;

/* res[0..n_results): zeroed and given their value arrays; n_queries bounds
 * the query indexes. */
rs_code rs__shard_merge_init(rs__shard_merge *m, const rs__spec *spec, rs__run_result *res, size_t n_results,
                             size_t n_queries, rs_error *err);
/* Adds the n_bytes of records at buf (whole records); each is then passed
 * to per_query (may be NULL) as rs__sweep passes it, in the same order. */
rs_code rs__shard_merge_records(rs__shard_merge *m, const unsigned char *buf, size_t n_bytes, const char *where,
                                rs_code (*per_query)(void *ctx, size_t run, size_t query, const double *v,
                                                     rs_error *err),
                                void *ctx, rs_error *err);
/* Adds the n_bytes of block records at buf (whole records), checked as
 * records are: a result beyond n_results, or a block not after the same
 * result's rows so far, is RS_FORMAT naming `where`. */
rs_code rs__shard_merge_blocks(rs__shard_merge *m, const unsigned char *buf, size_t n_bytes, const char *where,
                               rs_error *err);
/* Result r's latency summary (and CDF, [RS__LATENCY_CDF_N] copied, or
 * NULL), from the share that owns it. */
rs_code rs__shard_merge_latency(rs__shard_merge *m, size_t r, const rs__latency *lat, const double *cdf,
                                rs_error *err);
/* Every result's values from its sums; the merge's sums are freed (the
 * results stay the caller's, to free with rs__run_result_free). */
void rs__shard_merge_finish(rs__shard_merge *m);
/* On failure: frees the sums and the results' arrays. */
void rs__shard_merge_abort(rs__shard_merge *m);

#endif
