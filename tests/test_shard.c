/* test_shard.c: the split of eval's work into shares (engine/shard.h) and
 * `ragsweep eval --shard I/N` + `ragsweep merge`: every share count gives
 * the bytes of one process. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
  char dir[4096]; /* th_fresh_dir's ring slot is reused after 64 paths */
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
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

/* eval --timing's split of the rows among the scoring threads: each row
 * is scored once, on some thread, at any thread count, and timing a sweep
 * leaves its values as they are. */
Test(shard_api, timed_sweep_scores_each_row_once_on_some_thread, .timeout = 120)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  const char *path = gen_corpus(dir, "3000", "4");
  rs_error err = {0};
  rs__corpus *c = NULL;
  cr_assert_eq(rs__corpus_open(path, &c, &err), RS_OK, "%s", err.msg);
  const size_t n_runs = c->runs.n;
  const rs__run *runs[16];
  size_t rows = 0;
  for (size_t r = 0; r < n_runs; r++) runs[r] = &c->runs.run[r], rows += c->runs.run[r].n_rows;
  cr_assert_eq(rows, 4 * 3000);
  const char *names[] = {"nDCG@10", "AP", "P@5"};
  rs__spec *spec = NULL;
  cr_assert_eq(rs__spec_build(names, 3, 30, &spec, &err), RS_OK, "%s", err.msg);
  rs__run_result plain[16];
  rs__sweep_cfg cfg = {.spec = spec, .threads = 1, .batch_docs = 20000};
  cr_assert_eq(rs__sweep(&cfg, c, runs, n_runs, plain, &err), RS_OK, "%s", err.msg);
  for (int threads = 1; threads <= 3; threads++) {
    rs__sweep_timing tm;
    rs__run_result timed[16];
    cfg.threads = threads, cfg.timing = &tm;
    cr_assert_eq(rs__sweep(&cfg, c, runs, n_runs, timed, &err), RS_OK, "%s", err.msg);
    cr_assert_eq(tm.n_threads, threads);
    uint64_t scored = 0;
    for (int t = 0; t < threads; t++) {
      scored += tm.thread_rows[t];
      cr_assert(tm.thread_s[t] >= 0.0 && (tm.thread_rows[t] == 0 || tm.thread_s[t] > 0.0));
    }
    cr_assert_eq(scored, rows, "%d threads: %llu rows counted", threads, (unsigned long long)scored);
    for (size_t r = 0; r < n_runs; r++) {
      cr_assert_eq(timed[r].num_q, plain[r].num_q);
      cr_assert_eq(memcmp(timed[r].value, plain[r].value, spec->n_req * sizeof(double)), 0, "run %zu", r);
      rs__run_result_free(&timed[r]);
    }
  }
  for (size_t r = 0; r < n_runs; r++) rs__run_result_free(&plain[r]);
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
  cr_assert(strstr(err.msg, "s.bin: record at byte ") && strstr(err.msg, ": result 0, query 4 comes after its query 5"),
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

/* --- eval --shard I/N and merge ---------------------------------------------------------- */

/* Runs ragsweep in dir with the words of line (split on spaces). */
static th_result rs_in(const char *dir, const char *line)
{
  static char buf[8][4096];
  static int slot;
  char *args = buf[slot++ % 8];
  snprintf(args, sizeof buf[0], "%s", line);
  char *argv[64];
  th_split(args, th_bin(), NULL, argv, 64);
  return th_run(dir, argv, NULL, NULL);
}

static void rs_ok(const char *dir, const char *line)
{
  th_result r = rs_in(dir, line);
  cr_assert_eq(r.status, 0, "ragsweep %s: status %d\n%s", line, r.status, r.err);
  th_free(&r);
}

static void remove_tree(const char *path)
{
  char *argv[] = {"/bin/rm", "-rf", (char *)path, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(r.status, 0, "rm -rf %s: %s", path, r.err);
  th_free(&r);
}

/* Every file of dir a is in b with the same bytes, and b has no other. */
static void same_files(const char *a, const char *b, const char *what)
{
  const char *names[] = {"compare.csv", "summary.csv", "aggregate.csv", "latency.csv", "latency_hist.csv", "per_query.csv", "worst.csv",
                         "query_texts.csv", "gates.csv", "curves.csv", "latency_cdf.csv", "report.html"};
  size_t n_same = 0;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *pa = th_join(a, names[i]), *pb = th_join(b, names[i]);
    cr_assert_eq(th_exists(pa), th_exists(pb), "%s: %s in one output and not the other", what, names[i]);
    if (!th_exists(pa)) continue;
    size_t la, lb;
    char *x = th_slurp(pa, &la), *y = th_slurp(pb, &lb);
    cr_assert(x && y);
    cr_assert(la == lb && memcmp(x, y, la) == 0, "%s: %s differs from the one-process file", what, names[i]);
    free(x), free(y);
    n_same++;
  }
  cr_assert_geq(n_same, 3);
}

/* Shard folders s0..s{n-1} of eval ARGS in dir, then merge in a shuffled
 * order into out; returns merge's stdout. */
static char *shard_and_merge(const char *dir, const char *cmd, const char *args, size_t n, const char *out)
{
  char line[4096];
  for (size_t i = 0; i < n; i++) {
    snprintf(line, sizeof line, "%s %s -o s%zu_%zu --shard %zu/%zu --threads %zu", cmd, args, n, i, i, n, 1 + i % 2);
    rs_ok(dir, line);
  }
  /* Shuffled: every odd index first, descending, then the even ones. */
  int len = snprintf(line, sizeof line, "merge -o %s", out);
  for (size_t i = n; i-- > 0;)
    if (i % 2) len += snprintf(line + len, sizeof line - (size_t)len, " s%zu_%zu", n, i);
  for (size_t i = 0; i < n; i += 2) len += snprintf(line + len, sizeof line - (size_t)len, " s%zu_%zu", n, i);
  th_result r = rs_in(dir, line);
  cr_assert(r.status == 0 || r.status == 3, "%s: status %d\n%s", line, r.status, r.err);
  char *stdout_text = r.out;
  r.out = NULL;
  th_free(&r);
  return stdout_text;
}

/* One-process eval ARGS into dir/out, kept as dir/one; then shards 1..7
 * merged into dir/out (the same name: report.html names its folder), and
 * every file and stdout compared byte for byte. */
static void check_all_shard_counts(const char *dir, const char *cmd, const char *args, size_t max_n)
{
  char line[4096];
  snprintf(line, sizeof line, "%s %s -o out", cmd, args);
  th_result one = rs_in(dir, line);
  cr_assert(one.status == 0 || one.status == 3, "%s: %s", line, one.err);
  char from[4096], to[4096]; /* not th_join's ring: same_files takes many slots */
  snprintf(from, sizeof from, "%s/out", dir);
  snprintf(to, sizeof to, "%s/one", dir);
  remove_tree(to);
  cr_assert_eq(rename(from, to), 0);
  for (size_t n = 1; n <= max_n; n++) {
    char *merged_out = shard_and_merge(dir, cmd, args, n, "out");
    char what[64];
    snprintf(what, sizeof what, "%zu shards", n);
    same_files(to, from, what);
    cr_assert_str_eq(merged_out, one.out, "%s: merge's stdout differs from %s's", what, cmd);
    free(merged_out);
    remove_tree(from);
  }
  th_free(&one);
}

Test(shard_cli, generated_sweep_any_shard_count_gives_eval_bytes, .timeout = 300)
{
  char dir[4096]; /* th_fresh_dir's ring slot is reused after 64 paths */
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  gen_corpus(dir, "2500", "4"); /* 4 runs x 2500 queries, latencies: 12 units of <= 1024 queries */
  check_all_shard_counts(dir, "eval", "g.h5 --quiet --per-query --worst 3 --report --gate nDCG@10>=0.3 -m nDCG@10 -m AP -m RR@10 "
                              "-m P@5 -m NumRet", 7);
  remove_tree(dir);
}

/* eval --depths: the runs cut from one run's rows are scored together and
 * hand over their values block by block; any share count still gives the
 * one-process bytes, per_query.csv's row order included, with the default
 * batches and with small ones. */
Test(shard_cli, depths_any_shard_count_gives_eval_bytes, .timeout = 300)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  gen_corpus(dir, "2500", "3");
  check_all_shard_counts(dir, "eval", "g.h5 --quiet --per-query --worst 2 --depths 1,5,20 -m nDCG@10 -m AP -m R@10",
                         7);
  check_all_shard_counts(dir, "eval", "g.h5 --quiet --per-query --batch-docs 1500 --depths 3,10 -m nDCG@10 -m P@5", 4);
  remove_tree(dir);
}

/* Without a per-query file the shards store each 1024-query unit's sums
 * (block records), not every query's values: the merge still gives the
 * one-process bytes at every share count (runs cut by --depths too), and
 * values.bin holds records * (40 + 8 * values) bytes. */
Test(shard_cli, block_sums_any_shard_count_give_eval_bytes, .timeout = 300)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  gen_corpus(dir, "2500", "4");
  check_all_shard_counts(dir, "eval", "g.h5 --quiet --report --gate nDCG@10>=0.3 -m nDCG@10 -m AP -m RR@10 -m P@5 "
                              "-m NumRet", 7);
  char path[4096];
  snprintf(path, sizeof path, "%s/s3_1/manifest.txt", dir);
  char *man = th_slurp(path, NULL);
  cr_assert(man, "%s", path);
  cr_assert(strstr(man, "\nrecord-kind blocks\n"), "%s", man);
  const char *rec = strstr(man, "\nrecords "), *vals = strstr(man, "\nvalues ");
  cr_assert(rec && vals, "%s", man);
  const unsigned long n_rec = strtoul(rec + 9, NULL, 10), n_vals = strtoul(vals + 8, NULL, 10);
  /* share 1 of 3 of 4 runs x 3 units: 4 units, each one block record per run */
  cr_expect_eq(n_rec, 4ul, "%s", man);
  struct stat st;
  snprintf(path, sizeof path, "%s/s3_1/values.bin", dir);
  cr_assert_eq(stat(path, &st), 0);
  cr_expect_eq((unsigned long)st.st_size, n_rec * (40 + 8 * n_vals));
  free(man);
  check_all_shard_counts(dir, "eval", "g.h5 --quiet --depths 1,5,20 -m nDCG@10 -m AP -m R@10", 5);
  remove_tree(dir);
}

static uint64_t xorshift(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Text inputs: TREC qrels and JSONL runs with latencies, imported by every
 * shard and by the merge; --queries=all. */
Test(shard_cli, text_inputs_any_shard_count_gives_eval_bytes, .timeout = 300)
{
  char dir[4096]; /* th_fresh_dir's ring slot is reused after 64 paths */
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  FILE *q = fopen(th_join(dir, "qrels.txt"), "w");
  FILE *run[3] = {fopen(th_join(dir, "bm25.jsonl"), "w"), fopen(th_join(dir, "dense.jsonl"), "w"),
                  fopen(th_join(dir, "hybrid.jsonl"), "w")};
  cr_assert(q && run[0] && run[1] && run[2]);
  uint64_t x = 88172645463325252ull;
#define NEXT() xorshift(&x)
  for (int i = 0; i < 1500; i++) {
    const int n_rel = 1 + (int)(NEXT() % 4);
    const int d0 = (int)(NEXT() % 60);
    for (int j = 0; j < n_rel; j++) fprintf(q, "q%d 0 d%d %d\n", i, (d0 + 13 * j) % 60, (int)(NEXT() % 4));
    for (int r = 0; r < 3; r++) {
      if (NEXT() % 50 == 0) continue; /* a query this run misses */
      fprintf(run[r], "{\"query_id\":\"q%d\",\"doc_ids\":[", i);
      for (int k = 0; k < 10; k++) fprintf(run[r], "%s\"d%d\"", k ? "," : "", r * 7 + k * (1 + r) + (int)(NEXT() % 3) * 20);
      fprintf(run[r], "],\"scores\":[");
      for (int k = 0; k < 10; k++) fprintf(run[r], "%s%d", k ? "," : "", 100 - k * 3 - (int)(NEXT() % 3));
      fprintf(run[r], "],\"latency_ms\":%.3f}\n", 1.0 + (double)(NEXT() % 100000) / 1000.0);
    }
  }
#undef NEXT
  fclose(q);
  for (int r = 0; r < 3; r++) fclose(run[r]);
  check_all_shard_counts(dir, "eval", "qrels.txt --quiet bm25.jsonl dense.jsonl fused=hybrid.jsonl --queries=all --per-query "
                              "-m nDCG@10 -m AP -m R@5", 7);
  remove_tree(dir);
}

/* compare --shard: the shards score, the merge runs the tests as compare does. */
Test(shard_cli, compare_any_shard_count_gives_compare_bytes, .timeout = 300)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  gen_corpus(dir, "1800", "4");
  check_all_shard_counts(dir, "compare", "g.h5 -m nDCG@10 -m AP -m RR --worst 2 --gate AP>=0.2 --permutations 300 "
                                         "--bootstrap 200 --queries=judged", 5);
  check_all_shard_counts(dir, "compare", "g.h5 -m nDCG@10 -m AP --depths 5,20 --worst 2 --permutations 200 "
                                         "--bootstrap 100", 3);
  remove_tree(dir);
}

/* Shards that do not make one evaluation are refused with the folders named. */
Test(shard_cli, merge_refuses_missing_repeated_and_foreign_shards, .timeout = 120)
{
  char dir[4096]; /* th_fresh_dir's ring slot is reused after 64 paths */
  snprintf(dir, sizeof dir, "%s", th_fresh_dir());
  gen_corpus(dir, "1500", "3");
  for (int i = 0; i < 3; i++) {
    char line[256];
    snprintf(line, sizeof line, "eval g.h5 -m nDCG@10 --quiet -o s%d --shard %d/3", i, i);
    rs_ok(dir, line);
  }
  th_result r = rs_in(dir, "merge s2 s0 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "ragsweep merge: shard 1 of 3 is missing: the 2 folders given are s2 (2), s0 (0); "
                          "evaluate it with --shard 1/3"), "%s", r.err);
  th_free(&r);
  r = rs_in(dir, "merge s0 s1 s2 s1 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "shard 1 of 3 is given twice: s1 and s1"), "%s", r.err);
  th_free(&r);
  /* Another option (a different measure set). */
  rs_ok(dir, "eval g.h5 -m AP --quiet -o other1 --shard 1/3");
  r = rs_in(dir, "merge s0 other1 s2 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "ragsweep merge: s0 and other1 are not shards of one evaluation: line 8 of their "
                          "manifest.txt is 'arg nDCG@10' in the first, 'arg AP' in the second"), "%s", r.err);
  th_free(&r);
  /* Another share count. */
  rs_ok(dir, "eval g.h5 -m nDCG@10 --quiet -o four1 --shard 1/4");
  r = rs_in(dir, "merge s0 four1 s2 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "'shards 3' in the first, 'shards 4' in the second"), "%s", r.err);
  th_free(&r);
  /* Other inputs: a corpus generated with another seed under the same name. */
  char *other = th_join(dir, "other");
  cr_assert_eq(mkdir(other, 0700), 0);
  gen_corpus(other, "1500", "3");
  char *orig = th_join(dir, "g.h5"), *kept = th_join(dir, "g.h5.orig");
  cr_assert_eq(rename(orig, kept), 0);
  cr_assert_eq(rename(th_join(other, "g.h5"), orig), 0);
  r = rs_in(dir, "merge s0 s1 s2 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "ragsweep merge: ") && strstr(r.err, "/s0: the shards do not match their inputs now: line ")
            && strstr(r.err, "'input g.h5 size "), "%s", r.err);
  cr_assert(!th_exists(th_join(dir, "out/aggregate.csv")), "nothing is written");
  th_free(&r);
  rs_ok(dir, "eval g.h5 -m nDCG@10 --quiet -o new1 --shard 1/3");
  r = rs_in(dir, "merge s0 new1 s2 -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "s0 and new1 are not shards of one evaluation") && strstr(r.err, "'input g.h5 size"),
            "%s", r.err);
  th_free(&r);
  /* A folder that is no shard; a bad --shard. */
  r = rs_in(dir, "merge s0 other -o out");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "other: no manifest.txt: not a finished shard"), "%s", r.err);
  th_free(&r);
  r = rs_in(dir, "eval g.h5 -o x --shard 3/3");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "ragsweep eval: --shard: expected I/N with 0 <= I < N"), "%s", r.err);
  th_free(&r);
  r = rs_in(dir, "merge s0 s1 s2");
  cr_assert_eq(r.status, 1);
  th_free(&r);
  remove_tree(dir);
}
