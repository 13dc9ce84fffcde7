/* test_llm_client.c: the OpenAI-compatible client against the scripted stub
 * server as a real process, and the wire format without a server. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "llm/http.h"
#include "llm/wire.h"
#include "llm_helpers.h"

#define MAXREQ 64

/* --- a driver: n chat requests, results recorded per tag ---------------- */

typedef struct {
  int outcome;
  long status;
  int retries;
  char message[256];
  char *body;
  size_t body_len;
  int seen;
} rec;

typedef struct {
  size_t n, sent;
  const char *path;
  const char *model; /* NULL: "m1" */
  int stop_after; /* done() returns 1 after this many results (0: never) */
  int n_done;
  rec r[MAXREQ];
  char *raw[MAXREQ]; /* the exact bodies sent */
} driver;

static int next_chat(void *ctx, const char **path, char **body, size_t *len, size_t *tag)
{
  driver *d = ctx;
  if (d->sent >= d->n) return 0;
  char q[32];
  snprintf(q, sizeof q, "q%zu", d->sent);
  rs__chat_msg m[2] = {{"system", "Answer YES or NO."}, {"user", q}};
  rs__chat_params p = {.model = d->model ? d->model : "m1", .temperature = 0, .max_tokens = 0};
  *body = rs__chat_request(&p, m, 2, len);
  cr_assert(*body);
  d->raw[d->sent] = strdup(*body);
  *path = d->path ? d->path : "/chat/completions";
  *tag = d->sent++;
  return 1;
}

static int on_done(void *ctx, const rs__http_result *r)
{
  driver *d = ctx;
  cr_assert(r->tag < d->n);
  rec *x = &d->r[r->tag];
  cr_assert(!x->seen, "request %zu reported twice", r->tag);
  x->seen = 1;
  x->outcome = (int)r->outcome;
  x->status = r->status;
  x->retries = r->retries;
  snprintf(x->message, sizeof x->message, "%s", r->message);
  x->body = malloc(r->body_len + 1);
  memcpy(x->body, r->body, r->body_len + 1);
  x->body_len = r->body_len;
  d->n_done++;
  return d->stop_after && d->n_done >= d->stop_after;
}

static void driver_free(driver *d)
{
  for (size_t i = 0; i < MAXREQ; i++) {
    free(d->r[i].body);
    free(d->raw[i]);
  }
}

static rs__http_cfg base_cfg(const llm_stub *s)
{
  return (rs__http_cfg){.base_url = s->url, .api_key = NULL, .concurrency = 1, .timeout_s = 5,
                        .max_retries = 3, .backoff_initial_s = 0.05, .backoff_max_s = 0.4, .seed = 7};
}

static double mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Starts the stub with script, runs n requests with cfg (base_url filled in
 * when NULL), stops the stub; the log is returned (caller puts it). */
static json_object *run(const char *script, rs__http_cfg cfg, driver *d, rs__http_stats *st, double *elapsed)
{
  llm_stub s;
  cr_assert_eq(llm_stub_start(&s, script, 30), 0, "the stub did not start");
  if (!cfg.base_url) cfg.base_url = s.url;
  rs_error err = {0};
  double t0 = mono();
  rs_code rc = rs__http_run(&cfg, next_chat, on_done, d, st, &err);
  if (elapsed) *elapsed = mono() - t0;
  json_object *log = llm_stub_log(&s);
  llm_stub_stop(&s);
  cr_assert_eq(rc, RS_OK, "rs__http_run: %s", err.msg);
  return log;
}

static json_object *entry(json_object *log, size_t i) { return json_object_array_get_idx(log, i); }

/* --- requests: bytes, headers ------------------------------------------------ */

Test(llm_http, request_bytes_and_headers)
{
  llm_stub s;
  cr_assert_eq(llm_stub_start(&s, NULL, 30), 0);
  char url[80];
  snprintf(url, sizeof url, "%s/", s.url); /* a trailing '/' is tolerated */
  rs__http_cfg cfg = base_cfg(&s);
  cfg.base_url = url;
  cfg.api_key = "sk-test-SECRET";
  driver d = {.n = 1};
  rs__http_stats st;
  rs_error err;
  cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, &st, &err), RS_OK);
  json_object *log = llm_stub_log(&s);
  llm_stub_stop(&s);

  cr_assert_eq(json_object_array_length(log), 1);
  json_object *e = entry(log, 0);
  cr_assert_str_eq(llm_str(e, "method"), "POST");
  cr_assert_str_eq(llm_str(e, "path"), "/v1/chat/completions");
  cr_assert_str_eq(llm_str(e, "content_type"), "application/json");
  cr_assert_str_eq(llm_str(e, "authorization"), "Bearer sk-test-SECRET");
  cr_assert_str_eq(llm_str(e, "user_agent"), "ragsweep/0.1.0");
  cr_assert_str_eq(llm_str(e, "raw"), d.raw[0]);
  cr_assert_str_eq(llm_str(e, "raw"), "{\"model\":\"m1\",\"messages\":[{\"role\":\"system\",\"content\":\"Answer YES or "
                                      "NO.\"},{\"role\":\"user\",\"content\":\"q0\"}],\"temperature\":0}");
  json_object *body = NULL;
  cr_assert(json_object_object_get_ex(e, "body", &body));
  cr_assert_eq(llm_num(body, "temperature"), 0.0); /* explicit, not left to the server */

  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].status, 200);
  cr_assert_eq(d.r[0].retries, 0);
  cr_assert_str_eq(d.r[0].message, "");
  rs__chat_reply rep;
  cr_assert_eq(rs__chat_reply_parse(d.r[0].body, d.r[0].body_len, &rep), RS_REPLY_OK);
  cr_assert_str_eq(rep.content, "YES");
  cr_assert_str_eq(rep.finish_reason, "stop");
  cr_assert_eq(rep.prompt_tokens, 10);
  cr_assert_eq(rep.completion_tokens, 1);
  rs__chat_reply_free(&rep);
  cr_assert_eq(st.requests, 1);
  cr_assert_eq(st.attempts, 1);
  cr_assert_eq(st.retries, 0);
  cr_assert_eq(st.ok, 1);
  cr_assert_eq(st.gave_up + st.fatal, 0);
  cr_assert_eq(st.max_in_flight, 1);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, no_authorization_without_key)
{
  llm_stub s;
  cr_assert_eq(llm_stub_start(&s, NULL, 30), 0);
  const char *keys[2] = {NULL, ""};
  for (int k = 0; k < 2; k++) {
    driver d = {.n = 2};
    rs__http_cfg cfg = {.base_url = s.url, .concurrency = 2, .timeout_s = 5, .api_key = keys[k]};
    rs_error err;
    cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, NULL, &err), RS_OK);
    driver_free(&d);
  }
  json_object *log = llm_stub_log(&s);
  llm_stub_stop(&s);
  cr_assert_eq(json_object_array_length(log), 4);
  for (size_t i = 0; i < 4; i++) cr_assert_null(llm_str(entry(log, i), "authorization"), "request %zu", i);
  json_object_put(log);
}

/* --- retries ----------------------------------------------------------------- */

Test(llm_http, retry_after_429_is_honoured)
{
  const char *script = "{\"sequence\":[{\"status\":429,\"headers\":{\"Retry-After\":\"0.3\"}},"
                       "{\"status\":429,\"headers\":{\"Retry-After\":\"0.3\"}}]}";
  driver d = {.n = 1};
  rs__http_stats st;
  double el;
  json_object *log = run(script, (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 3,
                                                .backoff_initial_s = 0.05, .backoff_max_s = 0.4, .seed = 1},
                         &d, &st, &el);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].retries, 2);
  cr_assert_eq(st.attempts, 3);
  cr_assert_eq(st.retries, 2);
  cr_assert_eq(st.ok, 1);
  cr_assert_eq(json_object_array_length(log), 3);
  /* The Retry-After (0.3 s) is longer than the jittered backoff (<= 0.1 s): it rules. */
  for (size_t i = 1; i < 3; i++) {
    double gap = llm_num(entry(log, i), "t") - llm_num(entry(log, i - 1), "t");
    cr_assert(gap >= 0.3 && gap < 0.3 + 0.25, "gap %zu: %.3f s, want >= 0.3 s", i, gap);
  }
  cr_assert(el >= 0.6, "elapsed %.3f", el);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, retry_after_http_date_in_the_past_uses_backoff)
{
  const char *script =
      "{\"sequence\":[{\"status\":503,\"headers\":{\"Retry-After\":\"Wed, 21 Oct 2015 07:28:00 GMT\"}}]}";
  driver d = {.n = 1};
  rs__http_stats st;
  json_object *log = run(script, (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 1,
                                                .backoff_initial_s = 0.2, .backoff_max_s = 1, .seed = 1},
                         &d, &st, NULL);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].retries, 1);
  double gap = llm_num(entry(log, 1), "t") - llm_num(entry(log, 0), "t");
  /* A date in the past means "now"; the backoff floor [0.1, 0.2) s still applies. */
  cr_assert(gap >= 0.1 && gap < 0.2 + 0.2, "gap %.3f", gap);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, backoff_bounds_on_500_and_503)
{
  const char *script = "{\"sequence\":[{\"status\":500},{\"status\":503},{\"status\":502}]}";
  driver d = {.n = 1};
  rs__http_stats st;
  json_object *log = run(script, (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 5,
                                                .backoff_initial_s = 0.1, .backoff_max_s = 0.3, .seed = 3},
                         &d, &st, NULL);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].retries, 3);
  cr_assert_eq(st.attempts, 4);
  cr_assert_eq(st.retries, 3);
  cr_assert_eq(json_object_array_length(log), 4);
  /* Retry r waits min(0.3, 0.1 * 2^(r-1)) * [0.5, 1): [0.05,0.1), [0.1,0.2), [0.15,0.3). */
  const double lo[3] = {0.05, 0.1, 0.15}, hi[3] = {0.1, 0.2, 0.3};
  for (size_t i = 1; i < 4; i++) {
    double gap = llm_num(entry(log, i), "t") - llm_num(entry(log, i - 1), "t");
    cr_assert(gap >= lo[i - 1] && gap < hi[i - 1] + 0.15, "retry %zu: gap %.3f s, want [%.2f, %.2f)", i, gap,
              lo[i - 1], hi[i - 1]);
  }
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, gives_up_after_max_retries)
{
  driver d = {.n = 2};
  rs__http_stats st;
  json_object *log = run("{\"default\":{\"status\":503}}",
                         (rs__http_cfg){.concurrency = 2, .timeout_s = 5, .max_retries = 2,
                                        .backoff_initial_s = 0.02, .backoff_max_s = 0.05},
                         &d, &st, NULL);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(d.r[i].outcome, RS_HTTP_GAVE_UP);
    cr_assert_eq(d.r[i].status, 503);
    cr_assert_eq(d.r[i].retries, 2);
    cr_assert_str_eq(d.r[i].message, "HTTP 503: stub error 503");
    /* The last reply's body is passed on. */
    cr_assert(strstr(d.r[i].body, "stub error 503"));
  }
  cr_assert_eq(st.requests, 2);
  cr_assert_eq(st.attempts, 6);
  cr_assert_eq(st.retries, 4);
  cr_assert_eq(st.gave_up, 2);
  cr_assert_eq(st.ok + st.fatal, 0);
  cr_assert_eq(json_object_array_length(log), 6);
  json_object_put(log);
  driver_free(&d);
}

/* --- fatal outcomes: no retry, nothing new started ------------------------- */

/* One stub serves every case: a rule per model name. */
Test(llm_http, fatal_stops)
{
  static const struct {
    const char *model, *message;
  } cases[] = {
      {"c401", "HTTP 401"}, /* the server's message echoes the key: not copied */
      {"c403", "HTTP 403"},
      {"c400", "HTTP 400: bad model"},
      {"c404", "HTTP 404"}, /* its message contains the key: not copied */
      {"c422", "HTTP 422: stub error 422"},
      {"c429", "HTTP 429: You exceeded your current quota"},
  };
  const char *script =
      "{\"rules\":["
      "{\"match\":\"c401\",\"behaviour\":{\"status\":401,\"error_message\":\"Incorrect API key provided: "
      "sk-test-SECRET\"}},"
      "{\"match\":\"c403\",\"behaviour\":{\"status\":403}},"
      "{\"match\":\"c400\",\"behaviour\":{\"status\":400,\"error_message\":\"bad model\"}},"
      "{\"match\":\"c404\",\"behaviour\":{\"status\":404,\"error_message\":\"key sk-test-SECRET unknown\"}},"
      "{\"match\":\"c422\",\"behaviour\":{\"status\":422}},"
      "{\"match\":\"c429\",\"behaviour\":{\"status\":429,\"error_message\":\"You exceeded your current "
      "quota\",\"error_type\":\"insufficient_quota\",\"error_code\":\"insufficient_quota\"}}]}";
  llm_stub s;
  cr_assert_eq(llm_stub_start(&s, script, 30), 0);
  size_t seen = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    driver d = {.n = 5, .model = cases[c].model};
    rs__http_stats st;
    rs_error err;
    rs__http_cfg cfg = {.base_url = s.url, .concurrency = 1, .timeout_s = 5, .max_retries = 3,
                        .backoff_initial_s = 0.02, .api_key = "sk-test-SECRET"};
    cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, &st, &err), RS_OK);
    json_object *log = llm_stub_log(&s);
    size_t n = json_object_array_length(log);
    json_object_put(log);
    cr_assert_eq(n - seen, 1, "%s: the server saw %zu requests", cases[c].model, n - seen);
    seen = n;
    cr_assert_eq(d.n_done, 1);
    cr_assert_eq(d.r[0].outcome, RS_HTTP_FATAL, "%s", cases[c].model);
    cr_assert_eq(d.r[0].retries, 0);
    cr_assert_str_eq(d.r[0].message, cases[c].message, "%s", cases[c].model);
    cr_assert_null(strstr(d.r[0].message, "SECRET"));
    cr_assert_eq(st.requests, 1);
    cr_assert_eq(st.attempts, 1);
    cr_assert_eq(st.fatal, 1);
    cr_assert_eq(st.ok + st.gave_up + st.retries, 0);
    driver_free(&d);
  }
  llm_stub_stop(&s);
}

Test(llm_http, fatal_lets_in_flight_finish)
{
  /* q0 fails at once; q1 and q2 are in flight (slow) and still reported. */
  const char *script = "{\"rules\":[{\"match\":\"q0\",\"behaviour\":{\"status\":400}}],"
                       "\"default\":{\"delay\":0.3}}";
  driver d = {.n = 10};
  rs__http_stats st;
  json_object *log = run(script, (rs__http_cfg){.concurrency = 3, .timeout_s = 5}, &d, &st, NULL);
  cr_assert_eq(json_object_array_length(log), 3);
  cr_assert_eq(st.requests, 3);
  cr_assert_eq(st.fatal, 1);
  cr_assert_eq(st.ok, 2);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_FATAL);
  cr_assert_eq(d.r[1].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[2].outcome, RS_HTTP_OK);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, done_can_stop)
{
  driver d = {.n = 10, .stop_after = 2};
  rs__http_stats st;
  json_object *log = run(NULL, (rs__http_cfg){.concurrency = 1, .timeout_s = 5}, &d, &st, NULL);
  cr_assert_eq(json_object_array_length(log), 2);
  cr_assert_eq(st.requests, 2);
  cr_assert_eq(st.ok, 2);
  json_object_put(log);
  driver_free(&d);
}

/* --- transport failures ------------------------------------------------------ */

Test(llm_http, timeout_then_success)
{
  driver d = {.n = 1};
  rs__http_stats st;
  double el;
  json_object *log = run("{\"sequence\":[{\"delay\":2}]}",
                         (rs__http_cfg){.concurrency = 1, .timeout_s = 0.3, .max_retries = 2,
                                        .backoff_initial_s = 0.05},
                         &d, &st, &el);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].retries, 1);
  cr_assert_eq(st.attempts, 2);
  cr_assert_eq(json_object_array_length(log), 2);
  cr_assert(el >= 0.3 && el < 1.5, "elapsed %.3f s", el); /* the slow reply was not awaited */
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, timeout_gives_up_with_message)
{
  driver d = {.n = 1};
  rs__http_stats st;
  json_object *log = run("{\"default\":{\"delay\":2}}",
                         (rs__http_cfg){.concurrency = 1, .timeout_s = 0.25, .max_retries = 0}, &d, &st, NULL);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_GAVE_UP);
  cr_assert_eq(d.r[0].status, 0);
  cr_assert_str_eq(d.r[0].message, "timed out after 0.25 s");
  cr_assert_eq(st.gave_up, 1);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, truncated_and_closed_replies_are_retried)
{
  driver d = {.n = 1};
  rs__http_stats st;
  json_object *log = run("{\"sequence\":[{\"truncate\":true},{\"close\":true}]}",
                         (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 3,
                                        .backoff_initial_s = 0.02},
                         &d, &st, NULL);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_OK);
  cr_assert_eq(d.r[0].retries, 2);
  cr_assert_eq(st.attempts, 3);
  cr_assert_eq(json_object_array_length(log), 3);
  json_object_put(log);

  driver d2 = {.n = 1};
  log = run("{\"default\":{\"truncate\":true}}",
            (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 1, .backoff_initial_s = 0.02}, &d2,
            &st, NULL);
  cr_assert_eq(d2.r[0].outcome, RS_HTTP_GAVE_UP);
  cr_assert(strncmp(d2.r[0].message, "truncated reply body", 20) == 0, "%s", d2.r[0].message);
  json_object_put(log);
  driver_free(&d);
  driver_free(&d2);
}

Test(llm_http, connection_refused)
{
  /* A port that was free a moment ago: bind, read it, close. */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
  close(fd);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
  rs__http_cfg cfg = {.base_url = url, .concurrency = 1, .timeout_s = 2, .max_retries = 1,
                      .backoff_initial_s = 0.02};
  driver d = {.n = 1};
  rs__http_stats st;
  rs_error err;
  cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, &st, &err), RS_OK);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_GAVE_UP);
  cr_assert_eq(d.r[0].retries, 1);
  cr_assert_eq(d.r[0].status, 0);
  cr_assert_str_eq(d.r[0].message, "connection refused");
  cr_assert_eq(st.attempts, 2);
  driver_free(&d);
}

Test(llm_http, unsupported_protocol_is_fatal)
{
  rs__http_cfg cfg = {.base_url = "htp://127.0.0.1:1/v1", .concurrency = 2, .timeout_s = 2, .max_retries = 3};
  driver d = {.n = 4};
  rs__http_stats st;
  rs_error err;
  cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, &st, &err), RS_OK);
  cr_assert_eq(d.r[0].outcome, RS_HTTP_FATAL);
  cr_assert_eq(d.r[0].retries, 0);
  cr_assert(st.fatal >= 1 && st.requests <= 2 && st.retries == 0, "fatal %llu requests %llu",
            (unsigned long long)st.fatal, (unsigned long long)st.requests);
  driver_free(&d);
}

Test(llm_http, bad_config_is_usage_error)
{
  rs__http_cfg cfg = {.base_url = "http://127.0.0.1:1/v1", .concurrency = 0};
  driver d = {.n = 1};
  rs_error err;
  cr_assert_eq(rs__http_run(&cfg, next_chat, on_done, &d, NULL, &err), RS_USAGE);
  cr_assert_str_eq(err.msg, "LLM client: concurrency must be >= 1, found 0");
  cr_assert_eq(d.sent, 0);
}

/* --- concurrency and rate ---------------------------------------------------- */

Test(llm_http, concurrency_cap)
{
  driver d = {.n = 12};
  rs__http_stats st;
  double el;
  json_object *log = run("{\"default\":{\"delay\":0.2}}", (rs__http_cfg){.concurrency = 4, .timeout_s = 5}, &d,
                         &st, &el);
  size_t n = json_object_array_length(log);
  cr_assert_eq(n, 12);
  double max = 0;
  for (size_t i = 0; i < n; i++) max = fmax(max, llm_num(entry(log, i), "in_flight"));
  cr_assert_eq(max, 4.0, "server saw at most %g in flight", max);
  cr_assert_eq(st.max_in_flight, 4);
  cr_assert_eq(st.ok, 12);
  cr_assert_eq(st.attempts, 12);
  /* Three waves of 0.2 s: far less than the 2.4 s of one at a time. */
  cr_assert(el >= 0.6 && el < 1.5, "elapsed %.3f", el);
  for (size_t i = 0; i < 12; i++) cr_assert_eq(d.r[i].outcome, RS_HTTP_OK);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, rpm_spacing)
{
  driver d = {.n = 5};
  rs__http_stats st;
  json_object *log = run(NULL, (rs__http_cfg){.concurrency = 4, .timeout_s = 5, .rpm = 600}, &d, &st, NULL);
  cr_assert_eq(json_object_array_length(log), 5);
  /* 600 per minute: one start every 0.1 s, whatever the concurrency.  The
   * times are the stub's arrival stamps, which a loaded machine delays by a
   * few tens of ms (a late arrival shortens the next gap): the bounds leave
   * room for that, and without the limit all five arrive within a few ms. */
  for (size_t i = 1; i < 5; i++) {
    double gap = llm_num(entry(log, i), "t") - llm_num(entry(log, i - 1), "t");
    cr_assert(gap >= 0.03 && gap < 0.35, "gap %zu: %.3f s", i, gap);
  }
  double span = llm_num(entry(log, 4), "t") - llm_num(entry(log, 0), "t");
  cr_assert(span >= 0.3 && span < 0.8, "span %.3f s", span);
  json_object_put(log);
  driver_free(&d);
}

Test(llm_http, retry_waits_do_not_block_others)
{
  /* q0 is told to come back in 0.6 s; the other requests go through meanwhile
   * on the single connection. */
  const char *script = "{\"rules\":[{\"match\":\"q0\",\"times\":1,\"behaviour\":{\"status\":429,"
                       "\"headers\":{\"Retry-After\":\"0.6\"}}}]}";
  driver d = {.n = 4};
  rs__http_stats st;
  json_object *log = run(script, (rs__http_cfg){.concurrency = 1, .timeout_s = 5, .max_retries = 2,
                                                .backoff_initial_s = 0.05},
                         &d, &st, NULL);
  cr_assert_eq(json_object_array_length(log), 5);
  /* Arrival order: q0 (429), q1, q2, q3, then q0 again. */
  for (size_t i = 0; i < 5; i++)
    cr_assert(strstr(llm_str(entry(log, i), "raw"), i == 0 || i == 4 ? "\"q0\"" : "\"q") != NULL, "%zu: %s", i,
              llm_str(entry(log, i), "raw"));
  cr_assert(llm_num(entry(log, 3), "t") - llm_num(entry(log, 0), "t") < 0.5);
  cr_assert_eq(d.r[0].retries, 1);
  cr_assert_eq(st.ok, 4);
  json_object_put(log);
  driver_free(&d);
}

/* --- wire parsing of real replies from the stub ---------------------------- */

Test(llm_wire, replies_through_the_server)
{
  const char *script =
      "{\"sequence\":["
      "{\"content\":\"NO\",\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":3}},"
      "{\"body\":\"this is not json\"},"
      "{\"content\":\"YE\",\"finish_reason\":\"length\"},"
      "{\"content_json\":5},"
      "{\"body_b64\":\"eyJjaG9pY2VzIjpbXX3/\"},"
      "{\"status\":200,\"body\":\"{\\\"error\\\":{\\\"message\\\":\\\"model overloaded\\\",\\\"type\\\":\\\"x\\\"}}\"},"
      "{\"status\":200,\"error_shape\":\"vllm\",\"error_message\":\"The model m1 does not exist.\"},"
      "{\"status\":200,\"body\":\"{\\\"error\\\":{\\\"code\\\":500,\\\"message\\\":\\\"context shift is "
      "disabled\\\",\\\"type\\\":\\\"server_error\\\"}}\"},"
      "{\"content\":null}"
      "]}";
  driver d = {.n = 9};
  json_object *log = run(script, (rs__http_cfg){.concurrency = 1, .timeout_s = 5}, &d, NULL, NULL);
  const rs__reply_status want[9] = {RS_REPLY_OK,        RS_REPLY_NOT_JSON, RS_REPLY_TRUNCATED,
                                    RS_REPLY_BAD_SHAPE, RS_REPLY_NOT_UTF8, RS_REPLY_ERROR,
                                    RS_REPLY_ERROR,     RS_REPLY_ERROR,    RS_REPLY_OK};
  rs__chat_reply r[9];
  for (int i = 0; i < 9; i++) {
    cr_assert_eq(d.r[i].outcome, RS_HTTP_OK);
    cr_assert_eq(rs__chat_reply_parse(d.r[i].body, d.r[i].body_len, &r[i]), want[i], "reply %d: %s", i,
                 r[i].error ? r[i].error : "");
  }
  cr_assert_str_eq(r[0].content, "NO");
  cr_assert_null(r[0].error);
  cr_assert_eq(r[0].prompt_tokens, 42);
  cr_assert_eq(r[0].completion_tokens, 3);
  cr_assert_str_eq(r[2].content, "YE");
  cr_assert_str_eq(r[2].finish_reason, "length");
  cr_assert_str_eq(r[3].error, "reply: choices[0].message.content is not a string");
  cr_assert_str_eq(r[4].error, "reply is not valid UTF-8 (byte 0xff at offset 14)");
  cr_assert_str_eq(r[5].error, "model overloaded");
  cr_assert_str_eq(r[6].error, "The model m1 does not exist.");
  cr_assert_str_eq(r[7].error, "context shift is disabled");
  cr_assert_str_eq(r[8].content, "");
  for (int i = 0; i < 9; i++) rs__chat_reply_free(&r[i]);
  json_object_put(log);
  driver_free(&d);
}

static int next_embed(void *ctx, const char **path, char **body, size_t *len, size_t *tag)
{
  int *sent = ctx;
  if (*sent) return 0;
  const char *in[3] = {"alpha", "beta", "gamma"};
  *body = rs__embed_request("e1", in, 3, len);
  *path = "/embeddings";
  *tag = 0;
  *sent = 1;
  return 1;
}

static char *embed_body;
static size_t embed_len;
static int on_embed(void *ctx, const rs__http_result *r)
{
  cr_assert_eq(r->outcome, RS_HTTP_OK);
  embed_body = strdup(r->body);
  embed_len = r->body_len;
  return 0;
}

Test(llm_wire, embeddings_through_the_server)
{
  llm_stub s;
  cr_assert_eq(llm_stub_start(&s, "{\"embedding_dim\":3,\"default\":{\"embeddings\":{\"beta\":[1,2.5,-3]}}}", 30),
               0);
  rs__http_cfg cfg = {.base_url = s.url, .concurrency = 1, .timeout_s = 5};
  int sent = 0;
  rs_error err;
  cr_assert_eq(rs__http_run(&cfg, next_embed, on_embed, &sent, NULL, &err), RS_OK);
  json_object *log = llm_stub_log(&s);
  llm_stub_stop(&s);
  cr_assert_str_eq(llm_str(entry(log, 0), "path"), "/v1/embeddings");
  cr_assert_str_eq(llm_str(entry(log, 0), "raw"), "{\"model\":\"e1\",\"input\":[\"alpha\",\"beta\",\"gamma\"]}");
  double *v = NULL;
  size_t dim = 0;
  int64_t pt = 0;
  char *e = NULL;
  cr_assert_eq(rs__embed_reply_parse(embed_body, embed_len, 3, &v, &dim, &pt, &e), RS_REPLY_OK, "%s", e);
  cr_assert_eq(dim, 3);
  cr_assert_eq(pt, 3);
  cr_assert_eq(v[3], 1.0);
  cr_assert_eq(v[4], 2.5);
  cr_assert_eq(v[5], -3.0);
  for (size_t i = 0; i < 9; i++) cr_assert(v[i] >= -3 && v[i] <= 2.5);
  free(v);
  cr_assert_eq(rs__embed_reply_parse(embed_body, embed_len, 4, &v, &dim, &pt, &e), RS_REPLY_BAD_SHAPE);
  cr_assert_str_eq(e, "embeddings reply: expected 4 vectors in \"data\", found 3");
  cr_assert_null(v);
  free(e);
  free(embed_body);
  json_object_put(log);
}

/* --- wire without a server --------------------------------------------------- */

Test(llm_wire, chat_request_exact_bytes)
{
  rs__chat_msg m[2] = {{"system", "a \"quoted\" \\ line\nnext\ttab\x01"}, {"user", "caf\xc3\xa9 \xff\xc3 end"}};
  rs__chat_params p = {.model = "gpt-x", .temperature = 0.7, .max_tokens = 5};
  size_t len;
  char *b = rs__chat_request(&p, m, 2, &len);
  const char *want = "{\"model\":\"gpt-x\",\"messages\":[{\"role\":\"system\",\"content\":\"a \\\"quoted\\\" \\\\ "
                     "line\\nnext\\ttab\\u0001\"},{\"role\":\"user\",\"content\":\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd "
                     "end\"}],\"temperature\":0.7,\"max_tokens\":5}";
  cr_assert_str_eq(b, want);
  cr_assert_eq(len, strlen(want));
  free(b);

  p = (rs__chat_params){.model = "m", .temperature = -0.0};
  b = rs__chat_request(&p, NULL, 0, &len);
  cr_assert_str_eq(b, "{\"model\":\"m\",\"messages\":[],\"temperature\":0}");
  free(b);
  p.temperature = 0.1 + 0.2; /* shortest round trip: 17 digits here */
  b = rs__chat_request(&p, NULL, 0, NULL);
  cr_assert_str_eq(b, "{\"model\":\"m\",\"messages\":[],\"temperature\":0.30000000000000004}");
  free(b);
  p.temperature = NAN;
  cr_assert_null(rs__chat_request(&p, NULL, 0, NULL));

  /* The output is valid JSON that reads back to the (repaired) input. */
  p = (rs__chat_params){.model = "m", .temperature = 1};
  b = rs__chat_request(&p, m, 2, &len);
  rs__chat_reply r;
  cr_assert_neq(rs__chat_reply_parse(b, len, &r), RS_REPLY_NOT_JSON);
  cr_assert_neq(r.status, RS_REPLY_NOT_UTF8);
  rs__chat_reply_free(&r);
  free(b);
}

Test(llm_wire, embed_request_exact_bytes)
{
  const char *in[2] = {"x\"y", ""};
  size_t len;
  char *b = rs__embed_request("e", in, 2, &len);
  cr_assert_str_eq(b, "{\"model\":\"e\",\"input\":[\"x\\\"y\",\"\"]}");
  cr_assert_eq(len, strlen(b));
  free(b);
}

struct parse_case {
  char name[40];
  char body[200];
  int status;
  char content[16];
  char error[80];
};

ParameterizedTestParameters(llm_wire, parse_shapes)
{
  static struct parse_case cases[] = {
      {"ok", "{\"choices\":[{\"message\":{\"content\":\"YES\"},\"finish_reason\":\"stop\"}]}", RS_REPLY_OK, "YES", ""},
      {"extra fields", "{\"x\":[1,{}],\"choices\":[{\"index\":0,\"message\":{\"role\":\"a\",\"content\":\"N\"}}]} ",
       RS_REPLY_OK, "N", ""},
      {"empty", "", RS_REPLY_NOT_JSON, "", "reply is empty, expected JSON"},
      {"cut", "{\"choices\":[", RS_REPLY_NOT_JSON, "", "reply is not JSON: it ends inside a value (12 bytes)"},
      {"trailing", "{} x", RS_REPLY_NOT_JSON, "", "reply is not JSON: unexpected bytes after the value at offset 3"},
      {"array", "[1,2]", RS_REPLY_BAD_SHAPE, "", "reply is not a JSON object"},
      {"no choices", "{}", RS_REPLY_BAD_SHAPE, "", "reply has no \"choices\""},
      {"choices object", "{\"choices\":{}}", RS_REPLY_BAD_SHAPE, "", "reply: \"choices\" is not an array"},
      {"choices empty", "{\"choices\":[]}", RS_REPLY_BAD_SHAPE, "", "reply: \"choices\" is empty"},
      {"choice string", "{\"choices\":[\"a\"]}", RS_REPLY_BAD_SHAPE, "", "reply: choices[0] is not an object"},
      {"message array", "{\"choices\":[{\"message\":[]}]}", RS_REPLY_BAD_SHAPE, "",
       "reply: choices[0].message is not an object"},
      {"content bool", "{\"choices\":[{\"message\":{\"content\":true}}]}", RS_REPLY_BAD_SHAPE, "",
       "reply: choices[0].message.content is not a string"},
      {"finish number", "{\"choices\":[{\"message\":{\"content\":\"a\"},\"finish_reason\":1}]}", RS_REPLY_BAD_SHAPE,
       "", "reply: choices[0].finish_reason is not a string"},
      {"length", "{\"choices\":[{\"message\":{\"content\":\"Y\"},\"finish_reason\":\"length\"}]}",
       RS_REPLY_TRUNCATED, "Y", "reply truncated: finish_reason is \"length\" (max_tokens reached)"},
      {"openai error", "{\"error\":{\"message\":\"Rate limit\",\"type\":\"requests\"}}", RS_REPLY_ERROR, "",
       "Rate limit"},
      {"string error", "{\"error\":\"boom\"}", RS_REPLY_ERROR, "", "boom"},
      {"vllm error", "{\"object\":\"error\",\"message\":\"bad\",\"code\":400}", RS_REPLY_ERROR, "", "bad"},
      {"error no message", "{\"error\":{}}", RS_REPLY_ERROR, "", "server error without a message"},
      {"error null is no error", "{\"error\":null,\"choices\":[{\"message\":{\"content\":\"k\"}}]}", RS_REPLY_OK,
       "k", ""},
      {"latin1", "{\"choices\":[{\"message\":{\"content\":\"caf\xe9\"}}]}", RS_REPLY_NOT_UTF8, "",
       "reply is not valid UTF-8 (byte 0xe9 at offset 38)"},
      {"overlong", "{\"a\":\"\xc0\xaf\"}", RS_REPLY_NOT_UTF8, "", "reply is not valid UTF-8 (byte 0xc0 at offset 6)"},
      /* json-c 0.16 turns a lone surrogate into U+FFFD. */
      {"lone surrogate", "{\"choices\":[{\"message\":{\"content\":\"\\ud800\"}}]}", RS_REPLY_OK, "\xef\xbf\xbd",
       ""},
  };
  return cr_make_param_array(struct parse_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct parse_case *c, llm_wire, parse_shapes)
{
  rs__chat_reply r;
  rs__reply_status st = rs__chat_reply_parse(c->body, strlen(c->body), &r);
  cr_assert_eq(st, (rs__reply_status)c->status, "%s: status %d (%s)", c->name, st, r.error ? r.error : "");
  cr_assert_eq(r.status, st);
  if (st == RS_REPLY_OK || st == RS_REPLY_TRUNCATED) cr_assert_str_eq(r.content, c->content, "%s", c->name);
  else cr_assert_null(r.content, "%s", c->name);
  if (c->error[0]) cr_assert_str_eq(r.error, c->error, "%s", c->name);
  else cr_assert_null(r.error, "%s", c->name);
  rs__chat_reply_free(&r);
  rs__chat_reply_free(NULL);
}

Test(llm_wire, usage_types)
{
  const char *b = "{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":\"7\","
                  "\"completion_tokens\":9000000000}}";
  rs__chat_reply r;
  cr_assert_eq(rs__chat_reply_parse(b, strlen(b), &r), RS_REPLY_OK);
  cr_assert_eq(r.prompt_tokens, -1);
  cr_assert_eq(r.completion_tokens, 9000000000LL);
  rs__chat_reply_free(&r);
}

Test(llm_wire, error_message_helper)
{
  const char *a = "{\"error\":{\"message\":\"quota\"}}", *b = "{\"object\":\"error\",\"message\":\"v\"}";
  char *m = rs__llm_error_message(a, strlen(a));
  cr_assert_str_eq(m, "quota");
  free(m);
  m = rs__llm_error_message(b, strlen(b));
  cr_assert_str_eq(m, "v");
  free(m);
  cr_assert_null(rs__llm_error_message("{\"choices\":[]}", 14));
  cr_assert_null(rs__llm_error_message("<html>", 6));
  cr_assert_null(rs__llm_error_message(NULL, 0));
}

Test(llm_wire, embed_reply_ordered_by_index)
{
  const char *b = "{\"data\":[{\"index\":1,\"embedding\":[3,4]},{\"index\":0,\"embedding\":[1.5,-2]}],"
                  "\"usage\":{\"prompt_tokens\":6}}";
  double *v;
  size_t dim;
  int64_t pt;
  char *e = NULL;
  cr_assert_eq(rs__embed_reply_parse(b, strlen(b), 2, &v, &dim, &pt, &e), RS_REPLY_OK);
  cr_assert_null(e);
  cr_assert_eq(dim, 2);
  cr_assert_eq(pt, 6);
  const double want[4] = {1.5, -2, 3, 4};
  for (int i = 0; i < 4; i++) cr_assert_eq(v[i], want[i]);
  free(v);
  struct {
    const char *body;
    rs__reply_status st;
    const char *msg;
  } bad[] = {
      {"{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[2]}]}", RS_REPLY_BAD_SHAPE,
       "embeddings reply: data[1].index is missing, out of range or repeated"},
      {"{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":1,\"embedding\":[2,3]}]}", RS_REPLY_BAD_SHAPE,
       "embeddings reply: data[1].embedding has 2 values, data[0] has 1"},
      {"{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":1,\"embedding\":[\"x\"]}]}", RS_REPLY_BAD_SHAPE,
       "embeddings reply: data[1].embedding[0] is not a number"},
      {"{\"data\":{}}", RS_REPLY_BAD_SHAPE, "embeddings reply: \"data\" is not an array"},
      {"{\"error\":{\"message\":\"too long\"}}", RS_REPLY_ERROR, "too long"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(rs__embed_reply_parse(bad[i].body, strlen(bad[i].body), 2, &v, &dim, &pt, &e), bad[i].st, "%zu",
                 i);
    cr_assert_null(v);
    cr_assert_str_eq(e, bad[i].msg);
    free(e);
  }
}

/* Random and mutated inputs: never a crash, always a status with a message
 * unless OK/TRUNCATED (bounded: 3000 inputs). */
Test(llm_wire, never_crashes)
{
  const char *seed = "{\"choices\":[{\"message\":{\"content\":\"YES\"},\"finish_reason\":\"stop\"}],"
                     "\"usage\":{\"prompt_tokens\":1}}";
  size_t n = strlen(seed);
  uint64_t x = 12345;
  char buf[256];
  for (int it = 0; it < 3000; it++) {
    memcpy(buf, seed, n);
    size_t len = n;
    int muts = 1 + it % 4;
    for (int k = 0; k < muts; k++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      size_t pos = (size_t)(x >> 33) % len;
      unsigned char c = (unsigned char)(x >> 20);
      if ((x >> 60) & 1) buf[pos] = (char)c;
      else len = pos + 1; /* cut */
    }
    rs__chat_reply r;
    rs__reply_status st = rs__chat_reply_parse(buf, len, &r);
    if (st == RS_REPLY_OK) cr_assert(r.content && !r.error);
    else cr_assert(r.error, "status %d without a message", st);
    rs__chat_reply_free(&r);
    double *v;
    size_t dim;
    char *e = NULL;
    rs__embed_reply_parse(buf, len, 1, &v, &dim, NULL, &e);
    free(v);
    free(e);
  }
}
