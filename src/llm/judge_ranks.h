/* judge_ranks.h: `judge` across MPI ranks (internal).
 *
 * Rank r of P asks share r/P of the pairs (judge.h's share: the pairs in
 * their output order, cut as rs__share_bounds cuts them), with its own
 * requests in flight (the configured concurrency per rank), into a
 * rank-private cache file beside the job's cache, CACHE.rankR: SQLite's WAL
 * is unsafe on network file systems, so no two ranks share a file, and only
 * rank 0 opens the job's cache.  Before the ranks start, rank 0 looks every
 * request up in the job's cache and tells the ranks which are answered
 * (they send only the others; a second identical command sends nothing).
 * After the ranks are done (a collective gather of their stop reasons),
 * rank 0 merges the rank caches into the job's cache (first answer wins),
 * removes them, and replays every request offline (calls.h) from the job's
 * cache and the ranks' tables of sent requests: the judge it returns is
 * what one process's run would hold, and writes the same bytes.
 *
 * A job killed part way leaves its rank caches: the next run's rank 0
 * merges any CACHE.rank<digits> first (and removes them), so nothing a rank
 * was answered is asked again.
 *
 * --max-cost is the job's: each rank gets max_cost / P of it.  A dry run is
 * rank 0's alone (the other ranks wait). */
#ifndef RAGSWEEP_LLM_JUDGE_RANKS_H
#define RAGSWEEP_LLM_JUDGE_RANKS_H

#include "llm/judge.h"

/* Every rank calls it with the same cfg (cfg->cache_path the job's cache).
 * On rank 0, *out is the judge of all pairs (stats: sent and retries summed
 * over the ranks, a stop of any rank); on the others *out is NULL.  An
 * error on any rank is every rank's (rs__mpi_agree). */
rs_code rs__judge_run_ranks(const rs__judge_cfg *cfg, rs__judge **out, rs_error *err);

#endif
