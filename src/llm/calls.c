/* calls.c: a batch of LLM requests through the reply cache and the HTTP pool. */
#define _GNU_SOURCE
#include "llm/calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/wire.h"
#include "util/sha256.h"

#define NO_TWIN SIZE_MAX

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- the replay of requests sent elsewhere -------------------------------------- */

typedef struct replay_entry {
  uint8_t key[32];
  int status; /* RS_CALL_OK, RS_CALL_BAD_REPLY or RS_CALL_HTTP_ERROR */
  int32_t retries;
  double latency_ms;
  char *note, *body;
  size_t body_len;
  int claimed; /* a run met its key: later calls of it are cache hits */
} replay_entry;

struct rs__llm_replay {
  replay_entry *e;
  size_t n, cap;
  size_t *slot; /* open addressing: entry index + 1, 0 empty */
  size_t n_slots;
};

static size_t key_hash(const uint8_t *k)
{
  uint64_t h;
  memcpy(&h, k, sizeof h); /* a SHA-256 is uniform: its first bytes are a hash */
  return (size_t)h;
}

static replay_entry *replay_find(const rs__llm_replay *r, const uint8_t *key)
{
  if (!r || !r->n_slots) return NULL;
  for (size_t s = key_hash(key) & (r->n_slots - 1); r->slot[s]; s = (s + 1) & (r->n_slots - 1))
    if (memcmp(r->e[r->slot[s] - 1].key, key, 32) == 0) return &r->e[r->slot[s] - 1];
  return NULL;
}

static rs_code replay_grow(rs__llm_replay *r, rs_error *err)
{
  if (r->n == r->cap) {
    const size_t cap = r->cap ? 2 * r->cap : 256;
    replay_entry *e = rs__realloc(r->e, rs__mul(cap, sizeof *e));
    if (!e) return rs__fail(err, RS_NOMEM, "out of memory for %zu sent requests", cap);
    r->e = e, r->cap = cap;
  }
  if (2 * (r->n + 1) > r->n_slots) {
    const size_t n_slots = r->n_slots ? 2 * r->n_slots : 512;
    size_t *slot = rs__calloc(n_slots, sizeof *slot);
    if (!slot) return rs__fail(err, RS_NOMEM, "out of memory for %zu sent requests", r->n);
    for (size_t i = 0; i < r->n; i++) {
      size_t s = key_hash(r->e[i].key) & (n_slots - 1);
      while (slot[s]) s = (s + 1) & (n_slots - 1);
      slot[s] = i + 1;
    }
    free(r->slot);
    r->slot = slot, r->n_slots = n_slots;
  }
  return RS_OK;
}

static rs_code replay_take(void *ctx, const rs__sent_outcome *o, rs_error *err)
{
  rs__llm_replay *r = ctx;
  replay_entry *e = replay_find(r, o->key);
  if (e && (e->status == RS_CALL_OK || o->status != RS_CALL_OK)) return RS_OK; /* a reply stays; the first stays */
  rs_code rc;
  if (!e) {
    if ((rc = replay_grow(r, err))) return rc;
    e = &r->e[r->n];
    memset(e, 0, sizeof *e);
    memcpy(e->key, o->key, 32);
    size_t s = key_hash(o->key) & (r->n_slots - 1);
    while (r->slot[s]) s = (s + 1) & (r->n_slots - 1);
    r->slot[s] = ++r->n;
  }
  free(e->note), free(e->body);
  e->note = e->body = NULL;
  e->status = o->status, e->retries = o->retries, e->latency_ms = o->latency_ms;
  e->body_len = o->body ? o->body_len : 0;
  if ((o->note && !(e->note = strdup(o->note))) || !(e->body = rs__malloc(e->body_len + 1)))
    return rs__fail(err, RS_NOMEM, "out of memory for a sent request");
  if (e->body_len) memcpy(e->body, o->body, e->body_len);
  e->body[e->body_len] = '\0';
  return RS_OK;
}

rs_code rs__llm_replay_add(rs__llm_replay **r, const char *path, rs_error *err)
{
  if (!*r && !(*r = rs__calloc(1, sizeof **r))) return rs__fail(err, RS_NOMEM, "out of memory");
  return rs__llm_cache_each_sent(path, replay_take, *r, err);
}

size_t rs__llm_replay_size(const rs__llm_replay *r) { return r ? r->n : 0; }

void rs__llm_replay_reset(rs__llm_replay *r)
{
  for (size_t i = 0; r && i < r->n; i++) r->e[i].claimed = 0;
}

void rs__llm_replay_free(rs__llm_replay *r)
{
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) free(r->e[i].note), free(r->e[i].body);
  free(r->e);
  free(r->slot);
  free(r);
}

/* The batch of one rs__llm_calls_run. */
typedef struct batch {
  const rs__llm_calls_cfg *cfg;
  rs__llm_call *calls;
  rs__llm_calls_stats *st;
  char *base_url;  /* without a trailing '/' */
  size_t *todo;    /* call indexes to send, in order */
  size_t n_todo, next_todo;
  /* Identical requests in one batch (rag asks for the same reference's
   * statements in every configuration) are sent once: the others follow
   * the first, chained through next_twin, and get its reply. */
  size_t *next_twin;   /* [n]: the next call with the same key, or NO_TWIN */
  uint32_t *key_slot;  /* open addressing over the uncached keys: call index + 1, 0 empty */
  size_t n_slots;
  double inflight_cost;      /* estimated USD of the requests in flight */
  uint64_t gave_up_in_a_row; /* requests that exhausted their retries, since the last success */
  rs_error cache_err;
  rs_code cache_rc;
} batch;

/* The cache key: everything that can change the answer, never the API key.
 * The layout is that of the first cache version: judge's keys stay valid. */
static void call_key(const char *base_url, const char *path, const char *body, size_t len, unsigned sample,
                     uint8_t key[32])
{
  static const char tag[] = "ragsweep-llm-cache-1\n";
  char num[32];
  const int nn = snprintf(num, sizeof num, "\n%u", sample);
  rs__sha256_ctx h;
  rs__sha256_init(&h);
  rs__sha256_update(&h, tag, sizeof tag - 1);
  rs__sha256_update(&h, base_url, strlen(base_url));
  rs__sha256_update(&h, "\n", 1);
  rs__sha256_update(&h, path, strlen(path));
  rs__sha256_update(&h, "\n", 1);
  rs__sha256_update(&h, body, len);
  rs__sha256_update(&h, num, (size_t)nn);
  rs__sha256_final(&h, key);
}

/* The earlier uncached call of this batch with call i's key, or NO_TWIN
 * (then i is recorded as the first of its key). */
static size_t first_twin(batch *b, size_t i)
{
  const uint8_t *k = b->calls[i].key;
  uint64_t h;
  memcpy(&h, k, sizeof h); /* a SHA-256 is uniform: its first bytes are a hash */
  for (size_t s = (size_t)h & (b->n_slots - 1);; s = (s + 1) & (b->n_slots - 1)) {
    if (!b->key_slot[s]) {
      b->key_slot[s] = (uint32_t)(i + 1);
      return NO_TWIN;
    }
    const size_t j = b->key_slot[s] - 1;
    if (memcmp(b->calls[j].key, k, 32) == 0) return j;
  }
}

/* Prompt tokens are estimated at 4 bytes each plus 8 for the framing: the
 * usual rule of thumb for English with OpenAI's tokenizers. */
static uint64_t estimate_prompt_tokens(size_t body_len) { return (uint64_t)(body_len + 3) / 4 + 8; }

static double cost_of(const rs__llm_calls_cfg *cfg, double prompt_tokens, double completion_tokens)
{
  return prompt_tokens * cfg->price_in / 1e6 + completion_tokens * cfg->price_out / 1e6;
}

static void count_tokens(rs__llm_calls_stats *st, const rs__llm_call *c)
{
  if (c->prompt_tokens > 0) st->prompt_tokens += (uint64_t)c->prompt_tokens;
  if (c->completion_tokens > 0) st->completion_tokens += (uint64_t)c->completion_tokens;
}

/* Hands a 2xx body to the caller; 1 when it is to be cached. */
static int take_reply(batch *b, size_t i, const char *body, size_t len, int cached)
{
  rs__llm_call *c = &b->calls[i];
  char *note = NULL;
  const int t = b->cfg->take(b->cfg->ctx, i, body, len, cached, &c->prompt_tokens, &c->completion_tokens, &note);
  if (t == RS_TAKE_BAD) {
    c->status = RS_CALL_BAD_REPLY;
    free(c->note);
    c->note = note ? note : strdup("the reply is not a completion");
    b->st->failed++;
    return 0;
  }
  free(note);
  c->status = RS_CALL_OK;
  if (t == RS_TAKE_NO_ANSWER) b->st->failed++;
  return 1;
}

void rs__scrub_keys(char *msg, const char *key)
{
  const size_t nk = key ? strlen(key) : 0;
  for (char *p = msg; *p;) {
    const int is_key = nk >= 4 && strncmp(p, key, nk) == 0;
    if (is_key || ((p == msg || p[-1] == ' ' || p[-1] == ':' || p[-1] == '\'') && strncmp(p, "sk-", 3) == 0)) {
      size_t n = is_key ? nk : strcspn(p, " \t\n,;\"'");
      const char mark[] = "[key]";
      const size_t m = n < sizeof mark - 1 ? n : sizeof mark - 1;
      memcpy(p, mark, m);
      memmove(p + m, p + n, strlen(p + n) + 1);
      p += m;
      continue;
    }
    p++;
  }
}

static int next_request(void *ctx, const char **path, char **body, size_t *body_len, size_t *tag)
{
  batch *b = ctx;
  const rs__llm_calls_cfg *cfg = b->cfg;
  if (b->next_todo >= b->n_todo || b->st->stopped_fatal || b->st->stopped_budget || b->cache_rc) return 0;
  const size_t i = b->todo[b->next_todo];
  char *body_i = cfg->render(cfg->ctx, i, path, body_len);
  if (!body_i) return 0;
  if (cfg->max_cost >= 0) {
    const double est = cost_of(cfg, (double)estimate_prompt_tokens(*body_len), (double)b->calls[i].expect_tokens);
    if (b->st->cost + b->inflight_cost + est > cfg->max_cost) {
      free(body_i);
      b->st->stopped_budget = 1;
      return 0;
    }
    b->inflight_cost += est;
    b->calls[i].est_cost = est;
  }
  b->next_todo++;
  *body = body_i;
  *tag = i;
  return 1;
}

static int request_done(void *ctx, const rs__http_result *res)
{
  batch *b = ctx;
  const rs__llm_calls_cfg *cfg = b->cfg;
  rs__llm_calls_stats *st = b->st;
  rs__llm_call *c = &b->calls[res->tag];
  c->retries = res->retries;
  c->latency_ms = res->latency_ms;
  st->sent++, st->done++;
  st->retries += (uint64_t)res->retries;
  b->inflight_cost -= c->est_cost;
  if (res->outcome == RS_HTTP_OK) {
    b->gave_up_in_a_row = 0;
    if (take_reply(b, res->tag, res->body, res->body_len, 0)) {
      /* Stored before anything else happens to it: a kill after this line
       * loses nothing. */
      const rs__cache_entry e = {(char *)res->body, res->body_len, res->status, c->prompt_tokens,
                                 c->completion_tokens, res->latency_ms, (char *)cfg->model, (int64_t)time(NULL)};
      if (!b->cache_rc) b->cache_rc = rs__llm_cache_put(cfg->cache, c->key, &e, &b->cache_err);
    }
    count_tokens(st, c);
    st->cost += cost_of(cfg, c->prompt_tokens > 0 ? (double)c->prompt_tokens : 0.0,
                        c->completion_tokens > 0 ? (double)c->completion_tokens : 0.0);
  } else {
    c->status = RS_CALL_HTTP_ERROR;
    st->failed++;
    char *msg = res->status ? rs__llm_error_message(res->body, res->body_len) : NULL;
    if (msg && strstr(res->message, msg)) free(msg), msg = NULL; /* the transport quoted it already */
    if (msg) rs__scrub_keys(msg, cfg->http.api_key);
    char text[800];
    snprintf(text, sizeof text, "%s%s%s", res->message, msg ? ": " : "", msg ? msg : "");
    free(msg);
    free(c->note);
    c->note = strdup(text);
    /* A server that is down fails every request after all its retries;
     * going on would take hours and answer nothing. */
    const uint64_t limit = cfg->http.concurrency < 4 ? 4 : (uint64_t)cfg->http.concurrency;
    const int down = res->outcome == RS_HTTP_GAVE_UP && ++b->gave_up_in_a_row >= limit;
    if ((res->outcome == RS_HTTP_FATAL || down) && !st->stopped_fatal) {
      st->stopped_fatal = 1;
      if (down)
        snprintf(st->fatal_message, sizeof st->fatal_message,
                 "%llu requests in a row failed after %d retries each (last: %s); is the server at %s up?",
                 (unsigned long long)b->gave_up_in_a_row, cfg->http.max_retries, text, b->base_url);
      else snprintf(st->fatal_message, sizeof st->fatal_message, "%s", text);
    }
  }
  if (cfg->record_sent && !b->cache_rc) {
    const int bad = c->status == RS_CALL_BAD_REPLY;
    const rs__sent_outcome o = {c->key, c->status, c->retries, c->latency_ms, c->note,
                                bad ? res->body : NULL, bad ? res->body_len : 0};
    b->cache_rc = rs__llm_cache_put_sent(cfg->cache, &o, &b->cache_err);
  }
  /* The same reply for every identical request of the batch. */
  for (size_t t = b->next_twin ? b->next_twin[res->tag] : NO_TWIN; t != NO_TWIN; t = b->next_twin[t]) {
    rs__llm_call *tc = &b->calls[t];
    tc->cached = 1;
    tc->latency_ms = res->latency_ms;
    if (c->status == RS_CALL_OK || c->status == RS_CALL_BAD_REPLY) {
      take_reply(b, t, res->body, res->body_len, 1);
      count_tokens(st, tc);
    } else {
      tc->status = c->status;
      st->failed++;
      free(tc->note);
      tc->note = c->note ? strdup(c->note) : NULL;
    }
    st->cached++, st->done++;
  }
  st->wall_s = now_s() - st->start_s;
  if (cfg->progress) cfg->progress(cfg->ctx, st);
  return b->cache_rc != RS_OK || st->stopped_fatal;
}

static char *trimmed_base_url(const char *url)
{
  char *s = strdup(url ? url : "");
  if (!s) return NULL;
  size_t n = strlen(s);
  while (n && s[n - 1] == '/') s[--n] = '\0';
  return s;
}

/* Offline, a call the cache does not answer: a failure recorded where it
 * was sent, taken as that process took it (its first call of the key in the
 * batch as sent, the others as the twins request_done answers), or
 * missing. */
static void replay_offline(batch *b, size_t i)
{
  rs__llm_calls_stats *st = b->st;
  rs__llm_call *c = &b->calls[i];
  const int twin = first_twin(b, i) != NO_TWIN;
  const replay_entry *o = replay_find(b->cfg->replay, c->key);
  if (!o || o->status == RS_CALL_OK) { /* a reply the merged caches lost, or never had */
    c->status = RS_CALL_NOT_SENT;
    st->missing++;
    return;
  }
  c->latency_ms = o->latency_ms;
  if (o->status == RS_CALL_BAD_REPLY) {
    take_reply(b, i, o->body, o->body_len, twin);
    count_tokens(st, c);
    if (!twin)
      st->cost += cost_of(b->cfg, c->prompt_tokens > 0 ? (double)c->prompt_tokens : 0.0,
                          c->completion_tokens > 0 ? (double)c->completion_tokens : 0.0);
  } else {
    c->status = RS_CALL_HTTP_ERROR;
    st->failed++;
    free(c->note);
    c->note = strdup(o->note ? o->note : "");
  }
  if (twin) {
    c->cached = 1;
    st->cached++, st->done++;
  } else {
    c->retries = o->retries;
    st->retries += (uint64_t)o->retries;
    st->sent++, st->done++;
  }
}

rs_code rs__llm_calls_run(const rs__llm_calls_cfg *cfg, rs__llm_call *calls, size_t n, rs__llm_calls_stats *st,
                          rs_error *err)
{
  if (st->start_s == 0) st->start_s = now_s();
  batch b = {.cfg = cfg, .calls = calls, .st = st};
  st->requests += n;
  b.n_slots = 16;
  while (b.n_slots < 2 * n) b.n_slots *= 2;
  if (n > UINT32_MAX - 1 || !(b.base_url = trimmed_base_url(cfg->http.base_url)) ||
      !(b.todo = rs__malloc(rs__mul(n ? n : 1, sizeof *b.todo))) ||
      !(b.next_twin = rs__malloc(rs__mul(n ? n : 1, sizeof *b.next_twin))) ||
      !(b.key_slot = rs__calloc(b.n_slots, sizeof *b.key_slot))) {
    free(b.base_url), free(b.todo), free(b.next_twin);
    return rs__fail(err, RS_NOMEM, "out of memory for %zu requests", n);
  }
  for (size_t i = 0; i < n; i++) b.next_twin[i] = NO_TWIN;
  rs_code rc = RS_OK;
  /* Keys first: what is cached is answered without the network. */
  for (size_t i = 0; i < n && !rc; i++) {
    rs__llm_call *c = &calls[i];
    c->prompt_tokens = c->completion_tokens = -1;
    const char *path = NULL;
    size_t len = 0;
    char *body = cfg->render(cfg->ctx, i, &path, &len);
    if (!body) {
      rc = rs__fail(err, RS_NOMEM, "out of memory rendering a request");
      break;
    }
    call_key(b.base_url, path, body, len, c->sample, c->key);
    free(body);
    int found = 0;
    if (cfg->dry_run && !cfg->dry_run_reads) {
      if (cfg->cache && (rc = rs__llm_cache_has(cfg->cache, c->key, &found, err))) break;
      if (found || first_twin(&b, i) != NO_TWIN) {
        st->cached++;
        c->cached = 1;
      } else {
        st->est_prompt_tokens += estimate_prompt_tokens(len);
        st->est_completion_tokens += c->expect_tokens;
      }
      continue;
    }
    rs__cache_entry e = {0};
    if (cfg->cache && (rc = rs__llm_cache_get(cfg->cache, c->key, &e, &found, err))) break;
    if (found) {
      c->cached = 1;
      c->latency_ms = e.latency_ms;
      take_reply(&b, i, e.body, e.body_len, 1);
      rs__cache_entry_free(&e);
      count_tokens(st, c);
      replay_entry *o = cfg->offline ? replay_find(cfg->replay, c->key) : NULL;
      if (o && !o->claimed) { /* the call that sent it */
        o->claimed = 1;
        c->cached = 0;
        c->retries = o->retries;
        st->retries += (uint64_t)o->retries;
        st->cost += cost_of(cfg, c->prompt_tokens > 0 ? (double)c->prompt_tokens : 0.0,
                            c->completion_tokens > 0 ? (double)c->completion_tokens : 0.0);
        st->sent++, st->done++;
      } else st->cached++, st->done++;
    } else if (cfg->offline) {
      replay_offline(&b, i);
    } else {
      const size_t twin = first_twin(&b, i);
      if (twin != NO_TWIN) { /* answered when its first twin is */
        b.next_twin[i] = b.next_twin[twin];
        b.next_twin[twin] = i;
        if (cfg->dry_run) st->cached++, c->cached = 1;
        continue;
      }
      b.todo[b.n_todo++] = i;
      st->est_prompt_tokens += estimate_prompt_tokens(len);
      st->est_completion_tokens += c->expect_tokens;
    }
  }
  st->est_cost = cost_of(cfg, (double)st->est_prompt_tokens, (double)st->est_completion_tokens);
  if (!rc && !cfg->dry_run) {
    if (cfg->progress) cfg->progress(cfg->ctx, st);
    if (b.n_todo && !st->stopped_fatal && !st->stopped_budget) {
      rs__http_stats hs = {0};
      rc = rs__http_run(&cfg->http, next_request, request_done, &b, &hs, err);
      if (!rc && b.cache_rc) {
        *err = b.cache_err;
        rc = b.cache_rc;
      }
    }
    for (size_t i = 0; i < n; i++)
      if (calls[i].status == RS_CALL_PENDING) calls[i].status = RS_CALL_NOT_SENT;
  }
  st->wall_s = now_s() - st->start_s;
  free(b.todo);
  free(b.next_twin);
  free(b.key_slot);
  free(b.base_url);
  return rc;
}

void rs__llm_calls_clear(rs__llm_call *calls, size_t n)
{
  for (size_t i = 0; calls && i < n; i++) {
    free(calls[i].note);
    calls[i].note = NULL;
  }
}

char *rs__llm_calls_reply_body(const rs__llm_calls_cfg *cfg, const rs__llm_call *c, size_t *len, rs_error *err,
                               rs_code *rc)
{
  *rc = RS_OK;
  if (!cfg->cache || c->status != RS_CALL_OK) return NULL;
  rs__cache_entry e = {0};
  int found = 0;
  if ((*rc = rs__llm_cache_get(cfg->cache, c->key, &e, &found, err)) || !found) return NULL;
  char *body = e.body;
  if (len) *len = e.body_len;
  e.body = NULL;
  rs__cache_entry_free(&e);
  return body;
}
