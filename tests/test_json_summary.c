/* test_json_summary.c: --json FILE on eval, compare and rag: one document
 * for CI with the time, the inputs, every configuration's aggregates, the
 * gates with their outcome and the overall status; and the publishing
 * outputs' independence (one failing does not cost the others). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csvio.h"
#include "helpers.h"


static char *make_corpus(const char *dir)
{
  char *corpus = th_join(dir, "g.h5"), gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *g[] = {gen, "-o", corpus, "--queries", "150", "--k", "20", "--grid", "model=bge-small,e5-base;chunk=256,512",
               "--seed", "11", NULL};
  th_result r = th_run(NULL, g, NULL, NULL);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  return corpus;
}

/* --- aggregate.csv's values, as text ----------------------------------------------------- */

typedef struct {
  char **run, **measure, **value; /* eval's layout: run first, then measure and value by header */
  size_t n, c_measure, c_value;
  int header;
} agg_rows;

static rs_code agg_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  agg_rows *a = ctx;
  if (!a->header) {
    for (size_t i = 0; i < n; i++) {
      if (strcmp(f[i], "measure") == 0) a->c_measure = i;
      if (strcmp(f[i], "value") == 0) a->c_value = i;
    }
    a->header = 1;
    return RS_OK;
  }
  a->run = realloc(a->run, (a->n + 1) * sizeof *a->run);
  a->measure = realloc(a->measure, (a->n + 1) * sizeof *a->measure);
  a->value = realloc(a->value, (a->n + 1) * sizeof *a->value);
  a->run[a->n] = strdup(f[0]);
  a->measure[a->n] = strdup(f[a->c_measure]);
  a->value[a->n] = strdup(f[a->c_value]);
  a->n++;
  return RS_OK;
}

static struct json_object *load_json(const char *path)
{
  struct json_object *j = json_object_from_file(path);
  cr_assert(j, "%s: not JSON", path);
  return j;
}

static struct json_object *field(struct json_object *o, const char *key)
{
  struct json_object *v = NULL;
  cr_assert(json_object_object_get_ex(o, key, &v), "no field '%s'", key);
  return v;
}

/* Every value of aggregate.csv is in the document, under its run and
 * measure, as the same double. */
static void expect_all_values(struct json_object *doc, const char *agg_path)
{
  agg_rows a = {0};
  rs_error err = {0};
  cr_assert_eq(rs__csv_read(agg_path, agg_row, &a, &err), RS_OK, "%s", err.msg);
  struct json_object *configs = field(doc, "configurations");
  size_t matched = 0;
  for (size_t i = 0; i < a.n; i++) {
    for (size_t c = 0; c < json_object_array_length(configs); c++) {
      struct json_object *cfg = json_object_array_get_idx(configs, c);
      if (strcmp(json_object_get_string(field(cfg, "run")), a.run[i]) != 0) continue;
      struct json_object *v = field(field(cfg, "measures"), a.measure[i]);
      cr_expect_eq(json_object_get_double(v), strtod(a.value[i], NULL), "%s %s: %.17g vs %s", a.run[i], a.measure[i],
                   json_object_get_double(v), a.value[i]);
      matched++;
    }
    free(a.run[i]), free(a.measure[i]), free(a.value[i]);
  }
  cr_expect_eq(matched, a.n, "every aggregate row appears once");
  cr_expect_gt(a.n, 0);
  free(a.run), free(a.measure), free(a.value);
}

static size_t count_in(const char *text, const char *needle)
{
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

Test(json_summary, eval_with_gates_says_failed_and_holds_every_value, .timeout = 60)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"), *json = th_join(dir, "r.json");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "--top", "0", "-m", "nDCG@10", "-m", "R@5", "--gate",
                   "nDCG@10>=0", "--gate", "R@5>=0.5", "--json", json, NULL);
  cr_assert_eq(r.status, 3, "a gate fails: %s", r.err);
  cr_expect(strstr(r.out, "wrote ") && strstr(r.out, "r.json"), "%s", r.out);
  struct json_object *doc = load_json(json);
  cr_expect_str_eq(json_object_get_string(field(doc, "tool")), "ragsweep");
  cr_expect_str_eq(json_object_get_string(field(doc, "command")), "eval");
  cr_expect_str_eq(json_object_get_string(field(doc, "status")), "failed");
  cr_expect(!json_object_get_boolean(field(doc, "passed")));
  cr_expect_eq(json_object_get_int(field(doc, "exit_status")), 3);
  const char *stamp = json_object_get_string(field(doc, "timestamp"));
  cr_expect_eq(strlen(stamp), 20, "%s", stamp);
  cr_expect_eq(stamp[10], 'T');
  cr_expect_eq(stamp[19], 'Z');
  struct json_object *inputs = field(doc, "inputs");
  cr_assert_eq(json_object_array_length(inputs), 1);
  cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(inputs, 0)), corpus);
  expect_all_values(doc, th_join(out, "aggregate.csv"));
  /* 4 runs x 2 gates; the failures are gates.csv's false rows, and each
   * configuration has its attributes and latency. */
  char *gates = th_slurp(th_join(out, "gates.csv"), NULL);
  cr_assert(gates);
  const size_t failed = count_in(gates, ",false\n");
  cr_expect_gt(failed, 0);
  cr_expect_eq((size_t)json_object_get_int(field(doc, "checks")), 8);
  cr_expect_eq((size_t)json_object_get_int(field(doc, "failures")), failed);
  struct json_object *g = field(doc, "gates");
  cr_assert_eq(json_object_array_length(g), 8);
  size_t false_rows = 0;
  for (size_t i = 0; i < 8; i++) {
    struct json_object *row = json_object_array_get_idx(g, i);
    false_rows += !json_object_get_boolean(field(row, "passed"));
    cr_expect(json_object_is_type(field(row, "value"), json_type_double) ||
              json_object_is_type(field(row, "value"), json_type_int));
  }
  cr_expect_eq(false_rows, failed);
  struct json_object *cfg0 = json_object_array_get_idx(field(doc, "configurations"), 0);
  cr_expect(json_object_get_string(field(field(cfg0, "attributes"), "model")));
  cr_expect_gt(json_object_get_double(field(field(cfg0, "latency_ms"), "p95")), 0.0);
  json_object_put(doc);
  free(gates);
  th_free(&r);
}

Test(json_summary, eval_without_gates_passes, .timeout = 60)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"), *json = th_join(dir, "r.json");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "--top", "0", "--json", json, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  struct json_object *doc = load_json(json);
  cr_expect_str_eq(json_object_get_string(field(doc, "status")), "passed");
  cr_expect(json_object_get_boolean(field(doc, "passed")));
  cr_expect_eq(json_object_get_int(field(doc, "failures")), 0);
  cr_expect_eq(json_object_array_length(field(doc, "gates")), 0);
  cr_expect_eq(json_object_array_length(field(doc, "configurations")), 4);
  expect_all_values(doc, th_join(out, "aggregate.csv"));
  json_object_put(doc);
  th_free(&r);
}

Test(json_summary, compare_per_query_and_rag, .timeout = 90)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"), *cmp = th_join(dir, "cmp");
  char *json = th_join(dir, "c.json"), *rag_json = th_join(dir, "rag.json");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "--top", "0", "--per-query", "-m", "nDCG@10", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  r = th_rs("compare", "--per-query", th_join(out, "per_query.csv"), "-o", cmp, "--permutations", "200", "--bootstrap",
         "0", "--json", json, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  struct json_object *doc = load_json(json);
  cr_expect_str_eq(json_object_get_string(field(doc, "command")), "compare");
  cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(field(doc, "inputs"), 0)),
                   th_join(out, "per_query.csv"));
  expect_all_values(doc, th_join(cmp, "aggregate.csv"));
  json_object_put(doc);
  th_free(&r);
  /* rag with the id-based metrics (no LLM): measures by metric name. */
  char *samples = th_join(dir, "s.jsonl"), *rag = th_join(dir, "rag");
  FILE *f = fopen(samples, "w");
  cr_assert(f);
  fputs("{\"id\":\"a\",\"k\":\"5\",\"retrieved_context_ids\":[1,2],\"reference_context_ids\":[2]}\n"
        "{\"id\":\"b\",\"k\":\"5\",\"retrieved_context_ids\":[3],\"reference_context_ids\":[2]}\n"
        "{\"id\":\"a\",\"k\":\"10\",\"retrieved_context_ids\":[2],\"reference_context_ids\":[2]}\n"
        "{\"id\":\"b\",\"k\":\"10\",\"retrieved_context_ids\":[2,5],\"reference_context_ids\":[2,5]}\n",
        f);
  fclose(f);
  r = th_rs("rag", samples, "-o", rag, "-m", "id_based_context_recall", "--gate", "id_based_context_recall>=0.9",
         "--json", rag_json, NULL);
  cr_assert_eq(r.status, 3, "k=5 recalls 0.5: %s", r.err);
  doc = load_json(rag_json);
  cr_expect_str_eq(json_object_get_string(field(doc, "status")), "failed");
  struct json_object *configs = field(doc, "configurations");
  cr_assert_eq(json_object_array_length(configs), 2);
  for (size_t c = 0; c < 2; c++) {
    struct json_object *cfg = json_object_array_get_idx(configs, c);
    const char *k = json_object_get_string(field(field(cfg, "attributes"), "k"));
    const double want = strcmp(k, "5") == 0 ? 0.5 : 1.0; /* a: 1, b: 0 | a: 1, b: 1 */
    cr_expect_eq(json_object_get_double(field(field(cfg, "measures"), "id_based_context_recall")), want, "k=%s", k);
  }
  cr_expect_eq(json_object_get_int(field(doc, "failures")), 1);
  json_object_put(doc);
  th_free(&r);
}

/* Each publishing output on its own: a refused push is exit 2 and named,
 * the JSON and the .prom are still written, and the URL's password is
 * neither printed nor recorded. */
Test(json_summary, a_failed_push_costs_no_other_output, .timeout = 60)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"), *json = th_join(dir, "r.json");
  char *prom = th_join(dir, "m.prom");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "--top", "0", "-m", "nDCG@10", "--otlp",
                   "http://ci:s3cret@127.0.0.1:1/v1/metrics", "--json", json, "--metrics-out", prom, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "127.0.0.1:1"), "the URL is named: %s", r.err);
  cr_expect(!strstr(r.err, "s3cret") && !strstr(r.out, "s3cret"), "%s%s", r.out, r.err);
  cr_expect(th_exists(prom), "the .prom is written");
  cr_expect(th_exists(th_join(out, "aggregate.csv")));
  char *text = th_slurp(json, NULL);
  cr_assert(text, "the JSON is written");
  cr_expect(!strstr(text, "s3cret"), "the recorded command line masks the password");
  cr_expect(strstr(text, "ci:***@127.0.0.1:1"), "%s", text);
  free(text);
  th_free(&r);
  /* An unwritable --json: exit 2 naming it; the CSVs stay. */
  r = th_rs("eval", corpus, "-o", out, "--quiet", "--top", "0", "-m", "nDCG@10", "--json", "/nonexistent-dir/r.json",
         NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "/nonexistent-dir/r.json"), "%s", r.err);
  cr_expect(th_exists(th_join(out, "aggregate.csv")));
  th_free(&r);
}
