/* judge.c: pairs, cached and concurrent LLM judgments, qrels and agreement. */
#define _GNU_SOURCE
#include "llm/judge.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/shard.h"
#include "engine/sweep.h"
#include "formats/csvio.h"
#include "formats/numparse.h"
#include "formats/qrels_map.h"
#include "formats/texts.h"
#include "llm/cache.h"
#include "llm/calls.h"
#include "llm/wire.h"
#include "metrics/spec.h"
#include "stats/agreement.h"
#include "util/strbuf.h"

/* What became of one request (one sample of one pair). */
enum {
  REQ_PENDING,    /* not answered yet */
  REQ_OK,         /* a label */
  REQ_UNPARSED,   /* a reply without a label */
  REQ_TRUNCATED,  /* finish_reason "length": the model was cut off */
  REQ_BAD_REPLY,  /* a 2xx body that is not a chat completion */
  REQ_HTTP_ERROR, /* retries exhausted, or an error that cannot heal */
  REQ_NOT_SENT    /* stopped before it was sent (budget, fatal error) */
};
static const char *const status_name[] = {"pending", "ok", "unparsed", "truncated", "bad_reply", "http_error", "not_sent"};

/* What judge adds to a call: its pair and what its reply said. */
typedef struct jreq {
  uint32_t pair;
  uint8_t status; /* REQ_* */
  int16_t label;
} jreq;

typedef struct jpair {
  uint32_t q;
  int32_t d;
  int16_t label;
  uint8_t status, cut;
} jpair;

struct rs__judge {
  const rs__judge_cfg *cfg; /* &cfg_copy: the caller's may be gone when the outputs are written */
  rs__judge_cfg cfg_copy;
  rs__corpus *c;
  rs__texts *qtexts, *dtexts;
  jpair *pair;
  size_t n_pairs;
  jreq *req;           /* [n_req]: pair and label of each request */
  rs__llm_call *call;  /* [n_call]: the requests sent or looked up, as the batch sees them */
  size_t n_req, n_call;
  size_t *call_req;    /* [n_call]: call k is request call_req[k] (cfg->skip); NULL: call k is request k */
  rs__llm_cache *cache;
  rs__llm_calls_cfg calls_cfg;
  rs__llm_calls_stats cs;
  rs__judge_stats st;
};

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- pairs -------------------------------------------------------------------- */

typedef struct pair_set {
  uint64_t *slot; /* q << 32 | d, plus one; 0 is empty */
  size_t cap, n;
  jpair *pairs;
  size_t cap_pairs;
  uint64_t retrieved;
} pair_set;

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static rs_code pair_add(pair_set *s, uint32_t q, int32_t d, rs_error *err)
{
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    uint64_t *slot = rs__calloc(cap, sizeof *slot);
    if (!slot) return rs__fail(err, RS_NOMEM, "out of memory for %zu pairs", s->n);
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->slot[i]) continue;
      size_t h = mix64(s->slot[i]) & (cap - 1);
      while (slot[h]) h = (h + 1) & (cap - 1);
      slot[h] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot, s->cap = cap;
  }
  const uint64_t key = ((uint64_t)q << 32 | (uint32_t)d) + 1;
  size_t h = mix64(key) & (s->cap - 1);
  while (s->slot[h]) {
    if (s->slot[h] == key) return RS_OK;
    h = (h + 1) & (s->cap - 1);
  }
  s->slot[h] = key;
  if (s->n == s->cap_pairs) {
    size_t cap = s->cap_pairs ? s->cap_pairs * 2 : 1024;
    jpair *p = rs__realloc(s->pairs, rs__mul(cap, sizeof *p));
    if (!p) return rs__fail(err, RS_NOMEM, "out of memory for %zu pairs", s->n);
    s->pairs = p, s->cap_pairs = cap;
  }
  s->pairs[s->n++] = (jpair){q, d, -1, REQ_PENDING, 0};
  return RS_OK;
}

static rs_code collect_top(void *ctx, size_t q, const int32_t *docs, size_t n, rs_error *err)
{
  pair_set *s = ctx;
  s->retrieved += n;
  for (size_t i = 0; i < n; i++) {
    rs_code rc = pair_add(s, (uint32_t)q, docs[i], err);
    if (rc) return rc;
  }
  return RS_OK;
}

/* A doc's external id: /docs/id, or its index in decimal. */
static const char *doc_name(const rs__corpus *c, int32_t d, char buf[16])
{
  if (c->has_docs) return c->doc_id[d];
  snprintf(buf, 16, "%" PRId32, d);
  return buf;
}

static const rs__corpus *sort_corpus; /* qsort has no context argument in C11 */
static int cmp_pair(const void *a, const void *b)
{
  const jpair *x = a, *y = b;
  if (x->q != y->q) return x->q < y->q ? -1 : 1;
  char bx[16], by[16];
  return strcmp(doc_name(sort_corpus, x->d, bx), doc_name(sort_corpus, y->d, by));
}

/* Grade of (q, d) in the corpus's qrels, or INT32_MIN when not judged. */
static int32_t human_grade(const rs__corpus *c, uint32_t q, int32_t d)
{
  for (int64_t j = c->qoff[q]; j < c->qoff[q + 1]; j++)
    if (c->qdoc[j] == d) return c->qgrade[j];
  return INT32_MIN;
}

static rs_code build_pairs(rs__judge *j, rs_error *err)
{
  const rs__judge_cfg *cfg = j->cfg;
  pair_set s = {0};
  rs_code rc = rs__corpus_load_doc_ids(j->c, err); /* the pairs are sorted by doc id */
  for (size_t r = 0; r < cfg->n_runs && !rc; r++)
    rc = rs__run_top_docs(j->c, cfg->runs[r], cfg->depth, cfg->ties_stored, collect_top, &s, err);
  free(s.slot);
  if (rc) {
    free(s.pairs);
    return rc;
  }
  j->st.retrieved = s.retrieved;
  size_t k = 0;
  for (size_t i = 0; i < s.n; i++) {
    if (cfg->holes_only && human_grade(j->c, s.pairs[i].q, s.pairs[i].d) != INT32_MIN) {
      j->st.already_judged++;
      continue;
    }
    s.pairs[k++] = s.pairs[i];
  }
  sort_corpus = j->c;
  if (k > 1) qsort(s.pairs, k, sizeof *s.pairs, cmp_pair);
  j->pair = s.pairs;
  j->n_pairs = k;
  j->st.pairs = j->st.pairs_all = k;
  return RS_OK;
}

/* Keeps the pairs of the configured share (after every text was checked,
 * so that every shard fails as one process would). */
static void keep_share(rs__judge *j)
{
  const rs__judge_cfg *cfg = j->cfg;
  if (cfg->share_n == 0) return;
  size_t lo, hi;
  rs__share_bounds(j->n_pairs, cfg->share_i, cfg->share_n, &lo, &hi);
  if (lo) memmove(j->pair, j->pair + lo, (hi - lo) * sizeof *j->pair);
  j->n_pairs = hi - lo;
  j->st.pairs = hi - lo;
  j->st.share_first = lo;
}

/* --- texts -------------------------------------------------------------------- */

static rs_code load_texts(rs__judge *j, rs_error *err)
{
  const rs__judge_cfg *cfg = j->cfg;
  rs_code rc;
  if ((rc = rs__corpus_load_queries(j->c, err))) return rc;
  if (cfg->queries_path && (rc = rs__texts_load(cfg->queries_path, &j->qtexts, err))) return rc;
  if (cfg->docs_path && (rc = rs__texts_load(cfg->docs_path, &j->dtexts, err))) return rc;
  if (!cfg->queries_path && !j->c->has_text && j->n_pairs)
    return rs__fail(err, RS_FORMAT,
                    "%s has no /queries/text: give the query texts with --queries FILE (TSV id<TAB>text, or JSONL "
                    "with _id and text), or import them with 'ragsweep import --queries'",
                    j->c->path);
  if (!cfg->docs_path && j->n_pairs) {
    if (!j->c->has_doc_text)
      return rs__fail(err, RS_FORMAT,
                      "%s has no /docs/text: give the passages with --docs FILE (TSV id<TAB>text, or BEIR-style "
                      "corpus.jsonl), or import them with 'ragsweep import --docs'",
                      j->c->path);
    if ((rc = rs__corpus_load_doc_texts(j->c, err))) return rc;
  }
  return RS_OK;
}

static const char *query_text(const rs__judge *j, uint32_t q)
{
  if (j->qtexts) return rs__texts_get(j->qtexts, j->c->query_id[q], NULL);
  return j->c->query_text[q];
}

static const char *doc_text(const rs__judge *j, int32_t d)
{
  char buf[16];
  if (j->dtexts) return rs__texts_get(j->dtexts, doc_name(j->c, d, buf), NULL);
  return j->c->doc_text[d];
}

/* Every pair's texts exist: a missing one stops before any request. */
static rs_code check_texts(const rs__judge *j, rs_error *err)
{
  const rs__judge_cfg *cfg = j->cfg;
  for (size_t i = 0; i < j->n_pairs; i++) {
    const jpair *p = &j->pair[i];
    const char *qt = query_text(j, p->q);
    if (!qt || !*qt)
      return rs__fail(err, RS_FORMAT, "query '%s' has no text in %s (%s)", j->c->query_id[p->q],
                      cfg->queries_path ? cfg->queries_path : j->c->path,
                      cfg->queries_path ? "expected a line with this id" : "/queries/text is empty for it");
    const char *dt = doc_text(j, p->d);
    if (!dt || !*dt) {
      char buf[16];
      return rs__fail(err, RS_FORMAT, "doc '%s' (retrieved for query '%s') has no text in %s (%s)",
                      doc_name(j->c, p->d, buf), j->c->query_id[p->q], cfg->docs_path ? cfg->docs_path : j->c->path,
                      cfg->docs_path ? "expected a line with this id" : "/docs/text is empty for it");
    }
  }
  return RS_OK;
}

/* --- requests ------------------------------------------------------------------ */

/* The request body of request i (malloc'd), and whether its doc was cut. */
static char *request_body(const rs__judge *j, size_t i, size_t *len, int *cut)
{
  const rs__judge_cfg *cfg = j->cfg;
  const jpair *p = &j->pair[j->req[i].pair];
  char *user = rs__prompt_render(cfg->prompt, query_text(j, p->q), doc_text(j, p->d), cfg->max_doc_chars, cut);
  if (!user) return NULL;
  rs__chat_msg msgs[2];
  size_t n = 0;
  if (cfg->prompt->system && *cfg->prompt->system) msgs[n++] = (rs__chat_msg){"system", cfg->prompt->system};
  msgs[n++] = (rs__chat_msg){"user", user};
  const rs__chat_params params = {cfg->model, cfg->temperature, cfg->max_tokens};
  char *body = rs__chat_request(&params, msgs, n, len);
  free(user);
  return body;
}

static char *render_call(void *ctx, size_t k, const char **path, size_t *len)
{
  rs__judge *j = ctx;
  const size_t i = j->call_req ? j->call_req[k] : k;
  int cut = 0;
  char *body = request_body(j, i, len, &cut);
  const size_t samples = (size_t)j->cfg->samples;
  if (cut && i % samples == 0 && !j->pair[j->req[i].pair].cut) j->pair[j->req[i].pair].cut = 1, j->st.cut++;
  *path = "/chat/completions";
  return body;
}

/* Reads a 2xx body into request i. */
static int take_call(void *ctx, size_t k, const char *body, size_t len, int cached, int64_t *prompt_tokens,
                     int64_t *completion_tokens, char **note)
{
  (void)cached;
  rs__judge *j = ctx;
  const size_t i = j->call_req ? j->call_req[k] : k;
  jreq *r = &j->req[i];
  rs__chat_reply rep;
  const rs__reply_status st = rs__chat_reply_parse(body, len, &rep);
  *prompt_tokens = rep.prompt_tokens, *completion_tokens = rep.completion_tokens;
  int label = -1, t = RS_TAKE_NO_ANSWER;
  switch (st) {
  case RS_REPLY_OK:
    if (rs__prompt_parse(j->cfg->prompt, rep.content, &label)) r->status = REQ_OK, r->label = (int16_t)label, t = RS_TAKE_ANSWER;
    else r->status = REQ_UNPARSED;
    break;
  case RS_REPLY_TRUNCATED: r->status = REQ_TRUNCATED; break;
  default:
    r->status = REQ_BAD_REPLY;
    *note = strdup(rep.error ? rep.error : "the reply is not a chat completion");
    t = RS_TAKE_BAD;
    break;
  }
  rs__chat_reply_free(&rep);
  return t;
}

static void call_progress(void *ctx, const rs__llm_calls_stats *cs)
{
  rs__judge *j = ctx;
  rs__judge_stats *s = &j->st;
  s->cached = cs->cached, s->sent = cs->sent, s->retries = cs->retries, s->done = cs->done;
  s->request_failures = cs->failed;
  s->wall_s = cs->wall_s;
  if (j->cfg->progress) j->cfg->progress(j->cfg->progress_ctx, s);
}

/* The pair's label: the most frequent among its samples' labels (ties to
 * the lower grade), when more than half of the samples gave one. */
static void resolve_pair(rs__judge *j, size_t p)
{
  const int samples = j->cfg->samples;
  jpair *pr = &j->pair[p];
  int counts[101] = {0}, ok = 0, first_bad = -1;
  for (int s = 0; s < samples; s++) {
    const jreq *r = &j->req[p * (size_t)samples + (size_t)s];
    if (r->status == REQ_OK) counts[r->label]++, ok++;
    else if (first_bad < 0 || j->req[p * (size_t)samples + (size_t)first_bad].status == REQ_NOT_SENT) first_bad = s;
  }
  if (2 * ok > samples) {
    int best = 0;
    for (int l = 1; l <= j->cfg->prompt->max_label; l++)
      if (counts[l] > counts[best]) best = l;
    pr->label = (int16_t)best;
    pr->status = REQ_OK;
    j->st.judged++;
    return;
  }
  pr->status = j->req[p * (size_t)samples + (size_t)first_bad].status;
  if (pr->status == REQ_NOT_SENT) {
    j->st.not_sent++;
    return;
  }
  j->st.failures++;
  uint64_t *kind[] = {[REQ_UNPARSED] = &j->st.unparsed, [REQ_TRUNCATED] = &j->st.truncated,
                      [REQ_BAD_REPLY] = &j->st.bad_reply, [REQ_HTTP_ERROR] = &j->st.http_error};
  if (pr->status < sizeof kind / sizeof *kind && kind[pr->status]) (*kind[pr->status])++;
}

static rs_code judge_requests(rs__judge *j, rs_error *err)
{
  const rs__judge_cfg *cfg = j->cfg;
  const size_t samples = (size_t)cfg->samples;
  j->n_req = j->n_pairs * samples;
  if (!(j->req = rs__calloc(j->n_req ? j->n_req : 1, sizeof *j->req)) ||
      !(j->call = rs__calloc(j->n_req ? j->n_req : 1, sizeof *j->call)))
    return rs__fail(err, RS_NOMEM, "out of memory for %zu requests", j->n_req);
  /* MPI: the requests the job's cache answers are another rank's to read;
   * this rank sends the rest of its share. */
  if (cfg->skip && !(j->call_req = rs__malloc(rs__mul(j->n_req ? j->n_req : 1, sizeof *j->call_req))))
    return rs__fail(err, RS_NOMEM, "out of memory for %zu requests", j->n_req);
  const size_t first = (size_t)j->st.share_first * samples;
  uint32_t expect = (uint32_t)cfg->prompt->expect_tokens;
  if (cfg->max_tokens > 0 && (uint32_t)cfg->max_tokens < expect) expect = (uint32_t)cfg->max_tokens;
  j->n_call = 0;
  for (size_t i = 0; i < j->n_req; i++) {
    j->req[i].pair = (uint32_t)(i / samples);
    j->req[i].label = -1;
    if (cfg->skip && cfg->skip[first + i]) continue;
    if (j->call_req) j->call_req[j->n_call] = i;
    j->call[j->n_call].sample = (uint32_t)(i % samples);
    j->call[j->n_call].expect_tokens = expect;
    j->n_call++;
  }
  j->st.requests = j->n_call;
  rs__llm_calls_cfg *cc = &j->calls_cfg;
  cc->http = cfg->http;
  cc->cache = j->cache;
  cc->model = cfg->model;
  cc->price_in = cfg->price_in, cc->price_out = cfg->price_out, cc->max_cost = cfg->max_cost;
  cc->dry_run = cfg->dry_run;
  cc->record_sent = cfg->record_sent;
  cc->replay = cfg->replay;
  cc->offline = cfg->offline;
  cc->render = render_call;
  cc->take = take_call;
  cc->progress = call_progress;
  cc->ctx = j;
  rs_code rc = rs__llm_calls_run(cc, j->call, j->n_call, &j->cs, err);
  const rs__llm_calls_stats *cs = &j->cs;
  rs__judge_stats *s = &j->st;
  s->cached = cs->cached, s->sent = cs->sent, s->retries = cs->retries, s->done = cs->done;
  s->request_failures = cs->failed;
  s->prompt_tokens = cs->prompt_tokens, s->completion_tokens = cs->completion_tokens;
  s->est_prompt_tokens = cs->est_prompt_tokens, s->est_completion_tokens = cs->est_completion_tokens;
  s->cost = cs->cost, s->est_cost = cs->est_cost;
  s->stopped_budget = cs->stopped_budget, s->stopped_fatal = cs->stopped_fatal;
  memcpy(s->fatal_message, cs->fatal_message, sizeof s->fatal_message);
  if (rc || cfg->dry_run || cfg->skip) return rc; /* an MPI rank writes nothing: rank 0 replays its requests */
  for (size_t i = 0; i < j->n_req; i++) {
    const uint8_t cst = j->call[i].status;
    if (cst == RS_CALL_HTTP_ERROR) j->req[i].status = REQ_HTTP_ERROR;
    else if (cst == RS_CALL_NOT_SENT) j->req[i].status = REQ_NOT_SENT;
    else if (cst == RS_CALL_BAD_REPLY) j->req[i].status = REQ_BAD_REPLY;
  }
  for (size_t p = 0; p < j->n_pairs; p++) resolve_pair(j, p);
  if (cfg->offline)
    for (size_t p = 0; p < j->n_pairs; p++) j->st.missing += j->pair[p].status == REQ_NOT_SENT;
  return RS_OK;
}

void rs__judge_missing_by_share(const rs__judge *j, size_t n, uint64_t *counts)
{
  memset(counts, 0, n * sizeof *counts);
  if (!j->cfg->offline) return;
  for (size_t p = 0; p < j->n_pairs; p++)
    if (j->pair[p].status == REQ_NOT_SENT) counts[rs__share_of(j->n_pairs, p, n)]++;
}

void rs__judge_note_ranks(rs__judge *j, int budget, int fatal, const char *message, double wall_s)
{
  j->st.wall_s = wall_s;
  if (budget) j->st.stopped_budget = 1;
  if (fatal && !j->st.stopped_fatal) {
    j->st.stopped_fatal = 1;
    snprintf(j->st.fatal_message, sizeof j->st.fatal_message, "%s", message);
  }
}

void rs__judge_cached_requests(const rs__judge *j, uint8_t *out)
{
  for (size_t i = 0; i < j->n_call; i++) out[j->call_req ? j->call_req[i] : i] = j->call[i].cached;
}

rs_code rs__judge_run(const rs__judge_cfg *cfg, rs__judge **out, rs_error *err)
{
  *out = NULL;
  if (cfg->samples < 1 || cfg->samples > 1000 || cfg->prompt->max_label > 100)
    return rs__fail(err, RS_USAGE, "--samples: expected 1 to 1000, found %d", cfg->samples);
  rs__judge *j = rs__calloc(1, sizeof *j);
  if (!j) return rs__fail(err, RS_NOMEM, "out of memory");
  const double t0 = now_s();
  j->cfg_copy = *cfg;
  j->cfg = cfg = &j->cfg_copy;
  j->c = cfg->corpus;
  *out = j;
  rs_code rc;
  if ((rc = build_pairs(j, err)) || (rc = load_texts(j, err)) || (rc = check_texts(j, err))) return rc;
  keep_share(j);
  /* A dry run creates nothing: without a cache file, nothing is cached. */
  struct stat st;
  if (!cfg->dry_run || stat(cfg->cache_path, &st) == 0)
    if ((rc = rs__llm_cache_open(cfg->cache_path, &j->cache, err))) return rc;
  rc = judge_requests(j, err);
  j->st.wall_s = now_s() - t0;
  return rc;
}

const rs__judge_stats *rs__judge_get_stats(const rs__judge *j) { return &j->st; }

void rs__judge_free(rs__judge *j)
{
  if (!j) return;
  rs__llm_calls_clear(j->call, j->n_call);
  free(j->call);
  free(j->call_req);
  free(j->req);
  free(j->pair);
  rs__texts_free(j->qtexts);
  rs__texts_free(j->dtexts);
  rs__llm_cache_close(j->cache);
  free(j);
}

/* --- outputs ------------------------------------------------------------------- */

static rs_code write_qrels(const rs__judge *j, FILE *f)
{
  char buf[16];
  for (size_t i = 0; i < j->n_pairs; i++) {
    const jpair *p = &j->pair[i];
    if (p->status != REQ_OK) continue;
    fprintf(f, "%s 0 %s %d\n", j->c->query_id[p->q], doc_name(j->c, p->d, buf), p->label);
  }
  return RS_OK;
}

/* The model's text of request i, from the cache (malloc'd), or NULL. */
static char *reply_text(const rs__judge *j, size_t i, rs_error *err, rs_code *rc)
{
  const jreq *r = &j->req[i];
  *rc = RS_OK;
  if (r->status != REQ_OK && r->status != REQ_UNPARSED && r->status != REQ_TRUNCATED) return NULL;
  size_t len = 0;
  char *body = rs__llm_calls_reply_body(&j->calls_cfg, &j->call[i], &len, err, rc);
  if (!body) return NULL;
  rs__chat_reply rep;
  rs__chat_reply_parse(body, len, &rep);
  char *text = rep.content ? strdup(rep.content) : NULL;
  rs__chat_reply_free(&rep);
  free(body);
  return text;
}

static void json_key(rs__sb *b, const char *k)
{
  rs__sb_str(b, ",\"");
  rs__sb_str(b, k);
  rs__sb_str(b, "\":");
}

static void json_tokens(rs__sb *b, const char *k, int64_t sum, int any)
{
  json_key(b, k);
  if (any) rs__sb_printf(b, "%" PRId64, sum);
  else rs__sb_str(b, "null");
}

static rs_code write_judgments(const rs__judge *j, FILE *f, rs_error *err)
{
  const size_t samples = (size_t)j->cfg->samples;
  char buf[16];
  rs_code rc = RS_OK;
  rs__sb b = {0};
  for (size_t i = 0; i < j->n_pairs && !rc; i++) {
    const jpair *p = &j->pair[i];
    const jreq *r0 = &j->req[i * samples];
    rs__sb_str(&b, "{\"query_id\":");
    const char *qid = j->c->query_id[p->q], *did = doc_name(j->c, p->d, buf);
    rs__sb_json_str(&b, qid, strlen(qid));
    json_key(&b, "doc_id");
    rs__sb_json_str(&b, did, strlen(did));
    json_key(&b, "label");
    if (p->status == REQ_OK) rs__sb_printf(&b, "%d", p->label);
    else rs__sb_str(&b, "null");
    json_key(&b, "reply");
    if (samples > 1) rs__sb_str(&b, "[");
    int64_t pt = 0, ct = 0;
    int any_pt = 0, any_ct = 0, cached = 1, retries = 0;
    double latency = 0.0;
    for (size_t s = 0; s < samples; s++) {
      const rs__llm_call *r = &j->call[i * samples + s];
      char *text = reply_text(j, i * samples + s, err, &rc);
      if (rc) break;
      if (s) rs__sb_str(&b, ",");
      if (text) rs__sb_json_str(&b, text, strlen(text));
      else rs__sb_str(&b, "null");
      free(text);
      if (r->prompt_tokens >= 0) pt += r->prompt_tokens, any_pt = 1;
      if (r->completion_tokens >= 0) ct += r->completion_tokens, any_ct = 1;
      if (!r->cached) cached = 0;
      latency += r->latency_ms;
      retries += r->retries;
    }
    if (rc) break;
    if (samples > 1) rs__sb_str(&b, "]");
    json_key(&b, "status");
    rs__sb_json_str(&b, status_name[p->status], strlen(status_name[p->status]));
    json_tokens(&b, "prompt_tokens", pt, any_pt);
    json_tokens(&b, "completion_tokens", ct, any_ct);
    json_key(&b, "latency_ms");
    rs__sb_json_num(&b, latency);
    json_key(&b, "cached");
    rs__sb_str(&b, cached && r0->status != REQ_NOT_SENT ? "true" : "false");
    json_key(&b, "retries");
    rs__sb_printf(&b, "%d", retries);
    json_key(&b, "doc_cut");
    rs__sb_str(&b, p->cut ? "true" : "false");
    for (size_t s = 0; s < samples; s++) {
      const rs__llm_call *r = &j->call[i * samples + s];
      if (!r->note) continue;
      json_key(&b, "error");
      rs__sb_json_str(&b, r->note, strlen(r->note));
      break;
    }
    rs__sb_str(&b, "}\n");
    char *line = rs__sb_take(&b);
    if (!line) {
      rc = rs__fail(err, RS_NOMEM, "out of memory writing judgments.jsonl");
      break;
    }
    fputs(line, f);
    free(line);
  }
  rs__sb_free(&b);
  return rc;
}

/* Kendall's tau-b between the run orders that two sets of qrels give on
 * nDCG@10 and Success@10 (NaN with fewer than two runs). */
static rs_code system_taus(rs__judge *j, double tau[2], rs_error *err)
{
  const rs__judge_cfg *cfg = j->cfg;
  tau[0] = tau[1] = NAN;
  if (cfg->n_runs < 2) return RS_OK;
  static const char *const names[] = {"nDCG@10", "Success@10"};
  size_t max_k = 0;
  for (size_t r = 0; r < cfg->n_runs; r++)
    if (!cfg->runs[r]->csr && cfg->runs[r]->k > max_k) max_k = cfg->runs[r]->k;
  rs__spec *spec = NULL;
  rs_code rc = rs__spec_build(names, 2, max_k, &spec, err);
  if (rc) return rc;
  const size_t n = cfg->n_runs;
  uint32_t *q = rs__malloc(rs__mul(j->n_pairs, sizeof *q));
  int32_t *d = rs__malloc(rs__mul(j->n_pairs, sizeof *d)), *g = rs__malloc(rs__mul(j->n_pairs, sizeof *g));
  rs__run_result *human = rs__calloc(n, sizeof *human), *llm = rs__calloc(n, sizeof *llm);
  double *x = rs__malloc(rs__mul(2 * n, sizeof *x)), *y = rs__malloc(rs__mul(2 * n, sizeof *y));
  int64_t *qoff = NULL;
  int32_t *qdoc = NULL, *qgrade = NULL;
  if (!q || !d || !g || !human || !llm || !x || !y) rc = rs__fail(err, RS_NOMEM, "out of memory");
  size_t m = 0;
  for (size_t i = 0; !rc && i < j->n_pairs; i++)
    if (j->pair[i].status == REQ_OK) q[m] = j->pair[i].q, d[m] = j->pair[i].d, g[m] = j->pair[i].label, m++;
  if (!rc) rc = rs__qrels_map_triples(j->c->nq, m, q, d, g, &qoff, &qdoc, &qgrade, err);
  rs__sweep_cfg sc = {0};
  sc.spec = spec;
  sc.ties_stored = cfg->ties_stored;
  if (!rc) rc = rs__sweep(&sc, j->c, cfg->runs, n, human, err);
  rs__corpus with_llm = *j->c; /* the same corpus seen through the LLM's qrels */
  with_llm.qoff = qoff, with_llm.qdoc = qdoc, with_llm.qgrade = qgrade;
  if (!rc) rc = rs__sweep(&sc, &with_llm, cfg->runs, n, llm, err);
  for (size_t k = 0; !rc && k < 2; k++) {
    for (size_t r = 0; r < n; r++) x[r] = human[r].value[k], y[r] = llm[r].value[k];
    tau[k] = rs__kendall_tau_b(x, y, n);
  }
  for (size_t r = 0; r < n; r++) {
    if (human) rs__run_result_free(&human[r]);
    if (llm) rs__run_result_free(&llm[r]);
  }
  free(human), free(llm), free(x), free(y), free(q), free(d), free(g), free(qoff), free(qdoc), free(qgrade);
  rs__spec_free(spec);
  return rc;
}

static void stat_row(rs__csv *w, const char *name, double v)
{
  rs__csv_str(w, name);
  if (isnan(v)) rs__csv_str(w, "");
  else rs__csv_num(w, v);
}

/* agreement.csv, when the corpus's qrels judge some of the labelled pairs;
 * *w stays NULL otherwise. */
static rs_code write_agreement(rs__judge *j, const char *dir, rs__csv **w, rs_error *err)
{
  size_t n = 0;
  int max_h = 0, max_l = j->cfg->prompt->max_label;
  for (size_t i = 0; i < j->n_pairs; i++) {
    const jpair *p = &j->pair[i];
    const int32_t h = p->status == REQ_OK ? human_grade(j->c, p->q, p->d) : INT32_MIN;
    if (h < 0) continue; /* not judged by people, or judged unusable (negative grade) */
    if (h > max_h) max_h = h > 100 ? 100 : h;
    n++;
  }
  if (n == 0) return RS_OK;
  int *hum = rs__malloc(rs__mul(n, sizeof *hum)), *lab = rs__malloc(rs__mul(n, sizeof *lab));
  int *hb = rs__malloc(rs__mul(n, sizeof *hb)), *lb = rs__malloc(rs__mul(n, sizeof *lb));
  const int levels = (max_h > max_l ? max_h : max_l) + 1;
  uint64_t *conf = rs__calloc((size_t)levels * (size_t)levels, sizeof *conf);
  rs_code rc = RS_OK;
  if (!hum || !lab || !hb || !lb || !conf) rc = rs__fail(err, RS_NOMEM, "out of memory");
  size_t k = 0, same = 0;
  for (size_t i = 0; !rc && i < j->n_pairs; i++) {
    const jpair *p = &j->pair[i];
    int32_t h = p->status == REQ_OK ? human_grade(j->c, p->q, p->d) : INT32_MIN;
    if (h < 0) continue;
    if (h > 100) h = 100;
    hum[k] = h, lab[k] = p->label, hb[k] = h >= 1, lb[k] = p->label >= 1;
    same += hb[k] == lb[k];
    k++;
  }
  double tau[2] = {NAN, NAN};
  if (!rc) rc = system_taus(j, tau, err);
  if (!rc) rc = rs__csv_create(dir, "agreement.csv", w, err);
  if (!rc) {
    rs__confusion(hum, levels, lab, levels, n, conf);
    rs__csv_str(*w, "statistic"), rs__csv_str(*w, "value");
    rc = rs__csv_end_row(*w, err);
    rs__csv_str(*w, "pairs"), rs__csv_uint(*w, n);
    if (!rc) rc = rs__csv_end_row(*w, err);
    stat_row(*w, "agreement", (double)same / (double)n);
    if (!rc) rc = rs__csv_end_row(*w, err);
    stat_row(*w, "kappa", rs__cohen_kappa(hb, lb, n, 2));
    if (!rc) rc = rs__csv_end_row(*w, err);
    stat_row(*w, "weighted_kappa", rs__weighted_kappa(hum, lab, n, levels, RS_KAPPA_LINEAR));
    if (!rc) rc = rs__csv_end_row(*w, err);
    for (int h = 0; h <= max_h && !rc; h++)
      for (int l = 0; l <= max_l && !rc; l++) {
        char name[64];
        snprintf(name, sizeof name, "confusion_h%d_l%d", h, l);
        rs__csv_str(*w, name), rs__csv_uint(*w, conf[(size_t)h * (size_t)levels + (size_t)l]);
        rc = rs__csv_end_row(*w, err);
      }
    stat_row(*w, "tau_nDCG@10", tau[0]);
    if (!rc) rc = rs__csv_end_row(*w, err);
    stat_row(*w, "tau_Success@10", tau[1]);
    if (!rc) rc = rs__csv_end_row(*w, err);
  }
  free(hum), free(lab), free(hb), free(lb), free(conf);
  return rc;
}

rs_code rs__judge_write(rs__judge *j, const char *dir, rs_error *err)
{
  if (j->cfg->share_n > 1 || j->cfg->skip)
    return rs__fail(err, RS_USAGE, "a share of the pairs writes no judge outputs (merge the shares)");
  rs__csv *qrels = NULL, *jsonl = NULL, *agree = NULL;
  rs_code rc = rs__csv_create(dir, "qrels.txt", &qrels, err);
  if (!rc) rc = write_qrels(j, rs__csv_file(qrels));
  if (!rc) rc = rs__csv_create(dir, "judgments.jsonl", &jsonl, err);
  if (!rc) rc = write_judgments(j, rs__csv_file(jsonl), err);
  if (!rc && !j->cfg->dry_run) rc = write_agreement(j, dir, &agree, err);
  const int agree_written = agree != NULL;
  /* Renamed into place only when all are complete; a stale agreement.csv
   * of an earlier judging must not sit beside these qrels. */
  if (!rc) rc = rs__csv_commit(qrels, err), qrels = NULL;
  if (!rc) rc = rs__csv_commit(jsonl, err), jsonl = NULL;
  if (!rc && agree) rc = rs__csv_commit(agree, err), agree = NULL;
  if (!rc && !j->cfg->dry_run && !agree_written) {
    char path[4200];
    snprintf(path, sizeof path, "%s/agreement.csv", dir);
    unlink(path);
  }
  if (rc) {
    rs__csv_abort(qrels);
    rs__csv_abort(jsonl);
    rs__csv_abort(agree);
  }
  return rc;
}
