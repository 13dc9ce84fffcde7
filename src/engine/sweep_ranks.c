/* sweep_ranks.c: eval's work split across MPI ranks (see sweep_ranks.h). */
#include "engine/sweep_ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/shard.h"
#include "util/mpi.h"

/* The records of this rank's share, as shard.h lays them out (ranks other
 * than 0: they are sent to rank 0 at the end): every query's values when
 * the caller wants them one by one (per_query), else each block's sums, a
 * record per 1024 queries, which give rank 0 the same bits (sweep.h). */
typedef struct {
  unsigned char *buf;
  size_t n, cap, size, n_vals;
} records;

static unsigned char *next_record(records *r, rs_error *err)
{
  if (r->n == r->cap) {
    const size_t cap = r->cap ? 2 * r->cap : 4096;
    unsigned char *b = rs__realloc(r->buf, rs__mul(cap, r->size));
    if (!b) {
      rs__fail(err, RS_NOMEM, "out of memory for %zu records of values", cap);
      return NULL;
    }
    r->buf = b;
    r->cap = cap;
  }
  return r->buf + r->n++ * r->size;
}

static rs_code keep_record(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  records *r = ctx;
  unsigned char *at = next_record(r, err);
  if (!at) return RS_NOMEM;
  rs__shard_record_put(at, run, query, v, r->n_vals);
  return RS_OK;
}

static rs_code keep_block(void *ctx, size_t run, const rs__block_sum *b, rs_error *err)
{
  records *r = ctx;
  unsigned char *at = next_record(r, err);
  if (!at) return RS_NOMEM;
  rs__shard_block_put(at, run, b, r->n_vals);
  return RS_OK;
}

/* Rank 0's own share comes first in unit order: its queries (or blocks) go
 * into the merge as they are scored, so rank 0 stores only the other
 * ranks' records (at P = 1, nothing more than one process). */
typedef struct {
  rs__shard_merge *m;
  const rs__sweep_cfg *cfg;
  unsigned char *one; /* a record */
} live_merge;

static rs_code merge_now(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  live_merge *l = ctx;
  const size_t n_vals = l->cfg->spec->n_req;
  rs__shard_record_put(l->one, run, query, v, n_vals);
  return rs__shard_merge_records(l->m, l->one, rs__shard_record_size(n_vals), "rank 0's values", l->cfg->per_query,
                                 l->cfg->per_query_ctx, err);
}

static rs_code merge_block_now(void *ctx, size_t run, const rs__block_sum *b, rs_error *err)
{
  live_merge *l = ctx;
  const size_t n_vals = l->cfg->spec->n_req;
  rs__shard_block_put(l->one, run, b, n_vals);
  return rs__shard_merge_blocks(l->m, l->one, rs__shard_block_size(n_vals), "rank 0's block sums", err);
}

/* The latency records at buf[0..n_bytes) (shard.h's layout) into the merge. */
static rs_code merge_latencies(rs__shard_merge *m, const unsigned char *buf, size_t n_bytes, rs_error *err)
{
  rs_code rc = RS_OK;
  for (size_t at = 0; at < n_bytes && !rc;) {
    size_t r = 0;
    rs__latency l;
    int has_cdf = 0;
    double cdf[RS__LATENCY_CDF_N];
    const size_t used = rs__shard_latency_get(buf + at, n_bytes - at, &r, &l, &has_cdf, cdf);
    if (!used) return rs__fail(err, RS_FORMAT, "the MPI ranks' latency summaries: a record cut short at byte %zu", at);
    rc = rs__shard_merge_latency(m, r, &l, has_cdf ? cdf : NULL, err);
    at += used;
  }
  return rc;
}

rs_code rs__sweep_ranks(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs,
                        const rs__shard_plan *plan, rs__run_result *results, rs_error *err)
{
  if (!rs__mpi_built()) return rs__shard_eval(cfg, c, runs, plan, 0, 1, results, err);
  const size_t rank = (size_t)rs__mpi_rank(), n_ranks = (size_t)rs__mpi_size(), n_runs = plan->n_runs;
  const size_t n_vals = cfg->spec->n_req;
  if (n_runs) memset(results, 0, n_runs * sizeof *results);
  int by_block = rs__shard_by_block(plan, cfg->per_query != NULL);
  /* Rank 0 alone writes, so only its caller knows (per_query): it decides. */
  rs_code rc = rs__mpi_bcast(&by_block, sizeof by_block, err);
  if (rc) return rc;
  const size_t rec_size = by_block ? rs__shard_block_size(n_vals) : rs__shard_record_size(n_vals);
  records rec = {.n_vals = n_vals, .size = rec_size};
  rs__shard_merge m;
  int merging = 0;
  live_merge live = {.m = &m, .cfg = cfg};
  rs__run_result *part = NULL;
  unsigned char *lat = NULL;
  size_t lat_bytes = 0;
  void *all_rec = NULL, *all_lat = NULL;
  size_t *rec_counts = NULL, *lat_counts = NULL;

  if (!(part = rs__calloc(n_runs ? n_runs : 1, sizeof *part))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc && rank == 0 && !(live.one = rs__malloc(rec_size))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc && rank == 0 && !(rc = rs__shard_merge_init(&m, cfg->spec, results, n_runs, c->nq, err))) merging = 1;
  if (!rc) {
    rs__sweep_cfg mine = *cfg;
    void *ctx = rank == 0 ? (void *)&live : (void *)&rec;
    if (by_block) {
      mine.per_block = rank == 0 ? merge_block_now : keep_block;
      mine.per_block_ctx = ctx;
    } else {
      mine.per_query = rank == 0 ? merge_now : keep_record;
      mine.per_query_ctx = ctx;
    }
    if (rank != 0) mine.progress = NULL;
    rc = rs__shard_eval(&mine, c, runs, plan, rank, n_ranks, part, err);
  }
  /* The latency summaries of the runs whose first unit is this rank's. */
  for (size_t r = 0; !rc && r < n_runs; r++)
    if (part[r].has_latency) lat_bytes += rs__shard_latency_size(part[r].latency_cdf != NULL);
  if (!rc && !(lat = rs__malloc(lat_bytes))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t r = 0, at = 0; !rc && r < n_runs; r++) {
    if (!part[r].has_latency) continue;
    rs__shard_latency_put(lat + at, r, &part[r].latency, part[r].latency_cdf);
    at += rs__shard_latency_size(part[r].latency_cdf != NULL);
  }
  /* A bad row in one share stops every rank, with the message of the
   * first share that has one. */
  if ((rc = rs__mpi_agree(rc, err))) goto done;
  /* Rank order is unit order: rank 0's records are in already, the others'
   * follow as gathered (MPI_Gatherv of values or block sums, added by rank
   * 0 in unit order; never an MPI reduction in arrival order). */
  if ((rc = rs__mpi_gather(rec.buf, rec.n, rec_size, &all_rec, &rec_counts, err))) goto done;
  free(rec.buf);
  rec.buf = NULL;
  if ((rc = rs__mpi_gather(lat, lat_bytes, 1, &all_lat, &lat_counts, err))) goto done;
  if (rank == 0) {
    size_t n_all = 0, all_lat_bytes = 0;
    for (size_t i = 0; i < n_ranks; i++) n_all += rec_counts[i], all_lat_bytes += lat_counts[i];
    const size_t n_bytes = rs__mul(n_all, rec_size);
    rc = by_block ? rs__shard_merge_blocks(&m, all_rec, n_bytes, "the MPI ranks' block sums", err)
                  : rs__shard_merge_records(&m, all_rec, n_bytes, "the MPI ranks' values", cfg->per_query,
                                            cfg->per_query_ctx, err);
    if (!rc) rc = merge_latencies(&m, all_lat, all_lat_bytes, err);
    if (!rc) {
      rs__shard_merge_finish(&m);
      merging = 0;
    }
  } else {
    for (size_t r = 0; r < n_runs && !rc; r++)
      if (!(results[r].value = rs__calloc(n_vals, sizeof *results[r].value)))
        rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  rc = rs__mpi_agree(rc, err);
done:
  if (merging) rs__shard_merge_abort(&m);
  if (rc)
    for (size_t r = 0; r < n_runs; r++) rs__run_result_free(&results[r]);
  for (size_t r = 0; part && r < n_runs; r++) rs__run_result_free(&part[r]);
  free(part);
  free(live.one);
  free(lat);
  free(rec.buf);
  free(all_rec);
  free(all_lat);
  free(rec_counts);
  free(lat_counts);
  return rc;
}
