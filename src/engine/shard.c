/* shard.c: the split of eval's work into shares and the merge of their values. */
#include "engine/shard.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The runs from r on that share r's rows (eval --depths: the runs cut from
 * one run follow each other; the engine reads their rows once). */
static size_t group_size(const rs__run *const *runs, size_t n_runs, size_t r)
{
  const rs__run *src = runs[r]->source ? runs[r]->source : runs[r];
  size_t g = 1;
  while (r + g < n_runs && runs[r + g]->source == src) g++;
  return g;
}

rs_code rs__shard_plan_make(const rs__run *const *runs, size_t n_runs, size_t unit_rows, rs__shard_plan *out,
                            rs_error *err)
{
  *out = (rs__shard_plan){.n_runs = n_runs, .unit_rows = unit_rows ? unit_rows : RS__SHARD_UNIT_ROWS};
  const size_t b = out->unit_rows;
  size_t n = 0;
  for (size_t r = 0; r < n_runs; r += group_size(runs, n_runs, r))
    n += runs[r]->n_rows ? (runs[r]->n_rows + b - 1) / b : 1;
  out->unit = rs__malloc(rs__mul(n ? n : 1, sizeof *out->unit));
  if (!out->unit) return rs__fail(err, RS_NOMEM, "out of memory for %zu units of work", n);
  for (size_t r = 0; r < n_runs;) {
    const size_t g = group_size(runs, n_runs, r);
    size_t q = 0;
    do {
      const size_t q1 = runs[r]->n_rows - q < b ? runs[r]->n_rows : q + b;
      out->unit[out->n_units++] = (rs__shard_unit){.run = r, .n_runs = g, .q0 = q, .q1 = q1};
      q = q1;
    } while (q < runs[r]->n_rows);
    r += g;
  }
  return RS_OK;
}

void rs__shard_plan_free(rs__shard_plan *p)
{
  free(p->unit);
  memset(p, 0, sizeof *p);
}

/* floor(u·i/n) for i <= n <= RS__SHARD_MAX_N, without overflow:
 * u = (u/n)·n + u%n, and (u%n)·i < n² fits in 64 bits. */
static size_t share_start(size_t u, size_t i, size_t n)
{
  return (u / n) * i + (size_t)(((uint64_t)(u % n) * i) / n);
}

void rs__share_bounds(size_t n_items, size_t i, size_t n, size_t *lo, size_t *hi)
{
  *lo = share_start(n_items, i, n);
  *hi = share_start(n_items, i + 1, n);
}

size_t rs__share_of(size_t n_items, size_t k, size_t n)
{
  /* The largest i with floor(n_items·i/n) <= k: a guess, then a step or two. */
  size_t i = (size_t)(((uint64_t)k * n) / (n_items ? n_items : 1));
  if (i >= n) i = n - 1;
  while (i > 0 && share_start(n_items, i, n) > k) i--;
  while (i + 1 < n && share_start(n_items, i + 1, n) <= k) i++;
  return i;
}

void rs__shard_share_units(const rs__shard_plan *p, size_t i, size_t n, size_t *u0, size_t *u1)
{
  *u0 = share_start(p->n_units, i, n);
  *u1 = share_start(p->n_units, i + 1, n);
}

int rs__shard_parse(const char *s, size_t *i, size_t *n)
{
  uint64_t a = 0, b = 0;
  const char *p = s;
  if (*p < '0' || *p > '9') return 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((a = a * 10 + (uint64_t)(*p - '0')) > RS__SHARD_MAX_N) return 0;
  if (*p++ != '/' || *p < '0' || *p > '9') return 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((b = b * 10 + (uint64_t)(*p - '0')) > RS__SHARD_MAX_N) return 0;
  if (*p || b == 0 || a >= b) return 0;
  *i = (size_t)a, *n = (size_t)b;
  return 1;
}

void rs__shard_ranges(const rs__shard_plan *p, size_t i, size_t n, rs__sweep_range *ranges)
{
  for (size_t r = 0; r < p->n_runs; r++) ranges[r] = (rs__sweep_range){0};
  size_t u0, u1;
  rs__shard_share_units(p, i, n, &u0, &u1);
  /* A share's units of one run are consecutive: one range per run, the
   * same for the runs cut from the same rows. */
  for (size_t u = u0; u < u1; u++) {
    const rs__shard_unit *x = &p->unit[u];
    for (size_t r = x->run; r < x->run + x->n_runs; r++) {
      rs__sweep_range *g = &ranges[r];
      if (u == u0 || p->unit[u - 1].run != x->run) g->q0 = x->q0;
      g->q1 = x->q1;
      if (x->q0 == 0) g->latency = 1;
    }
  }
}

rs_code rs__shard_eval(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs,
                       const rs__shard_plan *p, size_t i, size_t n, rs__run_result *res, rs_error *err)
{
  if (n == 0 || i >= n || n > RS__SHARD_MAX_N)
    return rs__fail(err, RS_USAGE, "share %zu of %zu: expected 0 <= I < N <= %d", i, n, RS__SHARD_MAX_N);
  rs__sweep_range *ranges = rs__malloc(rs__mul(p->n_runs ? p->n_runs : 1, sizeof *ranges));
  if (!ranges) return rs__fail(err, RS_NOMEM, "out of memory");
  rs__shard_ranges(p, i, n, ranges);
  rs__sweep_cfg sc = *cfg;
  sc.ranges = ranges;
  rs_code rc = rs__sweep(&sc, c, runs, p->n_runs, res, err);
  free(ranges);
  return rc;
}

/* --- records ------------------------------------------------------------------- */

void rs__shard_record_put(unsigned char *dst, size_t result, size_t query, const double *v, size_t n_vals)
{
  const uint64_t h[2] = {result, query};
  memcpy(dst, h, sizeof h);
  if (n_vals) memcpy(dst + sizeof h, v, n_vals * sizeof *v);
}

void rs__shard_record_get(const unsigned char *src, size_t n_vals, size_t *result, size_t *query, double *v)
{
  uint64_t h[2];
  memcpy(h, src, sizeof h);
  *result = (size_t)h[0], *query = (size_t)h[1];
  if (n_vals) memcpy(v, src + sizeof h, n_vals * sizeof *v);
}

void rs__shard_block_put(unsigned char *dst, size_t result, const rs__block_sum *b, size_t n_vals)
{
  const uint64_t h[5] = {result, b->block, b->num_q, b->no_rel_ret, b->perfect_p1};
  memcpy(dst, h, sizeof h);
  if (n_vals) memcpy(dst + sizeof h, b->sum, n_vals * sizeof *b->sum);
}

void rs__shard_block_get(const unsigned char *src, size_t n_vals, size_t *result, rs__block_sum *b, double *sum)
{
  uint64_t h[5];
  memcpy(h, src, sizeof h);
  *result = (size_t)h[0];
  *b = (rs__block_sum){.block = (size_t)h[1], .num_q = (size_t)h[2], .no_rel_ret = (size_t)h[3],
                       .perfect_p1 = (size_t)h[4], .sum = sum};
  if (n_vals) memcpy(sum, src + sizeof h, n_vals * sizeof *sum);
}

enum { LAT_HEAD = 8 * (2 + 7 + RS__LATENCY_N_BOUNDS + 1 + 1) };

size_t rs__shard_latency_size(int has_cdf) { return LAT_HEAD + (has_cdf ? 8 * RS__LATENCY_CDF_N : 0); }

void rs__shard_latency_put(unsigned char *dst, size_t result, const rs__latency *lat, const double *cdf)
{
  const uint64_t h[2] = {result, lat->n};
  const double d[7] = {lat->mean, lat->p50, lat->p90, lat->p95, lat->p99, lat->p999, lat->max};
  const uint64_t has = cdf != NULL;
  memcpy(dst, h, sizeof h), dst += sizeof h;
  memcpy(dst, d, sizeof d), dst += sizeof d;
  memcpy(dst, lat->bucket, sizeof lat->bucket), dst += sizeof lat->bucket;
  memcpy(dst, &has, sizeof has), dst += sizeof has;
  if (cdf) memcpy(dst, cdf, RS__LATENCY_CDF_N * sizeof *cdf);
}

size_t rs__shard_latency_get(const unsigned char *src, size_t avail, size_t *result, rs__latency *lat, int *has_cdf,
                             double *cdf)
{
  if (avail < LAT_HEAD) return 0;
  uint64_t h[2], has;
  double d[7];
  memcpy(h, src, sizeof h), src += sizeof h;
  memcpy(d, src, sizeof d), src += sizeof d;
  memcpy(lat->bucket, src, sizeof lat->bucket), src += sizeof lat->bucket;
  memcpy(&has, src, sizeof has), src += sizeof has;
  if (has > 1 || avail < rs__shard_latency_size((int)has)) return 0;
  *result = (size_t)h[0];
  lat->n = (size_t)h[1];
  lat->mean = d[0], lat->p50 = d[1], lat->p90 = d[2], lat->p95 = d[3], lat->p99 = d[4], lat->p999 = d[5],
  lat->max = d[6];
  *has_cdf = (int)has;
  if (has) memcpy(cdf, src, RS__LATENCY_CDF_N * sizeof *cdf);
  return rs__shard_latency_size((int)has);
}

/* --- merge ----------------------------------------------------------------------- */

rs_code rs__shard_merge_init(rs__shard_merge *m, const rs__spec *spec, rs__run_result *res, size_t n_results,
                             size_t n_queries, rs_error *err)
{
  *m = (rs__shard_merge){.n_results = n_results, .n_queries = n_queries};
  rs_code rc = rs__result_acc_init(&m->acc, spec, res, n_results, err);
  if (rc) return rc;
  m->next_query = rs__calloc(n_results ? n_results : 1, sizeof *m->next_query);
  if (!(m->v = rs__calloc(spec->n_req ? spec->n_req : 1, sizeof *m->v)) || !m->next_query) {
    rs__shard_merge_abort(m);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  return RS_OK;
}

rs_code rs__shard_merge_records(rs__shard_merge *m, const unsigned char *buf, size_t n_bytes, const char *where,
                                rs_code (*per_query)(void *ctx, size_t run, size_t query, const double *v,
                                                     rs_error *err),
                                void *ctx, rs_error *err)
{
  const size_t n_vals = m->acc.spec->n_req, size = rs__shard_record_size(n_vals);
  if (n_bytes % size)
    return rs__fail(err, RS_FORMAT, "%s: %zu bytes, expected whole records of %zu bytes (%zu values); the file is "
                    "cut short or from another measure set: evaluate the shard again", where, n_bytes, size, n_vals);
  for (size_t off = 0; off < n_bytes; off += size) {
    size_t r, q;
    rs__shard_record_get(buf + off, n_vals, &r, &q, m->v);
    if (r >= m->n_results || q >= m->n_queries)
      return rs__fail(err, RS_FORMAT, "%s: record at byte %zu: result %zu, query %zu; expected a result below %zu "
                      "and a query below %zu: the shard is from other inputs", where, off, r, q, m->n_results,
                      m->n_queries);
    if (q < m->next_query[r])
      return rs__fail(err, RS_FORMAT, "%s: record at byte %zu: result %zu, query %zu comes after its query %zu; "
                      "expected every share once, in order", where, off, r, q, m->next_query[r] - 1);
    m->next_query[r] = q + 1;
    rs_code rc = rs__result_acc_add(&m->acc, r, q, m->v, err);
    if (!rc && per_query) rc = per_query(ctx, r, q, m->v, err);
    if (rc) return rc;
  }
  return RS_OK;
}

rs_code rs__shard_merge_blocks(rs__shard_merge *m, const unsigned char *buf, size_t n_bytes, const char *where,
                               rs_error *err)
{
  const size_t n_vals = m->acc.spec->n_req, size = rs__shard_block_size(n_vals);
  if (n_bytes % size)
    return rs__fail(err, RS_FORMAT, "%s: %zu bytes, expected whole block records of %zu bytes (%zu values)", where,
                    n_bytes, size, n_vals);
  for (size_t off = 0; off < n_bytes; off += size) {
    size_t r;
    rs__block_sum b;
    rs__shard_block_get(buf + off, n_vals, &r, &b, m->v);
    const size_t q0 = b.block * RS__SUM_BLOCK_ROWS; /* block < n_queries: no overflow */
    if (r >= m->n_results || b.block >= m->n_queries || q0 >= m->n_queries || b.num_q > RS__SUM_BLOCK_ROWS ||
        b.no_rel_ret > b.num_q || b.perfect_p1 > b.num_q)
      return rs__fail(err, RS_FORMAT, "%s: block record at byte %zu: result %zu, block %zu of %zu queries; expected "
                      "a result below %zu and a block of the first %zu queries: the values are from other inputs",
                      where, off, r, b.block, b.num_q, m->n_results, m->n_queries);
    if (q0 < m->next_query[r])
      return rs__fail(err, RS_FORMAT, "%s: block record at byte %zu: result %zu, block %zu comes after its query "
                      "%zu; expected every share once, in order", where, off, r, b.block, m->next_query[r] - 1);
    m->next_query[r] = q0 + RS__SUM_BLOCK_ROWS;
    rs_code rc = rs__result_acc_add_block(&m->acc, r, &b, err);
    if (rc) return rc;
  }
  return RS_OK;
}

rs_code rs__shard_merge_latency(rs__shard_merge *m, size_t r, const rs__latency *lat, const double *cdf,
                                rs_error *err)
{
  if (r >= m->n_results)
    return rs__fail(err, RS_FORMAT, "latency of result %zu: expected a result below %zu", r, m->n_results);
  rs__run_result *res = &m->acc.res[r];
  if (res->has_latency) return rs__fail(err, RS_FORMAT, "latency of result %zu given twice", r);
  res->has_latency = 1;
  res->latency = *lat;
  if (cdf) {
    if (!(res->latency_cdf = rs__malloc(RS__LATENCY_CDF_N * sizeof *cdf))) return rs__fail(err, RS_NOMEM, "out of memory");
    memcpy(res->latency_cdf, cdf, RS__LATENCY_CDF_N * sizeof *cdf);
  }
  return RS_OK;
}

void rs__shard_merge_finish(rs__shard_merge *m)
{
  /* Cannot fail: the merge's accumulator has no on_block. */
  for (size_t r = 0; r < m->n_results; r++) (void)rs__result_acc_finish(&m->acc, r, NULL);
  rs__result_acc_free(&m->acc);
  free(m->v), free(m->next_query);
  m->v = NULL, m->next_query = NULL;
}

void rs__shard_merge_abort(rs__shard_merge *m)
{
  for (size_t r = 0; m->acc.res && r < m->n_results; r++) rs__run_result_free(&m->acc.res[r]);
  rs__result_acc_free(&m->acc);
  free(m->v), free(m->next_query);
  m->v = NULL, m->next_query = NULL;
}
