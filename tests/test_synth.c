/* test_synth.c: `ragsweep synth` end to end against the scripted stub
 * (tests/llm_stub.py): exact outputs for scripted replies, failures,
 * near-duplicates, the cache, the dry run and bad input; `import --json`
 * on the result.  Also the pieces on their own: the JSON object in a
 * model's text (wire.h's rs__reply_obj), the near-duplicate rule and the seeded draw,
 * whose expected values come from an independent Python rendering of the
 * README's definition (SplitMix64, rejection, partial Fisher-Yates). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/rag_samples.h"
#include "helpers.h"
#include "llm/synth.h"
#include "llm/wire.h"
#include "llm_helpers.h"

/* ---- helpers ------------------------------------------------------------------- */

/* Seven documents with text and one blank one (d3), which is never drawn.
 * Each text carries a marker word the stub's rules match on. */
static const char docs_tsv[] =
    "d1\tALPHADOC Alpha is a protocol for moving files between hosts.\n"
    "d2\tBETADOC To reset a beta router, hold its reset button for ten seconds.\n"
    "d3\t   \n"
    "d4\tGAMMADOC Gamma fails with error 28 when the disk is full; free some space and retry.\n"
    "d5\tDELTADOC Delta compresses faster than Epsilon, and Epsilon compresses smaller.\n"
    "d6\tEPSILONDOC Epsilon is a compression format.\n"
    "d7\tZETADOC Zeta is a file transfer protocol for hosts.\n"
    "d8\tETADOC Eta is a text editor.\n";

static char *synth_dir(void)
{
  char *dir = th_fresh_dir();
  FILE *f = fopen(th_join(dir, "docs.tsv"), "w");
  cr_assert(f);
  fputs(docs_tsv, f);
  fclose(f);
  return dir;
}

/* Runs "ragsweep synth --docs DIR/docs.tsv --model m --base-url URL ARGS..." */
static th_result synth(const char *dir, const llm_stub *stub, ...)
{
  char *argv[64];
  int n = 0;
  argv[n++] = (char *)th_bin();
  argv[n++] = "synth";
  argv[n++] = "--docs";
  argv[n++] = th_join(dir, "docs.tsv");
  argv[n++] = "--model";
  argv[n++] = "m";
  argv[n++] = "--base-url";
  argv[n++] = (char *)stub->url;
  va_list ap;
  va_start(ap, stub);
  char *a;
  while ((a = va_arg(ap, char *)) && n < 63) argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  return th_run(NULL, argv, NULL, NULL);
}

static size_t requests_logged(const llm_stub *stub)
{
  json_object *log = llm_stub_log(stub);
  const size_t n = json_object_array_length(log);
  json_object_put(log);
  return n;
}

/* The relevant doc of each query of an eval set, in file order, joined by ','. */
static char *drawn_docs(const char *evalset_path)
{
  json_object *root = json_object_from_file(evalset_path), *qs = NULL;
  cr_assert(root && json_object_object_get_ex(root, "queries", &qs), "%s", evalset_path);
  static char buf[256];
  buf[0] = '\0';
  for (size_t i = 0; i < json_object_array_length(qs); i++) {
    json_object *rel = NULL;
    cr_assert(json_object_object_get_ex(json_object_array_get_idx(qs, i), "relevant_doc_ids", &rel));
    if (i) strcat(buf, ",");
    strcat(buf, json_object_get_string(json_object_array_get_idx(rel, 0)));
  }
  json_object_put(root);
  return buf;
}

/* ---- the JSON object in a model's text (wire.h, shared with rag) --------------------- */

/* The object found in text, as its "k" member ("" when there is none, "?"
 * when it has no string "k"). */
static void expect_object(const char *text, const char *want_k)
{
  rs__reply_obj *o = rs__reply_obj_parse(text);
  char *k = o ? rs__reply_obj_string(o, "k") : NULL;
  const char *got = !o ? "" : k ? k : "?";
  cr_expect_str_eq(got, want_k, "in '%s'", text);
  free(k);
  rs__reply_obj_free(o);
}

Test(synth, json_object_in_reply)
{
  expect_object("{\"k\": \"plain\"}", "plain");
  expect_object("```json\n{\"k\": \"fenced\"}\n```", "fenced");
  expect_object("Sure! Here it is: {\"k\": \"nested\", \"b\": [1, {\"c\": 2}]} Hope it helps {really}.", "nested");
  /* braces and escaped quotes inside strings do not count */
  expect_object("{\"k\": \"what is } or \\\" {?\"}", "what is } or \" {?");
  /* a stray brace in prose before the object; an unbalanced one */
  expect_object("use {x} like {\"k\": \"after\"}", "after");
  expect_object("a { b {\"k\": \"inner\"}", "inner");
  /* not JSON under json-c's strict mode: a trailing comma, a bare word */
  expect_object("{\"k\": \"v\",}", "");
  expect_object("{\"k\": yes}", "");
  /* no object at all */
  expect_object("[\"k\"]", "");
  expect_object("I cannot answer.", "");
  expect_object("", "");
  expect_object("{\"k\": \"unterminated}", "");
  /* the first of two; members of other types are not strings */
  expect_object("{\"k\": \"one\"} {\"k\": \"two\"}", "one");
  expect_object("{\"k\": 3}", "?");
  expect_object("{\"k\": null}", "?");
  expect_object("{\"q\": \"v\"}", "?");
  expect_object("{\"k\": \"Qu\\u00e9?\"}", "Qu\xc3\xa9?");
}

/* ---- the near-duplicate rule ------------------------------------------------------- */

Test(synth, near_duplicate_rule)
{
  /* identical word sets: case, punctuation and repeats do not count (J = 1) */
  cr_expect_eq(rs__synth_near_duplicate("What is Zeta?", "what is zeta is ZETA"), 1);
  /* {which protocol moves files between hosts} vs the same + {two}: 6/7 = 0.857 */
  cr_expect_eq(rs__synth_near_duplicate("Which protocol moves files between hosts?",
                                        "Which protocol moves files between two hosts?"),
               1);
  /* exactly 0.8: {a b c d} vs {a b c d e}: 4/5 */
  cr_expect_eq(rs__synth_near_duplicate("a b c d", "a b c d e"), 1);
  /* 0.75: {what is zeta} vs {what exactly is zeta}: 3/4 */
  cr_expect_eq(rs__synth_near_duplicate("What is Zeta?", "What exactly is Zeta?"), 0);
  /* 0.6: {a b c d} vs {a b c e}: 3/5 */
  cr_expect_eq(rs__synth_near_duplicate("a b c d", "a b c e"), 0);
  /* tokens: letters and digits; bytes >= 0x80 belong to words (UTF-8 stays whole);
   * "error-28" is two words, "error28" one */
  cr_expect_eq(rs__synth_near_duplicate("error-28", "28 error"), 1);
  cr_expect_eq(rs__synth_near_duplicate("error28", "28 error"), 0);
  cr_expect_eq(rs__synth_near_duplicate("caf\xc3\xa9 cr\xc3\xa8me", "cr\xc3\xa8me, caf\xc3\xa9!"), 1);
  cr_expect_eq(rs__synth_near_duplicate("caf\xc3\xa9", "caf"), 0);
  /* no words at all: two empty sets are equal */
  cr_expect_eq(rs__synth_near_duplicate("???", "!"), 1);
  cr_expect_eq(rs__synth_near_duplicate("???", "why"), 0);
}

/* ---- the draw ------------------------------------------------------------------------ */

static void expect_draw(uint64_t seed, size_t n_all, size_t n, const size_t *want)
{
  size_t *a = malloc(n_all * sizeof *a);
  for (size_t i = 0; i < n_all; i++) a[i] = i;
  rs__synth_draw(seed, a, n_all, n);
  for (size_t i = 0; i < n; i++) cr_expect_eq(a[i], want[i], "seed %llu, %zu of %zu: position %zu: %zu, expected %zu",
                                             (unsigned long long)seed, n, n_all, i, a[i], want[i]);
  free(a);
}

Test(synth, draw_is_seeded)
{
  /* From a Python rendering of the README's definition (whose SplitMix64
   * gives 0xe220a8397b1dcdaf first from seed 0, the published value). */
  expect_draw(42, 10, 10, (const size_t[]){3, 2, 4, 5, 8, 7, 0, 9, 6, 1});
  expect_draw(42, 8, 5, (const size_t[]){5, 6, 2, 7, 1});
  expect_draw(7, 8, 5, (const size_t[]){7, 4, 2, 6, 3});
  expect_draw(0, 1000000, 5, (const size_t[]){607535, 838189, 535095, 859772, 292583});
  expect_draw(42, 7, 7, (const size_t[]){5, 2, 0, 3, 1, 4, 6});
  expect_draw(42, 1, 1, (const size_t[]){0});
}

/* ---- end to end ------------------------------------------------------------------------ */

/* Seed 42 draws d7, d4, d1, d5, d2 (draw_is_seeded: 5, 2, 0, 3, 1 of the 7
 * documents with text), with the types definition, how-to, troubleshooting,
 * comparison, definition.  d7 answers in a fence; d4 without JSON
 * (unparsed); d1 with a near-duplicate of d7's question (6/7 of the words);
 * d5 with quotes and non-ASCII text; d2 with a blank answer (empty). */
static const char e2e_script[] =
    "{\"rules\": ["
    "{\"match\": \"ZETADOC\", \"behaviour\": {\"content\": \"```json\\n{\\\"question\\\": \\\"Which protocol moves files "
    "between hosts?\\\", \\\"answer\\\": \\\"Zeta, a file transfer protocol.\\\"}\\n```\"}},"
    "{\"match\": \"GAMMADOC\", \"behaviour\": {\"content\": \"I cannot write a question for this.\"}},"
    "{\"match\": \"ALPHADOC\", \"behaviour\": {\"content\": \"Here you go: {\\\"question\\\": \\\"Which protocol moves "
    "files between two hosts?\\\", \\\"answer\\\": \\\"Alpha.\\\"}\"}},"
    "{\"match\": \"DELTADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"How does \\\\\\\"Delta\\\\\\\" "
    "differ from Epsilon?\\\", \\\"answer\\\": \\\"Delta is faster; Epsilon\\u2019s output is smaller.\\\"}\"}},"
    "{\"match\": \"BETADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"How do I reset a beta router?\\\", "
    "\\\"answer\\\": \\\"  \\\"}\"}}"
    "], \"default\": {\"content\": \"unexpected document\"}}";

static const char e2e_evalset[] =
    "{\"queries\":[\n"
    "{\"id\":\"synth-0001\",\"query\":\"Which protocol moves files between hosts?\",\"relevant_doc_ids\":[\"d7\"],"
    "\"graded_relevance\":{\"d7\":2},\"question_type\":\"definition\"},\n"
    "{\"id\":\"synth-0004\",\"query\":\"How does \\\"Delta\\\" differ from Epsilon?\",\"relevant_doc_ids\":[\"d5\"],"
    "\"graded_relevance\":{\"d5\":2},\"question_type\":\"comparison\"}\n"
    "]}\n";

static const char e2e_jsonl[] =
    "{\"id\":\"synth-0001\",\"user_input\":\"Which protocol moves files between hosts?\",\"reference\":\"Zeta, a file "
    "transfer protocol.\",\"reference_contexts\":[\"ZETADOC Zeta is a file transfer protocol for hosts.\"],"
    "\"reference_context_ids\":[\"d7\"]}\n"
    "{\"id\":\"synth-0004\",\"user_input\":\"How does \\\"Delta\\\" differ from Epsilon?\",\"reference\":\"Delta is "
    "faster; Epsilon\xe2\x80\x99s output is smaller.\",\"reference_contexts\":[\"DELTADOC Delta compresses faster than "
    "Epsilon, and Epsilon compresses smaller.\"],\"reference_context_ids\":[\"d5\"]}\n";

Test(synth, end_to_end, .timeout = 60)
{
  char *dir = synth_dir();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, e2e_script, 60), 0);
  const char *out = th_join(th_join(dir, "set"), "evalset.json");
  const char *jsonl = th_join(th_join(dir, "set"), "evalset.jsonl");

  /* 2 failures of 5 are more than the default 1%: exit 2, outputs written */
  th_result r = synth(dir, &stub, "-n", "5", "-o", out, NULL);
  cr_expect_eq(r.status, 2, "%s%s", r.out, r.err);
  cr_expect(strstr(r.err, "2 of 5 documents (40.00%) gave no question and answer") != NULL, "%s", r.err);
  cr_expect(strstr(r.err, "first failure: document 'd4' (synth-0002, how-to): unparsed: no JSON object") &&
                strstr(r.err, "'I cannot write a question for this.'"),
            "%s", r.err);
  cr_expect(strstr(r.out, "5 documents drawn (seed 42) of 7 with text") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "requests 5: 5 sent, 0 cache hits") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "failures 2 (1 unparsed, 1 empty, 0 truncated, 0 bad replies, 0 HTTP errors)") != NULL, "%s",
            r.out);
  cr_expect(strstr(r.out, "duplicates dropped 1") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "written 2 questions") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "tokens 50 prompt + 5 completion") != NULL, "the stub reports 10 + 1 a reply: %s", r.out);
  th_free(&r);
  char *ev = th_slurp(out, NULL), *jl = th_slurp(jsonl, NULL);
  cr_assert(ev && jl);
  cr_expect_str_eq(ev, e2e_evalset);
  cr_expect_str_eq(jl, e2e_jsonl);

  /* the requests: system prompt, temperature 0, the types in turn over the draw */
  json_object *log = llm_stub_log(&stub);
  cr_assert_eq(json_object_array_length(log), 5);
  static const char *const marker[] = {"ZETADOC", "GAMMADOC", "ALPHADOC", "DELTADOC", "BETADOC"};
  static const char *const type[] = {"definition", "how-to", "troubleshooting", "comparison", "definition"};
  int seen[5] = {0};
  for (size_t i = 0; i < 5; i++) {
    json_object *body = NULL, *msgs = NULL;
    json_object_object_get_ex(json_object_array_get_idx(log, i), "body", &body);
    cr_assert(json_object_object_get_ex(body, "messages", &msgs) && json_object_array_length(msgs) == 2);
    cr_expect_str_eq(llm_str(body, "model"), "m");
    cr_expect_eq(llm_num(body, "temperature"), 0.0);
    cr_expect_str_eq(llm_str(json_object_array_get_idx(msgs, 0), "role"), "system");
    cr_expect(strstr(llm_str(json_object_array_get_idx(msgs, 0), "content"), "You reply with one JSON object"));
    const char *user = llm_str(json_object_array_get_idx(msgs, 1), "content");
    for (size_t k = 0; k < 5; k++) {
      if (!strstr(user, marker[k])) continue;
      char want[64];
      snprintf(want, sizeof want, "Write one %s question", type[k]);
      cr_expect(strstr(user, want) != NULL, "%s: %s", marker[k], user);
      seen[k]++;
    }
  }
  json_object_put(log);
  for (size_t k = 0; k < 5; k++) cr_expect_eq(seen[k], 1, "%s asked %d times", marker[k], seen[k]);

  /* allowed failures, from the cache: nothing sent, the same bytes */
  r = synth(dir, &stub, "-n", "5", "-o", out, "--max-failures", "40%", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "requests 5: 0 sent, 5 cache hits") != NULL, "%s", r.out);
  th_free(&r);
  cr_expect_eq(requests_logged(&stub), 5, "a second run sends nothing");
  char *ev2 = th_slurp(out, NULL), *jl2 = th_slurp(jsonl, NULL);
  cr_expect_str_eq(ev2, ev);
  cr_expect_str_eq(jl2, jl);
  free(ev2), free(jl2), free(ev), free(jl);

  /* import --json takes the eval set; export gives its qrels back at grade 2 */
  char *imp[] = {(char *)th_bin(), "import", "--json", (char *)out, "-o", th_join(dir, "corpus.h5"), NULL};
  r = th_run(NULL, imp, NULL, NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *exp[] = {(char *)th_bin(), "export", th_join(dir, "corpus.h5"), "-o", th_join(dir, "exported"), NULL};
  r = th_run(NULL, exp, NULL, NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *qrels = th_slurp(th_join(th_join(dir, "exported"), "qrels.txt"), NULL);
  cr_expect_str_eq(qrels, "synth-0001 0 d7 2\nsynth-0004 0 d5 2\n");
  free(qrels);

  /* rag's loader reads the JSONL as samples with no configuration column */
  rs__rag_set set;
  rs_error err;
  cr_assert_eq(rs__rag_set_load((const char *const[]){jsonl}, 1, &set, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(set.n, 2);
  cr_expect_eq(set.n_columns, 0);
  cr_expect_eq(set.n_configs, 1);
  cr_expect_str_eq(set.s[1].id, "synth-0004");
  cr_expect_str_eq(set.s[1].user_input, "How does \"Delta\" differ from Epsilon?");
  cr_expect_str_eq(set.s[1].reference, "Delta is faster; Epsilon\xe2\x80\x99s output is smaller.");
  cr_expect(set.s[1].reference_contexts.n == 1 && set.s[1].reference_context_ids.n == 1);
  cr_expect_str_eq(set.s[1].reference_context_ids.v[0], "d5");
  cr_expect_null(set.s[1].response);
  rs__rag_set_free(&set);

  /* --jsonl elsewhere; no temporary file is left beside either output */
  const char *other = th_join(dir, "samples.jsonl");
  r = synth(dir, &stub, "-n", "5", "-o", out, "--jsonl", other, "--max-failures", "40%", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  char *jl3 = th_slurp(other, NULL);
  cr_expect_str_eq(jl3, e2e_jsonl);
  free(jl3);
  char *ls[] = {"/bin/ls", "-A", th_join(dir, "set"), dir, NULL};
  r = th_run(NULL, ls, NULL, NULL);
  cr_expect(!strstr(r.out, ".tmp."), "%s", r.out);
  th_free(&r);
  llm_stub_stop(&stub);
}

/* Every document answers with a question of its own. */
static const char all_docs_script[] =
    "{\"rules\": ["
    "{\"match\": \"ALPHADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"What is Alpha?\\\", \\\"answer\\\": \\\"A protocol.\\\"}\"}},"
    "{\"match\": \"BETADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"How do I reset a beta router?\\\", \\\"answer\\\": \\\"Hold reset.\\\"}\"}},"
    "{\"match\": \"GAMMADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"Why does Gamma fail with error 28?\\\", \\\"answer\\\": \\\"The disk is full.\\\"}\"}},"
    "{\"match\": \"DELTADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"Delta or Epsilon for speed?\\\", \\\"answer\\\": \\\"Delta.\\\"}\"}},"
    "{\"match\": \"EPSILONDOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"What kind of format is Epsilon?\\\", \\\"answer\\\": \\\"Compression.\\\"}\"}},"
    "{\"match\": \"ZETADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"Which protocol transfers files?\\\", \\\"answer\\\": \\\"Zeta.\\\"}\"}},"
    "{\"match\": \"ETADOC\", \"behaviour\": {\"content\": \"{\\\"question\\\": \\\"What is Eta?\\\", \\\"answer\\\": \\\"An editor.\\\"}\"}}"
    "]}";

/* The same seed draws the same documents (the order the Python reference
 * gives), another seed others; each output folder has its own cache. */
Test(synth, same_seed_same_draw, .timeout = 60)
{
  char *dir = synth_dir();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, all_docs_script, 60), 0);
  const char *a = th_join(th_join(dir, "a"), "set.json"), *b = th_join(th_join(dir, "b"), "set.json");
  const char *c = th_join(th_join(dir, "c"), "set.json");
  th_result r = synth(dir, &stub, "-n", "5", "-o", a, NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  r = synth(dir, &stub, "-n", "5", "-o", b, "--seed", "42", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "5 sent, 0 cache hits") != NULL, "a fresh cache: %s", r.out);
  th_free(&r);
  r = synth(dir, &stub, "-n", "5", "-o", c, "--seed", "7", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  cr_expect_str_eq(drawn_docs(a), "d7,d4,d1,d5,d2");
  cr_expect_str_eq(drawn_docs(c), "d4,d2,d5,d8,d7");
  char *ta = th_slurp(a, NULL), *tb = th_slurp(b, NULL), *tc = th_slurp(c, NULL);
  cr_expect_str_eq(ta, tb);
  cr_expect_str_neq(ta, tc);
  char *ja = th_slurp(th_join(th_join(dir, "a"), "set.jsonl"), NULL);
  char *jb = th_slurp(th_join(th_join(dir, "b"), "set.jsonl"), NULL);
  cr_expect(ja && jb && strcmp(ja, jb) == 0);
  free(ta), free(tb), free(tc), free(ja), free(jb);
  cr_expect_eq(requests_logged(&stub), 15);
  llm_stub_stop(&stub);
}

/* --types and --max-doc-chars reach the prompt. */
Test(synth, types_and_cut, .timeout = 60)
{
  char *dir = synth_dir();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, "{\"default\": {\"content\": \"{\\\"question\\\": \\\"Q?\\\", \\\"answer\\\": \\\"A.\\\"}\"}}", 60), 0);
  const char *out = th_join(dir, "set.json");
  th_result r = synth(dir, &stub, "-n", "2", "-o", out, "--types", "comparison,how-to", "--max-doc-chars", "8",
                      "--temperature", "0.5", "--max-tokens", "300", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "duplicates dropped 1") && strstr(r.out, "written 1 questions"), "the same question twice: %s",
            r.out);
  cr_expect(strstr(r.out, "2 documents cut to 8 characters") != NULL, "%s", r.out);
  th_free(&r);
  json_object *log = llm_stub_log(&stub);
  cr_assert_eq(json_object_array_length(log), 2);
  int comparison = 0, how_to = 0;
  for (size_t i = 0; i < 2; i++) {
    json_object *body = NULL, *msgs = NULL;
    json_object_object_get_ex(json_object_array_get_idx(log, i), "body", &body);
    json_object_object_get_ex(body, "messages", &msgs);
    cr_expect_eq(llm_num(body, "temperature"), 0.5);
    cr_expect_eq(llm_num(body, "max_tokens"), 300);
    const char *user = llm_str(json_object_array_get_idx(msgs, 1), "content");
    /* d7 then d4: "ZETADOC " and "GAMMADOC" are their first 8 characters */
    if (strstr(user, "Document:\nZETADOC \n\nReply with only")) comparison += !!strstr(user, "Write one comparison question");
    if (strstr(user, "Document:\nGAMMADOC\n\nReply with only")) how_to += !!strstr(user, "Write one how-to question");
  }
  json_object_put(log);
  cr_expect(comparison == 1 && how_to == 1, "comparison %d, how-to %d", comparison, how_to);
  char *ev = th_slurp(out, NULL);
  cr_expect_str_eq(ev, "{\"queries\":[\n{\"id\":\"synth-0001\",\"query\":\"Q?\",\"relevant_doc_ids\":[\"d7\"],"
                       "\"graded_relevance\":{\"d7\":2},\"question_type\":\"comparison\"}\n]}\n");
  free(ev);
  llm_stub_stop(&stub);
}

/* The dry run sends nothing and creates nothing, and estimates what the
 * real run sends. */
Test(synth, dry_run, .timeout = 60)
{
  char *dir = synth_dir();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, all_docs_script, 60), 0);
  const char *folder = th_join(dir, "new");
  const char *out = th_join(folder, "set.json");
  th_result r = synth(dir, &stub, "-n", "3", "-o", out, "--dry-run", "--price-in", "1000000", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "3 documents drawn (seed 42) of 7 with text") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "requests 3: 0 cached, 3 to send") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "+ 360 completion") != NULL, "120 completion tokens a request: %s", r.out);
  const char *p = strstr(r.out, "estimated tokens to send: ");
  cr_assert(p);
  const long est_prompt = strtol(p + strlen("estimated tokens to send: "), NULL, 10);
  char cost[64];
  snprintf(cost, sizeof cost, "estimated cost: $%ld.0000", est_prompt);
  cr_expect(strstr(r.out, cost) != NULL, "$1 a prompt token: %s", r.out);
  th_free(&r);
  cr_expect_eq(requests_logged(&stub), 0, "a dry run sends nothing");
  cr_expect(!th_exists(folder), "a dry run creates nothing, not even the folder");

  r = synth(dir, &stub, "-n", "3", "-o", out, NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  /* the estimate: 4 bytes a token + 8 per request, over the bodies sent */
  json_object *log = llm_stub_log(&stub);
  long want = 0;
  for (size_t i = 0; i < json_object_array_length(log); i++)
    want += ((long)strlen(llm_str(json_object_array_get_idx(log, i), "raw")) + 3) / 4 + 8;
  json_object_put(log);
  cr_expect_eq(est_prompt, want);
  r = synth(dir, &stub, "-n", "3", "-o", out, "--dry-run", NULL);
  cr_expect(strstr(r.out, "requests 3: 3 cached, 0 to send") != NULL, "%s", r.out);
  th_free(&r);
  cr_expect_eq(requests_logged(&stub), 3);
  llm_stub_stop(&stub);
}

Test(synth, bad_input, .timeout = 60)
{
  char *dir = synth_dir();
  llm_stub stub;
  cr_assert_eq(llm_stub_start(&stub, all_docs_script, 60), 0);
  const char *folder = th_join(dir, "new");
  const char *out = th_join(folder, "set.json");
  static const struct {
    const char *args, *message;
    int status;
  } cases[] = {
      {"-n 0", "-n: expected an integer >= 1, found '0'", 1},
      {"-n three", "-n: expected an integer >= 1, found 'three'", 1},
      {"-n -2", "-n: expected an integer >= 1, found '-2'", 1},
      {"-n 8", "-n 8: ", 1},
      {"-n 2 --types definition,,how-to", "--types: expected a comma-separated list", 1},
      {"-n 2 --types definition,factoid", "--types: unknown question type 'factoid'", 1},
      {"-n 2 --seed -1", "--seed: expected an integer >= 0, found '-1'", 1},
      {"-n 2 --max-doc-chars x", "--max-doc-chars: expected an integer >= 0", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char args[128];
    snprintf(args, sizeof args, "%s", cases[i].args);
    char *argv[16];
    int n = 0;
    for (char *t = strtok(args, " "); t; t = strtok(NULL, " ")) argv[n++] = t;
    th_result r = synth(dir, &stub, "-o", out, n > 0 ? argv[0] : NULL, n > 1 ? argv[1] : NULL,
                        n > 2 ? argv[2] : NULL, n > 3 ? argv[3] : NULL, NULL);
    cr_expect_eq(r.status, cases[i].status, "%s: %s%s", cases[i].args, r.out, r.err);
    cr_expect(strstr(r.err, cases[i].message) != NULL, "%s: %s", cases[i].args, r.err);
    cr_expect(!th_exists(folder), "%s: the folder is not left behind", cases[i].args);
    th_free(&r);
  }
  /* -n above the documents with text names both numbers */
  th_result r = synth(dir, &stub, "-o", out, "-n", "8", NULL);
  cr_expect(strstr(r.err, "-n 8: ") && strstr(r.err, "has only 7 documents with text (8 records); ask for at most 7"),
            "%s", r.err);
  th_free(&r);
  /* no --docs, no -o, -o and --jsonl the same file, a missing collection */
  char *no_docs[] = {(char *)th_bin(), "synth", "-n", "2", "-o", (char *)out, "--model", "m", NULL};
  r = th_run(NULL, no_docs, NULL, NULL);
  cr_expect(r.status == 1 && strstr(r.err, "--docs FILE is required"), "%s", r.err);
  th_free(&r);
  r = synth(dir, &stub, "-n", "2", NULL);
  cr_expect(r.status == 1 && strstr(r.err, "-o EVALSET.json is required"), "%s", r.err);
  th_free(&r);
  r = synth(dir, &stub, "-n", "2", "-o", out, "--jsonl", out, NULL);
  cr_expect(r.status == 1 && strstr(r.err, "the same file as -o"), "%s", r.err);
  th_free(&r);
  char *missing[] = {(char *)th_bin(), "synth", "--docs", th_join(dir, "nope.tsv"), "-n", "2", "-o", (char *)out,
                     "--model", "m", "--base-url", stub.url, NULL};
  r = th_run(NULL, missing, NULL, NULL);
  cr_expect(r.status == 2 && strstr(r.err, "nope.tsv"), "%s", r.err);
  cr_expect(!th_exists(folder));
  th_free(&r);
  cr_expect_eq(requests_logged(&stub), 0);
  llm_stub_stop(&stub);
}
