/* test_grid.c: the K x N grid.  eval --depths K1,K2 scores every run cut at
 * each depth K in one pass (virtual runs R/top_k=K with a top_k attribute);
 * aggregate.csv and per_query.csv carry base and cutoff beside measure; and
 * `table --cols cutoff` pivots N without parsing names.
 *
 * The reference for a depth is independent of the engine's cut: the run
 * exported to TREC text, each query's ranking put in trec_eval's order
 * (score descending, doc id descending) and cut at K by this file, then
 * scored as a direct text input. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csvio.h"
#include "helpers.h"

#define MEASURES "-m", "P@{1,5,10}", "-m", "R@{5,20}", "-m", "nDCG@{3,10}", "-m", "AP", "-m", "RR", "-m", "Rprec", \
                 "-m", "bpref", "-m", "Success@{1,5}", "-m", "NumRet"

static char *make_corpus(const char *dir, const char *grid)
{
  char *corpus = th_join(dir, "g.h5"), gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *g[] = {gen, "-o", corpus, "--queries", "300", "--k", "30", "--grid", (char *)grid, "--seed", "17", NULL};
  th_result r = th_run(NULL, g, NULL, NULL);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  return corpus;
}

/* --- CSV rows as text ------------------------------------------------------------------ */

typedef struct {
  char **line; /* the fields joined by '|' */
  size_t n;
  char **hdr;
  size_t n_hdr;
  const char *keep_run; /* only rows whose first field is this (NULL: all) */
  size_t skip_col;      /* a column to leave out (SIZE_MAX: none) */
} rows;

static rs_code add_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  rows *t = ctx;
  if (line == 1) {
    t->hdr = calloc(n, sizeof *t->hdr);
    for (size_t i = 0; i < n; i++) t->hdr[i] = strdup(f[i]);
    t->n_hdr = n;
    return RS_OK;
  }
  if (t->keep_run && strcmp(f[0], t->keep_run) != 0) return RS_OK;
  size_t len = 1;
  for (size_t i = 1; i < n; i++) len += strlen(f[i]) + 1;
  char *s = calloc(len, 1);
  for (size_t i = 1; i < n; i++) { /* the run column left out: the names differ by design */
    if (i == t->skip_col) continue;
    strcat(s, f[i]);
    strcat(s, "|");
  }
  t->line = realloc(t->line, (t->n + 1) * sizeof *t->line);
  t->line[t->n++] = s;
  return RS_OK;
}

static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static rows load_rows(const char *path, const char *run, size_t skip_col)
{
  rows t = {.keep_run = run, .skip_col = skip_col};
  rs_error err = {0};
  cr_assert_eq(rs__csv_read(path, add_row, &t, &err), RS_OK, "%s", err.msg);
  qsort(t.line, t.n, sizeof *t.line, cmp_line);
  return t;
}

static void rows_free(rows *t)
{
  for (size_t i = 0; i < t->n; i++) free(t->line[i]);
  for (size_t i = 0; i < t->n_hdr; i++) free(t->hdr[i]);
  free(t->line);
  free(t->hdr);
}

static size_t col_of(const rows *t, const char *name)
{
  for (size_t i = 0; i < t->n_hdr; i++)
    if (strcmp(t->hdr[i], name) == 0) return i;
  cr_assert_fail("no column %s", name);
  return SIZE_MAX;
}

static void expect_same_rows(const rows *a, const rows *b, const char *what)
{
  cr_assert_gt(a->n, 0, "%s: no rows", what);
  cr_assert_eq(a->n, b->n, "%s: %zu rows against %zu", what, a->n, b->n);
  for (size_t i = 0; i < a->n; i++) cr_assert_str_eq(a->line[i], b->line[i], "%s: row %zu", what, i);
}

/* --- the independent cut ------------------------------------------------------------------ */

typedef struct {
  char qid[64], doc[64], line[256];
  double score;
} trec_line;

static int trec_order(const void *a, const void *b)
{
  const trec_line *x = a, *y = b;
  int q = strcmp(x->qid, y->qid);
  if (q) return q;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return -strcmp(x->doc, y->doc); /* ties: doc id descending, as trec_eval */
}

/* Writes to out the TREC run at in, each query cut at its top k. */
static void cut_run(const char *in, const char *out, size_t k)
{
  FILE *f = fopen(in, "r");
  cr_assert(f, "%s", in);
  trec_line *l = NULL;
  size_t n = 0, cap = 0;
  char buf[256];
  while (fgets(buf, sizeof buf, f)) {
    if (n == cap) l = realloc(l, (cap = cap ? 2 * cap : 1024) * sizeof *l);
    char q0[8], tag[64];
    long rank;
    cr_assert_eq(sscanf(buf, "%63s %7s %63s %ld %lf %63s", l[n].qid, q0, l[n].doc, &rank, &l[n].score, tag), 6, "%s",
                 buf);
    snprintf(l[n].line, sizeof l[n].line, "%s", buf);
    n++;
  }
  fclose(f);
  qsort(l, n, sizeof *l, trec_order);
  FILE *o = fopen(out, "w");
  cr_assert(o);
  for (size_t i = 0, in_q = 0; i < n; i++) {
    in_q = i > 0 && strcmp(l[i].qid, l[i - 1].qid) == 0 ? in_q + 1 : 0;
    if (in_q < k) fputs(l[i].line, o);
  }
  fclose(o);
  free(l);
}

static void run_ok(th_result r, const char *what)
{
  cr_assert_eq(r.status, 0, "%s: exit %d: %s", what, r.status, r.err);
  th_free(&r);
}

Test(grid, a_depth_equals_the_run_cut_at_that_depth)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small,e5-base;chunk=256,512");
  char *x = th_join(dir, "x"), *deep = th_join(dir, "deep"), *flat = th_join(dir, "flat");
  run_ok(th_rs("export", corpus, "-o", x, NULL), "export");
  /* 5 and 12 cut; 30 is every run's whole depth */
  run_ok(th_rs("eval", corpus, "-o", deep, "--per-query", "--quiet", "--depths", "5,12,30", MEASURES, NULL), "eval --depths");
  run_ok(th_rs("eval", corpus, "-o", flat, "--per-query", "--quiet", MEASURES, NULL), "eval");
  static const char *const runs[] = {"bge-small_256", "e5-base_512"};
  static const size_t depths[] = {5, 12};
  for (size_t r = 0; r < 2; r++)
    for (size_t d = 0; d < 2; d++) {
      char name[128], file[128], arg[4096];
      snprintf(file, sizeof file, "%s.txt", runs[r]);
      snprintf(name, sizeof name, "%s_cut%zu.txt", runs[r], depths[d]);
      char *cut = th_join(dir, name), *ref = th_join(dir, "ref");
      cut_run(th_join(x, file), cut, depths[d]);
      snprintf(arg, sizeof arg, "cut=%s", cut);
      run_ok(th_rs("eval", "--qrels", th_join(x, "qrels.txt"), arg, "-o", ref, "--per-query", "--quiet", MEASURES, NULL),
             "eval of the cut run");
      snprintf(name, sizeof name, "%s/top_k=%zu", runs[r], depths[d]);
      rows want = load_rows(th_join(ref, "per_query.csv"), "cut", SIZE_MAX);
      rows got = load_rows(th_join(deep, "per_query.csv"), name, SIZE_MAX);
      expect_same_rows(&got, &want, name); /* every value of every query, as printed (17 digits) */
      rows_free(&want), rows_free(&got);
    }
  /* The whole depth: aggregate.csv rows equal the plain run's, top_k aside. */
  for (size_t r = 0; r < 2; r++) {
    char name[128];
    snprintf(name, sizeof name, "%s/top_k=30", runs[r]);
    rows got0 = load_rows(th_join(deep, "aggregate.csv"), NULL, SIZE_MAX);
    rows got = load_rows(th_join(deep, "aggregate.csv"), name, col_of(&got0, "top_k"));
    rows want = load_rows(th_join(flat, "aggregate.csv"), runs[r], SIZE_MAX);
    expect_same_rows(&got, &want, name);
    rows_free(&got0), rows_free(&got), rows_free(&want);
  }
}

Test(grid, columns_base_and_cutoff)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small;chunk=256");
  char *out = th_join(dir, "o");
  run_ok(th_rs("eval", corpus, "-o", out, "--per-query", "--quiet", "--depths", "10,3", "-m", "nDCG@10", "-m",
               "P(rel=2)@5", "-m", "AP", NULL),
         "eval");
  size_t len;
  char *agg = th_slurp(th_join(out, "aggregate.csv"), &len);
  cr_assert(agg);
  cr_assert(strncmp(agg, "run,chunk,model,top_k,measure,base,cutoff,value,queries\n", 56) == 0, "%.80s", agg);
  /* virtual runs in run order, then depth order as given */
  cr_assert(strstr(agg, "\nbge-small_256/top_k=10,256,bge-small,10,nDCG@10,nDCG,10,"), "%s", agg);
  cr_assert(strstr(agg, "\nbge-small_256/top_k=10,256,bge-small,10,P(rel=2)@5,P(rel=2),5,"), "%s", agg);
  cr_assert(strstr(agg, "\nbge-small_256/top_k=3,256,bge-small,3,AP,AP,,"), "%s", agg);
  cr_assert(strstr(agg, "\nbge-small_256/top_k=3,256,bge-small,3,num_q_perfect_P@1,num_q_perfect_P@1,,"), "%s", agg);
  cr_assert_lt(strstr(agg, "/top_k=10,"), strstr(agg, "/top_k=3,"));
  char *pq = th_slurp(th_join(out, "per_query.csv"), &len);
  cr_assert(pq);
  cr_assert(strncmp(pq, "run,query,measure,base,cutoff,value\n", 36) == 0, "%.60s", pq);
  cr_assert(strstr(pq, ",nDCG@10,nDCG,10,"));
  cr_assert(strstr(pq, ",AP,AP,,"));
  char *lat = th_slurp(th_join(out, "latency.csv"), &len);
  /* the cuts share their run's latencies: the same fields after the name and top_k */
  static const char p10[] = "\nbge-small_256/top_k=10,256,bge-small,10,", p3[] = "\nbge-small_256/top_k=3,256,bge-small,3,";
  char *a = strstr(lat, p10), *b = strstr(lat, p3);
  cr_assert(a && b, "%s", lat);
  a += strlen(p10), b += strlen(p3);
  const size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
  cr_assert(la == lb && la > 20 && strncmp(a, b, la) == 0, "%.*s against %.*s", (int)la, a, (int)lb, b);
  free(agg), free(pq), free(lat);
}

Test(grid, same_bytes_at_any_thread_count_and_in_the_serial_build)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small,e5-base;chunk=256,512");
  const char *o1 = th_join(dir, "t1"), *o2 = th_join(dir, "t2");
  /* small batches: the cuts of a run span many batches and both threads */
  run_ok(th_rs("eval", corpus, "-o", o1, "--per-query", "--quiet", "--threads", "1", "--batch-docs", "700", "--depths",
               "1,7,20", MEASURES, NULL), "1 thread");
  run_ok(th_rs("eval", corpus, "-o", o2, "--per-query", "--quiet", "--threads", "2", "--batch-docs", "700", "--depths",
               "1,7,20", MEASURES, NULL), "2 threads");
  static const char *const files[] = {"aggregate.csv", "per_query.csv", "latency.csv", "latency_hist.csv"};
  for (size_t i = 0; i < 4; i++) {
    size_t l1, l2;
    char *a = th_slurp(th_join(o1, files[i]), &l1), *b = th_slurp(th_join(o2, files[i]), &l2);
    cr_assert(a && b && l1 == l2 && memcmp(a, b, l1) == 0, "%s differs", files[i]);
    free(a), free(b);
  }
  if (th_serial_bin()) {
    const char *o3 = th_join(dir, "serial");
    char *argv[] = {(char *)th_serial_bin(), "eval", (char *)corpus, "-o", (char *)o3, "--per-query", "--quiet",
                    "--batch-docs", "700", "--depths", "1,7,20", MEASURES, NULL};
    run_ok(th_run(NULL, argv, NULL, NULL), "serial");
    size_t l1, l3;
    char *a = th_slurp(th_join(o1, "aggregate.csv"), &l1), *c = th_slurp(th_join(o3, "aggregate.csv"), &l3);
    cr_assert(a && c && l1 == l3 && memcmp(a, c, l1) == 0, "the serial build differs");
    free(a), free(c);
  }
}

Test(grid, table_pivots_the_cutoff)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small;chunk=256");
  char *out = th_join(dir, "o");
  run_ok(th_rs("eval", corpus, "-o", out, "--quiet", "--depths", "3,20", "-m", "Success@{1,3,5}", "-m", "nDCG@10", NULL),
         "eval");
  th_result r = th_rs("table", out, "--rows", "top_k", "--cols", "cutoff", "-m", "Success@{1,3,5}", "--format", "csv",
                      "--decimals", "6", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  /* each cell is aggregate.csv's value of (top_k, Success@cutoff) */
  rows agg = load_rows(th_join(out, "aggregate.csv"), NULL, SIZE_MAX);
  const size_t c_top = col_of(&agg, "top_k") - 1, c_meas = col_of(&agg, "measure") - 1, c_val = col_of(&agg, "value") - 1;
  cr_assert(strncmp(r.out, "top_k,cutoff=1,cutoff=3,cutoff=5\n", 33) == 0, "%s", r.out);
  for (size_t i = 0; i < agg.n; i++) {
    char *f[16], *s = strdup(agg.line[i]), *save = NULL;
    size_t n = 0;
    for (char *tok = strtok_r(s, "|", &save); tok && n < 16; tok = strtok_r(NULL, "|", &save)) f[n++] = tok;
    /* strtok skips empty fields: only rows with a cutoff have all of them */
    if (n < 8 || strncmp(f[c_meas], "Success@", 8) != 0) {
      free(s);
      continue;
    }
    char want[64];
    snprintf(want, sizeof want, "%.6f", strtod(f[c_val], NULL));
    const char *line = strstr(r.out, "\n");
    while (line && strncmp(line + 1, f[c_top], strlen(f[c_top])) != 0) line = strchr(line + 1, '\n');
    cr_assert(line, "no row top_k=%s in %s", f[c_top], r.out);
    const char *cell = line + 1;
    const int col = f[c_meas][8] == '1' ? 1 : f[c_meas][8] == '3' ? 2 : 3;
    for (int k = 0; k < col; k++) cell = strchr(cell, ',') + 1;
    cr_assert(strncmp(cell, want, strlen(want)) == 0, "top_k=%s %s: want %s in %s", f[c_top], f[c_meas], want, line);
    free(s);
  }
  th_free(&r);
  rows_free(&agg);
  /* Success and nDCG in one table under cutoff columns would mix measures. */
  r = th_rs("table", out, "--rows", "top_k", "--cols", "cutoff", "-m", "Success@{1,5}", "-m", "nDCG@10", NULL);
  cr_assert_eq(r.status, 1, "%s", r.out);
  cr_assert(strstr(r.err, "the table would mix measures: its cells have base 'Success' and 'nDCG'") ||
            strstr(r.err, "the table would mix measures: its cells have base 'nDCG' and 'Success'"), "%s", r.err);
  cr_assert(strstr(r.err, "add base to --rows or --cols"), "%s", r.err);
  th_free(&r);
  /* with base as a column key, it is one table */
  r = th_rs("table", out, "--rows", "top_k", "--cols", "base,cutoff", "-m", "Success@1", "-m", "nDCG@10", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "base=Success / cutoff=1") && strstr(r.out, "base=nDCG / cutoff=10"), "%s", r.out);
  th_free(&r);
}

Test(grid, compare_takes_depths)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small;chunk=256");
  char *out = th_join(dir, "c"), *ev = th_join(dir, "e");
  run_ok(th_rs("compare", corpus, "-o", out, "--depths", "3,30", "-m", "nDCG@10", "--queries=all", NULL), "compare");
  run_ok(th_rs("eval", corpus, "-o", ev, "--quiet", "--depths", "3,30", "-m", "nDCG@10", "--queries=all", NULL), "eval");
  size_t len;
  char *cmp = th_slurp(th_join(out, "compare.csv"), &len);
  cr_assert(strstr(cmp, "bge-small_256/top_k=30,256,bge-small,30,bge-small_256/top_k=3,nDCG@10,"), "%s", cmp);
  /* the means compared are eval's */
  rows a = load_rows(th_join(out, "aggregate.csv"), "bge-small_256/top_k=30", SIZE_MAX);
  rows b = load_rows(th_join(ev, "aggregate.csv"), "bge-small_256/top_k=30", SIZE_MAX);
  cr_assert_str_eq(a.line[a.n - 1], b.line[b.n - 1]);
  rows_free(&a), rows_free(&b);
  free(cmp);
}

Test(grid, bad_depths_are_clear_errors)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "model=bge-small;top_k=10,20");
  char *out = th_join(dir, "o");
  static const struct {
    const char *arg, *msg;
  } bad[] = {{"0", "--depths: expected whole numbers from 1 to 100000000 separated by commas (--depths 10,20,50), found '0'"},
             {"5,,6", "found '5,,6'"},
             {"5,x", "found '5,x'"},
             {"-3", "found '-3'"},
             {"10,5,10", "--depths: 10 is given twice"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    th_result r = th_rs("eval", corpus, "-o", out, "--depths", bad[i].arg, NULL);
    cr_assert_eq(r.status, 1, "%s: exit %d", bad[i].arg, r.status);
    cr_assert(strstr(r.err, bad[i].msg), "%s: %s", bad[i].arg, r.err);
    th_free(&r);
  }
  /* runs that carry a top_k attribute of their own */
  th_result r = th_rs("eval", corpus, "-o", out, "--depths", "5", NULL);
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, ":/runs/bge-small_10: the run has an attribute top_k already, and --depths gives each "
                          "virtual run its own top_k; drop --depths, or rename the attribute"), "%s", r.err);
  cr_assert(!th_exists(out), "a failed run leaves no output folder");
  th_free(&r);
  r = th_rs("compare", "--per-query", th_write_temp(0, "pq.csv", "run,query,measure,value\n"), "-o", out, "--depths",
            "5", NULL);
  cr_assert_eq(r.status, 1, "%s", r.err);
  cr_assert(strstr(r.err, "--depths needs the rankings (a corpus or runs), not --per-query"), "%s", r.err);
  th_free(&r);
}
