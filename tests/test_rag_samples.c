/* test_rag_samples.c: ragas's JSONL samples (src/formats/rag_samples.h):
 * configurations from fields and from files, the value of every field,
 * ordinals and keys, gzip, blank lines, and every error a reader can meet,
 * with its file:line and wording. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/rag_samples.h"
#include "helpers.h"

static char *write_text(const char *dir, const char *name, const char *text, size_t len)
{
  char *path = th_join(dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s", path);
  cr_assert_eq(fwrite(text, 1, len, f), len);
  fclose(f);
  return path;
}

static char *write_file(const char *dir, const char *name, const char *text)
{
  return write_text(dir, name, text, strlen(text));
}

static rs_code load1(const char *path, rs__rag_set *set, rs_error *err)
{
  const char *paths[1] = {path};
  return rs__rag_set_load(paths, 1, set, err);
}

/* The value of column name for configuration k. */
static const char *config_value(const rs__rag_set *s, size_t k, const char *name)
{
  for (size_t c = 0; c < s->n_columns; c++)
    if (strcmp(s->columns[c], name) == 0) return s->config_values[k * s->n_columns + c];
  return NULL;
}

/* Loads text as one file and expects code with every fragment in the message. */
static void expect_error(const char *text, rs_code code, const char *frag1, const char *frag2)
{
  char *dir = th_fresh_dir();
  char *path = write_file(dir, "bad.jsonl", text);
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), code, "%s\nfor: %s", err.msg, text);
  cr_assert(strstr(err.msg, "bad.jsonl:"), "%s", err.msg);
  cr_assert(strstr(err.msg, frag1), "expected \"%s\" in: %s", frag1, err.msg);
  if (frag2) cr_assert(strstr(err.msg, frag2), "expected \"%s\" in: %s", frag2, err.msg);
  cr_assert_eq(set.n, 0);
  cr_assert_null(set.s);
  cr_assert_eq(set.n_configs, 0);
}

/* --- a sweep in one file -------------------------------------------------------------- */

/* Two configurations (model x chunk) interleaved, a third field that only
 * some lines carry (reranker), numbers and booleans as values. */
static const char sweep[] =
    "{\"id\": \"q1\", \"model\": \"gpt-4o\", \"chunk\": 256, \"user_input\": \"What is RAG?\", "
    "\"response\": \"Retrieval plus generation.\", \"retrieved_contexts\": [\"RAG retrieves.\", \"It generates.\"], "
    "\"reference\": \"Retrieval-augmented generation.\", \"retrieved_context_ids\": [\"d1\", 7], "
    "\"reference_context_ids\": [7], \"latency_ms\": 812, \"cost_usd\": 0.0021, \"temperature\": 0.7, "
    "\"rerank\": true, \"tags\": [\"x\"], \"meta\": {\"a\": 1}}\n"
    "{\"id\": \"q1\", \"model\": \"mini\", \"chunk\": 512.0, \"temperature\": 0.7, \"rerank\": false, "
    "\"user_input\": \"What is RAG?\", \"response\": \"No idea.\", \"retrieved_contexts\": []}\n"
    "{\"id\": 2, \"model\": \"gpt-4o\", \"chunk\": 256, \"temperature\": 0.7, \"rerank\": true, "
    "\"user_input\": \"Q2\", \"response\": null, \"reranker\": null}\n"
    "{\"id\": 2, \"model\": \"mini\", \"chunk\": 5.12e2, \"temperature\": 0.70, \"rerank\": false, "
    "\"user_input\": \"Q2\", \"reranker\": \"none\"}\n";

Test(rag_samples, sweep_in_one_file)
{
  char *path = write_file(th_fresh_dir(), "sweep.jsonl", sweep);
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n, 4);
  cr_assert_eq(set.n_files, 1);
  cr_assert_str_eq(set.files[0], path);
  /* Columns in first-seen order; arrays and objects (tags, meta) are not
   * columns, and reranker, null on line 3, first appears on line 4. */
  cr_assert_eq(set.n_columns, 5);
  const char *cols[] = {"model", "chunk", "temperature", "rerank", "reranker"};
  for (int c = 0; c < 5; c++) cr_assert_str_eq(set.columns[c], cols[c]);
  /* Line 4 has reranker "none", line 2 none at all: mini/512 is two
   * configurations, numbered in order of first appearance. */
  cr_assert_eq(set.n_configs, 3);
  cr_assert_eq(set.s[0].config, 0);
  cr_assert_eq(set.s[1].config, 1);
  cr_assert_eq(set.s[2].config, 0);
  cr_assert_eq(set.s[3].config, 2);
  /* Numbers as values: 256 as written, 512.0 and 5.12e2 as 512, 0.70 as
   * 0.7; booleans true/false; an absent column is "". */
  cr_assert_str_eq(config_value(&set, 0, "model"), "gpt-4o");
  cr_assert_str_eq(config_value(&set, 0, "chunk"), "256");
  cr_assert_str_eq(config_value(&set, 0, "temperature"), "0.7");
  cr_assert_str_eq(config_value(&set, 0, "rerank"), "true");
  cr_assert_str_eq(config_value(&set, 0, "reranker"), "");
  cr_assert_str_eq(config_value(&set, 1, "chunk"), "512");
  cr_assert_str_eq(config_value(&set, 1, "rerank"), "false");
  cr_assert_str_eq(config_value(&set, 1, "reranker"), "");
  cr_assert_str_eq(config_value(&set, 2, "chunk"), "512");
  cr_assert_str_eq(config_value(&set, 2, "temperature"), "0.7");
  cr_assert_str_eq(config_value(&set, 2, "reranker"), "none");
  /* The fields of the first sample. */
  const rs__rag_sample *s = &set.s[0];
  cr_assert_str_eq(s->id, "q1");
  cr_assert_eq(s->line, 1);
  cr_assert_eq(s->file, 0);
  cr_assert_str_eq(s->user_input, "What is RAG?");
  cr_assert_str_eq(s->response, "Retrieval plus generation.");
  cr_assert_str_eq(s->reference, "Retrieval-augmented generation.");
  cr_assert(s->retrieved_contexts.present && s->retrieved_contexts.n == 2);
  cr_assert_str_eq(s->retrieved_contexts.v[0], "RAG retrieves.");
  cr_assert_str_eq(s->retrieved_contexts.v[1], "It generates.");
  cr_assert(!s->reference_contexts.present && s->reference_contexts.n == 0);
  /* Context ids: strings, and integers as decimal text. */
  cr_assert(s->retrieved_context_ids.present && s->retrieved_context_ids.n == 2);
  cr_assert_str_eq(s->retrieved_context_ids.v[0], "d1");
  cr_assert_str_eq(s->retrieved_context_ids.v[1], "7");
  cr_assert_str_eq(s->reference_context_ids.v[0], "7");
  cr_assert_eq(s->latency_ms, 812.0);
  cr_assert_eq(s->cost_usd, 0.0021);
  /* An empty list is present; a null string is absent. */
  cr_assert(set.s[1].retrieved_contexts.present && set.s[1].retrieved_contexts.n == 0);
  cr_assert_null(set.s[1].reference);
  cr_assert_null(set.s[2].response);
  /* An integer id is text; keys pair samples across configurations. */
  char buf[24];
  cr_assert_str_eq(set.s[2].id, "2");
  cr_assert_str_eq(rs__rag_sample_key(&set.s[3], buf), "2");
  cr_assert_str_eq(rs__rag_sample_key(&set.s[1], buf), "q1");
  cr_assert_eq(set.has_latency, 1);
  cr_assert_eq(set.has_cost, 1);
  cr_assert(isnan(set.s[1].latency_ms) && isnan(set.s[1].cost_usd));
  rs__rag_set_free(&set);
  cr_assert_null(set.s);
  rs__rag_set_free(&set); /* twice, and on an empty set: harmless */
}

/* --- a file per configuration ------------------------------------------------------------ */

Test(rag_samples, file_per_configuration)
{
  char *dir = th_fresh_dir();
  char *a = write_file(dir, "gpt-4o.jsonl", "{\"user_input\": \"a\"}\n{\"user_input\": \"b\"}\n");
  /* gzip, named .jsonl.gz: the label drops both suffixes. */
  char *b = th_join(dir, "mini.jsonl.gz");
  gzFile gz = gzopen(b, "wb");
  cr_assert_not_null(gz);
  const char *text = "{\"user_input\": \"a\", \"chunk\": 128}\n\n{\"user_input\": \"b\", \"chunk\": 128}\n";
  gzwrite(gz, text, (unsigned)strlen(text));
  gzclose(gz);
  char *c = write_file(dir, "plain.json", "{\"user_input\": \"a\"}\n");
  const char *paths[] = {a, b, c};
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(rs__rag_set_load(paths, 3, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n, 5);
  cr_assert_eq(set.n_files, 3);
  cr_assert_eq(set.n_columns, 2);
  cr_assert_str_eq(set.columns[0], "file"); /* added first */
  cr_assert_str_eq(set.columns[1], "chunk");
  cr_assert_eq(set.n_configs, 3);
  cr_assert_str_eq(config_value(&set, 0, "file"), "gpt-4o");
  cr_assert_str_eq(config_value(&set, 0, "chunk"), "");
  cr_assert_str_eq(config_value(&set, 1, "file"), "mini");
  cr_assert_str_eq(config_value(&set, 1, "chunk"), "128");
  cr_assert_str_eq(config_value(&set, 2, "file"), "plain");
  /* Without ids the key is the ordinal: sample b of mini.jsonl.gz is on
   * line 3 (after a blank line) but is its configuration's second. */
  const rs__rag_sample *s = &set.s[3];
  cr_assert_eq(s->file, 1);
  cr_assert_eq(s->line, 3);
  cr_assert_eq(s->config, 1);
  cr_assert_eq(s->ordinal, 2);
  char buf[24];
  cr_assert_str_eq(rs__rag_sample_key(s, buf), "2");
  cr_assert_str_eq(rs__rag_sample_key(&set.s[1], buf), "2");
  cr_assert_eq(set.has_latency, 0);
  cr_assert_eq(set.has_cost, 0);
  rs__rag_set_free(&set);

  /* Two files of one name would be one configuration. */
  char *d2 = th_fresh_dir();
  char *a2 = write_file(d2, "gpt-4o.jsonl.gz", "{\"user_input\": \"a\"}\n");
  const char *same[] = {a, a2};
  cr_assert_eq(rs__rag_set_load(same, 2, &set, &err), RS_USAGE);
  cr_assert(strstr(err.msg, "both name the configuration \"gpt-4o\" (column file)"), "%s", err.msg);
  /* A field named file clashes with the added column (one file: fine). */
  char *f = write_file(d2, "f.jsonl", "{\"file\": \"x\"}\n");
  const char *two[] = {a, f};
  cr_assert_eq(rs__rag_set_load(two, 2, &set, &err), RS_FORMAT);
  cr_assert(strstr(err.msg, "f.jsonl:1: a configuration field named \"file\""), "%s", err.msg);
  cr_assert_eq(load1(f, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_str_eq(set.columns[0], "file");
  rs__rag_set_free(&set);
  cr_assert_eq(rs__rag_set_load(NULL, 0, &set, &err), RS_USAGE);
}

/* --- ordinals ---------------------------------------------------------------------------- */

/* Configurations a b a b a on lines 1..5: ordinals 1 1 2 2 3.  Keys are the
 * ordinals, so line 5 pairs with nothing and lines 3 and 4 pair. */
Test(rag_samples, ordinals_count_within_a_configuration)
{
  char *path = write_file(th_fresh_dir(), "o.jsonl",
                          "{\"m\": \"a\"}\n{\"m\": \"b\"}\n{\"m\": \"a\"}\n{\"m\": \"b\"}\n{\"m\": \"a\"}\n");
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  const uint32_t config[] = {0, 1, 0, 1, 0}, ordinal[] = {1, 1, 2, 2, 3};
  for (int i = 0; i < 5; i++) {
    cr_assert_eq(set.s[i].config, config[i], "line %d", i + 1);
    cr_assert_eq(set.s[i].ordinal, ordinal[i], "line %d", i + 1);
    cr_assert_null(set.s[i].id);
  }
  rs__rag_set_free(&set);
}

/* --- blank lines, CRLF, byte order mark --------------------------------------------------- */

Test(rag_samples, blank_lines_crlf_and_bom)
{
  const char text[] = "\xEF\xBB\xBF{\"id\": \"a\"}\r\n\r\n   \n\t\n{\"id\": \"b\"}\n\n";
  char *path = write_text(th_fresh_dir(), "b.jsonl", text, sizeof text - 1);
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n, 2);
  cr_assert_eq(set.s[0].line, 1);
  cr_assert_eq(set.s[1].line, 5); /* blank lines are counted */
  cr_assert_eq(set.s[1].ordinal, 2);
  cr_assert_eq(set.n_configs, 1);
  cr_assert_eq(set.n_columns, 0);
  rs__rag_set_free(&set);
  /* A file of blank lines holds no sample. */
  expect_error("\n  \n", RS_FORMAT, "bad.jsonl: no samples", NULL);
  expect_error("", RS_FORMAT, "bad.jsonl: no samples", NULL);
}

/* --- long lines ------------------------------------------------------------------------------ */

/* Contexts are kilobytes each: a 3 MiB line (more than one read block)
 * reads whole. */
Test(rag_samples, long_line)
{
  const size_t ctx = 3u << 20;
  char *text = malloc(ctx + 64);
  cr_assert_not_null(text);
  size_t n = (size_t)sprintf(text, "{\"retrieved_contexts\": [\"");
  memset(text + n, 'x', ctx);
  n += ctx;
  n += (size_t)sprintf(text + n, "\"]}\n{}\n");
  char *path = write_text(th_fresh_dir(), "long.jsonl", text, n);
  free(text);
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n, 2);
  cr_assert_eq(strlen(set.s[0].retrieved_contexts.v[0]), ctx);
  cr_assert_eq(set.s[1].line, 2);
  rs__rag_set_free(&set);
}

/* --- latency and cost -------------------------------------------------------------------------- */

Test(rag_samples, latency_and_cost)
{
  char *path = write_file(th_fresh_dir(), "l.jsonl",
                          "{\"latency_ms\": 120.5}\n{\"latency_ms\": null, \"cost_usd\": 0}\n{}\n");
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.has_latency, 1);
  cr_assert_eq(set.has_cost, 1);
  cr_assert_eq(set.s[0].latency_ms, 120.5);
  cr_assert(isnan(set.s[0].cost_usd));
  cr_assert(isnan(set.s[1].latency_ms)); /* null is absent */
  cr_assert_eq(set.s[1].cost_usd, 0.0);
  cr_assert(isnan(set.s[2].latency_ms) && isnan(set.s[2].cost_usd));
  rs__rag_set_free(&set);
  /* Only nulls: the field is absent everywhere. */
  path = write_file(th_fresh_dir(), "n.jsonl", "{\"latency_ms\": null}\n");
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.has_latency, 0);
  cr_assert_eq(set.has_cost, 0);
  rs__rag_set_free(&set);
}

/* --- fields that are not configurations ------------------------------------------------------- */

/* ragas's test-set generator writes per-sample descriptors; as columns they
 * would make each sample a configuration. */
Test(rag_samples, ragas_per_sample_fields_are_not_columns)
{
  char *path = write_file(th_fresh_dir(), "t.jsonl",
                          "{\"user_input\": \"a\", \"synthesizer_name\": \"single_hop\", \"persona_name\": \"Ann\", "
                          "\"query_style\": \"FORMAL\", \"query_length\": \"SHORT\", \"model\": \"m\"}\n"
                          "{\"user_input\": \"b\", \"synthesizer_name\": \"multi_hop\", \"persona_name\": \"Bob\", "
                          "\"query_style\": \"WEB\", \"query_length\": \"LONG\", \"model\": \"m\", "
                          "\"multi_responses\": [\"x\"], \"rubrics\": {\"1\": \"bad\"}}\n");
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n_columns, 1);
  cr_assert_str_eq(set.columns[0], "model");
  cr_assert_eq(set.n_configs, 1);
  rs__rag_set_free(&set);
}

/* --- errors --------------------------------------------------------------------------------- */

/* Every known field with a value of the wrong type: file:line, the field,
 * what was expected and what was found. */
Test(rag_samples, every_known_field_with_a_wrong_type)
{
  static const struct {
    const char *line, *frag1, *frag2;
  } cases[] = {
      {"{\"user_input\": 3}", ":2: \"user_input\": expected a string", "found number 3"},
      {"{\"response\": [\"a\"]}", ":2: \"response\": expected a string", "found array"},
      {"{\"reference\": true}", ":2: \"reference\": expected a string", "found boolean true"},
      {"{\"retrieved_contexts\": \"one\"}", ":2: \"retrieved_contexts\": expected an array of strings",
       "found string \"one\""},
      {"{\"retrieved_contexts\": [\"a\", 2]}", ":2: \"retrieved_contexts\"[1]: expected a string", "found number 2"},
      {"{\"reference_contexts\": {}}", ":2: \"reference_contexts\": expected an array of strings", "found object"},
      {"{\"reference_contexts\": [null]}", ":2: \"reference_contexts\"[0]: expected a string", "found null"},
      {"{\"retrieved_context_ids\": 5}", ":2: \"retrieved_context_ids\": expected an array of ids", "found number 5"},
      {"{\"retrieved_context_ids\": [\"d1\", 2.5]}", ":2: \"retrieved_context_ids\"[1]: expected a string or an integer",
       "found number 2.5"},
      {"{\"reference_context_ids\": [[1]]}", ":2: \"reference_context_ids\"[0]: expected a string or an integer",
       "found array"},
      {"{\"reference_context_ids\": [\"\"]}", ":2: \"reference_context_ids\"[0]: expected a non-empty string",
       "found string \"\""},
      {"{\"id\": 1.5}", ":2: \"id\": expected a string or an integer", "found number 1.5"},
      {"{\"id\": \"\"}", ":2: \"id\": expected a non-empty string or an integer", NULL},
      {"{\"id\": 99999999999999999999}", ":2: \"id\": expected an integer within 64 bits", "as strings"},
      {"{\"id\": \"a\\u0000b\"}", ":2: \"id\": expected text without NUL characters", NULL},
      {"{\"latency_ms\": \"fast\"}", ":2: \"latency_ms\": expected a finite number >= 0", "found string \"fast\""},
      {"{\"latency_ms\": -1}", ":2: \"latency_ms\": expected a finite number >= 0", "found number -1"},
      {"{\"cost_usd\": false}", ":2: \"cost_usd\": expected a finite number >= 0", "found boolean false"},
      {"{\"cost_usd\": 1e999}", ":2: \"cost_usd\": expected a finite number >= 0", NULL},
      {"{\"model\": 1e999}", ":2: \"model\": expected a finite number", NULL},
      {"{\"model\": -99999999999999999999}", ":2: \"model\": expected an integer within 64 bits", NULL},
      {"{\"model\": \"a\\u0000\"}", ":2: \"model\": expected text without NUL characters", NULL},
      {"{\"user_input\": \"a\\u0000\"}", ":2: \"user_input\": expected text without NUL characters", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[256];
    snprintf(text, sizeof text, "{\"user_input\": \"fine\"}\n%s\n", cases[i].line);
    expect_error(text, RS_FORMAT, cases[i].frag1, cases[i].frag2);
  }
}

/* Not a JSON object per line, a repeated key, a key with NUL. */
Test(rag_samples, malformed_lines)
{
  expect_error("{}\n{\"a\": }\n", RS_FORMAT, "bad.jsonl:2:7: not valid JSON", NULL);
  expect_error("[1, 2]\n", RS_FORMAT, "bad.jsonl:1: expected a JSON object, found array", NULL);
  expect_error("{\"a\": 1} x\n", RS_FORMAT, "bad.jsonl:1:10: unexpected data after the JSON object", NULL);
  expect_error("{\"a\": [1,\n2]}\n", RS_FORMAT, "bad.jsonl:1: not valid JSON: the line ends inside a value", NULL);
  expect_error("{\"model\": \"a\", \"model\": \"b\"}\n", RS_FORMAT, "bad.jsonl:1: key \"model\" appears twice", NULL);
  expect_error("{\"model\": \"a\", \"model\\u0000x\": \"b\"}\n", RS_FORMAT,
               "bad.jsonl:1: key \"model\\u0000x\" contains a NUL character", NULL);
}

/* Output columns are UTF-8: a byte that is not is an error at its column. */
Test(rag_samples, not_utf8)
{
  expect_error("{\"model\": \"ok\"}\n{\"model\": \"caf\xE9\"}\n", RS_FORMAT,
               "bad.jsonl:2:15: expected UTF-8 text, found byte 0xe9", NULL);
  expect_error("{\"user_input\": \"\xC0\xAF\"}\n", RS_FORMAT, "bad.jsonl:1:17: expected UTF-8", "0xc0");
  expect_error("{\"user_input\": \"\xED\xA0\x80\"}\n", RS_FORMAT, "bad.jsonl:1:17: expected UTF-8", "0xed");
  /* Valid multi-byte text and an escaped lone surrogate (json-c makes it
   * U+FFFD) load. */
  char *path = write_file(th_fresh_dir(), "u.jsonl",
                          "{\"model\": \"caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\", \"user_input\": \"\\ud800\"}\n");
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_str_eq(set.config_values[0], "caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80");
  cr_assert_str_eq(set.s[0].user_input, "\xEF\xBF\xBD");
  rs__rag_set_free(&set);
}

/* A configuration field named like one of rag's output columns. */
Test(rag_samples, configuration_field_named_like_an_output_column)
{
  expect_error("{\"model\": \"a\"}\n{\"metric\": \"x\"}\n", RS_FORMAT,
               "bad.jsonl:2: a configuration field named \"metric\"", "rename the field");
  expect_error("{\"n\": 3}\n", RS_FORMAT, "bad.jsonl:1: a configuration field named \"n\"", NULL);
  expect_error("{\"cost_usd_sum\": 3}\n", RS_FORMAT, "a configuration field named \"cost_usd_sum\"", NULL);
  /* columns of latency.csv and latency_hist.csv, and aggregate.csv's undefined */
  expect_error("{\"le_ms\": 3}\n", RS_FORMAT, "a configuration field named \"le_ms\"", NULL);
  expect_error("{\"undefined\": 3}\n", RS_FORMAT, "a configuration field named \"undefined\"", NULL);
  /* A null or an array under such a name is no configuration field. */
  char *path = write_file(th_fresh_dir(), "ok.jsonl", "{\"metric\": null, \"value\": [1]}\n");
  rs__rag_set set;
  rs_error err = {0};
  cr_assert_eq(load1(path, &set, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(set.n_columns, 0);
  rs__rag_set_free(&set);
}

/* An id repeated within a configuration names both lines; across
 * configurations it is what pairs them. */
Test(rag_samples, duplicate_id_in_a_configuration)
{
  expect_error("{\"id\": \"q1\", \"model\": \"a\"}\n{\"id\": \"q1\", \"model\": \"b\"}\n"
               "{\"id\": \"q2\", \"model\": \"a\"}\n{\"id\": \"q1\", \"model\": \"a\"}\n",
               RS_DUPLICATE, "bad.jsonl:4: sample \"q1\" (its id) repeats line 1 in configuration 1 (model=a)",
               "expected each id once per configuration");
  /* 7 and "7" are one id. */
  expect_error("{\"id\": 7}\n{\"id\": \"7\"}\n", RS_DUPLICATE, "bad.jsonl:2: sample \"7\" (its id) repeats line 1",
               NULL);
  /* An id that equals another sample's position collides with it too:
   * line 2 has no id and is the configuration's second sample. */
  expect_error("{\"id\": \"2\"}\n{}\n", RS_DUPLICATE,
               "bad.jsonl:2: sample \"2\" (its position, as it has no id) repeats line 1", NULL);
}
