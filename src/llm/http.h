/* http.h: the OpenAI-compatible transport, and one blocking request for
 * the monitoring exports (internal).
 *
 * One libcurl multi handle drives up to cfg->concurrency transfers from the
 * caller's thread; requests come from a next() callback and finish through a
 * done() callback, both called on that thread only.  Retries are re-queued
 * with a due time (exponential backoff with jitter, or Retry-After), so a
 * waiting retry never blocks other requests.  http.c is the only file that
 * includes <curl/curl.h>.
 *
 * Retry policy.  Retried: HTTP 408, 409, 425, 429 (unless the body says
 * "insufficient_quota"), 5xx; timeouts, connection refused/reset, DNS
 * failures, empty replies, truncated bodies, send/receive errors.  FATAL (no
 * retry, and no new request is started): every other non-2xx status, 429
 * insufficient_quota, a reply body over RS_HTTP_MAX_BODY, and libcurl errors
 * that cannot heal (bad URL, unsupported protocol, TLS certificate).
 *
 * Delays.  Retry r (1-based) waits d = min(backoff_max_s, backoff_initial_s *
 * 2^(r-1)) scaled by a jitter factor drawn uniformly from [0.5, 1) (from
 * cfg->seed: the same seed gives the same factors in the same order).  A
 * Retry-After header (delta seconds, a decimal is accepted, or an HTTP-date)
 * replaces d when it is longer: the server knows its own limits, and the
 * jittered backoff stays a floor so a "Retry-After: 0" cannot cause a storm.
 * Retry-After is capped at RS_HTTP_MAX_RETRY_AFTER_S so a broken header
 * cannot stall a run indefinitely.
 *
 * Memory.  At most `concurrency` requests are in flight; no new request is
 * pulled from next() while 2 * concurrency + 16 requests wait for a retry
 * (back-pressure: a server that rejects everything is not fed ever more
 * work), so at most 3 * concurrency + 16 requests are alive at once. */
#ifndef RAGSWEEP_LLM_HTTP_H
#define RAGSWEEP_LLM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"

/* A reply body longer than this is a FATAL outcome ("reply body larger than
 * 16 MiB"): chat replies are kilobytes, so this is a misconfigured server. */
#define RS_HTTP_MAX_BODY ((size_t)16 << 20)
/* The longest Retry-After honoured, in seconds. */
#define RS_HTTP_MAX_RETRY_AFTER_S 300.0

typedef struct rs__http_cfg {
  const char *base_url;     /* e.g. "http://127.0.0.1:8080/v1"; a trailing '/' is tolerated; path is appended */
  const char *api_key;      /* NULL or "": no Authorization header. Never printed, logged or copied into messages */
  int concurrency;          /* max requests in flight (>= 1) */
  double timeout_s;         /* per attempt (total transfer time); 0: 60 s */
  double connect_timeout_s; /* 0: min(timeout_s, 10) */
  double rpm;               /* max request starts per minute (0: unlimited), retries included */
  int max_retries;          /* retries per request after the first attempt (>= 0) */
  double backoff_initial_s; /* first retry delay before jitter; 0: 1 s */
  double backoff_max_s;     /* cap of the exponential delay (not of Retry-After); 0: 30 s */
  uint64_t seed;            /* jitter stream (deterministic given the seed) */
} rs__http_cfg;

typedef enum { RS_HTTP_OK, RS_HTTP_GAVE_UP, RS_HTTP_FATAL } rs__http_outcome;

typedef struct rs__http_result {
  size_t tag;               /* the caller's id of the request */
  rs__http_outcome outcome; /* OK: a 2xx reply; GAVE_UP: retryable failures exhausted max_retries (or the
                               run stopped while it waited for a retry); FATAL: an error that cannot heal */
  long status;              /* HTTP status of the last attempt, 0 when there was no HTTP reply */
  const char *body;         /* last reply body, NUL-terminated (valid during the callback only; "" if none) */
  size_t body_len;
  int retries;       /* attempts - 1 */
  double latency_ms; /* wall time of the last attempt */
  char message[256]; /* GAVE_UP/FATAL: what happened, e.g. "HTTP 401", "timed out after 30 s",
                        "connection refused"; never contains the key; "" on OK */
} rs__http_result;

/* Supplies the next request: fills *path ("/chat/completions"), *body
 * (malloc'd; the pool takes ownership and frees it), *body_len and *tag;
 * returns 1, or 0 when there is nothing more to send (next is not called
 * again after that).  *path must stay valid until the request is reported. */
typedef int (*rs__http_next_fn)(void *ctx, const char **path, char **body, size_t *body_len, size_t *tag);
/* Called on the caller's thread once per request when it is finished (after
 * its retries).  Return non-zero to stop: no new request is started,
 * in-flight ones are finished and reported, then rs__http_run returns. */
typedef int (*rs__http_done_fn)(void *ctx, const rs__http_result *r);

/* Exact counts of one run: requests pulled from next(), attempts started,
 * retries started (attempts - requests that started at least once), and
 * outcomes; max_in_flight is the most transfers running at once. */
typedef struct rs__http_stats {
  uint64_t requests, attempts, retries, ok, gave_up, fatal;
  int max_in_flight;
  double wall_s;
} rs__http_stats;

/* Runs requests with libcurl's multi interface until next() returns 0 and
 * all are done, or done() asks to stop, or a FATAL outcome occurs (a FATAL
 * also stops new requests; its result is still passed to done()).  On a
 * stop, requests waiting for a retry are not retried: they are reported as
 * GAVE_UP.  Returns RS_OK unless the pool itself failed (RS_USAGE for a bad
 * cfg, RS_NOMEM, RS_IO when libcurl cannot be initialised).  stats may be
 * NULL.  Each call owns its handles, so calls on different threads do not
 * interfere (libcurl's global init runs once, under pthread_once). */
rs_code rs__http_run(const rs__http_cfg *cfg, rs__http_next_fn next, rs__http_done_fn done, void *ctx,
                     rs__http_stats *stats, rs_error *err);

/* --- one blocking request -------------------------------------------------------
 *
 * For the monitoring exports (a Pushgateway PUT, an OTLP POST): one request,
 * no retry (a monitoring push that fails is reported, and the next run
 * pushes again), no redirect followed.  A user:password in the URL is sent as
 * HTTP basic authentication by libcurl and never appears in a message. */

/* The reply of rs__http_request: status and body (malloc'd, NUL-terminated,
 * at most RS_HTTP_REQUEST_MAX_BODY bytes kept; "" when there was none). */
typedef struct rs__http_reply {
  long status;
  char *body;
  size_t body_len;
} rs__http_reply;

#define RS_HTTP_REQUEST_MAX_BODY ((size_t)64 << 10)

/* Sends `method` (PUT, POST, GET) to url with body[0..body_len) (NULL: no
 * body) as content_type (NULL: none) and waits at most timeout_s (0: 30 s)
 * for the whole exchange.  RS_OK for a 2xx reply; RS_IO otherwise, the
 * message naming the method, the URL (password masked), and either what
 * failed ("connection refused", "timed out after 30 s") or the HTTP status
 * and the first line of the reply body.  *reply (may be NULL) is filled in
 * both cases when there was a reply; free it with rs__http_reply_free.
 * RS_USAGE for a URL libcurl cannot use, RS_NOMEM. */
rs_code rs__http_request(const char *method, const char *url, const char *content_type, const char *body,
                         size_t body_len, double timeout_s, rs__http_reply *reply, rs_error *err);
void rs__http_reply_free(rs__http_reply *reply);

/* url with the password of its user:password@ part replaced by "***", into
 * out[0..cap) (truncated if longer): the form every message shows. */
void rs__http_url_redacted(const char *url, char *out, size_t cap);

#endif
