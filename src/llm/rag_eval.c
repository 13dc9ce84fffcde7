/* rag_eval.c: generation metrics of RAG samples by LLM judges. */
#define _GNU_SOURCE
#include "llm/rag_eval.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/latency.h"
#include "engine/shard.h"
#include "formats/csvio.h"
#include "formats/textio.h"
#include "llm/rag_prompts.h"
#include "llm/wire.h"
#include "stats/agreement.h"
#include "util/strbuf.h"
#include "util/strdict.h"

/* --- metrics -------------------------------------------------------------------- */

static const struct {
  const char *name;
  rs__rag_kind kind;
} metric_names[] = {
    {"faithfulness", RS_RAG_FAITHFULNESS},
    {"answer_relevancy", RS_RAG_ANSWER_RELEVANCY},
    {"context_precision", RS_RAG_CONTEXT_PRECISION},
    {"context_recall", RS_RAG_CONTEXT_RECALL},
    {"factual_correctness", RS_RAG_FACTUAL_CORRECTNESS},
    {"id_based_context_precision", RS_RAG_ID_CONTEXT_PRECISION},
    {"id_based_context_recall", RS_RAG_ID_CONTEXT_RECALL},
};
static const char *const fc_mode_name[] = {"f1", "precision", "recall"};

rs_code rs__rag_metric_parse(const char *text, rs__rag_metric *m, rs_error *err)
{
  memset(m, 0, sizeof *m);
  static const char fc[] = "factual_correctness";
  if (strncmp(text, fc, sizeof fc - 1) == 0 && text[sizeof fc - 1] == '(') {
    const char *arg = text + sizeof fc;
    int mode = -1;
    for (int i = 0; i < 3; i++) {
      char want[32];
      snprintf(want, sizeof want, "mode=%s)", fc_mode_name[i]);
      if (strcmp(arg, want) == 0) mode = i;
    }
    if (mode < 0)
      return rs__fail(err, RS_USAGE, "-m %s: expected factual_correctness(mode=f1), (mode=precision) or (mode=recall)",
                      text);
    m->kind = RS_RAG_FACTUAL_CORRECTNESS;
    m->mode = (rs__fc_mode)mode;
  } else {
    size_t i = 0;
    for (; i < sizeof metric_names / sizeof *metric_names; i++)
      if (strcmp(text, metric_names[i].name) == 0) break;
    if (i == sizeof metric_names / sizeof *metric_names)
      return rs__fail(err, RS_USAGE,
                      "-m %s: unknown metric; expected faithfulness, answer_relevancy, context_precision, "
                      "context_recall, factual_correctness[(mode=f1|precision|recall)], id_based_context_precision "
                      "or id_based_context_recall (custom rubrics: --criterion NAME=FILE)",
                      text);
    m->kind = metric_names[i].kind;
    m->mode = RS_FC_F1;
  }
  char name[64];
  if (m->kind == RS_RAG_FACTUAL_CORRECTNESS) snprintf(name, sizeof name, "%s(mode=%s)", fc, fc_mode_name[m->mode]);
  else snprintf(name, sizeof name, "%s", text);
  if (!(m->name = strdup(name))) return rs__fail(err, RS_NOMEM, "out of memory");
  return RS_OK;
}

static const char *const criterion_fields[] = {"user_input", "response", "retrieved_contexts", "reference"};

rs_code rs__rag_criterion_load(const char *spec, rs__rag_metric *m, rs_error *err)
{
  memset(m, 0, sizeof *m);
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || !eq[1])
    return rs__fail(err, RS_USAGE, "--criterion %s: expected NAME=FILE (a template file with {user_input}, {response}, "
                                   "{retrieved_contexts} or {reference})", spec);
  const size_t nlen = (size_t)(eq - spec);
  for (size_t i = 0; i < nlen; i++) {
    const char ch = spec[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
      return rs__fail(err, RS_USAGE, "--criterion %s: the name may hold letters, digits, '_' and '-' only, found '%c'",
                      spec, ch);
  }
  for (size_t i = 0; i < sizeof metric_names / sizeof *metric_names; i++)
    if (strlen(metric_names[i].name) == nlen && strncmp(spec, metric_names[i].name, nlen) == 0)
      return rs__fail(err, RS_USAGE, "--criterion %s: '%.*s' is the name of a built-in metric; choose another", spec,
                      (int)nlen, spec);
  char *text = NULL;
  size_t len = 0;
  rs_code rc = rs__read_all(eq + 1, &text, &len, err);
  if (rc) return rc;
  int uses = 0;
  for (size_t f = 0; f < 4; f++) {
    char ph[40];
    snprintf(ph, sizeof ph, "{%s}", criterion_fields[f]);
    uses += strstr(text, ph) != NULL;
  }
  if (strlen(text) != len || !rs__utf8_valid(text, len, NULL) || !uses) {
    free(text);
    return rs__fail(err, RS_FORMAT,
                    "%s: expected a UTF-8 text template using at least one of {user_input}, {response}, "
                    "{retrieved_contexts}, {reference}; found %s",
                    eq + 1, !uses ? "none of them" : "bytes that are not UTF-8 text");
  }
  m->kind = RS_RAG_CRITERION;
  m->template_text = text;
  if (!(m->name = strndup(spec, nlen))) return rs__fail(err, RS_NOMEM, "out of memory");
  return RS_OK;
}

void rs__rag_metric_free(rs__rag_metric *m)
{
  if (!m) return;
  free(m->name);
  free(m->template_text);
  memset(m, 0, sizeof *m);
}

int rs__rag_metric_uses_llm(const rs__rag_metric *m)
{
  return m->kind != RS_RAG_ID_CONTEXT_PRECISION && m->kind != RS_RAG_ID_CONTEXT_RECALL;
}

/* --- requests ------------------------------------------------------------------- */

enum {
  K_SPLIT_RESPONSE,  /* statements of the response */
  K_SPLIT_REFERENCE, /* statements of the reference */
  K_QUESTIONS,       /* questions from the response, noncommittal */
  K_USEFUL,          /* one retrieved context: useful for the reference? */
  K_RECALL,          /* the reference's statements attributed to the contexts */
  K_CRITERION,       /* a custom rubric */
  K_NLI_CONTEXTS,    /* response statements vs the retrieved contexts */
  K_NLI_REFERENCE,   /* response statements vs the reference */
  K_NLI_RESPONSE,    /* reference statements vs the response */
  K_EMBED            /* the question and the generated questions */
};
static const char *const step_name[] = {"statements_response", "statements_reference", "questions",
                                        "useful", "recall", "criterion", "nli_contexts", "nli_reference",
                                        "nli_response", "embeddings"};

enum { RQ_PENDING, RQ_OK, RQ_UNPARSED, RQ_TRUNCATED, RQ_BAD_REPLY, RQ_HTTP_ERROR, RQ_NOT_SENT };
static const char *const rq_status_name[] = {"pending", "ok", "unparsed", "truncated", "bad_reply", "http_error",
                                             "not_sent"};

typedef struct rreq {
  uint8_t kind, status;
  uint16_t judge;
  uint32_t sample;
  uint32_t arg;     /* K_USEFUL: the context; K_CRITERION: the metric; stage 2: the request it builds on */
  rs__rag_kind cause; /* the metric it was made for first (calls.jsonl, calls per metric) */
  char **list;      /* statements or questions */
  size_t n_list;
  int *verdict;     /* NLI and recall verdicts */
  size_t n_verdict;
  int flag;         /* K_USEFUL: the verdict; K_QUESTIONS: noncommittal */
  long score;       /* K_CRITERION */
  double number;    /* K_EMBED: mean cosine */
  char *text;       /* K_CRITERION: the reason; failures: what went wrong */
} rreq;

#define NONE SIZE_MAX

/* The requests of one (sample, judge). */
typedef struct slot {
  size_t split_resp, split_ref, questions, recall, nli_ctx, nli_ref, nli_resp, embed;
  size_t useful0; /* the first of n_contexts K_USEFUL */
  size_t crit0;   /* the first of n_criteria K_CRITERION */
} slot;

enum { V_NONE, V_NUMBER, V_UNDEFINED, V_FAILED, V_NOT_SENT };

typedef struct value {
  double v;
  uint8_t state;
  char *reason;
} value;

struct rs__rag {
  const rs__rag_cfg *cfg;
  const rs__rag_set *set;
  rreq *rq;
  rs__llm_call *call;
  size_t n_rq, cap_rq;
  slot *slots; /* [sample * n_judges + judge] */
  value *val;  /* [(sample * n_metrics + metric) * n_judges + judge] */
  size_t n_criteria;
  size_t *criterion_metric; /* [n_criteria] */
  rs__llm_cache *cache;
  rs__llm_calls_cfg cc;
  size_t batch_lo; /* the batch's first request */
  const char *stage;
  rs__rag_stats st;
  size_t nj; /* judges, at least 1 (the id-based metrics' values sit at judge 0) */
  int need[RS_RAG_CRITERION + 1];
  int need_split_ref;
  uint32_t *unit;    /* [set->n]: the sample's key, numbered in order of first appearance */
  size_t n_units;
  size_t unit_lo, unit_hi; /* the share's keys */
};

static int in_share(const rs__rag *r, size_t i) { return r->unit[i] >= r->unit_lo && r->unit[i] < r->unit_hi; }

/* The units of the samples and the share's range of them. */
static rs_code number_units(rs__rag *r, rs_error *err)
{
  rs__strdict keys = {0};
  rs_code rc = RS_OK;
  if (!(r->unit = rs__malloc(rs__mul(r->set->n ? r->set->n : 1, sizeof *r->unit))))
    return rs__fail(err, RS_NOMEM, "out of memory for %zu samples", r->set->n);
  for (size_t i = 0; i < r->set->n && !rc; i++) {
    char buf[24];
    rc = rs__strdict_add(&keys, rs__rag_sample_key(&r->set->s[i], buf), &r->unit[i], err);
  }
  r->n_units = keys.n;
  rs__strdict_free(&keys);
  r->unit_lo = 0, r->unit_hi = r->n_units;
  if (r->cfg->share_n) rs__share_bounds(r->n_units, r->cfg->share_i, r->cfg->share_n, &r->unit_lo, &r->unit_hi);
  for (size_t i = 0; i < r->set->n; i++) r->st.samples += in_share(r, i);
  r->st.samples_all = r->set->n;
  return rc;
}

static slot *slot_of(rs__rag *r, size_t s, size_t j) { return &r->slots[s * r->nj + j]; }
static value *value_of(const rs__rag *r, size_t s, size_t m, size_t j)
{
  return &r->val[(s * r->cfg->n_metrics + m) * r->nj + j];
}

static rs_code add_rq(rs__rag *r, int kind, size_t s, size_t j, size_t arg, rs__rag_kind cause, size_t *idx,
                      rs_error *err)
{
  if (r->n_rq == r->cap_rq) {
    const size_t cap = r->cap_rq ? 2 * r->cap_rq : 1024;
    rreq *rq = rs__realloc(r->rq, rs__mul(cap, sizeof *rq));
    if (!rq) return rs__fail(err, RS_NOMEM, "out of memory for %zu requests", cap);
    r->rq = rq;
    rs__llm_call *c = rs__realloc(r->call, rs__mul(cap, sizeof *c));
    if (!c) return rs__fail(err, RS_NOMEM, "out of memory for %zu requests", cap);
    r->call = c;
    r->cap_rq = cap;
  }
  static const uint32_t expect[] = {150, 150, 80, 60, 200, 80, 250, 250, 250, 0};
  memset(&r->rq[r->n_rq], 0, sizeof r->rq[r->n_rq]);
  memset(&r->call[r->n_rq], 0, sizeof r->call[r->n_rq]);
  rreq *q = &r->rq[r->n_rq];
  q->kind = (uint8_t)kind, q->judge = (uint16_t)j, q->sample = (uint32_t)s, q->arg = (uint32_t)arg, q->cause = cause;
  r->call[r->n_rq].expect_tokens = expect[kind];
  r->st.calls_by_metric[cause]++;
  *idx = r->n_rq++;
  return RS_OK;
}

/* The retrieved contexts as one text, blank-line separated. */
static char *joined_contexts(const rs__str_list *l)
{
  rs__sb b = {0};
  for (size_t i = 0; i < l->n; i++) {
    if (i) rs__sb_str(&b, "\n\n");
    rs__sb_str(&b, l->v[i]);
  }
  return rs__sb_take(&b);
}

static char *json_list(char *const *v, size_t n)
{
  rs__sb b = {0};
  rs__sb_str(&b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) rs__sb_str(&b, ", ");
    rs__sb_json_str(&b, v[i], strlen(v[i]));
  }
  rs__sb_str(&b, "]");
  return rs__sb_take(&b);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

/* The chat request of request i: system and user messages. */
static char *render_chat(const rs__rag *r, const rreq *q, size_t *len)
{
  const rs__rag_cfg *cfg = r->cfg;
  const rs__rag_sample *s = &r->set->s[q->sample];
  const rs__rag_prompt *p = NULL;
  char *user = NULL, *ctx = NULL, *list = NULL, num[16];
  switch (q->kind) {
  case K_SPLIT_RESPONSE:
  case K_SPLIT_REFERENCE: {
    p = &rs__prompt_statements;
    const char *k[] = {"question", "answer"};
    const char *v[] = {or_empty(s->user_input), q->kind == K_SPLIT_RESPONSE ? s->response : s->reference};
    user = rs__fill_template(p->user, k, v, 2);
    break;
  }
  case K_QUESTIONS: {
    p = &rs__prompt_questions;
    snprintf(num, sizeof num, "%d", cfg->n_questions);
    const char *k[] = {"answer"};
    const char *v[] = {s->response};
    user = rs__fill_template(p->user, k, v, 1);
    break;
  }
  case K_USEFUL: {
    p = &rs__prompt_useful;
    const char *k[] = {"question", "reference", "context"};
    const char *v[] = {s->user_input, s->reference, s->retrieved_contexts.v[q->arg]};
    user = rs__fill_template(p->user, k, v, 3);
    break;
  }
  case K_RECALL: {
    p = &rs__prompt_recall;
    ctx = joined_contexts(&s->retrieved_contexts);
    const char *k[] = {"question", "context", "reference"};
    const char *v[] = {s->user_input, ctx, s->reference};
    if (ctx) user = rs__fill_template(p->user, k, v, 3);
    break;
  }
  case K_CRITERION: {
    p = &rs__prompt_criterion;
    ctx = joined_contexts(&s->retrieved_contexts);
    const char *v[] = {or_empty(s->user_input), or_empty(s->response), ctx, or_empty(s->reference)};
    if (ctx) user = rs__fill_template(cfg->metrics[q->arg].template_text, criterion_fields, v, 4);
    break;
  }
  case K_NLI_CONTEXTS:
  case K_NLI_REFERENCE:
  case K_NLI_RESPONSE: {
    p = &rs__prompt_nli;
    const rreq *src = &r->rq[q->arg];
    list = json_list(src->list, src->n_list);
    const char *premise = q->kind == K_NLI_REFERENCE ? s->reference : q->kind == K_NLI_RESPONSE ? s->response : NULL;
    if (!premise) premise = ctx = joined_contexts(&s->retrieved_contexts);
    const char *k[] = {"context", "statements"};
    const char *v[] = {premise, list};
    if (premise && list) user = rs__fill_template(p->user, k, v, 2);
    break;
  }
  default: return NULL;
  }
  char *system = NULL;
  if (q->kind == K_QUESTIONS) {
    const char *k[] = {"n"};
    const char *v[] = {num};
    system = rs__fill_template(p->system, k, v, 1);
  }
  char *body = NULL;
  if (user && (q->kind != K_QUESTIONS || system)) {
    rs__chat_msg msgs[2] = {{"system", system ? system : p->system}, {"user", user}};
    const rs__chat_params params = {cfg->judges[q->judge], cfg->temperature, cfg->max_tokens};
    body = rs__chat_request(&params, msgs, 2, len);
  }
  free(system);
  free(user);
  free(ctx);
  free(list);
  return body;
}

static char *render_call(void *vr, size_t i, const char **path, size_t *len)
{
  rs__rag *r = vr;
  const rreq *q = &r->rq[r->batch_lo + i];
  if (q->kind == K_EMBED) {
    const rreq *src = &r->rq[q->arg];
    const char **in = malloc((src->n_list + 1) * sizeof *in);
    if (!in) return NULL;
    in[0] = r->set->s[q->sample].user_input;
    for (size_t k = 0; k < src->n_list; k++) in[k + 1] = src->list[k];
    char *body = rs__embed_request(r->cfg->embed_model, in, src->n_list + 1, len);
    free(in);
    *path = "/embeddings";
    return body;
  }
  *path = "/chat/completions";
  return render_chat(r, q, len);
}

static int unparsed(rreq *q, const char *why)
{
  q->status = RQ_UNPARSED;
  free(q->text);
  q->text = strdup(why);
  return RS_TAKE_NO_ANSWER;
}

/* Reads the answer of a chat reply's text into q. */
static int take_text(rs__rag *r, rreq *q, const char *content)
{
  rs__reply_obj *o = rs__reply_obj_parse(content);
  if (!o) return unparsed(q, "the reply holds no JSON object");
  int t = RS_TAKE_ANSWER;
  char why[160];
  switch (q->kind) {
  case K_SPLIT_RESPONSE:
  case K_SPLIT_REFERENCE:
    if (!rs__reply_obj_strings(o, "statements", &q->list, &q->n_list))
      t = unparsed(q, "expected {\"statements\": [strings]} in the reply");
    break;
  case K_QUESTIONS:
    if (!rs__reply_obj_strings(o, "questions", &q->list, &q->n_list) || q->n_list == 0 ||
        !rs__reply_obj_verdict(o, "noncommittal", &q->flag))
      t = unparsed(q, "expected {\"questions\": [at least one string], \"noncommittal\": 0 or 1} in the reply");
    break;
  case K_USEFUL:
    if (!rs__reply_obj_verdict(o, "verdict", &q->flag)) t = unparsed(q, "expected {\"verdict\": 0 or 1} in the reply");
    break;
  case K_RECALL:
    if (!rs__reply_obj_verdicts(o, "classifications", "attributed", &q->verdict, &q->n_verdict))
      t = unparsed(q, "expected {\"classifications\": [{\"attributed\": 0 or 1}, ...]} in the reply");
    break;
  case K_CRITERION:
    if (!rs__reply_obj_int(o, "score", &q->score) || q->score < 1 || q->score > 5) {
      t = unparsed(q, "expected {\"score\": an integer from 1 to 5, \"reason\": text} in the reply");
    } else {
      free(q->text);
      q->text = rs__reply_obj_string(o, "reason");
    }
    break;
  default: { /* NLI */
    const size_t want = r->rq[q->arg].n_list;
    if (!rs__reply_obj_verdicts(o, "verdicts", "verdict", &q->verdict, &q->n_verdict)) {
      t = unparsed(q, "expected {\"verdicts\": [{\"verdict\": 0 or 1}, ...]} in the reply");
    } else if (q->n_verdict != want) {
      snprintf(why, sizeof why, "expected %zu verdicts (one per statement), found %zu", want, q->n_verdict);
      free(q->verdict);
      q->verdict = NULL, q->n_verdict = 0;
      t = unparsed(q, why);
    }
    break;
  }
  }
  rs__reply_obj_free(o);
  if (t == RS_TAKE_ANSWER) q->status = RQ_OK;
  return t;
}

static int take_embed(rs__rag *r, rreq *q, const char *body, size_t len, int64_t *ptok, char **note)
{
  const size_t n = r->rq[q->arg].n_list + 1;
  double *vec = NULL;
  size_t dim = 0;
  char *error = NULL;
  const rs__reply_status st = rs__embed_reply_parse(body, len, n, &vec, &dim, ptok, &error);
  if (st != RS_REPLY_OK) {
    q->status = RQ_BAD_REPLY;
    *note = error ? error : strdup("the reply is not an embeddings list");
    return RS_TAKE_BAD;
  }
  free(error);
  /* cos(q, g_i) = q.g_i / (|q| |g_i|); the mean over i in order. */
  double qq = 0.0, sum = 0.0;
  for (size_t d = 0; d < dim; d++) qq += vec[d] * vec[d];
  int zero = qq == 0.0;
  for (size_t i = 1; i < n && !zero; i++) {
    double dot = 0.0, gg = 0.0;
    const double *g = vec + i * dim;
    for (size_t d = 0; d < dim; d++) dot += vec[d] * g[d], gg += g[d] * g[d];
    if (gg == 0.0) zero = 1;
    else sum += dot / (sqrt(qq) * sqrt(gg));
  }
  free(vec);
  if (zero) return unparsed(q, "an embedding is the zero vector: no cosine similarity");
  q->number = sum / (double)(n - 1);
  q->status = RQ_OK;
  return RS_TAKE_ANSWER;
}

static int take_call(void *vr, size_t i, const char *body, size_t len, int cached, int64_t *ptok, int64_t *ctok,
                     char **note)
{
  (void)cached;
  rs__rag *r = vr;
  rreq *q = &r->rq[r->batch_lo + i];
  /* a cached reply replaces nothing: a request is answered once */
  if (q->kind == K_EMBED) {
    *ctok = 0;
    return take_embed(r, q, body, len, ptok, note);
  }
  rs__chat_reply rep;
  const rs__reply_status st = rs__chat_reply_parse(body, len, &rep);
  *ptok = rep.prompt_tokens, *ctok = rep.completion_tokens;
  int t;
  if (st == RS_REPLY_OK) {
    t = take_text(r, q, rep.content);
  } else if (st == RS_REPLY_TRUNCATED) {
    q->status = RQ_TRUNCATED;
    free(q->text);
    q->text = strdup("the reply was cut off (finish_reason \"length\"); raise --max-tokens");
    t = RS_TAKE_NO_ANSWER;
  } else {
    q->status = RQ_BAD_REPLY;
    *note = strdup(rep.error ? rep.error : "the reply is not a chat completion");
    t = RS_TAKE_BAD;
  }
  rs__chat_reply_free(&rep);
  return t;
}

static void call_progress(void *vr, const rs__llm_calls_stats *s)
{
  rs__rag *r = vr;
  if (r->cfg->progress) r->cfg->progress(r->cfg->progress_ctx, s, r->stage);
}

/* Runs requests [lo, n_rq) as one batch for model. */
static rs_code run_batch(rs__rag *r, size_t lo, const char *model, const char *stage, rs_error *err)
{
  if (lo == r->n_rq) return RS_OK;
  r->batch_lo = lo;
  r->stage = stage;
  r->cc.model = model;
  rs_code rc = rs__llm_calls_run(&r->cc, r->call + lo, r->n_rq - lo, &r->st.calls, err);
  if (rc || r->cfg->dry_run) return rc;
  for (size_t i = lo; i < r->n_rq; i++) {
    rreq *q = &r->rq[i];
    const rs__llm_call *c = &r->call[i];
    if (c->status == RS_CALL_HTTP_ERROR) q->status = RQ_HTTP_ERROR;
    else if (c->status == RS_CALL_NOT_SENT) q->status = RQ_NOT_SENT;
    else if (c->status == RS_CALL_BAD_REPLY) q->status = RQ_BAD_REPLY;
    if (c->note && !q->text) q->text = strdup(c->note);
  }
  return RS_OK;
}

/* --- stages --------------------------------------------------------------------- */

static rs_code check_fields(const rs__rag *r, rs_error *err)
{
  const rs__rag_cfg *cfg = r->cfg;
  for (size_t i = 0; i < r->set->n; i++) {
    const rs__rag_sample *s = &r->set->s[i];
    for (size_t m = 0; m < cfg->n_metrics; m++) {
      const rs__rag_metric *mt = &cfg->metrics[m];
      const char *missing = NULL;
      switch (mt->kind) {
      case RS_RAG_FAITHFULNESS:
        missing = !s->user_input ? "user_input" : !s->response ? "response"
                : !s->retrieved_contexts.present ? "retrieved_contexts" : NULL;
        break;
      case RS_RAG_ANSWER_RELEVANCY: missing = !s->user_input ? "user_input" : !s->response ? "response" : NULL; break;
      case RS_RAG_CONTEXT_PRECISION:
      case RS_RAG_CONTEXT_RECALL:
        missing = !s->user_input ? "user_input" : !s->retrieved_contexts.present ? "retrieved_contexts"
                : !s->reference ? "reference" : NULL;
        break;
      case RS_RAG_FACTUAL_CORRECTNESS: missing = !s->response ? "response" : !s->reference ? "reference" : NULL; break;
      case RS_RAG_ID_CONTEXT_PRECISION:
      case RS_RAG_ID_CONTEXT_RECALL:
        missing = !s->retrieved_context_ids.present ? "retrieved_context_ids"
                : !s->reference_context_ids.present ? "reference_context_ids" : NULL;
        break;
      case RS_RAG_CRITERION: {
        const int has[4] = {s->user_input != NULL, s->response != NULL, s->retrieved_contexts.present,
                            s->reference != NULL};
        for (int f = 0; f < 4 && !missing; f++) {
          char ph[40];
          snprintf(ph, sizeof ph, "{%s}", criterion_fields[f]);
          if (!has[f] && strstr(mt->template_text, ph)) missing = criterion_fields[f];
        }
        break;
      }
      }
      if (missing)
        return rs__fail(err, RS_FORMAT, "%s:%zu: metric %s needs the field \"%s\"; this sample has none (or null)",
                        r->set->files[s->file], s->line, mt->name, missing);
    }
    if (r->need[RS_RAG_ANSWER_RELEVANCY] && !*s->user_input)
      return rs__fail(err, RS_FORMAT, "%s:%zu: answer_relevancy needs a non-empty \"user_input\" (it is embedded)",
                      r->set->files[s->file], s->line);
  }
  return RS_OK;
}

static rs_code build_stage1(rs__rag *r, size_t j, rs_error *err)
{
  rs_code rc = RS_OK;
  const rs__rag_kind split_cause = r->need[RS_RAG_FAITHFULNESS] ? RS_RAG_FAITHFULNESS : RS_RAG_FACTUAL_CORRECTNESS;
  for (size_t i = 0; i < r->set->n && !rc; i++) {
    const rs__rag_sample *s = &r->set->s[i];
    slot *sl = slot_of(r, i, j);
    if (!in_share(r, i)) continue;
    if (r->need[RS_RAG_FAITHFULNESS] || r->need[RS_RAG_FACTUAL_CORRECTNESS])
      rc = add_rq(r, K_SPLIT_RESPONSE, i, j, 0, split_cause, &sl->split_resp, err);
    if (!rc && r->need_split_ref)
      rc = add_rq(r, K_SPLIT_REFERENCE, i, j, 0, RS_RAG_FACTUAL_CORRECTNESS, &sl->split_ref, err);
    if (!rc && r->need[RS_RAG_ANSWER_RELEVANCY])
      rc = add_rq(r, K_QUESTIONS, i, j, 0, RS_RAG_ANSWER_RELEVANCY, &sl->questions, err);
    if (!rc && r->need[RS_RAG_CONTEXT_PRECISION])
      for (size_t k = 0; k < s->retrieved_contexts.n && !rc; k++) {
        size_t idx = NONE; /* set by add_rq unless it fails */
        rc = add_rq(r, K_USEFUL, i, j, k, RS_RAG_CONTEXT_PRECISION, &idx, err);
        if (k == 0) sl->useful0 = idx;
      }
    if (!rc && r->need[RS_RAG_CONTEXT_RECALL]) rc = add_rq(r, K_RECALL, i, j, 0, RS_RAG_CONTEXT_RECALL, &sl->recall, err);
    for (size_t c = 0; c < r->n_criteria && !rc; c++) {
      size_t idx = NONE;
      rc = add_rq(r, K_CRITERION, i, j, r->criterion_metric[c], RS_RAG_CRITERION, &idx, err);
      if (c == 0) sl->crit0 = idx;
    }
  }
  return rc;
}

static int answered(const rs__rag *r, size_t idx) { return idx != NONE && r->rq[idx].status == RQ_OK; }

static rs_code build_stage2(rs__rag *r, size_t j, rs_error *err)
{
  rs_code rc = RS_OK;
  for (size_t i = 0; i < r->set->n && !rc; i++) {
    const rs__rag_sample *s = &r->set->s[i];
    slot *sl = slot_of(r, i, j);
    if (answered(r, sl->split_resp) && r->rq[sl->split_resp].n_list > 0) {
      if (r->need[RS_RAG_FAITHFULNESS] && s->retrieved_contexts.n > 0)
        rc = add_rq(r, K_NLI_CONTEXTS, i, j, sl->split_resp, RS_RAG_FAITHFULNESS, &sl->nli_ctx, err);
      if (!rc && r->need[RS_RAG_FACTUAL_CORRECTNESS])
        rc = add_rq(r, K_NLI_REFERENCE, i, j, sl->split_resp, RS_RAG_FACTUAL_CORRECTNESS, &sl->nli_ref, err);
    }
    if (!rc && answered(r, sl->split_ref) && r->rq[sl->split_ref].n_list > 0)
      rc = add_rq(r, K_NLI_RESPONSE, i, j, sl->split_ref, RS_RAG_FACTUAL_CORRECTNESS, &sl->nli_resp, err);
  }
  return rc;
}

static rs_code build_embeds(rs__rag *r, size_t j, rs_error *err)
{
  rs_code rc = RS_OK;
  for (size_t i = 0; i < r->set->n && !rc; i++) {
    slot *sl = slot_of(r, i, j);
    if (answered(r, sl->questions) && !r->rq[sl->questions].flag)
      rc = add_rq(r, K_EMBED, i, j, sl->questions, RS_RAG_ANSWER_RELEVANCY, &sl->embed, err);
  }
  return rc;
}

/* A dry run cannot know the statements an uncached stage-1 request will
 * return: its stage-2 requests are estimated as one per stage-1 request
 * they would build on, with the sample's texts as their prompt.  (Cached
 * stage-1 replies have built their stage 2 exactly, through the cache.) */
static void estimate_stage2(rs__rag *r)
{
  rs__llm_calls_stats *cs = &r->st.calls;
  for (size_t j = 0; j < r->cfg->n_judges; j++)
    for (size_t i = 0; i < r->set->n; i++) {
      const rs__rag_sample *s = &r->set->s[i];
      const slot *sl = slot_of(r, i, j);
      size_t ctx = 0;
      for (size_t k = 0; k < s->retrieved_contexts.n; k++) ctx += strlen(s->retrieved_contexts.v[k]);
      const size_t resp = s->response ? strlen(s->response) : 0, ref = s->reference ? strlen(s->reference) : 0;
      size_t n_req = 0, chars = 0;
      if (sl->split_resp != NONE && !r->call[sl->split_resp].cached) {
        if (r->need[RS_RAG_FAITHFULNESS]) n_req++, chars += ctx + 2 * resp;
        if (r->need[RS_RAG_FACTUAL_CORRECTNESS]) n_req++, chars += ref + 2 * resp;
      }
      if (sl->split_ref != NONE && !r->call[sl->split_ref].cached) n_req++, chars += resp + 2 * ref;
      if (sl->questions != NONE && !r->call[sl->questions].cached) n_req++, chars += 400;
      r->st.calls.requests += n_req;
      cs->est_prompt_tokens += (chars + 3) / 4 + 300 * n_req; /* 300: the instructions */
      cs->est_completion_tokens += 250 * n_req;
    }
  cs->est_cost = (double)cs->est_prompt_tokens * r->cfg->price_in / 1e6 +
                 (double)cs->est_completion_tokens * r->cfg->price_out / 1e6;
}

/* --- values --------------------------------------------------------------------- */

static int set_value(value *v, int state, double x, char *reason)
{
  v->state = (uint8_t)state;
  v->v = state == V_NUMBER ? x : NAN;
  free(v->reason);
  v->reason = reason;
  return 0;
}

static char *fmt(const char *f, ...) RS_PRINTF(1, 2);
static char *fmt(const char *f, ...)
{
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

/* 1 when request idx gave no answer: v then says why. */
static int failed_request(const rs__rag *r, size_t idx, value *v)
{
  const rreq *q = &r->rq[idx];
  if (q->status == RQ_OK) return 0;
  if (q->status == RQ_NOT_SENT || q->status == RQ_PENDING)
    set_value(v, V_NOT_SENT, 0, fmt("not sent (%s): the run stopped", step_name[q->kind]));
  else
    set_value(v, V_FAILED, 0, fmt("failed (%s, %s): %s", step_name[q->kind], rq_status_name[q->status], or_empty(q->text)));
  return 1;
}

static size_t ones(const int *v, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += v[i] != 0;
  return k;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* |unique(a)|, |unique(b)| and |unique(a) & unique(b)|, ids compared as strings. */
static int id_overlap(const rs__str_list *a, const rs__str_list *b, size_t *na, size_t *nb, size_t *both)
{
  char **x = malloc((a->n + 1) * sizeof *x), **y = malloc((b->n + 1) * sizeof *y);
  if (!x || !y) {
    free(x), free(y);
    return 0;
  }
  memcpy(x, a->v, a->n * sizeof *x);
  memcpy(y, b->v, b->n * sizeof *y);
  if (a->n > 1) qsort(x, a->n, sizeof *x, cmp_str);
  if (b->n > 1) qsort(y, b->n, sizeof *y, cmp_str);
  size_t i = 0, k = 0, ux = 0, uy = 0, m = 0;
  while (i < a->n || k < b->n) {
    const int c = i == a->n ? 1 : k == b->n ? -1 : strcmp(x[i], y[k]);
    const char *cur = c <= 0 ? x[i] : y[k];
    if (c <= 0) ux++;
    if (c >= 0) uy++;
    if (c == 0) m++;
    /* skip every copy of cur in both */
    while (i < a->n && strcmp(x[i], cur) == 0) i++;
    while (k < b->n && strcmp(y[k], cur) == 0) k++;
  }
  free(x), free(y);
  *na = ux, *nb = uy, *both = m;
  return 1;
}

static int compute(rs__rag *r, size_t i, size_t m, size_t j)
{
  const rs__rag_cfg *cfg = r->cfg;
  const rs__rag_sample *s = &r->set->s[i];
  const rs__rag_metric *mt = &cfg->metrics[m];
  value *v = value_of(r, i, m, j);
  const slot *sl = slot_of(r, i, j);
  switch (mt->kind) {
  case RS_RAG_FAITHFULNESS: {
    if (failed_request(r, sl->split_resp, v)) return 0;
    const size_t n = r->rq[sl->split_resp].n_list;
    if (n == 0) return set_value(v, V_UNDEFINED, 0, strdup("undefined: the response makes no statement"));
    if (s->retrieved_contexts.n == 0)
      return set_value(v, V_NUMBER, 0.0, fmt("0 of %zu statements supported: no retrieved contexts", n));
    if (failed_request(r, sl->nli_ctx, v)) return 0;
    const size_t k = ones(r->rq[sl->nli_ctx].verdict, n);
    return set_value(v, V_NUMBER, (double)k / (double)n,
                     fmt("%zu of %zu statements supported by the retrieved contexts", k, n));
  }
  case RS_RAG_ANSWER_RELEVANCY: {
    if (failed_request(r, sl->questions, v)) return 0;
    const rreq *q = &r->rq[sl->questions];
    if (q->flag) return set_value(v, V_NUMBER, 0.0, strdup("0: the response is noncommittal"));
    if (failed_request(r, sl->embed, v)) return 0;
    return set_value(v, V_NUMBER, r->rq[sl->embed].number,
                     fmt("mean cosine similarity of %zu generated questions to the question", q->n_list));
  }
  case RS_RAG_CONTEXT_PRECISION: {
    const size_t n = s->retrieved_contexts.n;
    if (n == 0) return set_value(v, V_UNDEFINED, 0, strdup("undefined: no retrieved contexts"));
    rs__sb b = {0};
    rs__sb_str(&b, "useful by rank: ");
    double num = 0.0;
    size_t hits = 0;
    for (size_t k = 0; k < n; k++) {
      if (failed_request(r, sl->useful0 + k, v)) {
        rs__sb_free(&b);
        return 0;
      }
      const int u = r->rq[sl->useful0 + k].flag;
      hits += (size_t)u;
      if (u) num += (double)hits / (double)(k + 1);
      rs__sb_str(&b, k ? (u ? ",1" : ",0") : (u ? "1" : "0"));
    }
    return set_value(v, V_NUMBER, hits ? num / (double)hits : 0.0, rs__sb_take(&b));
  }
  case RS_RAG_CONTEXT_RECALL: {
    if (failed_request(r, sl->recall, v)) return 0;
    const rreq *q = &r->rq[sl->recall];
    if (q->n_verdict == 0) return set_value(v, V_UNDEFINED, 0, strdup("undefined: the reference makes no statement"));
    const size_t k = ones(q->verdict, q->n_verdict);
    return set_value(v, V_NUMBER, (double)k / (double)q->n_verdict,
                     fmt("%zu of %zu reference statements attributed to the retrieved contexts", k, q->n_verdict));
  }
  case RS_RAG_FACTUAL_CORRECTNESS: {
    if (failed_request(r, sl->split_resp, v)) return 0;
    const size_t n_resp = r->rq[sl->split_resp].n_list;
    size_t tp = 0, fp = 0, fn = 0;
    if (n_resp) {
      if (failed_request(r, sl->nli_ref, v)) return 0;
      tp = ones(r->rq[sl->nli_ref].verdict, n_resp);
      fp = n_resp - tp;
    }
    if (mt->mode != RS_FC_PRECISION) {
      if (failed_request(r, sl->split_ref, v)) return 0;
      const size_t n_ref = r->rq[sl->split_ref].n_list;
      if (n_ref) {
        if (failed_request(r, sl->nli_resp, v)) return 0;
        fn = n_ref - ones(r->rq[sl->nli_resp].verdict, n_ref);
      }
    }
    const double dtp = (double)tp, dfp = (double)fp, dfn = (double)fn;
    double x;
    size_t den;
    if (mt->mode == RS_FC_PRECISION) den = tp + fp, x = den ? dtp / (dtp + dfp) : 0;
    else if (mt->mode == RS_FC_RECALL) den = tp + fn, x = den ? dtp / (dtp + dfn) : 0;
    else den = 2 * tp + fp + fn, x = den ? 2 * dtp / (2 * dtp + dfp + dfn) : 0;
    if (!den) return set_value(v, V_UNDEFINED, 0, strdup("undefined: no statements to count (tp + fp + fn = 0)"));
    return set_value(v, V_NUMBER, x, fmt("tp=%zu fp=%zu fn=%zu", tp, fp, fn));
  }
  case RS_RAG_ID_CONTEXT_PRECISION:
  case RS_RAG_ID_CONTEXT_RECALL: {
    size_t nr, nf, both;
    if (!id_overlap(&s->retrieved_context_ids, &s->reference_context_ids, &nr, &nf, &both))
      return set_value(v, V_FAILED, 0, strdup("out of memory"));
    const int prec = mt->kind == RS_RAG_ID_CONTEXT_PRECISION;
    const size_t den = prec ? nr : nf;
    if (!den)
      return set_value(v, V_UNDEFINED, 0,
                       strdup(prec ? "undefined: no retrieved context ids" : "undefined: no reference context ids"));
    return set_value(v, V_NUMBER, (double)both / (double)den,
                     fmt("%zu of %zu %s ids %s", both, den, prec ? "retrieved" : "reference",
                         prec ? "are reference ids" : "were retrieved"));
  }
  case RS_RAG_CRITERION: {
    size_t c = 0;
    while (r->criterion_metric[c] != m) c++;
    const size_t idx = sl->crit0 + c;
    if (failed_request(r, idx, v)) return 0;
    const rreq *q = &r->rq[idx];
    return set_value(v, V_NUMBER, (double)q->score, q->text ? strdup(q->text) : strdup(""));
  }
  }
  return 0;
}

static void compute_all(rs__rag *r)
{
  const rs__rag_cfg *cfg = r->cfg;
  for (size_t i = 0; i < r->set->n; i++)
    for (size_t m = 0; m < cfg->n_metrics && in_share(r, i); m++) {
      const size_t nj = rs__rag_metric_uses_llm(&cfg->metrics[m]) ? cfg->n_judges : 1;
      for (size_t j = 0; j < nj; j++) {
        compute(r, i, m, j);
        switch (value_of(r, i, m, j)->state) {
        case V_NUMBER: r->st.values++; break;
        case V_UNDEFINED: r->st.undefined++; break;
        case V_FAILED: r->st.failures++; break;
        case V_NOT_SENT: r->st.not_sent++; break;
        }
      }
    }
}

rs_code rs__rag_run(const rs__rag_cfg *cfg, rs__rag **out, rs_error *err)
{
  *out = NULL;
  rs__rag *r = rs__calloc(1, sizeof *r);
  if (!r) return rs__fail(err, RS_NOMEM, "out of memory");
  *out = r;
  r->cfg = cfg;
  r->set = cfg->set;
  int any_llm = 0;
  for (size_t m = 0; m < cfg->n_metrics; m++) {
    const rs__rag_metric *mt = &cfg->metrics[m];
    r->need[mt->kind] = 1;
    if (mt->kind == RS_RAG_FACTUAL_CORRECTNESS && mt->mode != RS_FC_PRECISION) r->need_split_ref = 1;
    if (mt->kind == RS_RAG_CRITERION) r->n_criteria++;
    any_llm |= rs__rag_metric_uses_llm(mt);
  }
  if (any_llm && cfg->n_judges == 0) return rs__fail(err, RS_USAGE, "an LLM metric needs a judge model (--model)");
  if (r->need[RS_RAG_ANSWER_RELEVANCY] && (!cfg->embed_model || !*cfg->embed_model))
    return rs__fail(err, RS_USAGE, "answer_relevancy needs an embedding model: --embed-model NAME");
  if (cfg->n_judges > UINT16_MAX) return rs__fail(err, RS_USAGE, "too many judge models (%zu)", cfg->n_judges);
  const size_t nj = r->nj = cfg->n_judges ? cfg->n_judges : 1;
  if (!(r->criterion_metric = rs__calloc(r->n_criteria + 1, sizeof *r->criterion_metric)) ||
      !(r->slots = rs__malloc(rs__mul(rs__mul(r->set->n, nj), sizeof *r->slots))) ||
      !(r->val = rs__calloc(rs__mul(rs__mul(r->set->n, cfg->n_metrics), nj), sizeof *r->val)))
    return rs__fail(err, RS_NOMEM, "out of memory for %zu samples", r->set->n);
  for (size_t m = 0, c = 0; m < cfg->n_metrics; m++)
    if (cfg->metrics[m].kind == RS_RAG_CRITERION) r->criterion_metric[c++] = m;
  for (size_t i = 0; i < r->set->n * nj; i++) {
    slot *sl = &r->slots[i];
    sl->split_resp = sl->split_ref = sl->questions = sl->recall = sl->nli_ctx = sl->nli_ref = sl->nli_resp =
        sl->embed = sl->useful0 = sl->crit0 = NONE;
  }
  rs_code rc = check_fields(r, err);
  if (!rc) rc = number_units(r, err);
  if (rc) return rc;
  if (any_llm) {
    struct stat st;
    if (!cfg->dry_run || stat(cfg->cache_path, &st) == 0)
      if ((rc = rs__llm_cache_open(cfg->cache_path, &r->cache, err))) return rc;
    rs__llm_calls_cfg *cc = &r->cc;
    cc->http = cfg->http;
    cc->cache = r->cache;
    cc->price_in = cfg->price_in, cc->price_out = cfg->price_out, cc->max_cost = cfg->max_cost;
    cc->dry_run = cfg->dry_run;
    cc->record_sent = cfg->record_sent;
    cc->replay = cfg->replay;
    cc->offline = cfg->offline;
    cc->render = render_call;
    cc->take = take_call;
    cc->progress = call_progress;
    cc->ctx = r;
    cc->dry_run_reads = 1; /* a dry run builds stage 2 from the cached stage-1 replies */
    for (size_t j = 0; j < cfg->n_judges && !rc; j++) {
      const size_t lo = r->n_rq;
      if (!(rc = build_stage1(r, j, err))) rc = run_batch(r, lo, cfg->judges[j], "statements and verdicts", err);
    }
    for (size_t j = 0; j < cfg->n_judges && !rc; j++) {
      const size_t lo = r->n_rq;
      if (!(rc = build_stage2(r, j, err))) rc = run_batch(r, lo, cfg->judges[j], "statement checks", err);
    }
    const size_t lo = r->n_rq;
    for (size_t j = 0; j < cfg->n_judges && !rc; j++) rc = build_embeds(r, j, err);
    if (!rc) rc = run_batch(r, lo, cfg->embed_model, "embeddings", err);
    if (rc) return rc;
    if (cfg->dry_run) estimate_stage2(r);
  }
  if (!cfg->dry_run) compute_all(r);
  if (cfg->offline) {
    uint64_t one = 0;
    rs__rag_missing_by_share(r, 1, &one);
    r->st.missing = one;
  }
  return RS_OK;
}

void rs__rag_missing_by_share(const rs__rag *r, size_t n, uint64_t *counts)
{
  memset(counts, 0, n * sizeof *counts);
  if (!r->cfg->offline) return;
  const size_t nv = r->cfg->n_metrics * r->nj;
  for (size_t i = 0; i < r->set->n; i++) {
    int miss = 0;
    for (size_t k = 0; k < nv && !miss; k++) miss = r->val[i * nv + k].state == V_NOT_SENT;
    if (miss) counts[rs__share_of(r->n_units, r->unit[i], n)]++;
  }
}

const rs__rag_stats *rs__rag_get_stats(const rs__rag *r) { return &r->st; }

double rs__rag_value(const rs__rag *r, size_t sample, size_t metric, size_t judge)
{
  const value *v = value_of(r, sample, metric, judge);
  return v->state == V_NUMBER ? v->v : NAN;
}

rs__rag_agg rs__rag_aggregate(const rs__rag *r, size_t config, size_t metric, size_t judge)
{
  rs__rag_agg a = {NAN, 0, 0, 0, 0};
  double sum = 0.0; /* in sample order: the same values give the same bits */
  for (size_t i = 0; i < r->set->n; i++) {
    if (r->set->s[i].config != config) continue;
    const value *v = value_of(r, i, metric, judge);
    switch (v->state) {
    case V_NUMBER: sum += v->v, a.n++; break;
    case V_UNDEFINED: a.undefined++; break;
    case V_FAILED: a.failures++; break;
    case V_NOT_SENT: a.not_sent++; break;
    }
  }
  if (a.n) a.mean = sum / (double)a.n;
  return a;
}

void rs__rag_free(rs__rag *r)
{
  if (!r) return;
  for (size_t i = 0; i < r->n_rq; i++) {
    rs__str_array_free(r->rq[i].list, r->rq[i].n_list);
    free(r->rq[i].verdict);
    free(r->rq[i].text);
  }
  rs__llm_calls_clear(r->call, r->n_rq);
  free(r->rq);
  free(r->call);
  const size_t nj = r->nj;
  if (r->val)
    for (size_t i = 0; i < r->set->n * r->cfg->n_metrics * nj; i++) free(r->val[i].reason);
  free(r->val);
  free(r->slots);
  free(r->criterion_metric);
  free(r->unit);
  rs__llm_cache_close(r->cache);
  free(r);
}

/* --- outputs -------------------------------------------------------------------- */

static int several_judges(const rs__rag *r) { return r->cfg->n_judges > 1; }

static void config_cells(const rs__rag *r, rs__csv *w, size_t config)
{
  for (size_t c = 0; c < r->set->n_columns; c++) rs__csv_str(w, r->set->config_values[config * r->set->n_columns + c]);
}

static const char *judge_name(const rs__rag *r, size_t m, size_t j)
{
  return rs__rag_metric_uses_llm(&r->cfg->metrics[m]) ? r->cfg->judges[j] : "";
}

static rs_code write_per_sample(const rs__rag *r, rs__csv *w, rs_error *err)
{
  const rs__rag_cfg *cfg = r->cfg;
  rs__csv_str(w, "sample");
  for (size_t c = 0; c < r->set->n_columns; c++) rs__csv_str(w, r->set->columns[c]);
  if (several_judges(r)) rs__csv_str(w, "judge");
  rs__csv_str(w, "metric"), rs__csv_str(w, "value"), rs__csv_str(w, "reason");
  rs_code rc = rs__csv_end_row(w, err);
  for (size_t k = 0; k < r->set->n_configs && !rc; k++)
    for (size_t i = 0; i < r->set->n && !rc; i++) {
      const rs__rag_sample *s = &r->set->s[i];
      if (s->config != k) continue;
      char buf[24];
      const char *key = rs__rag_sample_key(s, buf);
      for (size_t m = 0; m < cfg->n_metrics && !rc; m++) {
        const size_t nj = rs__rag_metric_uses_llm(&cfg->metrics[m]) ? cfg->n_judges : 1;
        for (size_t j = 0; j < nj && !rc; j++) {
          const value *v = value_of(r, i, m, j);
          rs__csv_str(w, key);
          config_cells(r, w, k);
          if (several_judges(r)) rs__csv_str(w, judge_name(r, m, j));
          rs__csv_str(w, cfg->metrics[m].name);
          if (v->state == V_NUMBER) rs__csv_num(w, v->v);
          else rs__csv_str(w, "");
          rs__csv_str(w, or_empty(v->reason));
          rc = rs__csv_end_row(w, err);
        }
      }
    }
  return rc;
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static rs_code write_aggregate(const rs__rag *r, rs__csv *w, rs_error *err)
{
  const rs__rag_cfg *cfg = r->cfg;
  const rs__rag_set *set = r->set;
  for (size_t c = 0; c < set->n_columns; c++) rs__csv_str(w, set->columns[c]);
  if (several_judges(r)) rs__csv_str(w, "judge");
  rs__csv_str(w, "metric"), rs__csv_str(w, "mean"), rs__csv_str(w, "n"), rs__csv_str(w, "failures");
  rs__csv_str(w, "undefined");
  if (set->has_latency) rs__csv_str(w, "latency_p50_ms"), rs__csv_str(w, "latency_p99_ms");
  if (set->has_cost) rs__csv_str(w, "cost_usd_sum");
  rs_code rc = rs__csv_end_row(w, err);
  double *lat = rs__malloc(rs__mul(set->n + 1, sizeof *lat));
  if (!lat) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t k = 0; k < set->n_configs && !rc; k++) {
    size_t n_lat = 0;
    double cost = 0.0;
    int any_cost = 0;
    for (size_t i = 0; i < set->n; i++) {
      if (set->s[i].config != k) continue;
      if (!isnan(set->s[i].latency_ms)) lat[n_lat++] = set->s[i].latency_ms;
      if (!isnan(set->s[i].cost_usd)) cost += set->s[i].cost_usd, any_cost = 1;
    }
    if (n_lat > 1) qsort(lat, n_lat, sizeof *lat, cmp_double);
    for (size_t m = 0; m < cfg->n_metrics && !rc; m++) {
      const size_t nj = rs__rag_metric_uses_llm(&cfg->metrics[m]) ? cfg->n_judges : 1;
      for (size_t j = 0; j < nj && !rc; j++) {
        const rs__rag_agg a = rs__rag_aggregate(r, k, m, j);
        config_cells(r, w, k);
        if (several_judges(r)) rs__csv_str(w, judge_name(r, m, j));
        rs__csv_str(w, cfg->metrics[m].name);
        if (a.n) rs__csv_num(w, a.mean);
        else rs__csv_str(w, "");
        rs__csv_uint(w, a.n);
        rs__csv_uint(w, a.failures + a.not_sent);
        rs__csv_uint(w, a.undefined);
        if (set->has_latency) {
          if (n_lat) rs__csv_num(w, rs__percentile_sorted(lat, n_lat, 50)), rs__csv_num(w, rs__percentile_sorted(lat, n_lat, 99));
          else rs__csv_str(w, ""), rs__csv_str(w, "");
        }
        if (set->has_cost) {
          if (any_cost) rs__csv_num(w, cost);
          else rs__csv_str(w, "");
        }
        rc = rs__csv_end_row(w, err);
      }
    }
  }
  free(lat);
  return rc;
}

/* latency.csv and latency_hist.csv in eval's layout, with the configuration
 * columns in place of run and attributes: a row (a bucket row) per
 * configuration with latencies.  Percentiles are numpy's linear ones, as
 * aggregate.csv's latency_p50_ms and latency_p99_ms (the same bits); the
 * histogram's buckets are eval's (engine/latency.h). */
static rs_code write_latency(const rs__rag *r, rs__csv *lat, rs__csv *hist, rs_error *err)
{
  static const char *const cols[] = {"n", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"};
  const rs__rag_set *set = r->set;
  for (size_t c = 0; c < set->n_columns; c++) rs__csv_str(lat, set->columns[c]), rs__csv_str(hist, set->columns[c]);
  for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) rs__csv_str(lat, cols[k]);
  rs__csv_str(hist, "le_ms"), rs__csv_str(hist, "count");
  rs_code rc = rs__csv_end_row(lat, err);
  if (!rc) rc = rs__csv_end_row(hist, err);
  double *x = rs__malloc(rs__mul(set->n + 1, sizeof *x));
  if (!x) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t k = 0; k < set->n_configs && !rc; k++) {
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++)
      if (set->s[i].config == k && !isnan(set->s[i].latency_ms)) x[n++] = set->s[i].latency_ms;
    if (n == 0) continue;
    rs__latency l;
    uint64_t bucket[RS__LATENCY_N_BOUNDS + 1];
    rs__latency_histogram(x, n, 1.0, bucket);
    if ((rc = rs__latency_summarize(x, n, "latency_ms", &l, err))) break;
    config_cells(r, lat, k);
    rs__csv_uint(lat, l.n);
    const double ms[] = {l.mean, l.p50, l.p90, l.p95, l.p99, l.p999, l.max};
    for (size_t c = 0; c < sizeof ms / sizeof *ms; c++) rs__csv_num(lat, ms[c]);
    rc = rs__csv_end_row(lat, err);
    for (size_t b = 0; b <= RS__LATENCY_N_BOUNDS && !rc; b++) {
      config_cells(r, hist, k);
      rs__csv_num(hist, b < RS__LATENCY_N_BOUNDS ? rs__latency_bounds_ms[b] : INFINITY);
      rs__csv_uint(hist, bucket[b]);
      rc = rs__csv_end_row(hist, err);
    }
  }
  free(x);
  return rc;
}

static void json_key(rs__sb *b, const char *k)
{
  rs__sb_str(b, ",\"");
  rs__sb_str(b, k);
  rs__sb_str(b, "\":");
}

static const char *cause_name(const rs__rag *r, rs__rag_kind k)
{
  for (size_t m = 0; m < r->cfg->n_metrics; m++)
    if (r->cfg->metrics[m].kind == k) return r->cfg->metrics[m].name;
  return "";
}

static rs_code write_calls(const rs__rag *r, FILE *f, rs_error *err)
{
  const rs__rag_cfg *cfg = r->cfg;
  rs__sb b = {0};
  for (size_t i = 0; i < r->n_rq; i++) {
    const rreq *q = &r->rq[i];
    const rs__llm_call *c = &r->call[i];
    const rs__rag_sample *s = &r->set->s[q->sample];
    char buf[24];
    const char *key = rs__rag_sample_key(s, buf);
    rs__sb_str(&b, "{\"sample\":");
    rs__sb_json_str(&b, key, strlen(key));
    json_key(&b, "config");
    rs__sb_str(&b, "{");
    for (size_t col = 0; col < r->set->n_columns; col++) {
      const char *name = r->set->columns[col], *val = r->set->config_values[s->config * r->set->n_columns + col];
      if (col) rs__sb_str(&b, ",");
      rs__sb_json_str(&b, name, strlen(name));
      rs__sb_str(&b, ":");
      rs__sb_json_str(&b, val, strlen(val));
    }
    rs__sb_str(&b, "}");
    const char *metric = q->kind == K_CRITERION ? cfg->metrics[q->arg].name : cause_name(r, q->cause);
    json_key(&b, "metric");
    rs__sb_json_str(&b, metric, strlen(metric));
    json_key(&b, "step");
    rs__sb_json_str(&b, step_name[q->kind], strlen(step_name[q->kind]));
    const char *model = q->kind == K_EMBED ? cfg->embed_model : cfg->judges[q->judge];
    json_key(&b, "model");
    rs__sb_json_str(&b, model, strlen(model));
    json_key(&b, "status");
    rs__sb_json_str(&b, rq_status_name[q->status], strlen(rq_status_name[q->status]));
    json_key(&b, "cached");
    rs__sb_str(&b, c->cached ? "true" : "false");
    json_key(&b, "prompt_tokens");
    if (c->prompt_tokens >= 0) rs__sb_printf(&b, "%" PRId64, c->prompt_tokens);
    else rs__sb_str(&b, "null");
    json_key(&b, "completion_tokens");
    if (c->completion_tokens >= 0) rs__sb_printf(&b, "%" PRId64, c->completion_tokens);
    else rs__sb_str(&b, "null");
    json_key(&b, "cost_usd");
    rs__sb_json_num(&b, (c->prompt_tokens > 0 ? (double)c->prompt_tokens : 0.0) * cfg->price_in / 1e6 +
                            (c->completion_tokens > 0 ? (double)c->completion_tokens : 0.0) * cfg->price_out / 1e6);
    json_key(&b, "latency_ms");
    rs__sb_json_num(&b, c->latency_ms);
    json_key(&b, "retries");
    rs__sb_printf(&b, "%d", (int)c->retries);
    if (q->status != RQ_OK && q->text) {
      json_key(&b, "error");
      rs__sb_json_str(&b, q->text, strlen(q->text));
    }
    rs__sb_str(&b, "}\n");
    char *line = rs__sb_take(&b);
    if (!line) return rs__fail(err, RS_NOMEM, "out of memory writing calls.jsonl");
    fputs(line, f);
    free(line);
  }
  return RS_OK;
}

/* agreement.csv: per LLM metric, Krippendorff's alpha (interval) of the
 * judges' per-sample values; for context_precision also Cohen's kappa of
 * every two judges' usefulness verdicts, context by context. */
static rs_code write_agreement(const rs__rag *r, rs__csv *w, rs_error *err)
{
  const rs__rag_cfg *cfg = r->cfg;
  const size_t nj = cfg->n_judges, n = r->set->n;
  rs__csv_str(w, "metric"), rs__csv_str(w, "statistic"), rs__csv_str(w, "judges"), rs__csv_str(w, "value");
  rs__csv_str(w, "n");
  rs_code rc = rs__csv_end_row(w, err);
  double *x = rs__malloc(rs__mul(rs__mul(n + 1, nj), sizeof *x));
  if (!x) return rs__fail(err, RS_NOMEM, "out of memory");
  rs__sb judges = {0};
  for (size_t j = 0; j < nj; j++) {
    if (j) rs__sb_str(&judges, ";");
    rs__sb_str(&judges, cfg->judges[j]);
  }
  for (size_t m = 0; m < cfg->n_metrics && !rc; m++) {
    if (!rs__rag_metric_uses_llm(&cfg->metrics[m])) continue;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < nj; j++) x[i * nj + j] = rs__rag_value(r, i, m, j);
    size_t pairable = 0;
    const double alpha = rs__krippendorff_alpha_interval(x, n, nj, &pairable);
    rs__csv_str(w, cfg->metrics[m].name), rs__csv_str(w, "krippendorff_alpha_interval");
    rs__csv_str(w, rs__sb_view(&judges));
    if (isnan(alpha)) rs__csv_str(w, "");
    else rs__csv_num(w, alpha);
    rs__csv_uint(w, pairable);
    rc = rs__csv_end_row(w, err);
    if (cfg->metrics[m].kind != RS_RAG_CONTEXT_PRECISION) continue;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += r->set->s[i].retrieved_contexts.n;
    int *a = rs__malloc(rs__mul(total + 1, sizeof *a)), *b = rs__malloc(rs__mul(total + 1, sizeof *b));
    for (size_t j1 = 0; j1 < nj && !rc && a && b; j1++)
      for (size_t j2 = j1 + 1; j2 < nj && !rc; j2++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
          const slot *s1 = &r->slots[i * nj + j1], *s2 = &r->slots[i * nj + j2];
          for (size_t c = 0; c < r->set->s[i].retrieved_contexts.n; c++)
            if (r->rq[s1->useful0 + c].status == RQ_OK && r->rq[s2->useful0 + c].status == RQ_OK)
              a[k] = r->rq[s1->useful0 + c].flag, b[k] = r->rq[s2->useful0 + c].flag, k++;
        }
        const double kappa = rs__cohen_kappa(a, b, k, 2);
        char pair[512];
        snprintf(pair, sizeof pair, "%s;%s", cfg->judges[j1], cfg->judges[j2]);
        rs__csv_str(w, cfg->metrics[m].name), rs__csv_str(w, "cohen_kappa_verdicts"), rs__csv_str(w, pair);
        if (isnan(kappa)) rs__csv_str(w, "");
        else rs__csv_num(w, kappa);
        rs__csv_uint(w, k);
        rc = rs__csv_end_row(w, err);
      }
    if (!a || !b) rc = rs__fail(err, RS_NOMEM, "out of memory");
    free(a), free(b);
  }
  rs__sb_free(&judges);
  free(x);
  return rc;
}

rs_code rs__rag_write(rs__rag *r, const char *dir, rs_error *err)
{
  if (r->cfg->share_n > 1)
    return rs__fail(err, RS_USAGE, "a share of the samples writes no rag outputs (merge the shares)");
  rs__csv *ps = NULL, *agg = NULL, *calls = NULL, *agree = NULL, *lat = NULL, *hist = NULL;
  rs_code rc = rs__csv_create(dir, "per_sample.csv", &ps, err);
  if (!rc) rc = write_per_sample(r, ps, err);
  if (!rc) rc = rs__csv_create(dir, "aggregate.csv", &agg, err);
  if (!rc) rc = write_aggregate(r, agg, err);
  if (!rc) rc = rs__csv_create(dir, "calls.jsonl", &calls, err);
  if (!rc) rc = write_calls(r, rs__csv_file(calls), err);
  if (!rc && several_judges(r)) {
    rc = rs__csv_create(dir, "agreement.csv", &agree, err);
    if (!rc) rc = write_agreement(r, agree, err);
  }
  if (!rc && r->set->has_latency) {
    rc = rs__csv_create(dir, "latency.csv", &lat, err);
    if (!rc) rc = rs__csv_create(dir, "latency_hist.csv", &hist, err);
    if (!rc) rc = write_latency(r, lat, hist, err);
  }
  const int agreement_written = agree != NULL, latency_written = lat != NULL;
  if (!rc) rc = rs__csv_commit(ps, err), ps = NULL;
  if (!rc) rc = rs__csv_commit(agg, err), agg = NULL;
  if (!rc) rc = rs__csv_commit(calls, err), calls = NULL;
  if (!rc && agree) rc = rs__csv_commit(agree, err), agree = NULL;
  if (!rc && lat) rc = rs__csv_commit(lat, err), lat = NULL;
  if (!rc && hist) rc = rs__csv_commit(hist, err), hist = NULL;
  /* A re-run's outputs replace the last run's whole set. */
  const char *const stale[] = {agreement_written ? NULL : "agreement.csv", latency_written ? NULL : "latency.csv",
                               latency_written ? NULL : "latency_hist.csv"};
  for (size_t i = 0; !rc && i < sizeof stale / sizeof *stale; i++) {
    if (!stale[i]) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
    unlink(path);
  }
  if (rc) {
    rs__csv_abort(ps);
    rs__csv_abort(agg);
    rs__csv_abort(calls);
    rs__csv_abort(agree);
    rs__csv_abort(lat);
    rs__csv_abort(hist);
  }
  return rc;
}
