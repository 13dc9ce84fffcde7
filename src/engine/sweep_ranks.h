/* sweep_ranks.h: rs__sweep split across the ranks of an MPI job (internal).
 *
 * Rank r of P evaluates share r/P of engine/shard.h (the split `eval
 * --shard r/P` makes).  Rank 0 feeds its own share's per-query values to
 * the merge of shard.h as it scores them (its share is first in unit
 * order), then gathers the other shares' values in rank order
 * (MPI_Gatherv: values, never sums) and the latency summaries of the runs'
 * latency owners, and merges them: the same additions in the same order
 * as one process, so the same bits at any P.  Rank 0 holds the other
 * ranks' values (16 + 8 * spec->n_req bytes a query), nothing more at
 * P = 1.  In the build without MPI it is share 0 of 1. */
#ifndef RAGSWEEP_SWEEP_RANKS_H
#define RAGSWEEP_SWEEP_RANKS_H

#include "engine/shard.h"
#include "engine/sweep.h"

/* As rs__shard_eval of share 0 of 1 (which is rs__sweep), called by every
 * rank with the same arguments; p is the plan of runs[0..p->n_runs).  On
 * rank 0, results[0..p->n_runs) are one process's and cfg->per_query sees
 * every evaluated query in run then query order; on the other ranks the
 * results are zero (value arrays allocated, so rs__run_result_free
 * applies) and cfg->per_query is never called.  cfg->progress is reported
 * by rank 0 for its own share.  A failure on any rank is every rank's: the
 * one of the lowest failing rank, which is the one a single process
 * reports.  Without MPI: rs__shard_eval(cfg, c, runs, p, 0, 1, ...). */
rs_code rs__sweep_ranks(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs,
                        const rs__shard_plan *p, rs__run_result *results, rs_error *err);

#endif
