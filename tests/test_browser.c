/* test_browser.c: tests/browser_check.py, the check of the HTML report in a
 * real browser (headless Chromium through chromedriver), on hand-written
 * pages of tests/data/browser/: the page that follows the report's DOM
 * contract passes with the counts it was written with, and each broken page
 * fails for its one defect, named in the message.  Each run starts and stops
 * a browser (3-8 s here), hence the suite's timeout. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"

TestSuite(browser, .timeout = 180);

#define PAGES "tests/data/browser/"

typedef struct {
  th_result r;
  json_object *summary; /* the JSON line on stdout */
  double seconds;       /* wall clock of the whole run */
} check_run;

/* Runs the harness from the repository root (as make test does) on a page
 * with extra options (space-separated; NULL: none). */
static check_run run_check(const char *page, const char *options)
{
  char opts[2048], *argv[40];
  snprintf(opts, sizeof opts, "%s", options ? options : "");
  int n = th_split(opts, "/usr/bin/python3", "tests/browser_check.py", argv, 38);
  argv[n++] = (char *)page;
  argv[n] = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  check_run c = {.r = th_run(NULL, argv, NULL, NULL)};
  clock_gettime(CLOCK_MONOTONIC, &t1);
  c.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  c.summary = c.r.out ? json_tokener_parse(c.r.out) : NULL;
  cr_assert(c.summary && json_object_is_type(c.summary, json_type_object),
            "%s %s: expected one JSON line on stdout, found:\n%s\nstderr:\n%s", page, options ? options : "",
            c.r.out ? c.r.out : "(none)", c.r.err ? c.r.err : "");
  return c;
}

static void check_free(check_run *c)
{
  json_object_put(c->summary);
  th_free(&c->r);
}

static json_object *field(json_object *o, const char *key)
{
  json_object *v = NULL;
  cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key, json_object_to_json_string(o));
  return v;
}

static const char *str_field(json_object *o, const char *key)
{
  json_object *v = field(o, key);
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "(not a string)";
}

static const char *status(const check_run *c) { return str_field(c->summary, "status"); }

static size_t count(const check_run *c, const char *key)
{
  return json_object_array_length(field(c->summary, key));
}

/* 1 when an entry of the array `key` contains every one of the texts. */
static int has_entry(const check_run *c, const char *key, const char *a, const char *b)
{
  json_object *arr = field(c->summary, key);
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
    if (s && strstr(s, a) && (!b || strstr(s, b))) return 1;
  }
  return 0;
}

static const char *dump(const check_run *c)
{
  return json_object_to_json_string_ext(c->summary, JSON_C_TO_STRING_PRETTY);
}

static void expect_chart(const check_run *c, size_t i, const char *id, int declared, int series)
{
  json_object *chart = json_object_array_get_idx(field(c->summary, "charts"), i);
  cr_assert(chart, "no chart %zu in %s", i, dump(c));
  cr_expect_str_eq(str_field(chart, "id"), id);
  cr_expect_eq(json_object_get_int(field(chart, "declared")), declared, "%s declared", id);
  cr_expect_eq(json_object_get_int(field(chart, "series")), series, "%s series found", id);
}

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

Test(browser, page_that_follows_the_contract_passes)
{
  char *shot = th_join(th_fresh_dir(), "good.png");
  char opts[4096];
  snprintf(opts, sizeof opts,
           "--screenshot %s --no-external --min-charts 2 --max-load-ms 5000 "
           "--expect-chart chart-ndcg-at-k=3 --expect-chart chart-quality-latency=2",
           shot);
  check_run c = run_check(PAGES "good.html", opts);
  cr_assert_eq(c.r.status, 0, "exit %d:\n%s\n%s", c.r.status, dump(&c), c.r.err);
  cr_expect_str_eq(status(&c), "pass");
  cr_expect_eq(count(&c, "failures"), 0);
  cr_expect_eq(count(&c, "errors"), 0, "%s", dump(&c));
  cr_expect_eq(count(&c, "resources"), 0, "%s", dump(&c));

  cr_assert_eq(count(&c, "charts"), 2, "%s", dump(&c));
  expect_chart(&c, 0, "chart-ndcg-at-k", 3, 3);
  expect_chart(&c, 1, "chart-quality-latency", 2, 2);
  json_object *svg = field(json_object_array_get_idx(field(c.summary, "charts"), 0), "svg");
  cr_expect_eq(json_object_get_double(json_object_array_get_idx(svg, 0)), 480.0);
  cr_expect_eq(json_object_get_double(json_object_array_get_idx(svg, 1)), 240.0);

  /* nDCG@10 is the first numeric column (run is text); it starts unsorted
   * (0.3561, 0.4851, 0.4441, 0.2012), the page's script sorts up first */
  cr_assert_eq(count(&c, "tables"), 1, "%s", dump(&c));
  json_object *t = json_object_array_get_idx(field(c.summary, "tables"), 0);
  cr_expect_str_eq(str_field(t, "table"), "table#leaderboard");
  cr_expect_str_eq(str_field(t, "column"), "nDCG@10");
  cr_expect_str_eq(str_field(t, "first"), "asc");
  cr_expect_str_eq(str_field(t, "second"), "desc");

  double load_ms = json_object_get_double(field(c.summary, "load_ms"));
  cr_expect(load_ms > 0 && load_ms <= 5000, "load_ms %g", load_ms);

  /* a full-page PNG: the window's 1400 px wide, and taller than its 1000 px
   * (the page is about 1900 px high) */
  cr_expect_str_eq(str_field(c.summary, "screenshot"), shot);
  size_t len = 0;
  unsigned char *png = (unsigned char *)th_slurp(shot, &len);
  cr_assert(png && len > 33, "no screenshot at %s", shot);
  cr_expect(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(png + 12, "IHDR", 4) == 0, "not a PNG");
  cr_expect_eq(be32(png + 16), 1400u);
  cr_expect(be32(png + 20) > 1500u, "screenshot height %u: expected the whole page", be32(png + 20));
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", shot);
  cr_expect(!th_exists(tmp), "%s left behind", tmp);
  free(png);
  check_free(&c);
}

Test(browser, chart_with_fewer_series_than_declared_fails_naming_it)
{
  check_run c = run_check(PAGES "missing_series.html", NULL);
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_str_eq(status(&c), "fail");
  cr_expect_eq(count(&c, "failures"), 1, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-recall: data-series=\"3\" but 2 elements of class \"series\" found",
                      NULL),
            "%s", dump(&c));
  cr_expect(strstr(c.r.err, "browser_check: FAIL: chart chart-recall"), "stderr: %s", c.r.err);
  expect_chart(&c, 0, "chart-recall", 3, 2);
  check_free(&c);
}

Test(browser, script_error_fails_naming_the_error)
{
  check_run c = run_check(PAGES "js_error.html", NULL);
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_eq(count(&c, "failures"), 1, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "browser error", "Uncaught RangeError: axis scale has an empty domain"), "%s",
            dump(&c));
  cr_expect(has_entry(&c, "errors", "js_error.html", "axis scale has an empty domain"), "%s", dump(&c));
  expect_chart(&c, 0, "chart-latency-cdf", 1, 1); /* the chart itself is fine */
  check_free(&c);
}

Test(browser, external_image_fails_under_no_external)
{
  check_run c = run_check(PAGES "external_image.html", "--no-external");
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  /* the DOM reference, the attempted fetch, and the fetch refused (no network) */
  cr_expect_eq(count(&c, "failures"), 3, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "external reference: <img> src=\"https://example.org/logo.png\"", NULL), "%s",
            dump(&c));
  cr_expect(has_entry(&c, "failures", "external resource fetched or attempted: https://example.org/logo.png", NULL),
            "%s", dump(&c));
  cr_expect(has_entry(&c, "errors", "https://example.org/logo.png", "Failed to load resource: net::ERR_"), "%s",
            dump(&c));
  expect_chart(&c, 0, "chart-precision-recall", 1, 1);
  check_free(&c);
}

Test(browser, charts_that_draw_nothing_fail)
{
  check_run c = run_check(PAGES "empty_svg.html", NULL);
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_eq(count(&c, "failures"), 3, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-blank: series 1 of 2 (\"bm25\") has nothing drawn", NULL), "%s",
            dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-blank: series 2 of 2 (\"dense\") has nothing drawn", NULL), "%s",
            dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-zero: its <svg> box is 0x0", NULL), "%s", dump(&c));
  expect_chart(&c, 0, "chart-blank", 2, 2);
  expect_chart(&c, 1, "chart-zero", 1, 1);
  check_free(&c);
}

Test(browser, table_that_sorts_numbers_as_text_fails)
{
  check_run c = run_check(PAGES "broken_sort.html", NULL);
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_eq(count(&c, "failures"), 1, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures",
                      "table#latency column \"p95 ms\": after the first click on its header, expected the column "
                      "sorted, found [10.2, 100, 9.5]",
                      NULL),
            "%s", dump(&c));
  check_free(&c);
}

Test(browser, expectations_of_the_command_line)
{
  check_run c = run_check(PAGES "good.html",
                          "--expect-chart chart-ndcg-at-k=4 --expect-chart chart-cdf=1 --min-charts 3 --max-load-ms 0");
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_eq(count(&c, "failures"), 4, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-ndcg-at-k: expected 4 series, found 3", NULL), "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "chart chart-cdf: expected with 1 series, not found", NULL), "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "expected at least 3 figure.chart, found 2", NULL), "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "load time: expected at most 0 ms, found", NULL), "%s", dump(&c));
  check_free(&c);
}

Test(browser, endless_script_is_stopped_within_the_limit)
{
  /* chromedriver is told to give up on the page when half the time left is
   * gone ("did not load within"); on a loaded machine its answer may come
   * after the overall limit ("out of time", at whichever step the limit
   * found it: under a heavy load even the set-up before the page may use
   * it up).  Either way: exit 1 in time.
   * Stopping the browser takes about a second (at most 10). */
  check_run c = run_check(PAGES "hang.html", "--timeout 10 --min-charts 0");
  cr_expect_eq(c.r.status, 1, "%s", dump(&c));
  cr_expect_eq(count(&c, "failures"), 1, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "the page did not load within", "Timed out receiving message from renderer") ||
                has_entry(&c, "failures", "out of time: the checks did not finish within 10 s", "at "),
            "%s", dump(&c));
  cr_expect(c.seconds < 20, "took %.1f s with --timeout 10", c.seconds);
  check_free(&c);
}

Test(browser, missing_browser_and_bad_command_line)
{
  check_run c = run_check(PAGES "good.html", "--chromedriver /nonexistent/chromedriver");
  cr_expect_eq(c.r.status, 2, "%s", dump(&c));
  cr_expect_str_eq(status(&c), "no-browser");
  cr_expect(has_entry(&c, "failures", "/nonexistent/chromedriver: not found",
                      "run scripts/install-deps.sh with RAGSWEEP_WITH_TESTS=1"),
            "%s", dump(&c));
  check_free(&c);

  c = run_check(PAGES "no_such_page.html", NULL);
  cr_expect_eq(c.r.status, 3, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "no_such_page.html: cannot read the report", NULL), "%s", dump(&c));
  check_free(&c);

  c = run_check(PAGES "good.html", "--expect-chart chart-ndcg-at-k");
  cr_expect_eq(c.r.status, 3, "%s", dump(&c));
  cr_expect(has_entry(&c, "failures", "'chart-ndcg-at-k': expected ID=N", NULL), "%s", dump(&c));
  check_free(&c);
}
