/* test_export.c: the monitoring exports of eval, compare and rag: the
 * Prometheus text file (checked by promtool and read back value by value),
 * a push to a real Pushgateway started here and read back, an OTLP/HTTP
 * JSON push to tests/otlp_receiver.py (which checks the payload's
 * structure) compared with the CSVs, and what goes wrong: clashing label
 * names, an unwritable file, a refused or failed push.  Every value is
 * compared exactly (the same double) with aggregate.csv, latency.csv or
 * latency_hist.csv as written. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/latency.h"
#include "formats/csvio.h"
#include "helpers.h"
#include "llm/http.h"
#include "llm_helpers.h"
#include "report/prom.h"
#include "report/results.h"

/* --- running things ------------------------------------------------------------------- */


static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A 200-query sweep of 4 runs (model x chunk) with latencies, made by gen_sweep. */
static char *make_corpus(const char *dir)
{
  char *corpus = th_join(dir, "g.h5"), gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *g[] = {gen, "-o", corpus, "--queries", "200", "--k", "20", "--grid", "model=bge-small,e5-base;chunk=256,512",
               "--seed", "7", NULL};
  th_result r = th_run(NULL, g, NULL, NULL);
  cr_assert_eq(r.status, 0, "gen_sweep: %s", r.err);
  th_free(&r);
  return corpus;
}

/* rag samples with awkward configuration names and values: a dash, a
 * non-ASCII letter and a leading digit in the names; a quote, a backslash,
 * a newline, '/', non-ASCII and an empty value in the values.  Only the
 * id-based metrics, which need no LLM. */
static const char AWKWARD_SAMPLES[] =
    "{\"id\":\"a\",\"re-ranker\":\"cross\\\"enc\",\"mod\\u00e8le\":\"x\\\\y\",\"2nd\":\"line1\\nline2\","
    "\"retrieved_context_ids\":[1,2],\"reference_context_ids\":[2],\"latency_ms\":12.5}\n"
    "{\"id\":\"b\",\"re-ranker\":\"cross\\\"enc\",\"mod\\u00e8le\":\"x\\\\y\",\"2nd\":\"line1\\nline2\","
    "\"retrieved_context_ids\":[3],\"reference_context_ids\":[2],\"latency_ms\":30}\n"
    "{\"id\":\"a\",\"re-ranker\":\"none\",\"mod\\u00e8le\":\"\\u00e9/\\u00fc\",\"2nd\":\"\","
    "\"retrieved_context_ids\":[2],\"reference_context_ids\":[2],\"latency_ms\":7}\n"
    "{\"id\":\"b\",\"re-ranker\":\"none\",\"mod\\u00e8le\":\"\\u00e9/\\u00fc\",\"2nd\":\"\","
    "\"retrieved_context_ids\":[2,5],\"reference_context_ids\":[2,5],\"latency_ms\":1500}\n";

static char *make_rag_folder(const char *dir, const char *extra_opt, const char *extra_val)
{
  char *samples = th_join(dir, "samples.jsonl"), *out = th_join(dir, "rag");
  write_file(samples, AWKWARD_SAMPLES);
  th_result r = th_rs("rag", samples, "-o", out, "-m", "id_based_context_precision", "-m", "id_based_context_recall",
                   extra_opt, extra_val, NULL);
  cr_assert_eq(r.status, 0, "rag: %s", r.err);
  th_free(&r);
  return out;
}

/* --- a CSV file as a table ------------------------------------------------------------- */

typedef struct {
  char **cell; /* [n_rows * n_cols], row 0 the header */
  size_t n_rows, n_cols;
} table;

static rs_code table_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  table *t = ctx;
  if (t->n_rows == 0) t->n_cols = n;
  cr_assert_eq(n, t->n_cols, "line %zu", line);
  t->cell = realloc(t->cell, (t->n_rows + 1) * t->n_cols * sizeof *t->cell);
  for (size_t i = 0; i < n; i++) t->cell[t->n_rows * t->n_cols + i] = strdup(fields[i]);
  t->n_rows++;
  return RS_OK;
}

static table read_table(const char *path)
{
  table t = {0};
  rs_error err = {0};
  cr_assert_eq(rs__csv_read(path, table_row, &t, &err), RS_OK, "%s", err.msg);
  return t;
}

static void free_table(table *t)
{
  for (size_t i = 0; i < t->n_rows * t->n_cols; i++) free(t->cell[i]);
  free(t->cell);
  *t = (table){0};
}

static size_t col(const table *t, const char *name)
{
  for (size_t i = 0; i < t->n_cols; i++)
    if (strcmp(t->cell[i], name) == 0) return i;
  cr_assert_fail("no column %s", name);
  return 0;
}

static const char *cell(const table *t, size_t row, size_t c) { return t->cell[row * t->n_cols + c]; }

static double num(const char *s)
{
  char *end;
  double v = strtod(s, &end);
  cr_assert(*s && !*end, "not a number: '%s'", s);
  return v;
}

/* --- Prometheus text, parsed --------------------------------------------------------- */

/* One sample: its metric name, labels canonicalised as "k=v" lines sorted
 * by key (values unescaped), and its value. */
typedef struct {
  char name[128];
  char *labels;
  double value;
} sample;

typedef struct {
  sample *s;
  size_t n;
} samples;

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *canon(char **kv, size_t n)
{
  qsort(kv, n, sizeof *kv, by_str);
  size_t len = 1;
  for (size_t i = 0; i < n; i++) len += strlen(kv[i]) + 1;
  char *s = calloc(len, 1);
  for (size_t i = 0; i < n; i++) {
    strcat(s, kv[i]);
    strcat(s, "\n");
  }
  return s;
}

/* Parses the text exposition format (the subset both ragsweep and the
 * Pushgateway write): NAME{k="v",...} VALUE, # comments. */
static samples parse_prom(const char *text)
{
  samples out = {0};
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    if (*p != '#' && p < eol) {
      sample s = {0};
      size_t i = 0;
      while (p < eol && *p != '{' && *p != ' ' && i + 1 < sizeof s.name) s.name[i++] = *p++;
      char *kv[64];
      size_t n = 0;
      if (*p == '{') {
        p++;
        while (*p != '}') {
          char buf[4096];
          size_t k = 0;
          while (*p != '=') buf[k++] = *p++;
          buf[k++] = '=';
          p++;
          cr_assert_eq(*p, '"', "label value not quoted");
          p++;
          while (*p != '"') {
            if (*p == '\\') {
              p++;
              buf[k++] = *p == 'n' ? '\n' : *p;
              p++;
            } else buf[k++] = *p++;
          }
          p++;
          buf[k] = '\0';
          cr_assert(n < 64);
          kv[n++] = strdup(buf);
          if (*p == ',') p++;
        }
        p++;
      }
      cr_assert_eq(*p, ' ', "no value after the labels of %s", s.name);
      char *end;
      s.value = strtod(p + 1, &end);
      cr_assert(end == eol || *end == ' ', "bad value in line of %s", s.name);
      s.labels = canon(kv, n);
      for (size_t j = 0; j < n; j++) free(kv[j]);
      out.s = realloc(out.s, (out.n + 1) * sizeof *out.s);
      out.s[out.n++] = s;
    }
    p = *eol ? eol + 1 : eol;
  }
  return out;
}

static void free_samples(samples *ss)
{
  for (size_t i = 0; i < ss->n; i++) free(ss->s[i].labels);
  free(ss->s);
  *ss = (samples){0};
}

static const sample *find_sample(const samples *ss, const char *name, const char *labels)
{
  const sample *found = NULL;
  for (size_t i = 0; i < ss->n; i++)
    if (strcmp(ss->s[i].name, name) == 0 && strcmp(ss->s[i].labels, labels) == 0) {
      cr_assert(!found, "series %s{%s} twice", name, labels);
      found = &ss->s[i];
    }
  return found;
}

static size_t count_samples(const samples *ss, const char *name)
{
  size_t n = 0;
  for (size_t i = 0; i < ss->n; i++) n += strcmp(ss->s[i].name, name) == 0;
  return n;
}

/* The canonical labels a row should have: run, the attribute columns
 * between `first_attr` and `end_attr` under the given label names (empty
 * values left out), measure (or none), command, and extra "k=v" pairs. */
static char *expected_labels(const table *t, size_t row, const char *run, size_t first_attr, size_t end_attr,
                             const char *const *label_names, const char *measure, const char *command,
                             const char *const *extra, size_t n_extra)
{
  char *kv[64];
  size_t n = 0;
  asprintf(&kv[n++], "run=%s", run);
  for (size_t c = first_attr; c < end_attr; c++)
    if (*cell(t, row, c)) asprintf(&kv[n++], "%s=%s", label_names[c - first_attr], cell(t, row, c));
  if (measure) asprintf(&kv[n++], "measure=%s", measure);
  asprintf(&kv[n++], "command=%s", command);
  for (size_t i = 0; i < n_extra; i++) kv[n++] = strdup(extra[i]);
  char *s = canon(kv, n);
  for (size_t i = 0; i < n; i++) free(kv[i]);
  return s;
}

/* Every row of eval's or compare's aggregate.csv (run,chunk,model,...) is
 * one ragsweep_measure sample with its exact value; returns the count. */
static size_t expect_measures(const samples *ss, const char *agg_path, const char *command, const char *const *extra,
                              size_t n_extra)
{
  table t = read_table(agg_path);
  const size_t c_run = col(&t, "run"), c_measure = col(&t, "measure"), c_value = col(&t, "value");
  static const char *const names[] = {"chunk", "model"};
  cr_assert_eq(c_measure - c_run - 1, 2, "expected the attributes chunk and model");
  for (size_t row = 1; row < t.n_rows; row++) {
    char *want = expected_labels(&t, row, cell(&t, row, c_run), c_run + 1, c_measure, names,
                                 cell(&t, row, c_measure), command, extra, n_extra);
    const sample *s = find_sample(ss, "ragsweep_measure", want);
    cr_assert(s, "no ragsweep_measure sample with labels\n%s", want);
    const double v = num(cell(&t, row, c_value));
    cr_expect(s->value == v || (isnan(v) && isnan(s->value)), "%s: %.17g, aggregate.csv says %s", want, s->value,
              cell(&t, row, c_value));
    free(want);
  }
  const size_t n = t.n_rows - 1;
  cr_expect_eq(count_samples(ss, "ragsweep_measure"), n, "one sample per aggregate.csv row");
  free_table(&t);
  return n;
}

/* Every row of eval's latency.csv is a summary: quantiles p/1000, _sum
 * mean*n/1000, _count n. */
static void expect_latency(const samples *ss, const char *lat_path, const char *command, const char *const *extra,
                           size_t n_extra)
{
  table t = read_table(lat_path);
  static const char *const names[] = {"chunk", "model"};
  static const char *const q[] = {"0.5", "0.9", "0.95", "0.99", "0.999"};
  static const char *const qcol[] = {"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms"};
  const size_t c_n = col(&t, "n");
  cr_assert_gt(t.n_rows, 1, "latency.csv has no row");
  for (size_t row = 1; row < t.n_rows; row++) {
    const char *run = cell(&t, row, 0);
    for (size_t k = 0; k < 5; k++) {
      char ex[32];
      snprintf(ex, sizeof ex, "quantile=%s", q[k]);
      const char *extra_q[16];
      for (size_t i = 0; i < n_extra; i++) extra_q[i] = extra[i];
      extra_q[n_extra] = ex;
      char *want = expected_labels(&t, row, run, 1, c_n, names, NULL, command, extra_q, n_extra + 1);
      const sample *s = find_sample(ss, "ragsweep_latency_seconds", want);
      cr_assert(s, "no latency quantile sample\n%s", want);
      cr_expect_eq(s->value, num(cell(&t, row, col(&t, qcol[k]))) / 1000.0, "%s", want);
      free(want);
    }
    char *want = expected_labels(&t, row, run, 1, c_n, names, NULL, command, extra, n_extra);
    const sample *sum = find_sample(ss, "ragsweep_latency_seconds_sum", want),
                 *cnt = find_sample(ss, "ragsweep_latency_seconds_count", want);
    cr_assert(sum && cnt, "no _sum or _count for\n%s", want);
    const double n = num(cell(&t, row, c_n));
    cr_expect_eq(cnt->value, n);
    cr_expect_eq(sum->value, num(cell(&t, row, col(&t, "mean_ms"))) * n / 1000.0);
    free(want);
  }
  free_table(&t);
}

static void promtool_ok(const char *path)
{
  cr_assert(access("/usr/bin/promtool", X_OK) == 0,
            "/usr/bin/promtool is missing: install Debian's prometheus (scripts/install-deps.sh does it when "
            "RAGSWEEP_WITH_TESTS=1, as make test sets)");
  char *argv[] = {"/usr/bin/promtool", "check", "metrics", NULL};
  th_result r = th_run(NULL, argv, NULL, path);
  cr_expect_eq(r.status, 0, "promtool check metrics %s: %s%s", path, r.out, r.err);
  th_free(&r);
}

static size_t count_tmp(const char *dir)
{
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp\\.' || true", dir);
  FILE *p = popen(cmd, "r");
  size_t n = 0;
  if (p) {
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
  }
  return n;
}

/* --- units ------------------------------------------------------------------------------ */

Test(export, latency_histogram_buckets_are_upper_inclusive)
{
  /* seconds; by ms: 0 and 1 in (0,1]; 1.0001 and 2 in (1,2]; 4.9 in (2,5];
   * 10000 in (5000,10000]; 10500 above the last bound */
  const double x[] = {0, 0.001, 0.0010001, 0.002, 0.0049, 10.0, 10.5};
  uint64_t b[RS__LATENCY_N_BOUNDS + 1];
  rs__latency_histogram(x, 7, 1000.0, b);
  const uint64_t want[RS__LATENCY_N_BOUNDS + 1] = {2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
  for (size_t i = 0; i <= RS__LATENCY_N_BOUNDS; i++) cr_expect_eq(b[i], want[i], "bucket %zu", i);
  cr_expect_eq(rs__latency_bounds_ms[0], 1.0);
  cr_expect_eq(rs__latency_bounds_ms[RS__LATENCY_N_BOUNDS - 1], 10000.0);
  const double ms[] = {7, 1500};
  rs__latency_histogram(ms, 2, 1.0, b);
  cr_expect(b[3] == 1 && b[10] == 1, "7 ms in (5,10], 1500 ms in (1000,2000]");
}

Test(export, label_names_are_sanitised)
{
  static const char *const in[] = {"model", "re-ranker", "mod\xc3\xa8le", "2nd", "a b.c", "\xff" "x", "_ok_9"};
  static const char *const want[] = {"model", "re_ranker", "mod_le", "_2nd", "a_b_c", "_x", "_ok_9"};
  for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
    rs__sb b = {0};
    rs__prom_label_name(in[i], &b);
    char *got = rs__sb_take(&b);
    cr_expect_str_eq(got, want[i], "label name of '%s'", in[i]);
    free(got);
  }
}

Test(export, urls_in_messages_hide_the_password)
{
  char out[256];
  rs__http_url_redacted("http://user:s3cret@127.0.0.1:9091/x", out, sizeof out);
  cr_expect_str_eq(out, "http://user:***@127.0.0.1:9091/x");
  rs__http_url_redacted("https://user@host/p", out, sizeof out);
  cr_expect_str_eq(out, "https://user@host/p");
  rs__http_url_redacted("http://host/p@x:y", out, sizeof out);
  cr_expect_str_eq(out, "http://host/p@x:y", "an '@' in the path is not user information");
}

/* --- the .prom file ------------------------------------------------------------------ */

Test(export, eval_metrics_out_is_valid_and_holds_every_value, .timeout = 120)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"),
       *textfile = th_join(dir, "textfile"), *prom = th_join(textfile, "ragsweep.prom");
  cr_assert_eq(mkdir(textfile, 0777), 0);
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "nDCG@10", "-m", "P@5", "-m", "RR", "--metrics-out",
                   prom, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char want_line[4200];
  snprintf(want_line, sizeof want_line, "wrote %s\n", prom);
  cr_expect(strstr(r.out, want_line), "no 'wrote' line for the metrics file in\n%s", r.out);
  th_free(&r);
  cr_expect_eq(count_tmp(textfile), 0, "a temporary file is left in the textfile folder");
  promtool_ok(prom);
  char *text = th_slurp(prom, NULL);
  cr_assert(text);
  cr_expect(strstr(text, "# TYPE ragsweep_measure gauge\n") && strstr(text, "# TYPE ragsweep_latency_seconds summary\n"));
  samples ss = parse_prom(text);
  /* 4 runs x (3 measures + num_q, num_q_no_rel_ret, num_q_perfect_P@1) */
  cr_expect_eq(expect_measures(&ss, th_join(out, "aggregate.csv"), "eval", NULL, 0), 24);
  expect_latency(&ss, th_join(out, "latency.csv"), "eval", NULL, 0);
  cr_expect_eq(count_samples(&ss, "ragsweep_latency_seconds"), 4 * 5);
  free_samples(&ss);
  free(text);
}

Test(export, compare_and_rag_metrics_out_are_valid, .timeout = 120)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *cmp = th_join(dir, "cmp"), *prom = th_join(dir, "c.prom");
  th_result r = th_rs("compare", corpus, "-o", cmp, "-m", "nDCG@10", "-m", "RR@10", "--metrics-out", prom, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  promtool_ok(prom);
  char *text = th_slurp(prom, NULL);
  samples ss = parse_prom(text);
  cr_expect_eq(expect_measures(&ss, th_join(cmp, "aggregate.csv"), "compare", NULL, 0), 4 * 5);
  cr_expect_eq(count_samples(&ss, "ragsweep_latency_seconds"), 0, "compare writes no latency");
  free_samples(&ss);
  free(text);

  char *rprom = th_join(dir, "r.prom"), *rag = make_rag_folder(dir, "--metrics-out", rprom);
  promtool_ok(rprom);
  text = th_slurp(rprom, NULL);
  /* names: re-ranker -> re_ranker, modèle -> mod_le, 2nd -> _2nd; values
   * escaped; the empty 2nd of the second configuration left out */
  cr_expect(strstr(text, "ragsweep_measure{run=\"cross\\\"enc/x\\\\y/line1\\nline2\",re_ranker=\"cross\\\"enc\","
                         "mod_le=\"x\\\\y\",_2nd=\"line1\\nline2\",measure=\"id_based_context_precision\","
                         "command=\"rag\"} 0.25\n"),
            "%s", text);
  cr_expect(strstr(text, "ragsweep_measure{run=\"none/\xc3\xa9/\xc3\xbc/\",re_ranker=\"none\",mod_le=\"\xc3\xa9/\xc3\xbc\","
                         "measure=\"id_based_context_recall\",command=\"rag\"} 1\n"),
            "%s", text);
  /* rag's latency.csv: n 2, mean 21.25 ms, p99 29.825 ms (numpy: 12.5 + 0.99 * 17.5) */
  cr_expect(strstr(text, "_2nd=\"line1\\nline2\",command=\"rag\",quantile=\"0.99\"} 0.029825\n"), "%s", text);
  cr_expect(strstr(text, "_2nd=\"line1\\nline2\",command=\"rag\"} 0.0425\n"), "the _sum: 2 x 21.25 ms\n%s", text);
  cr_expect(strstr(text, "mod_le=\"\xc3\xa9/\xc3\xbc\",command=\"rag\"} 2\n"), "the _count\n%s", text);
  table t = read_table(th_join(rag, "latency.csv"));
  cr_expect_str_eq(cell(&t, 1, col(&t, "p99_ms")), "29.825");
  cr_expect_str_eq(cell(&t, 2, col(&t, "n")), "2");
  free_table(&t);
  free(text);
}

Test(export, clashing_label_names_are_errors_naming_both)
{
  char *dir = th_fresh_dir(), *samples_path = th_join(dir, "s.jsonl"), *out = th_join(dir, "rag"),
       *prom = th_join(dir, "m.prom");
  write_file(samples_path, "{\"re-ranker\":\"a\",\"re_ranker\":\"b\",\"retrieved_context_ids\":[1],"
                           "\"reference_context_ids\":[1]}\n");
  th_result r = th_rs("rag", samples_path, "-o", out, "-m", "id_based_context_recall", "--metrics-out", prom, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "attributes 're-ranker' and 're_ranker' both become the label 're_ranker'"), "%s", r.err);
  cr_expect(strstr(r.err, "the CSV outputs in"), "%s", r.err);
  cr_expect(th_exists(th_join(out, "aggregate.csv")), "aggregate.csv not written");
  cr_expect(!th_exists(prom), "a metrics file was written");
  th_free(&r);

  write_file(samples_path, "{\"quantile\":\"a\",\"retrieved_context_ids\":[1],\"reference_context_ids\":[1]}\n");
  r = th_rs("rag", samples_path, "-o", out, "-m", "id_based_context_recall", "--metrics-out", prom, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "attribute 'quantile' becomes the label 'quantile', which ragsweep uses for the latency "
                          "quantile"), "%s", r.err);
  th_free(&r);
}

Test(export, unwritable_metrics_out_is_exit_2_with_the_csvs_written, .timeout = 60)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out"),
       *bad = th_join(dir, "no/such/folder/m.prom");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", "--metrics-out", bad, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, bad), "the message does not name %s: %s", bad, r.err);
  cr_expect(strstr(r.err, "No such file or directory"), "%s", r.err);
  cr_expect(th_exists(th_join(out, "aggregate.csv")) && th_exists(th_join(out, "latency.csv")) &&
                th_exists(th_join(out, "latency_hist.csv")),
            "the CSV outputs are not all there");
  th_free(&r);
  char *folder = th_join(dir, "out/");
  r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", "--metrics-out", folder, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "expected a file name"), "%s", r.err);
  th_free(&r);
}

Test(export, latency_hist_that_disagrees_with_latency_csv_is_named, .timeout = 60)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  /* eval's own histogram: 14 buckets per run adding up to n = 200 */
  table h = read_table(th_join(out, "latency_hist.csv"));
  cr_expect_eq(h.n_rows, 1 + 4 * 14);
  uint64_t total = 0;
  for (size_t row = 1; row <= 14; row++) total += strtoull(cell(&h, row, col(&h, "count")), NULL, 10);
  cr_expect_eq(total, 200);
  cr_expect_str_eq(cell(&h, 14, col(&h, "le_ms")), "inf");
  free_table(&h);
  rs__results res = {0};
  rs_error err = {0};
  cr_assert_eq(rs__results_load(out, &res, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(res.n_hist_bounds, 13);
  cr_expect(res.has_hist[0] && res.has_evaluations[0] && res.evaluations[0] == 200);
  rs__results_free(&res);
  /* one count changed: the file no longer matches latency.csv's n */
  char *text = th_slurp(th_join(out, "latency_hist.csv"), NULL);
  char *p = strstr(text, ",1,0\n");
  cr_assert(p, "%s", text);
  p[3] = '7';
  write_file(th_join(out, "latency_hist.csv"), text);
  free(text);
  cr_expect_eq(rs__results_load(out, &res, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "latency_hist.csv: the buckets of run") && strstr(err.msg, "count 207 latencies"),
            "%s", err.msg);
  rs__results_free(&res);
}

/* --- the Pushgateway ----------------------------------------------------------------- */

static int free_port(void)
{
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(fd, (struct sockaddr *)&a, &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

typedef struct {
  pid_t pid;
  char url[64];
} gateway;

static void gateway_stop(gateway *g)
{
  if (g->pid <= 0) return;
  kill(g->pid, SIGTERM);
  int st, i;
  for (i = 0; i < 300 && waitpid(g->pid, &st, WNOHANG) == 0; i++) usleep(10000);
  if (i == 300) {
    kill(g->pid, SIGKILL);
    waitpid(g->pid, &st, 0);
  }
  g->pid = 0;
}

/* Starts /usr/bin/prometheus-pushgateway on a free port of 127.0.0.1
 * (another port if that one was taken meanwhile) and waits at most 10 s for
 * /-/ready. */
static gateway gateway_start(void)
{
  static const char bin[] = "/usr/bin/prometheus-pushgateway";
  cr_assert(access(bin, X_OK) == 0, "%s is missing: install Debian's prometheus-pushgateway (scripts/install-deps.sh "
                                    "does it when RAGSWEEP_WITH_TESTS=1, as make test sets)", bin);
  for (int attempt = 0; attempt < 3; attempt++) {
    gateway g = {0};
    const int port = free_port();
    char listen[64];
    snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", port);
    snprintf(g.url, sizeof g.url, "http://127.0.0.1:%d", port);
    const pid_t parent = getpid();
    g.pid = fork();
    cr_assert(g.pid >= 0);
    if (g.pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM); /* it dies with the test, even on a failed assertion */
      if (getppid() != parent) _exit(1);
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execl(bin, bin, listen, "--persistence.file=", (char *)NULL);
      _exit(127);
    }
    char ready[96];
    snprintf(ready, sizeof ready, "%s/-/ready", g.url);
    for (const double t0 = now_s(); now_s() - t0 < 10.0; usleep(20000)) {
      int st;
      if (waitpid(g.pid, &st, WNOHANG) == g.pid) {
        g.pid = 0;
        break; /* the port was taken: another one */
      }
      if (rs__http_request("GET", ready, NULL, NULL, 0, 1, NULL, NULL) == RS_OK) return g;
    }
    gateway_stop(&g);
  }
  cr_assert_fail("the Pushgateway did not become ready");
  return (gateway){0};
}

static char *http_get(const char *url)
{
  rs__http_reply reply = {0};
  rs_error err = {0};
  cr_assert_eq(rs__http_request("GET", url, NULL, NULL, 0, 5, &reply, &err), RS_OK, "%s", err.msg);
  return reply.body;
}

Test(export, pushgateway_push_reads_back_exactly_and_put_replaces, .timeout = 120)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out");
  gateway g = gateway_start();
  char metrics_url[96];
  snprintf(metrics_url, sizeof metrics_url, "%s/metrics", g.url);

  /* a first push: three measures, grouping labels instance and branch (a
   * '/' in its value: the @base64 form) */
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "nDCG@10", "-m", "P@5", "-m", "AP", "--pushgateway",
                   g.url, "--push-label", "instance=ci-3", "--push-label", "branch=feat/x", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char want[256];
  snprintf(want, sizeof want, "pushed the metrics to %s (job ragsweep, command eval)\n", g.url);
  cr_expect(strstr(r.out, want), "%s", r.out);
  th_free(&r);
  char *text = http_get(metrics_url);
  samples ss = parse_prom(text);
  static const char *const extra[] = {"job=ragsweep", "instance=ci-3", "branch=feat/x"};
  cr_expect_eq(expect_measures(&ss, th_join(out, "aggregate.csv"), "eval", extra, 3), 4 * 6);
  expect_latency(&ss, th_join(out, "latency.csv"), "eval", extra, 3);
  free_samples(&ss);
  free(text);

  /* the second push of the same group replaces the first: P@5 and AP go */
  r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "nDCG@10", "--pushgateway", g.url, "--push-label",
         "instance=ci-3", "--push-label", "branch=feat/x", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  text = http_get(metrics_url);
  ss = parse_prom(text);
  cr_expect_eq(expect_measures(&ss, th_join(out, "aggregate.csv"), "eval", extra, 3), 4 * 4);
  cr_expect(!strstr(text, "measure=\"P@5\""), "P@5 of the first push is still there");
  free_samples(&ss);
  free(text);

  /* a rag folder, pushed under the same job, sits beside it (command=rag) */
  char *rag_dir = th_fresh_dir();
  make_rag_folder(rag_dir, "--pushgateway", g.url);
  text = http_get(metrics_url);
  cr_expect(strstr(text, "command=\"rag\"") && strstr(text, "measure=\"nDCG@10\""), "%s", text);
  cr_expect(strstr(text, "_2nd=\"line1\\nline2\""), "%s", text);
  free(text);

  /* the gateway gone: exit 2, the URL named, the CSVs written */
  gateway_stop(&g);
  unlink(th_join(out, "aggregate.csv"));
  r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "nDCG@10", "--pushgateway", g.url, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  char named[160];
  snprintf(named, sizeof named, "PUT %s/metrics/job/ragsweep/command/eval: connection refused", g.url);
  cr_expect(strstr(r.err, named), "expected '%s' in: %s", named, r.err);
  cr_expect(strstr(r.err, "the CSV outputs in"), "%s", r.err);
  cr_expect(th_exists(th_join(out, "aggregate.csv")), "aggregate.csv not written");
  th_free(&r);
}

/* --- OTLP --------------------------------------------------------------------------------- */

static json_object *get(json_object *o, const char *key)
{
  json_object *v = NULL;
  cr_assert(o && json_object_object_get_ex(o, key, &v), "no field %s", key);
  return v;
}

/* The string attribute `key` of a data point, or NULL. */
static const char *attr(json_object *point, const char *key)
{
  json_object *a = get(point, "attributes");
  for (size_t i = 0; i < json_object_array_length(a); i++) {
    json_object *kv = json_object_array_get_idx(a, i);
    if (strcmp(json_object_get_string(get(kv, "key")), key) == 0) {
      json_object *v = get(kv, "value"), *s;
      if (json_object_object_get_ex(v, "stringValue", &s)) return json_object_get_string(s);
      return json_object_get_string(get(v, "intValue"));
    }
  }
  return NULL;
}

static json_object *metric(json_object *req, const char *name)
{
  json_object *ms = get(json_object_array_get_idx(
                            get(json_object_array_get_idx(get(req, "resourceMetrics"), 0), "scopeMetrics"), 0),
                        "metrics");
  for (size_t i = 0; i < json_object_array_length(ms); i++) {
    json_object *m = json_object_array_get_idx(ms, i);
    if (strcmp(json_object_get_string(get(m, "name")), name) == 0) return m;
  }
  return NULL;
}

static json_object *point(json_object *m, const char *kind, const char *run, const char *measure)
{
  json_object *pts = get(get(m, kind), "dataPoints");
  for (size_t i = 0; i < json_object_array_length(pts); i++) {
    json_object *p = json_object_array_get_idx(pts, i);
    const char *r = attr(p, "run"), *mm = attr(p, "measure");
    if (r && strcmp(r, run) == 0 && (!measure || (mm && strcmp(mm, measure) == 0))) return p;
  }
  return NULL;
}

/* The last request the receiver logged, checked valid, parsed. */
static json_object *last_request(const llm_stub *s)
{
  json_object *log = llm_stub_log(s);
  const size_t n = json_object_array_length(log);
  cr_assert_gt(n, 0, "the receiver got nothing");
  json_object *rec = json_object_array_get_idx(log, n - 1), *problem = get(rec, "problem");
  cr_assert(json_object_is_type(problem, json_type_null), "the receiver found: %s", json_object_get_string(problem));
  cr_expect_str_eq(llm_str(rec, "path"), "/v1/metrics");
  cr_expect_str_eq(llm_str(rec, "content_type"), "application/json");
  json_object *req = json_tokener_parse(llm_str(rec, "raw"));
  cr_assert(req, "the payload is not JSON");
  json_object_put(log);
  return req;
}

Test(export, otlp_push_is_valid_and_matches_the_csvs, .timeout = 120)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out");
  llm_stub s;
  cr_assert_eq(llm_server_start(&s, "tests/otlp_receiver.py", 60), 0);
  char url[96];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/metrics", s.port);
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "nDCG@10", "-m", "P@5", "-m", "R@10", "-m", "RR",
                   "-m", "AP", "--otlp", url, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  json_object *req = last_request(&s);
  json_object *res = get(json_object_array_get_idx(get(req, "resourceMetrics"), 0), "resource");
  json_object *kv = json_object_array_get_idx(get(res, "attributes"), 0);
  cr_expect_str_eq(json_object_get_string(get(kv, "key")), "service.name");
  cr_expect_str_eq(json_object_get_string(get(get(kv, "value"), "stringValue")), "ragsweep");

  /* every aggregate.csv row in its gauge, exactly; num_q is the counter */
  table t = read_table(th_join(out, "aggregate.csv"));
  const size_t c_run = col(&t, "run"), c_m = col(&t, "measure"), c_v = col(&t, "value");
  size_t gauge_points = 0;
  for (size_t row = 1; row < t.n_rows; row++) {
    const char *run = cell(&t, row, c_run), *m = cell(&t, row, c_m);
    if (strcmp(m, "num_q") == 0) {
      json_object *p = point(metric(req, "ragsweep.evaluations"), "sum", run, NULL);
      cr_assert(p, "no evaluations point for %s", run);
      cr_expect_str_eq(json_object_get_string(get(p, "asInt")), cell(&t, row, c_v));
      cr_expect_str_eq(json_object_get_string(get(p, "startTimeUnixNano")),
                       json_object_get_string(get(p, "timeUnixNano")));
      continue;
    }
    const char *name = strcmp(m, "nDCG@10") == 0 ? "ragsweep.retrieval.ndcg"
                       : strcmp(m, "P@5") == 0   ? "ragsweep.retrieval.precision"
                       : strcmp(m, "R@10") == 0  ? "ragsweep.retrieval.recall"
                       : strcmp(m, "RR") == 0    ? "ragsweep.retrieval.mrr"
                                                 : "ragsweep.measure";
    json_object *p = point(metric(req, name), "gauge", run, m);
    cr_assert(p, "no %s point for %s %s", name, run, m);
    cr_expect_eq(json_object_get_double(get(p, "asDouble")), num(cell(&t, row, c_v)), "%s %s", run, m);
    cr_expect_str_eq(attr(p, "model"), cell(&t, row, col(&t, "model")));
    cr_expect_str_eq(attr(p, "command"), "eval");
    const char *cutoff = attr(p, "cutoff");
    if (strchr(m, '@') && strcmp(name, "ragsweep.measure") != 0) cr_expect_str_eq(cutoff, strchr(m, '@') + 1);
    else cr_expect(!cutoff, "%s has a cutoff", m);
    gauge_points++;
  }
  cr_expect_eq(gauge_points, 4 * 7, "4 runs x (5 measures, num_q_no_rel_ret, num_q_perfect_P@1)");
  json_object *ev = get(metric(req, "ragsweep.evaluations"), "sum");
  cr_expect(json_object_get_boolean(get(ev, "isMonotonic")));
  cr_expect_eq(json_object_get_int(get(ev, "aggregationTemporality")), 2);

  /* the histogram: latency_hist.csv's counts, latency.csv's n, mean x n, max */
  table h = read_table(th_join(out, "latency_hist.csv")), l = read_table(th_join(out, "latency.csv"));
  for (size_t row = 1; row < l.n_rows; row++) {
    const char *run = cell(&l, row, 0);
    json_object *p = point(metric(req, "ragsweep.latency"), "histogram", run, NULL);
    cr_assert(p, "no latency point for %s", run);
    cr_expect_str_eq(json_object_get_string(get(p, "count")), cell(&l, row, col(&l, "n")));
    const double n = num(cell(&l, row, col(&l, "n")));
    cr_expect_eq(json_object_get_double(get(p, "sum")), num(cell(&l, row, col(&l, "mean_ms"))) * n / 1000.0);
    cr_expect_eq(json_object_get_double(get(p, "max")), num(cell(&l, row, col(&l, "max_ms"))) / 1000.0);
    json_object *bc = get(p, "bucketCounts"), *eb = get(p, "explicitBounds");
    cr_assert_eq(json_object_array_length(bc), 14);
    size_t b = 0;
    for (size_t hr = 1; hr < h.n_rows; hr++) {
      if (strcmp(cell(&h, hr, 0), run) != 0) continue;
      cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(bc, b)), cell(&h, hr, col(&h, "count")));
      if (b < 13)
        cr_expect_eq(json_object_get_double(json_object_array_get_idx(eb, b)), num(cell(&h, hr, col(&h, "le_ms"))) / 1000.0);
      b++;
    }
    cr_expect_eq(b, 14);
  }
  free_table(&t);
  free_table(&h);
  free_table(&l);
  json_object_put(req);

  /* rag with awkward names: valid, values as written */
  char *rag_dir = th_fresh_dir();
  make_rag_folder(rag_dir, "--otlp", url);
  req = last_request(&s);
  json_object *p = point(metric(req, "ragsweep.measure"), "gauge", "cross\"enc/x\\y/line1\nline2",
                         "id_based_context_precision");
  cr_assert(p, "no point for the first rag configuration");
  cr_expect_eq(json_object_get_double(get(p, "asDouble")), 0.25);
  cr_expect_str_eq(attr(p, "re-ranker"), "cross\"enc");
  cr_expect_str_eq(attr(p, "mod\xc3\xa8le"), "x\\y");
  p = point(metric(req, "ragsweep.evaluations"), "sum", "none/\xc3\xa9/\xc3\xbc/", NULL);
  cr_assert(p);
  cr_expect_str_eq(json_object_get_string(get(p, "asInt")), "2");
  cr_expect(!attr(p, "2nd"), "an empty attribute is left out");
  p = point(metric(req, "ragsweep.latency"), "histogram", "none/\xc3\xa9/\xc3\xbc/", NULL);
  cr_assert(p);
  /* 7 ms in (5,10], 1500 ms in (1000,2000]; sum 1.507 s */
  json_object *bc = get(p, "bucketCounts");
  cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(bc, 3)), "1");
  cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(bc, 10)), "1");
  cr_expect_eq(json_object_get_double(get(p, "sum")), 1.507);
  json_object_put(req);
  llm_stub_stop(&s);
}

Test(export, otlp_refusals_are_exit_2_naming_the_url, .timeout = 120)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir), *out = th_join(dir, "out");
  llm_stub s;
  cr_assert_eq(llm_server_start(&s, "tests/otlp_receiver.py", 60), 0);
  char url[128], script[256];
  snprintf(url, sizeof url, "http://user:s3cret@127.0.0.1:%d/v1/metrics", s.port);
  snprintf(script, sizeof script, "%s/script.json", s.dir);

  write_file(script, "{\"status\": 503}");
  th_result r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", "--otlp", url, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  char named[160];
  snprintf(named, sizeof named, "POST http://user:***@127.0.0.1:%d/v1/metrics: HTTP 503: {}", s.port);
  cr_expect(strstr(r.err, named), "expected '%s' in: %s", named, r.err);
  cr_expect(!strstr(r.err, "s3cret") && !strstr(r.out, "s3cret"), "the password is printed");
  th_free(&r);

  write_file(script, "{\"rejected\": 3, \"message\": \"3 points too old\"}");
  r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", "--otlp", url, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "the collector rejected 3 data points") && strstr(r.err, "3 points too old"), "%s", r.err);
  th_free(&r);

  unlink(script);
  llm_stub_stop(&s);
  r = th_rs("eval", corpus, "-o", out, "--quiet", "-m", "RR", "--otlp", url, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "connection refused") && strstr(r.err, "user:***@127.0.0.1"), "%s", r.err);
  cr_expect(!strstr(r.err, "s3cret"), "the password is printed");
  cr_expect(th_exists(th_join(out, "aggregate.csv")));
  th_free(&r);
}
