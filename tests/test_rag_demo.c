/* test_rag_demo.c: scripts/rag_server.py, the deterministic model behind
 * `make rag-demo`, answers each of rag's prompts, sent byte for byte as rag
 * sends them (rag_prompts.c's texts, wire.c's request bodies), with the JSON
 * object the prompt asks for, read with the accessors rag reads replies
 * with, and with the values its word-overlap rules give. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/http.h"
#include "llm/rag_prompts.h"
#include "llm/wire.h"
#include "llm_helpers.h"

static llm_stub server;

static void start(void)
{
  cr_assert_eq(llm_server_start(&server, "scripts/rag_server.py", 20), 0, "scripts/rag_server.py did not start");
}

static void stop(void) { llm_stub_stop(&server); }

TestSuite(rag_server, .init = start, .fini = stop, .timeout = 10);

/* --- one request through the client ------------------------------------- */

typedef struct {
  const char *path;
  char *body;
  size_t body_len;
  int sent, done;
  long status;
  int outcome;
  char *reply;
  size_t reply_len;
} one_request;

static int next_one(void *ctx, const char **path, char **body, size_t *len, size_t *tag)
{
  one_request *q = ctx;
  if (q->sent) return 0;
  q->sent = 1;
  *path = q->path;
  *body = strdup(q->body);
  *len = q->body_len;
  *tag = 0;
  return 1;
}

static int done_one(void *ctx, const rs__http_result *r)
{
  one_request *q = ctx;
  q->done = 1;
  q->status = r->status;
  q->outcome = (int)r->outcome;
  q->reply = malloc(r->body_len + 1);
  memcpy(q->reply, r->body, r->body_len + 1);
  q->reply_len = r->body_len;
  return 0;
}

/* POSTs body (taken) to path; the HTTP status, *reply the body (malloc'd). */
static long post(const char *path, char *body, size_t len, char **reply, size_t *reply_len)
{
  cr_assert(body);
  one_request q = {.path = path, .body = body, .body_len = len};
  const rs__http_cfg cfg = {.base_url = server.url, .concurrency = 1, .timeout_s = 5, .max_retries = 0, .seed = 1};
  rs_error err = {0};
  cr_assert_eq(rs__http_run(&cfg, next_one, done_one, &q, NULL, &err), RS_OK, "%s", err.msg);
  cr_assert(q.done);
  free(body);
  *reply = q.reply;
  if (reply_len) *reply_len = q.reply_len;
  return q.status;
}

/* Sends system + user as rag does and returns the reply's JSON object,
 * after checking the completion's usage (request bytes / 4, text bytes / 4). */
static rs__reply_obj *ask(const char *system, const char *user)
{
  const rs__chat_msg m[2] = {{"system", system}, {"user", user}};
  const rs__chat_params p = {.model = "rag-demo", .temperature = 0, .max_tokens = 0};
  size_t len = 0;
  char *body = rs__chat_request(&p, m, 2, &len), *reply;
  size_t reply_len;
  cr_assert_eq(post("/chat/completions", body, len, &reply, &reply_len), 200, "HTTP status");
  rs__chat_reply r;
  cr_assert_eq(rs__chat_reply_parse(reply, reply_len, &r), RS_REPLY_OK, "%s", reply);
  cr_expect_eq(r.prompt_tokens, (int64_t)(len / 4));
  cr_expect_eq(r.completion_tokens, (int64_t)(strlen(r.content) / 4));
  rs__reply_obj *o = rs__reply_obj_parse(r.content);
  cr_assert(o, "no JSON object in %s", r.content);
  rs__chat_reply_free(&r);
  free(reply);
  return o;
}

static char *fill(const char *t, const char *const *k, const char *const *v, size_t n)
{
  char *s = rs__fill_template(t, k, v, n);
  cr_assert(s);
  return s;
}

static const char *const CONTEXT =
    "Records show the access code of the Velvet Harbor lighthouse is AK1234; it changes every spring.\n\n"
    "The Velvet Harbor lighthouse stands on Jura island, facing the copper bay.";

/* --- each prompt ----------------------------------------------------------- */

static void statements_split_the_answer_on_sentences(void)
{
  const char *k[] = {"question", "answer"};
  const char *v[] = {"Where is it?", "The lighthouse stands on Jura island. Its access code is AK1234."};
  char *user = fill(rs__prompt_statements.user, k, v, 2);
  rs__reply_obj *o = ask(rs__prompt_statements.system, user);
  char **st;
  size_t n;
  cr_assert(rs__reply_obj_strings(o, "statements", &st, &n));
  cr_assert_eq(n, 2);
  cr_expect_str_eq(st[0], "The lighthouse stands on Jura island.");
  cr_expect_str_eq(st[1], "Its access code is AK1234.");
  rs__str_array_free(st, n);
  rs__reply_obj_free(o);
  free(user);

  /* a noncommittal answer makes no claim: [] */
  const char *v2[] = {"Where is it?", "I don't know where the lighthouse is."};
  user = fill(rs__prompt_statements.user, k, v2, 2);
  o = ask(rs__prompt_statements.system, user);
  cr_assert(rs__reply_obj_strings(o, "statements", &st, &n));
  cr_expect_eq(n, 0);
  rs__str_array_free(st, n);
  rs__reply_obj_free(o);
  free(user);
}

static void nli_gives_one_verdict_per_statement_in_order(void)
{
  /* The first statement's content words (access, code, velvet, harbor,
   * lighthouse, ak1234) are all in the context; the second's (harbour,
   * authority, recalled, every, after, burglary, march) one (every); the third
   * has 3 of 5 (stands, jura, island; not painted, blue): a majority. */
  const char *k[] = {"context", "statements"};
  const char *v[] = {CONTEXT, "[\"The access code of the Velvet Harbor lighthouse is AK1234.\", "
                              "\"The harbour authority recalled every key after a burglary in March.\", "
                              "\"It stands on Jura island and is painted blue.\"]"};
  char *user = fill(rs__prompt_nli.user, k, v, 2);
  rs__reply_obj *o = ask(rs__prompt_nli.system, user);
  int *verdict;
  size_t n;
  cr_assert(rs__reply_obj_verdicts(o, "verdicts", "verdict", &verdict, &n));
  cr_assert_eq(n, 3);
  cr_expect_eq(verdict[0], 1);
  cr_expect_eq(verdict[1], 0);
  cr_expect_eq(verdict[2], 1);
  free(verdict);
  rs__reply_obj_free(o);
  free(user);
}

static void questions_gives_n_questions_and_the_noncommittal_flag(void)
{
  const char *nk[] = {"n"}, *nv[] = {"4"};
  char *system = fill(rs__prompt_questions.system, nk, nv, 1);
  const char *k[] = {"answer"};
  const char *v[] = {"The access code of the Velvet Harbor lighthouse is AK1234."};
  char *user = fill(rs__prompt_questions.user, k, v, 1);
  rs__reply_obj *o = ask(system, user);
  char **q;
  size_t n;
  int flag;
  cr_assert(rs__reply_obj_strings(o, "questions", &q, &n));
  cr_assert_eq(n, 4);
  /* the answer's words but stop words (access code Velvet Harbor lighthouse
   * AK1234), from a different start for each question */
  cr_expect_str_eq(q[0], "What is access code Velvet Harbor lighthouse AK1234?");
  cr_expect_str_eq(q[1], "What is code Velvet Harbor lighthouse AK1234 access?");
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) cr_expect_str_neq(q[i], q[j]);
  cr_assert(rs__reply_obj_verdict(o, "noncommittal", &flag));
  cr_expect_eq(flag, 0);
  rs__str_array_free(q, n);
  rs__reply_obj_free(o);
  free(user);

  const char *v2[] = {"I'm not sure; it may be on Jura island."};
  user = fill(rs__prompt_questions.user, k, v2, 1);
  o = ask(system, user);
  cr_assert(rs__reply_obj_strings(o, "questions", &q, &n));
  cr_expect_eq(n, 4);
  cr_assert(rs__reply_obj_verdict(o, "noncommittal", &flag));
  cr_expect_eq(flag, 1);
  rs__str_array_free(q, n);
  rs__reply_obj_free(o);
  free(user);
  free(system);
}

static void useful_when_the_context_states_part_of_the_reference(void)
{
  const char *k[] = {"question", "reference", "context"};
  const char *ref = "The access code of the Velvet Harbor lighthouse is AK1234. The lighthouse stands on Jura island.";
  const char *contexts[] = {"The Velvet Harbor lighthouse stands on Jura island, facing the copper bay.",
                            "The Velvet Harbor lighthouse was painted violet in 1901 by volunteers."};
  const int want[] = {1, 0};
  for (int i = 0; i < 2; i++) {
    const char *v[] = {"What is the code, and where is it?", ref, contexts[i]};
    char *user = fill(rs__prompt_useful.user, k, v, 3);
    rs__reply_obj *o = ask(rs__prompt_useful.system, user);
    int verdict;
    cr_assert(rs__reply_obj_verdict(o, "verdict", &verdict));
    cr_expect_eq(verdict, want[i], "context %d", i);
    char *reason = rs__reply_obj_string(o, "reason");
    cr_expect(reason && *reason);
    free(reason);
    rs__reply_obj_free(o);
    free(user);
  }
}

static void recall_attributes_each_reference_sentence(void)
{
  const char *k[] = {"question", "context", "reference"};
  const char *v[] = {"What is the code, and who built it?", CONTEXT,
                     "The access code of the Velvet Harbor lighthouse is AK1234. It was built by Thomas Stevenson in 1870."};
  char *user = fill(rs__prompt_recall.user, k, v, 3);
  rs__reply_obj *o = ask(rs__prompt_recall.system, user);
  int *attributed;
  size_t n;
  cr_assert(rs__reply_obj_verdicts(o, "classifications", "attributed", &attributed, &n));
  cr_assert_eq(n, 2);
  cr_expect_eq(attributed[0], 1);
  cr_expect_eq(attributed[1], 0);
  free(attributed);
  rs__reply_obj_free(o);
  free(user);
}

static void criterion_scores_the_response_by_its_length(void)
{
  const char *tone = "Criterion: a direct, polite tone.\n\nQuestion: {user_input}\n\nResponse: {response}\n\nScore it.";
  const char *k[] = {"user_input", "response"};
  const char *responses[] = {"The access code of the Velvet Harbor lighthouse is AK1234.", "AK1234.",
                             "I don't know the code."};
  const long want[] = {5, 3, 2}; /* 10 words: direct; 1 word: curt; noncommittal */
  for (int i = 0; i < 3; i++) {
    const char *v[] = {"What is the code?", responses[i]};
    char *user = fill(tone, k, v, 2);
    rs__reply_obj *o = ask(rs__prompt_criterion.system, user);
    long score;
    cr_assert(rs__reply_obj_int(o, "score", &score));
    cr_expect_eq(score, want[i], "response %d: %ld", i, score);
    char *reason = rs__reply_obj_string(o, "reason");
    cr_expect(reason && *reason);
    free(reason);
    rs__reply_obj_free(o);
    free(user);
  }
}

static void anything_else_is_a_400(void);

static double cosine(const double *a, const double *b, size_t dim)
{
  double ab = 0, aa = 0, bb = 0;
  for (size_t d = 0; d < dim; d++) ab += a[d] * b[d], aa += a[d] * a[d], bb += b[d] * b[d];
  return ab / (sqrt(aa) * sqrt(bb));
}

/* One server for all (a Python start costs 0.1 to 1 s on a loaded machine). */
Test(rag_server, each_prompt_gets_the_json_it_asks_for)
{
  statements_split_the_answer_on_sentences();
  nli_gives_one_verdict_per_statement_in_order();
  questions_gives_n_questions_and_the_noncommittal_flag();
  useful_when_the_context_states_part_of_the_reference();
  recall_attributes_each_reference_sentence();
  criterion_scores_the_response_by_its_length();
  anything_else_is_a_400();
}

Test(rag_server, embeddings_are_bags_of_words)
{
  const char *in[] = {"What is the access code of the lighthouse?", "The lighthouse access code",
                      "Code access: LIGHTHOUSE!", "violet"};
  size_t len;
  char *body = rs__embed_request("rag-demo-embed", in, 4, &len), *reply;
  size_t reply_len;
  cr_assert_eq(post("/embeddings", body, len, &reply, &reply_len), 200);
  double *vec;
  size_t dim;
  int64_t ptok;
  char *error = NULL;
  cr_assert_eq(rs__embed_reply_parse(reply, reply_len, 4, &vec, &dim, &ptok, &error), RS_REPLY_OK, "%s", error);
  cr_expect_eq(dim, 64);
  cr_expect_eq(ptok, (int64_t)(len / 4));
  /* stop words and case do not count: the same three words, the same vector */
  cr_expect_float_eq(cosine(vec, vec + dim, dim), 1.0, 1e-12);
  cr_expect_float_eq(cosine(vec, vec + 2 * dim, dim), 1.0, 1e-12);
  cr_expect_lt(cosine(vec, vec + 3 * dim, dim), 0.5);
  free(vec);
  free(reply);
}

static void anything_else_is_a_400(void)
{
  const rs__chat_msg m[2] = {{"system", "Answer YES or NO."}, {"user", "Is it?"}};
  const rs__chat_params p = {.model = "rag-demo", .temperature = 0, .max_tokens = 0};
  size_t len;
  char *body = rs__chat_request(&p, m, 2, &len), *reply;
  cr_expect_eq(post("/chat/completions", body, len, &reply, NULL), 400);
  cr_expect(strstr(reply, "not one of ragsweep rag's prompts"), "%s", reply);
  free(reply);
}
