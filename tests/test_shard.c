/* test_shard.c: the split of eval's work into shares (engine/shard.h) and
 * `ragsweep eval --shard I/N` + `ragsweep merge`: every share count gives
 * the bytes of one process. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/shard.h"
#include "formats/corpus.h"
#include "helpers.h"
#include "metrics/spec.h"

/* A generated sweep: 6 runs of 2500 queries with latencies. */
static char *gen_corpus(const char *dir, const char *queries, const char *runs)
{
  char *corpus = th_join(dir, "g.h5"), gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *g[] = {gen, "-o", corpus, "--queries", (char *)queries, "--k", "30", "--runs", (char *)runs, "--seed", "11",
               NULL};
  th_result r = th_run(NULL, g, NULL, NULL);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  return corpus;
}

/* --- the plan ------------------------------------------------------------------------ */

Test(shard_api, parse_and_split)
{
  size_t i, n;
  cr_assert(rs__shard_parse("0/1", &i, &n) && i == 0 && n == 1);
  cr_assert(rs__shard_parse("6/7", &i, &n) && i == 6 && n == 7);
  const char *bad[] = {"7/7", "1/0", "-1/3", "1/", "/3", "1/3x", "a/3", "1 /3", "", "1/1000001"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) cr_assert(!rs__shard_parse(bad[k], &i, &n), "%s", bad[k]);

  /* Three runs of 2500, 0 and 1000 rows at 1024 rows a unit: units
   * [0,1024) [1024,2048) [2048,2500) | [0,0) | [0,1000): U = 5. */
  rs__run r[3] = {{.name = "a", .n_rows = 2500}, {.name = "b", .n_rows = 0}, {.name = "c", .n_rows = 1000}};
  const rs__run *rp[3] = {&r[0], &r[1], &r[2]};
  rs__shard_plan p;
  rs_error err = {0};
  cr_assert_eq(rs__shard_plan_make(rp, 3, 0, &p, &err), RS_OK);
  cr_assert_eq(p.n_units, 5);
  cr_assert_eq(p.unit[2].q0, 2048);
  cr_assert_eq(p.unit[2].q1, 2500);
  cr_assert_eq(p.unit[3].run, 1);
  cr_assert_eq(p.unit[3].q1, 0);
  /* 3 shares of 5 units: floor(5i/3) = 0, 1, 3, 5. */
  size_t u0, u1;
  rs__shard_share_units(&p, 1, 3, &u0, &u1);
  cr_assert(u0 == 1 && u1 == 3);
  rs__sweep_range g[3];
  rs__shard_ranges(&p, 2, 3, g); /* units 3, 4: run b (empty, its latency owner) and run c whole */
  cr_assert(g[0].q0 == 0 && g[0].q1 == 0 && !g[0].latency);
  cr_assert(g[1].q1 == 0 && g[1].latency);
  cr_assert(g[2].q0 == 0 && g[2].q1 == 1000 && g[2].latency);
  rs__shard_ranges(&p, 1, 3, g); /* units 1, 2: run a's rows [1024, 2500), not its latency */
  cr_assert(g[0].q0 == 1024 && g[0].q1 == 2500 && !g[0].latency);
  /* 7 shares of 5 units: floor(5i/7) = 0,0,1,2,2,3,4,5, sizes 0,1,1,0,1,1,1 (every unit once, in order). */
  size_t next = 0, sizes[7];
  for (size_t s = 0; s < 7; s++) {
    rs__shard_share_units(&p, s, 7, &u0, &u1);
    cr_assert_eq(u0, next);
    sizes[s] = u1 - u0, next = u1;
  }
  cr_assert_eq(next, 5);
  cr_assert(sizes[0] == 0 && sizes[1] == 1 && sizes[3] == 0 && sizes[6] == 1);
  rs__shard_plan_free(&p);
}

/* --- shares merged equal one sweep, bit for bit ---------------------------------------- */

typedef struct {
  unsigned char *buf;
  size_t len, cap, n_vals;
} recbuf;

static rs_code keep(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  recbuf *b = ctx;
  const size_t size = rs__shard_record_size(b->n_vals);
  if (b->len + size > b->cap) {
    b->cap = (b->len + size) * 2;
    b->buf = realloc(b->buf, b->cap);
    cr_assert(b->buf);
  }
  rs__shard_record_put(b->buf + b->len, run, query, v, b->n_vals);
  b->len += size;
  return RS_OK;
}

Test(shard_api, merged_shares_equal_one_sweep, .timeout = 120)
{
  const char *dir = th_fresh_dir();
  const char *path = gen_corpus(dir, "2500", "5");
  rs_error err = {0};
  rs__corpus *c = NULL;
  cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "%s", err.msg);
  const size_t n_runs = c->runs.n;
  const rs__run *runs[16];
  for (size_t r = 0; r < n_runs; r++) runs[r] = &c->runs.run[r];
  const char *names[] = {"nDCG@10", "AP", "RR", "P@5", "NumRet", "Rprec"};
  rs__spec *spec = NULL;
  cr_assert_eq(rs__spec_build(names, 6, 30, &spec, &err), RS_OK, "%s", err.msg);
  rs__sweep_cfg cfg = {.spec = spec, .threads = 2, .latency_cdf = 1, .batch_docs = 20000};
  rs__run_result one[16];
  cr_assert_eq(rs__sweep(&cfg, c, runs, n_runs, one, &err), RS_OK, "%s", err.msg);

  for (size_t n = 1; n <= 7; n++) {
    rs__shard_plan p;
    cr_assert_eq(rs__shard_plan_make(runs, n_runs, 300, &p, &err), RS_OK);
    rs__run_result merged[16];
    rs__shard_merge m;
    cr_assert_eq(rs__shard_merge_init(&m, spec, merged, n_runs, c->nq, &err), RS_OK);
    for (size_t i = 0; i < n; i++) {
      recbuf b = {.n_vals = spec->n_req};
      rs__sweep_cfg sc = cfg;
      sc.per_query = keep, sc.per_query_ctx = &b;
      sc.threads = (int)(1 + i % 2); /* any thread count */
      rs__run_result part[16];
      cr_assert_eq(rs__shard_eval(&sc, c, runs, &p, i, n, part, &err), RS_OK, "%s", err.msg);
      cr_assert_eq(rs__shard_merge_records(&m, b.buf, b.len, "test", NULL, NULL, &err), RS_OK, "%s", err.msg);
      rs__sweep_range g[16];
      rs__shard_ranges(&p, i, n, g);
      for (size_t r = 0; r < n_runs; r++) {
        cr_assert_eq(part[r].has_latency, g[r].latency, "share %zu/%zu run %zu", i, n, r);
        if (g[r].latency)
          cr_assert_eq(rs__shard_merge_latency(&m, r, &part[r].latency, part[r].latency_cdf, &err), RS_OK);
        rs__run_result_free(&part[r]);
      }
      free(b.buf);
    }
    rs__shard_merge_finish(&m);
    for (size_t r = 0; r < n_runs; r++) {
      cr_assert_eq(merged[r].num_q, one[r].num_q);
      cr_assert_eq(merged[r].no_rel_ret, one[r].no_rel_ret);
      cr_assert_eq(merged[r].perfect_p1, one[r].perfect_p1);
      cr_assert_eq(memcmp(merged[r].value, one[r].value, spec->n_req * sizeof(double)), 0, "N=%zu run %zu", n, r);
      cr_assert(one[r].has_latency && merged[r].has_latency);
      cr_assert_eq(memcmp(&merged[r].latency, &one[r].latency, sizeof one[r].latency), 0);
      cr_assert_eq(memcmp(merged[r].latency_cdf, one[r].latency_cdf, RS__LATENCY_CDF_N * sizeof(double)), 0);
      rs__run_result_free(&merged[r]);
    }
    rs__shard_plan_free(&p);
  }
  cr_assert_gt(one[0].num_q, 1000);
  for (size_t r = 0; r < n_runs; r++) rs__run_result_free(&one[r]);
  rs__spec_free(spec);
  rs__corpus_close(c);
}

/* Records out of order (a share given twice, or shares swapped) are refused. */
Test(shard_api, merge_refuses_records_out_of_order)
{
  const char *names[] = {"P@5"};
  rs__spec *spec = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__spec_build(names, 1, 10, &spec, &err), RS_OK);
  const size_t sz = rs__shard_record_size(spec->n_req);
  unsigned char *buf = calloc(3, sz);
  double *v = calloc(spec->n_req, sizeof *v);
  rs__shard_record_put(buf, 0, 5, v, spec->n_req);
  rs__shard_record_put(buf + sz, 0, 4, v, spec->n_req);
  rs__run_result res[1];
  rs__shard_merge m;
  cr_assert_eq(rs__shard_merge_init(&m, spec, res, 1, 10, &err), RS_OK);
  cr_assert_eq(rs__shard_merge_records(&m, buf, 2 * sz, "s.bin", NULL, NULL, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "s.bin: record at byte") && strstr(err.msg, "query 4 comes after result 0, query 5"),
            "%s", err.msg);
  rs__shard_merge_abort(&m);
  cr_assert_eq(rs__shard_merge_init(&m, spec, res, 1, 10, &err), RS_OK);
  cr_assert_eq(rs__shard_merge_records(&m, buf, sz - 1, "s.bin", NULL, NULL, &err), RS_FORMAT);
  rs__shard_record_put(buf, 1, 0, v, spec->n_req);
  cr_assert_eq(rs__shard_merge_records(&m, buf, sz, "s.bin", NULL, NULL, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "expected a result below 1"), "%s", err.msg);
  rs__shard_merge_abort(&m);
  free(buf), free(v);
  rs__spec_free(spec);
}
