/* test_report_browser.c: real reports in a real browser.  A 24-
 * configuration sweep (the demo's grid: 4 models x 3 chunk sizes x 2
 * rerankers, 2,000 queries) goes through eval --report, compare --report,
 * rag and the history, then `ragsweep report` of all of them; headless
 * Chromium (tests/browser_check.py) opens each page with the network cut
 * off and checks that every chart drew every series, that every sortable
 * table sorts, that nothing was fetched and no error was logged, and that
 * the demo-sized eval report loads in under 2 s.  The screenshots, the
 * full page and its first 4500 px (README's picture), are written to
 * BUILD/screenshots/report.png and report-top.png. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"

TestSuite(report_browser, .timeout = 300);

static th_result run(char **argv) { return th_run(NULL, argv, NULL, NULL); }

/* The folder of the ragsweep binary under test (build/). */
static char *build_dir(void)
{
  char *d = strdup(th_bin());
  *strrchr(d, '/') = '\0';
  return d;
}

/* Every figure of the page: id and data-series, in page order. */
typedef struct {
  char id[128];
  long series;
} figure;

static size_t figures_of(const char *html, figure *out, size_t cap)
{
  static const char key[] = "<figure class=\"chart\" id=\"";
  size_t n = 0;
  for (const char *p = html; (p = strstr(p, key)) && n < cap; p++) {
    const char *id = p + strlen(key), *q = strchr(id, '"');
    cr_assert(q);
    snprintf(out[n].id, sizeof out[n].id, "%.*s", (int)(q - id), id);
    const char *ds = strstr(q, "data-series=\"");
    cr_assert(ds);
    out[n].series = strtol(ds + 13, NULL, 10);
    n++;
  }
  return n;
}

/* Runs the harness on page, expecting each of want[] (id and series
 * count) to be drawn with that many series, and no other chart. */
static json_object *check_page(const char *page, const figure *want, size_t n_want, const char *extra)
{
  char *argv[256];
  char expect[256][160];
  int k = 0;
  argv[k++] = "/usr/bin/python3";
  argv[k++] = "tests/browser_check.py";
  argv[k++] = (char *)page;
  argv[k++] = "--no-external";
  argv[k++] = "--timeout";
  argv[k++] = "120";
  for (size_t i = 0; i < n_want && k < 240; i++) {
    snprintf(expect[i], sizeof expect[i], "%s=%ld", want[i].id, want[i].series);
    argv[k++] = "--expect-chart";
    argv[k++] = expect[i];
  }
  char min_charts[32];
  snprintf(min_charts, sizeof min_charts, "%zu", n_want);
  argv[k++] = "--min-charts";
  argv[k++] = min_charts;
  char opts[1024];
  if (extra) {
    snprintf(opts, sizeof opts, "%s", extra);
    for (char *t = strtok(opts, " "); t && k < 254; t = strtok(NULL, " ")) argv[k++] = t;
  }
  argv[k] = NULL;
  th_result r = run(argv);
  json_object *j = r.out ? json_tokener_parse(r.out) : NULL;
  cr_assert(j, "%s: no JSON from the harness:\n%s\n%s", page, r.out ? r.out : "", r.err ? r.err : "");
  cr_expect_eq(r.status, 0, "%s: the browser check failed:\n%s", page, r.err);
  json_object *charts = NULL;
  cr_assert(json_object_object_get_ex(j, "charts", &charts));
  cr_expect_eq(json_object_array_length(charts), n_want, "%s: charts drawn", page);
  for (size_t i = 0; i < json_object_array_length(charts); i++) {
    json_object *c = json_object_array_get_idx(charts, i), *found = NULL, *declared = NULL;
    cr_assert(json_object_object_get_ex(c, "series", &found) && json_object_object_get_ex(c, "declared", &declared));
    cr_expect_eq(json_object_get_int(found), json_object_get_int(declared), "%s", json_object_to_json_string(c));
  }
  th_free(&r);
  return j;
}

/* The expected charts of the 24-configuration sweep's folders. */
static const figure EVAL_CHARTS[] = {
    {"chart-f1-heatmap-chunk-model", 1}, {"chart-f1-heatmap-chunk-reranker", 1},
    {"chart-f1-heatmap-model-reranker", 1}, {"chart-f1-curve-success", 24},
    {"chart-f1-curve-r", 24},            {"chart-f1-curve-p", 24},
    {"chart-f1-curve-ndcg", 24},         {"chart-f1-pr", 24},
    {"chart-f1-latency-cdf", 24},        {"chart-f1-quality-latency", 24},
};

static const char RAG_SAMPLES[] =
    "{\"id\":\"a\",\"retriever\":\"bm25\",\"k\":\"5\",\"retrieved_context_ids\":[1,2],\"reference_context_ids\":[2],"
    "\"latency_ms\":12.5}\n"
    "{\"id\":\"b\",\"retriever\":\"bm25\",\"k\":\"5\",\"retrieved_context_ids\":[3],\"reference_context_ids\":[2],"
    "\"latency_ms\":30}\n"
    "{\"id\":\"a\",\"retriever\":\"dense\",\"k\":\"5\",\"retrieved_context_ids\":[2],\"reference_context_ids\":[2],"
    "\"latency_ms\":7}\n"
    "{\"id\":\"b\",\"retriever\":\"dense\",\"k\":\"5\",\"retrieved_context_ids\":[2,5],\"reference_context_ids\":[2,5],"
    "\"latency_ms\":15}\n"
    "{\"id\":\"a\",\"retriever\":\"dense\",\"k\":\"10\",\"retrieved_context_ids\":[2,9],\"reference_context_ids\":[2],"
    "\"latency_ms\":9}\n"
    "{\"id\":\"b\",\"retriever\":\"dense\",\"k\":\"10\",\"retrieved_context_ids\":[5],\"reference_context_ids\":[2,5],"
    "\"latency_ms\":21}\n";

Test(report_browser, sweep_of_24_configurations_in_chromium)
{
  char *dir = th_fresh_dir(), *corpus = th_join(dir, "c.h5"), gen[4096];
  snprintf(gen, sizeof gen, "%s/gen_sweep", build_dir());
  char *g[] = {gen, "-o", corpus, "--queries", "2000", "--k", "100", "--seed", "42", NULL};
  th_result r = run(g);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  char *e = th_join(dir, "e"), *c = th_join(dir, "c"), *rag = th_join(dir, "rag"), *db = th_join(dir, "h.sqlite");
  char *a_eval[] = {(char *)th_bin(), "eval", corpus, "-o", e, "--per-query", "--worst", "3", "--report", "--top",
                    "0", "--quiet", "--gate", "nDCG@10>=0.3", "--history", db, "--label", "v1", NULL};
  r = run(a_eval);
  cr_assert_eq(r.status, 3, "a gate fails for some: %s", r.err);
  th_free(&r);
  r = run(a_eval); /* a second night, for the history's lines */
  th_free(&r);
  char *a_cmp[] = {(char *)th_bin(), "compare", corpus, "-o", c, "--report", "--baseline", "bge-large_256_none",
                   "-m", "nDCG@10", "-m", "RR@10", "--gate", "RR@10>=0.3", "--permutations", "500", "--bootstrap",
                   "200", NULL};
  r = run(a_cmp);
  cr_assert(r.status == 0 || r.status == 3, "%s", r.err);
  th_free(&r);
  char *samples = th_join(dir, "s.jsonl");
  FILE *f = fopen(samples, "w");
  cr_assert(f);
  fputs(RAG_SAMPLES, f);
  fclose(f);
  char *a_rag[] = {(char *)th_bin(), "rag", samples, "-o", rag, "-m", "id_based_context_precision", "-m",
                   "id_based_context_recall", NULL};
  r = run(a_rag);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);

  /* 1. eval --report's page: every chart of the sweep, loaded in < 2 s. */
  char *page = th_join(e, "report.html");
  char *html = th_slurp(page, NULL);
  cr_assert(html, "eval --report wrote no %s", page);
  figure got[64];
  const size_t n_got = figures_of(html, got, 64);
  const size_t n_eval = sizeof EVAL_CHARTS / sizeof *EVAL_CHARTS;
  cr_assert_eq(n_got, n_eval, "the eval page's charts");
  for (size_t i = 0; i < n_eval; i++) {
    cr_expect_str_eq(got[i].id, EVAL_CHARTS[i].id);
    cr_expect_eq(got[i].series, EVAL_CHARTS[i].series, "%s", got[i].id);
  }
  free(html);
  /* The load time is the page's, not the neighbours': under a busy
   * machine (the rest of the suite runs beside this test) one slow load is
   * measured again, and the better of the two must be under 2 s. */
  double best_ms = 1e300;
  for (int attempt = 0; attempt < 2 && best_ms >= 2000.0; attempt++) {
    json_object *j = check_page(page, EVAL_CHARTS, n_eval, NULL), *load = NULL;
    cr_assert(json_object_object_get_ex(j, "load_ms", &load));
    const double ms = json_object_get_double(load);
    cr_log_info("demo-sized eval report: loaded in %.0f ms", ms);
    if (ms < best_ms) best_ms = ms;
    json_object_put(j);
  }
  cr_expect_lt(best_ms, 2000.0, "the demo-sized report took %.0f ms to load (loadEventEnd)", best_ms);

  /* 2. One page of everything: eval, compare, rag and the history; its
   * screenshot is the README's. */
  char *all = th_join(dir, "all.html");
  char *a_rep[] = {(char *)th_bin(), "report", e, c, rag, "--history", db, "-o", all, NULL};
  r = run(a_rep);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  html = th_slurp(all, NULL);
  cr_assert(html);
  figure want[64];
  const size_t n_want = figures_of(html, want, 64);
  free(html);
  /* eval's 10 charts, compare's 3 heatmaps and 2 forest plots, rag's
   * metrics bars, heatmap and scatter, and the history's: one chart per
   * measure of eval's default set (14) and per latency percentile (3). */
  size_t forest = 0, history = 0, rag_charts = 0;
  for (size_t i = 0; i < n_want; i++) {
    forest += strstr(want[i].id, "-forest-") != NULL;
    history += strncmp(want[i].id, "chart-history-", 14) == 0;
    rag_charts += strncmp(want[i].id, "chart-f3-", 9) == 0;
    if (strstr(want[i].id, "-forest-")) cr_expect_eq(want[i].series, 23, "%s: 23 runs against the baseline", want[i].id);
    if (strncmp(want[i].id, "chart-history-", 14) == 0) cr_expect_eq(want[i].series, 24, "%s", want[i].id);
  }
  cr_expect_eq(forest, 2);
  cr_expect_eq(rag_charts, 3);
  cr_expect_eq(history, 17, "14 default measures and 3 latency percentiles");
  char shot[4096];
  snprintf(shot, sizeof shot, "%s/screenshots", build_dir());
  mkdir(shot, 0755);
  char top[4200];
  snprintf(top, sizeof top, "%s/report-top.png", shot);
  snprintf(shot + strlen(shot), sizeof shot - strlen(shot), "/report.png");
  char extra[8600];
  snprintf(extra, sizeof extra, "--screenshot %s --screenshot-top %s", shot, top);
  json_object *j = check_page(all, want, n_want, extra);
  json_object_put(j);
  cr_expect(th_exists(shot), "no screenshot at %s", shot);
  cr_expect(th_exists(top), "no screenshot at %s", top);
}
