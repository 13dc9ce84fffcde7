/* sweep_ranks.c: eval's work split across MPI ranks (see sweep_ranks.h). */
#include "engine/sweep_ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/shard.h"
#include "util/mpi.h"

/* The per-query records of this rank's share, as shard.h lays them out. */
typedef struct {
  unsigned char *buf;
  size_t n, cap, n_vals;
} records;

static rs_code keep_record(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  records *r = ctx;
  const size_t size = rs__shard_record_size(r->n_vals);
  if (r->n == r->cap) {
    const size_t cap = r->cap ? 2 * r->cap : 4096;
    unsigned char *b = rs__realloc(r->buf, rs__mul(cap, size));
    if (!b) return rs__fail(err, RS_NOMEM, "out of memory for the values of %zu queries", cap);
    r->buf = b;
    r->cap = cap;
  }
  rs__shard_record_put(r->buf + r->n * size, run, query, v, r->n_vals);
  r->n++;
  return RS_OK;
}

static rs_code merge_on_root(const rs__sweep_cfg *cfg, const rs__corpus *c, size_t n_runs, rs__run_result *results,
                             const unsigned char *recs, size_t n_recs, const unsigned char *lat, size_t lat_bytes,
                             rs_error *err)
{
  rs__shard_merge m;
  rs_code rc = rs__shard_merge_init(&m, cfg->spec, results, n_runs, c->nq, err);
  if (rc) return rc;
  rc = rs__shard_merge_records(&m, recs, rs__mul(n_recs, rs__shard_record_size(cfg->spec->n_req)), "the MPI ranks' values",
                               cfg->per_query, cfg->per_query_ctx, err);
  /* The latency summaries, as the shares' owners made them (shard.h's records). */
  for (size_t at = 0; at < lat_bytes && !rc;) {
    size_t r = 0;
    rs__latency l;
    int has_cdf = 0;
    double cdf[RS__LATENCY_CDF_N];
    const size_t used = rs__shard_latency_get(lat + at, lat_bytes - at, &r, &l, &has_cdf, cdf);
    if (!used) rc = rs__fail(err, RS_FORMAT, "the MPI ranks' latency summaries: a record cut short at byte %zu", at);
    else rc = rs__shard_merge_latency(&m, r, &l, has_cdf ? cdf : NULL, err);
    at += used;
  }
  if (rc) {
    rs__shard_merge_abort(&m);
    return rc;
  }
  rs__shard_merge_finish(&m);
  return RS_OK;
}

rs_code rs__sweep_ranks(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs,
                        const rs__shard_plan *plan, rs__run_result *results, rs_error *err)
{
  if (!rs__mpi_built()) return rs__shard_eval(cfg, c, runs, plan, 0, 1, results, err);
  const size_t rank = (size_t)rs__mpi_rank(), n_ranks = (size_t)rs__mpi_size(), n_runs = plan->n_runs;
  records rec = {.n_vals = cfg->spec->n_req};
  rs__run_result *part = NULL;
  unsigned char *lat = NULL;
  size_t lat_bytes = 0;
  void *all_rec = NULL, *all_lat = NULL;
  size_t *rec_counts = NULL, *lat_counts = NULL;
  if (n_runs) memset(results, 0, n_runs * sizeof *results);

  rs_code rc = RS_OK;
  if (!(part = rs__calloc(n_runs ? n_runs : 1, sizeof *part))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) {
    rs__sweep_cfg mine = *cfg;
    mine.per_query = keep_record;
    mine.per_query_ctx = &rec;
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
  if ((rc = rs__mpi_gather(rec.buf, rec.n, rs__shard_record_size(rec.n_vals), &all_rec, &rec_counts, err))) goto done;
  free(rec.buf); /* gathered: rank 0 holds a copy */
  rec.buf = NULL;
  if ((rc = rs__mpi_gather(lat, lat_bytes, 1, &all_lat, &lat_counts, err))) goto done;
  if (rank == 0) {
    size_t n_all = 0, all_lat_bytes = 0;
    for (size_t i = 0; i < n_ranks; i++) n_all += rec_counts[i], all_lat_bytes += lat_counts[i];
    rc = merge_on_root(cfg, c, n_runs, results, all_rec, n_all, all_lat, all_lat_bytes, err);
  } else {
    for (size_t r = 0; r < n_runs && !rc; r++)
      if (!(results[r].value = rs__calloc(cfg->spec->n_req, sizeof *results[r].value)))
        rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  rc = rs__mpi_agree(rc, err);
done:
  if (rc)
    for (size_t r = 0; r < n_runs; r++) rs__run_result_free(&results[r]);
  for (size_t r = 0; part && r < n_runs; r++) rs__run_result_free(&part[r]);
  free(part);
  free(lat);
  free(rec.buf);
  free(all_rec);
  free(all_lat);
  free(rec_counts);
  free(lat_counts);
  return rc;
}
