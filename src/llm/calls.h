/* calls.h: a batch of LLM requests through the reply cache and the HTTP
 * pool (internal).  What `judge`, `rag` and `synth` share.
 *
 * The caller describes n calls (rs__llm_call: sample index, expected
 * completion tokens) and renders each one's request on demand; the batch
 * keys every call by a SHA-256 of what can change its answer (base URL,
 * endpoint, request body, sample index; never the API key), answers what
 * the cache holds without the network, sends the rest (concurrency,
 * retries, --rpm: http.h), stores each well-formed reply in the cache the
 * moment it arrives (a kill loses nothing stored), and hands every reply,
 * cached or fresh, to the caller's take().  Requests are rendered twice
 * (for the key, then to send) so memory holds 32 bytes per call, not every
 * prompt.
 *
 * Stops: an error that cannot heal (401, 400, 404, quota; http.h), or
 * max(4, concurrency) requests in a row that exhausted their retries (the
 * server is down), or the budget (the cost reported so far plus the
 * estimate of the requests in flight would pass max_cost).  Calls left
 * unsent by a stop are RS_CALL_NOT_SENT.  A stop is not an error of
 * rs__llm_calls_run: the stats say why, and what was answered is kept.
 *
 * Stats accumulate over calls to rs__llm_calls_run, so a multi-stage job
 * (rag: statements, then verdicts) runs each stage with the same stats and
 * one budget. */
#ifndef RAGSWEEP_LLM_CALLS_H
#define RAGSWEEP_LLM_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "llm/cache.h"
#include "llm/http.h"

enum {
  RS_CALL_PENDING,    /* not answered yet */
  RS_CALL_OK,         /* a 2xx reply that take() accepted */
  RS_CALL_BAD_REPLY,  /* a 2xx reply that take() rejected (not a chat completion, ...) */
  RS_CALL_HTTP_ERROR, /* retries exhausted, or an error that cannot heal */
  RS_CALL_NOT_SENT    /* stopped before it was sent (budget, fatal error) */
};

enum { RS_TAKE_BAD, RS_TAKE_ANSWER, RS_TAKE_NO_ANSWER };

typedef struct rs__llm_call {
  /* set by the caller before the run */
  uint32_t sample;        /* sample index, part of the key (asking the same twice) */
  uint32_t expect_tokens; /* completion tokens a reply usually takes (dry-run and budget estimates) */
  /* set by the run */
  uint8_t key[32];
  uint8_t status, cached;
  int32_t retries;
  int64_t prompt_tokens, completion_tokens; /* reported usage, -1 when absent */
  double latency_ms;
  double est_cost; /* USD estimated when it was sent (the budget's in-flight share) */
  char *note;      /* failures: what went wrong, never a secret (malloc'd; rs__llm_calls_clear) */
} rs__llm_call;

/* How requests were sent elsewhere (by the shards of one job, or its MPI
 * ranks), read back from their caches' tables of sent requests (cache.h),
 * so that one process can write the outputs they would have written
 * together without sending anything: see rs__llm_calls_cfg.replay. */
typedef struct rs__llm_replay rs__llm_replay;
/* Adds the sent requests of the cache file at path (an outcome with a reply
 * replaces a failure; of two replies the first read stays). */
rs_code rs__llm_replay_add(rs__llm_replay **r, const char *path, rs_error *err);
/* Requests recorded so far. */
size_t rs__llm_replay_size(const rs__llm_replay *r);
/* Forgets which keys a run has claimed (a run starts afresh). */
void rs__llm_replay_reset(rs__llm_replay *r);
void rs__llm_replay_free(rs__llm_replay *r);

typedef struct rs__llm_calls_stats {
  uint64_t requests;  /* calls given */
  uint64_t cached;    /* answered without a request: from the cache, or by an identical request of the batch */
  uint64_t sent;      /* sent and finished (any outcome) */
  uint64_t retries;
  uint64_t done;      /* cached + sent */
  uint64_t failed;    /* finished without RS_CALL_OK, or RS_TAKE_NO_ANSWER */
  uint64_t prompt_tokens, completion_tokens;         /* reported usage, cached and sent */
  uint64_t est_prompt_tokens, est_completion_tokens; /* estimate for the uncached calls */
  double cost;     /* USD of the reported usage of the calls sent */
  double est_cost; /* USD estimated for the uncached calls */
  double wall_s;   /* since the stats were zeroed and first used */
  uint64_t missing; /* offline: calls neither cached nor recorded as sent (RS_CALL_NOT_SENT) */
  int stopped_budget, stopped_fatal;
  char fatal_message[512];
  double start_s; /* internal: monotonic start */
} rs__llm_calls_stats;

typedef struct rs__llm_calls_cfg {
  rs__http_cfg http;
  rs__llm_cache *cache; /* NULL only in a dry run without a cache file (nothing is cached then) */
  const char *model;    /* stored with each reply, for `ragsweep cache stats` */
  double price_in, price_out; /* USD per million prompt / completion tokens */
  double max_cost;            /* USD; < 0: no budget */
  int dry_run;                /* look up and estimate only */
  int dry_run_reads;          /* in a dry run, hand cached replies to take() too (a later stage needs them) */
  /* A shard or an MPI rank: the outcome of every call sent is also stored
   * in the cache's table of sent requests (cache.h), as it finishes. */
  int record_sent;
  /* Offline (the merge of shards, rank 0 after the ranks): nothing is sent.
   * A call is answered from the cache; one the replay recorded as sent is
   * then, the first time its key comes up in the run, what it was in the
   * process that sent it (cached 0, its retries, counted as sent), and
   * later calls of the key are cache hits, as one process would have seen
   * them; a failure the replay holds (HTTP error, bad reply) is taken as
   * recorded.  A call neither cached nor recorded is RS_CALL_NOT_SENT and
   * counts in st->missing. */
  rs__llm_replay *replay;
  int offline;
  /* The request of call i: *path ("/chat/completions" or "/embeddings")
   * and a malloc'd body (*len bytes); NULL when out of memory.  Called
   * once for the key and again when the call is sent: it must give the
   * same bytes both times. */
  char *(*render)(void *ctx, size_t i, const char **path, size_t *len);
  /* A 2xx reply of call i, from the network (cached == 0) or the cache:
   * parse it into the caller's state and fill *prompt_tokens /
   * *completion_tokens (-1 when absent).  Returns RS_TAKE_ANSWER or
   * RS_TAKE_NO_ANSWER for a well-formed reply (stored in the cache; the
   * call is RS_CALL_OK either way, but a reply the caller finds no answer
   * in, unparsable or truncated, counts in st->failed: the model's failure,
   * not the transport's), RS_TAKE_BAD for a body that is not a reply at all
   * (not stored; RS_CALL_BAD_REPLY with *note, malloc'd, saying why). */
  int (*take)(void *ctx, size_t i, const char *body, size_t len, int cached, int64_t *prompt_tokens,
              int64_t *completion_tokens, char **note);
  /* Optional: after each finished call, on the caller's thread. */
  void (*progress)(void *ctx, const rs__llm_calls_stats *s);
  void *ctx;
} rs__llm_calls_cfg;

/* Runs calls[0..n) (statuses must be RS_CALL_PENDING; sample and
 * expect_tokens set).  Adds to *st (zero it before the first stage).
 * Returns RS_OK unless the cache or the pool failed. */
rs_code rs__llm_calls_run(const rs__llm_calls_cfg *cfg, rs__llm_call *calls, size_t n, rs__llm_calls_stats *st,
                          rs_error *err);

/* Frees the notes of calls[0..n). */
void rs__llm_calls_clear(rs__llm_call *calls, size_t n);

/* The raw body the cache holds for call c (malloc'd, NUL-terminated), or
 * NULL when it holds none: outputs that quote the model read it back
 * instead of keeping every reply in memory. */
char *rs__llm_calls_reply_body(const rs__llm_calls_cfg *cfg, const rs__llm_call *c, size_t *len, rs_error *err,
                               rs_code *rc);

/* Replaces API keys in msg (the key itself, and "sk-..." words that
 * servers quote back) by "[key]", in place. */
void rs__scrub_keys(char *msg, const char *key);

#endif
