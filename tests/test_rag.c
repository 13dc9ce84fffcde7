/* test_rag.c: `ragsweep rag` against the scripted server: every metric on
 * hand-worked samples, undefined values and failures, the cache on a
 * re-run, gates and tiers, and two judges' agreement. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "llm_helpers.h"
#include "llm/rag_prompts.h"

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* A rule: requests whose raw body holds `match` (and whose path holds
 * `path`, when given) get `content`. */
static void rule(json_object *rules, const char *match, const char *content)
{
  json_object *r = json_object_new_object(), *b = json_object_new_object();
  json_object_object_add(r, "match", json_object_new_string(match));
  json_object_object_add(b, "content", json_object_new_string(content));
  json_object_object_add(r, "behaviour", b);
  json_object_array_add(rules, r);
}

/* The cells of one CSV line (quotes handled), into cells[]; returns the count. */
static int split_csv(const char *line, char cells[][512], int max)
{
  int n = 0;
  const char *p = line;
  while (n < max) {
    size_t k = 0;
    if (*p == '"') {
      p++;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        if (k < 511) cells[n][k++] = *p;
        p++;
      }
      if (*p == '"') p++;
    } else {
      while (*p && *p != ',' && *p != '\n') {
        if (k < 511) cells[n][k++] = *p;
        p++;
      }
    }
    cells[n++][k] = '\0';
    if (*p != ',') break;
    p++;
  }
  return n;
}

/* The cell of column `col` in the first row whose cells match every
 * (column, value) pair of keys ("sample", "q1", "metric", "faithfulness", NULL). */
static const char *csv_cell(const char *csv, const char *col, ...)
{
  static char out[512];
  char hdr[16][512], row[16][512];
  const char *nl = strchr(csv, '\n');
  cr_assert(nl);
  char *line = strndup(csv, (size_t)(nl - csv));
  const int nh = split_csv(line, hdr, 16);
  free(line);
  int want = -1;
  for (int i = 0; i < nh; i++)
    if (strcmp(hdr[i], col) == 0) want = i;
  cr_assert(want >= 0, "no column %s", col);
  for (const char *p = nl + 1; *p;) {
    const char *e = strchr(p, '\n');
    char *l = strndup(p, e ? (size_t)(e - p) : strlen(p));
    split_csv(l, row, 16);
    free(l);
    va_list ap;
    va_start(ap, col);
    const char *k;
    int ok = 1;
    while ((k = va_arg(ap, const char *))) {
      const char *v = va_arg(ap, const char *);
      int c = -1;
      for (int i = 0; i < nh; i++)
        if (strcmp(hdr[i], k) == 0) c = i;
      if (c < 0 || strcmp(row[c], v) != 0) ok = 0;
    }
    va_end(ap);
    if (ok) {
      snprintf(out, sizeof out, "%s", row[want]);
      return out;
    }
    if (!e) break;
    p = e + 1;
  }
  cr_assert_fail("no matching row for column %s in:\n%s", col, csv);
  return NULL;
}

static double num(const char *s)
{
  cr_assert(s && *s, "empty value");
  return strtod(s, NULL);
}

static const char SAMPLES[] =
    "{\"id\":\"q1\",\"user_input\":\"Q1 what is the capital of France?\",\"response\":\"RESP1 Paris is the capital.\","
    "\"reference\":\"REF1 The capital of France is Paris.\",\"retrieved_contexts\":[\"CTX1A Paris is the capital of "
    "France.\",\"CTX1B Lyon is a city.\",\"CTX1C France is in Europe.\"],\"retrieved_context_ids\":[\"d1\",\"d2\",\"d2\","
    "\"d3\"],\"reference_context_ids\":[\"d1\",\"d4\"],\"model\":\"m1\",\"latency_ms\":100}\n"
    "{\"id\":\"q2\",\"user_input\":\"Q2 who?\",\"response\":\"RESP2 I do not know.\",\"reference\":\"REF2 Nobody.\","
    "\"retrieved_contexts\":[],\"retrieved_context_ids\":[],\"reference_context_ids\":[\"d9\"],\"model\":\"m1\","
    "\"latency_ms\":300}\n"
    "\n"
    "{\"id\":\"q3\",\"user_input\":\"Q3 when?\",\"response\":\"RESP3 Tomorrow.\",\"reference\":\"REF3 Today.\","
    "\"retrieved_contexts\":[\"CTX3A Today is the day.\"],\"retrieved_context_ids\":[\"d5\"],"
    "\"reference_context_ids\":[\"d5\"],\"model\":\"m1\",\"latency_ms\":200}\n";

/* The scripted verdicts of the hand-worked samples (README, "rag"). */
static char *hand_script(void)
{
  json_object *root = json_object_new_object(), *rules = json_object_new_array();
  /* embeddings: one rule, vectors by input text */
  json_object *er = json_object_new_object(), *eb = json_object_new_object(), *emb = json_object_new_object();
  static const struct {
    const char *text;
    double v[3];
  } vec[] = {{"Q1 what is the capital of France?", {1, 0, 0}}, {"GQ1a", {1, 0, 0}}, {"GQ1b", {0, 1, 0}},
             {"GQ1c", {1, 1, 0}}, {"Q3 when?", {0, 0, 1}}, {"GQ3", {0, 0, 2}}};
  for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) {
    json_object *a = json_object_new_array();
    for (int d = 0; d < 3; d++) json_object_array_add(a, json_object_new_double(vec[i].v[d]));
    json_object_object_add(emb, vec[i].text, a);
  }
  json_object_object_add(eb, "embeddings", emb);
  json_object_object_add(er, "match", json_object_new_string(""));
  json_object_object_add(er, "path", json_object_new_string("embeddings"));
  json_object_object_add(er, "behaviour", eb);
  json_object_array_add(rules, er);
  /* q1: the questions prompt's user message starts with "Answer:", the
   * statements prompt has it after the question. */
  rule(rules, "\"Answer: RESP1", "{\"questions\": [\"GQ1a\", \"GQ1b\", \"GQ1c\"], \"noncommittal\": 0}");
  rule(rules, "Answer: RESP1", "```json\n{\"statements\": [\"S1a\", \"S1b\", \"S1c\"]}\n```");
  rule(rules, "Answer: REF1", "{\"statements\": [\"R1a\", \"R1b\"]}");
  rule(rules, "Context:\\nCTX1A",
       "{\"verdicts\": [{\"statement\": \"S1a\", \"verdict\": 1}, {\"statement\": \"S1b\", \"verdict\": 0}, "
       "{\"statement\": \"S1c\", \"verdict\": 1}]}");
  rule(rules, "Context:\\nREF1", "{\"verdicts\": [{\"verdict\": 1}, {\"verdict\": 0}, {\"verdict\": 1}]}");
  rule(rules, "Context:\\nRESP1", "{\"verdicts\": [{\"verdict\": 1}, {\"verdict\": 0}]}");
  rule(rules, "Context: CTX1A", "{\"reason\": \"names Paris\", \"verdict\": 1}");
  rule(rules, "Context: CTX1B", "{\"reason\": \"about Lyon\", \"verdict\": 0}");
  rule(rules, "Context: CTX1C", "The verdict: {\"reason\": \"helps\", \"verdict\": \"yes\"}");
  rule(rules, "Contexts:\\nCTX1A",
       "{\"classifications\": [{\"attributed\": 1}, {\"attributed\": 1}, {\"attributed\": 0}, {\"attributed\": 1}]}");
  rule(rules, "polite? RESP1", "{\"score\": 4, \"reason\": \"courteous\"}");
  /* q2: noncommittal, no statements, no contexts */
  rule(rules, "\"Answer: RESP2", "{\"questions\": [\"GQ2\"], \"noncommittal\": 1}");
  rule(rules, "Answer: RESP2", "{\"statements\": []}");
  rule(rules, "Answer: REF2", "{\"statements\": [\"R2a\"]}");
  rule(rules, "Context:\\nRESP2", "{\"verdicts\": [{\"verdict\": 0}]}");
  rule(rules, "Reference answer: REF2", "{\"classifications\": []}");
  rule(rules, "polite? RESP2", "{\"score\": \"2\", \"reason\": \"curt\"}");
  /* q3: failures */
  rule(rules, "\"Answer: RESP3", "{\"questions\": [\"GQ3\"], \"noncommittal\": 0}");
  rule(rules, "Answer: RESP3", "I cannot help with that.");
  rule(rules, "Answer: REF3", "{\"statements\": [\"R3a\"]}");
  rule(rules, "Context:\\nRESP3", "{\"verdicts\": [{\"verdict\": 1}]}");
  json_object *tr = json_object_new_object(), *tb = json_object_new_object();
  json_object_object_add(tr, "match", json_object_new_string("Context: CTX3A"));
  json_object_object_add(tb, "content", json_object_new_string("{\"reason\": \"the con"));
  json_object_object_add(tb, "finish_reason", json_object_new_string("length"));
  json_object_object_add(tr, "behaviour", tb);
  json_object_array_add(rules, tr);
  rule(rules, "Contexts:\\nCTX3A", "{\"classifications\": [{\"attributed\": \"yes\"}]}");
  rule(rules, "polite? RESP3", "{\"score\": 7, \"reason\": \"off the scale\"}");
  json_object_object_add(root, "rules", rules);
  json_object *def = json_object_new_object();
  json_object_object_add(def, "status", json_object_new_int(400));
  json_object_object_add(def, "error_message", json_object_new_string("unscripted request"));
  json_object_object_add(root, "default", def);
  char *s = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
  json_object_put(root);
  return s;
}

static size_t stub_requests(const llm_stub *stub)
{
  json_object *log = llm_stub_log(stub);
  const size_t n = json_object_array_length(log);
  json_object_put(log);
  return n;
}

Test(rag, every_metric_by_hand, .timeout = 120)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "samples.jsonl"), *crit = th_join(dir, "polite.txt"), *out = th_join(dir, "out");
  write_file(data, SAMPLES);
  write_file(crit, "Is this polite? {response}\n");
  char *script = hand_script();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, script, 100), 0);
  free(script);
#define RAG_ARGS                                                                                                  \
  "rag", data, "-o", out, "--model", "judge-1", "--embed-model", "emb", "--base-url", stub.url, "-m",              \
      "faithfulness", "-m", "answer_relevancy", "-m", "context_precision", "-m", "context_recall", "-m",          \
      "factual_correctness", "-m", "id_based_context_precision", "-m", "id_based_context_recall", "--criterion", \
      crit_arg, "--max-retries", "0", "--max-failures", "100%", "--gate", "faithfulness>=0.5"
  char crit_arg[600];
  snprintf(crit_arg, sizeof crit_arg, "polite=%s", crit);
  /* A dry run sends nothing and creates nothing; with nothing cached it
   * counts the 19 first-stage requests and estimates the 12 that the
   * first-stage replies would lead to (two checks of the response's
   * statements, one of the reference's, one embedding, per sample). */
  th_result d = th_rs_at(NULL, NULL, RAG_ARGS, "--dry-run", NULL);
  cr_assert_eq(d.status, 0, "%s%s", d.out, d.err);
  cr_expect(strstr(d.out, "requests: about 31 (0 cached)"), "%s", d.out);
  cr_expect_eq(stub_requests(&stub), 0);
  cr_expect(!th_exists(out));
  th_free(&d);
  th_result r = th_rs_at(NULL, NULL, RAG_ARGS, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  /* Requests.  Stage 1: two splits, questions, a usefulness verdict per
   * context, recall and the criterion: q1 8, q2 5 (no contexts), q3 6.
   * Stage 2: q1 3 checks; q2 1 (its response makes no statement); q3 1
   * (its response's split failed).  Embeddings: q1 and q3 (q2 is
   * noncommittal). */
  cr_expect_eq(stub_requests(&stub), 19 + 5 + 2, "%s", r.out);
  th_free(&r);
  char *ps = th_slurp(th_join(out, "per_sample.csv"), NULL), *agg = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_assert(ps && agg);
  cr_expect(strncmp(ps, "sample,model,metric,value,reason\n", 33) == 0, "%s", ps);
#define V(s, m) csv_cell(ps, "value", "sample", s, "metric", m, NULL)
#define WHY(s, m) csv_cell(ps, "reason", "sample", s, "metric", m, NULL)
  /* q1 */
  cr_expect_float_eq(num(V("q1", "faithfulness")), 2.0 / 3.0, 1e-15);
  cr_expect_float_eq(num(V("q1", "answer_relevancy")), (1.0 + 0.0 + 1.0 / sqrt(2.0)) / 3.0, 1e-15);
  cr_expect_float_eq(num(V("q1", "context_precision")), (1.0 + 2.0 / 3.0) / 2.0, 1e-15);
  cr_expect_str_eq(WHY("q1", "context_precision"), "useful by rank: 1,0,1");
  cr_expect_float_eq(num(V("q1", "context_recall")), 0.75, 1e-15);
  cr_expect_float_eq(num(V("q1", "factual_correctness(mode=f1)")), 4.0 / 6.0, 1e-15);
  cr_expect_str_eq(WHY("q1", "factual_correctness(mode=f1)"), "tp=2 fp=1 fn=1");
  cr_expect_float_eq(num(V("q1", "id_based_context_precision")), 1.0 / 3.0, 1e-15);
  cr_expect_float_eq(num(V("q1", "id_based_context_recall")), 0.5, 1e-15);
  cr_expect_str_eq(V("q1", "polite"), "4");
  cr_expect_str_eq(WHY("q1", "polite"), "courteous");
  /* q2: undefined values are empty and say why; noncommittal is 0 */
  cr_expect_str_eq(V("q2", "faithfulness"), "");
  cr_expect(strstr(WHY("q2", "faithfulness"), "undefined"));
  cr_expect_str_eq(V("q2", "answer_relevancy"), "0");
  cr_expect_str_eq(V("q2", "context_precision"), "");
  cr_expect_str_eq(V("q2", "context_recall"), "");
  cr_expect_str_eq(V("q2", "factual_correctness(mode=f1)"), "0");
  cr_expect_str_eq(V("q2", "id_based_context_precision"), "");
  cr_expect_str_eq(V("q2", "id_based_context_recall"), "0");
  cr_expect_str_eq(V("q2", "polite"), "2");
  /* q3: failures are empty, never 0, and say what failed */
  cr_expect_str_eq(V("q3", "faithfulness"), "");
  cr_expect(strstr(WHY("q3", "faithfulness"), "failed (statements_response, unparsed)"), "%s", WHY("q3", "faithfulness"));
  cr_expect_float_eq(num(V("q3", "answer_relevancy")), 1.0, 1e-15);
  cr_expect_str_eq(V("q3", "context_precision"), "");
  cr_expect(strstr(WHY("q3", "context_precision"), "truncated"));
  cr_expect_str_eq(V("q3", "context_recall"), "1");
  cr_expect_str_eq(V("q3", "factual_correctness(mode=f1)"), "");
  cr_expect_str_eq(V("q3", "polite"), "");
  cr_expect_str_eq(V("q3", "id_based_context_recall"), "1");
  /* aggregate: undefined and failed values are out of mean and n */
#define A(m, c) csv_cell(agg, c, "metric", m, NULL)
  cr_expect_float_eq(num(A("faithfulness", "mean")), 2.0 / 3.0, 1e-15);
  cr_expect_str_eq(A("faithfulness", "n"), "1");
  cr_expect_str_eq(A("faithfulness", "failures"), "1");
  cr_expect_str_eq(A("faithfulness", "undefined"), "1");
  cr_expect_float_eq(num(A("answer_relevancy", "mean")), ((1.0 + 1.0 / sqrt(2.0)) / 3.0 + 0.0 + 1.0) / 3.0, 1e-15);
  cr_expect_str_eq(A("answer_relevancy", "n"), "3");
  cr_expect_float_eq(num(A("context_recall", "mean")), 0.875, 1e-15);
  cr_expect_float_eq(num(A("factual_correctness(mode=f1)", "mean")), 1.0 / 3.0, 1e-15);
  cr_expect_float_eq(num(A("id_based_context_precision", "mean")), 2.0 / 3.0, 1e-15);
  cr_expect_str_eq(A("polite", "mean"), "3");
  cr_expect_str_eq(A("polite", "failures"), "1");
  cr_expect_str_eq(A("faithfulness", "latency_p50_ms"), "200");
  cr_expect_str_eq(A("faithfulness", "latency_p99_ms"), "298");
  cr_expect(th_exists(th_join(out, "calls.jsonl")));
  cr_expect(th_exists(th_join(out, "gates.csv")));
  cr_expect(!th_exists(th_join(out, "agreement.csv")));
  /* A re-run answers everything from the cache (failures that were
   * replies are cached too) and writes the same bytes. */
  th_result r2 = th_rs_at(NULL, NULL, RAG_ARGS, NULL);
  cr_assert_eq(r2.status, 0, "%s%s", r2.out, r2.err);
  th_free(&r2);
  cr_expect_eq(stub_requests(&stub), 26, "a re-run sent requests");
  /* Now the dry run follows the cached replies into every stage: exact. */
  d = th_rs_at(NULL, NULL, RAG_ARGS, "--dry-run", NULL);
  cr_expect(strstr(d.out, "requests: about 26 (26 cached)"), "%s", d.out);
  th_free(&d);
  char *ps2 = th_slurp(th_join(out, "per_sample.csv"), NULL), *agg2 = th_slurp(th_join(out, "aggregate.csv"), NULL);
  cr_expect_str_eq(ps2, ps);
  cr_expect_str_eq(agg2, agg);
  /* A gate that fails exits 3, after writing everything. */
  th_result r3 = th_rs_at(NULL, NULL, RAG_ARGS, "--gate", "context_recall>0.9", NULL);
  cr_expect_eq(r3.status, 3, "%s%s", r3.out, r3.err);
  cr_expect(strstr(r3.out, "context_recall>0.9"));
  th_free(&r3);
  /* The default --max-failures (1%) fails the run (exit 2) and says why. */
  th_result r4 = th_rs_at(NULL, NULL, "rag", data, "-o", out, "--model", "judge-1", "--base-url", stub.url, "-m", "faithfulness",
                    NULL);
  cr_expect_eq(r4.status, 2, "%s%s", r4.out, r4.err);
  cr_expect(strstr(r4.err, "--max-failures"), "%s", r4.err);
  th_free(&r4);
  free(ps), free(agg), free(ps2), free(agg2);
  llm_stub_stop(&stub);
#undef V
#undef WHY
#undef A
#undef RAG_ARGS
}

/* Two judges in a known order (--concurrency 1: judge j1's requests, then
 * j2's): usefulness verdicts and criterion scores by hand. */
Test(rag, two_judges_agreement, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "s.jsonl"), *crit = th_join(dir, "c.txt"), *out = th_join(dir, "out");
  write_file(data, "{\"user_input\":\"a\",\"reference\":\"x\",\"retrieved_contexts\":[\"c1\",\"c2\"],\"response\":\"r1\"}\n"
                   "{\"user_input\":\"b\",\"reference\":\"y\",\"retrieved_contexts\":[\"c3\",\"c4\"],\"response\":\"r2\"}\n"
                   "{\"user_input\":\"c\",\"reference\":\"z\",\"retrieved_contexts\":[\"c5\",\"c6\"],\"response\":\"r3\"}\n");
  write_file(crit, "Rate {response}.");
  /* per sample: useful c_a, useful c_b, criterion */
  static const int use[2][3][2] = {{{1, 0}, {1, 1}, {0, 0}}, {{1, 1}, {1, 0}, {0, 0}}};
  static const int score[2][3] = {{1, 3, 5}, {2, 3, 4}};
  json_object *root = json_object_new_object(), *seq = json_object_new_array();
  for (int j = 0; j < 2; j++)
    for (int s = 0; s < 3; s++) {
      char text[128];
      for (int k = 0; k < 2; k++) {
        snprintf(text, sizeof text, "{\"verdict\": %d}", use[j][s][k]);
        json_object *b = json_object_new_object();
        json_object_object_add(b, "content", json_object_new_string(text));
        json_object_array_add(seq, b);
      }
      snprintf(text, sizeof text, "{\"score\": %d, \"reason\": \"r\"}", score[j][s]);
      json_object *b = json_object_new_object();
      json_object_object_add(b, "content", json_object_new_string(text));
      json_object_array_add(seq, b);
    }
  json_object_object_add(root, "sequence", seq);
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN), 60), 0);
  json_object_put(root);
  char crit_arg[600];
  snprintf(crit_arg, sizeof crit_arg, "rate=%s", crit);
  th_result r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "--judge-model", "j1", "--judge-model", "j2", "--base-url", stub.url,
                   "--concurrency", "1", "-m", "context_precision", "--criterion", crit_arg, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *ps = th_slurp(th_join(out, "per_sample.csv"), NULL), *ag = th_slurp(th_join(out, "agreement.csv"), NULL);
  cr_assert(ps && ag);
  /* no id field: the sample is its line number */
  cr_expect_str_eq(csv_cell(ps, "value", "sample", "3", "judge", "j1", "metric", "rate", NULL), "5");
  cr_expect_str_eq(csv_cell(ps, "value", "sample", "2", "judge", "j2", "metric", "context_precision", NULL), "1");
  /* alpha (interval) of the scores: units (1,2) (3,3) (5,4); n = 6,
   * D_o = (2 + 0 + 2) / 6, D_e = 2 * 6 * 10 / (6 * 5) = 4: 1 - (2/3)/4 = 5/6. */
  cr_expect_float_eq(num(csv_cell(ag, "value", "metric", "rate", "statistic", "krippendorff_alpha_interval", NULL)),
                     5.0 / 6.0, 1e-15);
  cr_expect_str_eq(csv_cell(ag, "n", "metric", "rate", "statistic", "krippendorff_alpha_interval", NULL), "6");
  /* kappa of the verdicts: (1,0,1,1,0,0) vs (1,1,1,0,0,0): po 4/6, pe 1/2: 1/3 */
  cr_expect_float_eq(num(csv_cell(ag, "value", "metric", "context_precision", "statistic", "cohen_kappa_verdicts", NULL)),
                     1.0 / 3.0, 1e-15);
  /* context precision agrees everywhere: (1,1) (1,1) (0,0): alpha 1 */
  cr_expect_str_eq(csv_cell(ag, "value", "metric", "context_precision", "statistic", "krippendorff_alpha_interval", NULL),
                   "1");
  free(ps), free(ag);
  llm_stub_stop(&stub);
}

Test(rag, tiers_table, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "s.jsonl"), *tiers = th_join(dir, "tiers.csv"), *out = th_join(dir, "out");
  write_file(data, "{\"cfg\":\"a\",\"retrieved_context_ids\":[1,2],\"reference_context_ids\":[\"1\"]}\n"
                   "{\"cfg\":\"b\",\"retrieved_context_ids\":[1,2,3,4],\"reference_context_ids\":[1]}\n"
                   "{\"cfg\":\"c\",\"retrieved_context_ids\":[5],\"reference_context_ids\":[1]}\n");
  write_file(tiers, "metric,minimum,target,excellent\nid_based_context_precision,0.2,0.4,0.5\n");
  th_result r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "-m", "id_based_context_precision", "--tiers", tiers, NULL);
  /* a: 1/2 excellent, b: 1/4 minimum, c: 0 below minimum -> exit 3 */
  cr_expect_eq(r.status, 3, "%s%s", r.out, r.err);
  th_free(&r);
  char *t = th_slurp(th_join(out, "tiers.csv"), NULL);
  cr_assert(t);
  cr_expect_str_eq(csv_cell(t, "tier", "configuration", "a", NULL), "excellent");
  cr_expect_str_eq(csv_cell(t, "tier", "configuration", "b", NULL), "minimum");
  cr_expect_str_eq(csv_cell(t, "tier", "configuration", "c", NULL), "below_minimum");
  free(t);
  write_file(tiers, "metric,minimum,target,excellent\nid_based_context_precision,0,0.25,0.5\n");
  th_result r2 = th_rs_at(NULL, NULL, "rag", data, "-o", out, "-m", "id_based_context_precision", "--tiers", tiers, NULL);
  cr_expect_eq(r2.status, 0, "%s%s", r2.out, r2.err);
  th_free(&r2);
}

Test(rag, bad_input, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "s.jsonl"), *out = th_join(dir, "out");
  write_file(data, "{\"user_input\":\"a\",\"response\":\"r\"}\n{\"user_input\":\"b\"}\n");
  static const struct {
    const char *metric, *fragment;
    int status;
  } cases[] = {
      {"faithfulness", "s.jsonl:1: metric faithfulness needs the field \"retrieved_contexts\"", 2},
      {"answer_relevancy", "answer_relevancy needs an embedding model", 1},
      {"context_recal", "unknown metric", 1},
      {"factual_correctness(mode=f2)", "mode=precision", 1},
      {"id_based_context_recall", "s.jsonl:1: metric id_based_context_recall needs the field \"retrieved_context_ids\"", 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    th_result r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-m", cases[i].metric,
           NULL);
    cr_expect_eq(r.status, cases[i].status, "%s: %s", cases[i].metric, r.err);
    cr_expect(strstr(r.err, cases[i].fragment), "%s: %s", cases[i].metric, r.err);
    cr_expect(!th_exists(out), "%s left %s", cases[i].metric, out);
    th_free(&r);
  }
  th_result r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "-m", "faithfulness", NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "--model"), "%s", r.err);
  th_free(&r);
  char *crit = th_join(dir, "c.txt");
  write_file(crit, "no placeholders here");
  char arg[600];
  snprintf(arg, sizeof arg, "tone=%s", crit);
  r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "--model", "m", "--criterion", arg, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "{user_input}"), "%s", r.err);
  th_free(&r);
}

/* The README quotes every prompt verbatim (a changed prompt must change
 * its documentation too). */
Test(rag, prompts_in_readme)
{
  char *readme = th_slurp("README.md", NULL);
  cr_assert(readme, "README.md not found (run from the repository's root)");
  const rs__rag_prompt *all[] = {&rs__prompt_statements, &rs__prompt_nli, &rs__prompt_questions,
                                 &rs__prompt_useful, &rs__prompt_recall, &rs__prompt_criterion};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    char *block = NULL;
    cr_assert(asprintf(&block, "system: %s\n%s%s", all[i]->system, all[i]->user ? "user: " : "",
                       all[i]->user ? all[i]->user : "") > 0);
    cr_expect(strstr(readme, block), "README.md does not quote the %s prompt verbatim", all[i]->name);
    free(block);
  }
  free(readme);
}

/* An error that cannot heal stops the run: what was scored is written,
 * the rest is empty ("not sent"), and the exit status is 2. */
Test(rag, fatal_error_stops, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "s.jsonl"), *out = th_join(dir, "out");
  write_file(data, "{\"id\":\"a\",\"user_input\":\"q\",\"response\":\"r\",\"retrieved_contexts\":[\"c\"],"
                   "\"retrieved_context_ids\":[\"d1\"],\"reference_context_ids\":[\"d1\"]}\n");
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, "{\"default\": {\"status\": 401, \"error_message\": \"Incorrect API key "
                                     "provided: sk-abc123\"}}", 60), 0);
  char *const env[] = {"OPENAI_API_KEY=sk-secret-rag-key", NULL};
  th_result r = th_rs_at(NULL, env, "rag", data, "-o", out, "--model", "m", "--base-url", stub.url, "-m", "faithfulness", "-m",
                   "id_based_context_recall", "--quiet", NULL);
  cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
  cr_expect(strstr(r.err, "stopped: HTTP 401"), "%s", r.err);
  cr_expect(!strstr(r.err, "sk-abc123") && !strstr(r.out, "sk-secret-rag-key") && !strstr(r.err, "sk-secret-rag-key"),
            "a key was printed: %s", r.err);
  char *ps = th_slurp(th_join(out, "per_sample.csv"), NULL), *calls = th_slurp(th_join(out, "calls.jsonl"), NULL);
  cr_assert(ps && calls);
  cr_expect_str_eq(csv_cell(ps, "value", "sample", "a", "metric", "id_based_context_recall", NULL), "1");
  cr_expect_str_eq(csv_cell(ps, "value", "sample", "a", "metric", "faithfulness", NULL), "");
  cr_expect(strstr(calls, "\"status\":\"http_error\""), "%s", calls);
  cr_expect(!strstr(calls, "sk-secret-rag-key"));
  free(ps), free(calls);
  th_result again = th_rs_at(NULL, env, "rag", data, "-o", out, "--model", "m", "--base-url", stub.url, "-m", "faithfulness",
                       "--quiet", NULL);
  cr_expect_eq(again.status, 2, "an HTTP error is not cached: the re-run asks again");
  th_free(&again);
  th_free(&r);
  llm_stub_stop(&stub);
}

/* Identical requests of a run are sent once: two configurations with the
 * same response ask the same criterion question. */
Test(rag, identical_requests_sent_once, .timeout = 60)
{
  char *dir = th_fresh_dir();
  char *data = th_join(dir, "s.jsonl"), *crit = th_join(dir, "c.txt"), *out = th_join(dir, "out");
  write_file(data, "{\"cfg\":\"a\",\"id\":1,\"response\":\"same answer\"}\n{\"cfg\":\"b\",\"id\":1,\"response\":\"same answer\"}\n"
                   "{\"cfg\":\"a\",\"id\":2,\"response\":\"other\"}\n");
  write_file(crit, "Rate {response}.");
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, "{\"default\": {\"content\": \"{\\\"score\\\": 3, \\\"reason\\\": \\\"ok\\\"}\"}}", 60), 0);
  char arg[600];
  snprintf(arg, sizeof arg, "rate=%s", crit);
  th_result r = th_rs_at(NULL, NULL, "rag", data, "-o", out, "--model", "m", "--base-url", stub.url, "--criterion", arg, NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect_eq(stub_requests(&stub), 2);
  cr_expect(strstr(r.out, "requests 3: 2 sent, 1 cache hits"), "%s", r.out);
  char *ps = th_slurp(th_join(out, "per_sample.csv"), NULL);
  cr_expect_str_eq(csv_cell(ps, "value", "sample", "1", "cfg", "b", NULL), "3");
  free(ps);
  th_free(&r);
  llm_stub_stop(&stub);
}
