/* http.c: the OpenAI-compatible transport over libcurl's multi interface.
 * The only includer of <curl/curl.h>.  See http.h for the retry policy.
 *
 * libcurl is loaded (dlopen) by the first request, not linked: through
 * its TLS, Kerberos and LDAP libraries it brings some 30 shared objects,
 * and loading them cost every command about 15 ms at start-up, most of
 * a small eval's time, though only the LLM and monitoring commands ever
 * talk to a server. */
#define _DEFAULT_SOURCE /* timegm, strptime, strncasecmp */
#define _XOPEN_SOURCE 700
#include "llm/http.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "internal.h"
#include "llm/wire.h"

/* One request over its attempts. */
typedef struct req {
  size_t tag;
  const char *path;
  char *body;
  size_t body_len;
  int attempts;
  double due; /* monotonic seconds: when its next attempt may start */
  long status;
  double latency_ms;
  char message[256];
} req;

/* One easy handle, reused across requests so connections stay alive. */
typedef struct slot {
  CURL *easy;
  req *r;          /* NULL when idle */
  char *buf;       /* reply body of the current attempt, NUL-terminated */
  size_t len, cap;
  int too_big;     /* the body passed RS_HTTP_MAX_BODY */
  double retry_after; /* seconds from the Retry-After header, or -1 */
  double started;
} slot;

typedef struct pool {
  const rs__http_cfg *cfg;
  CURLM *multi;
  struct curl_slist *headers;
  char *auth; /* "Authorization: Bearer KEY", wiped before it is freed */
  char *base; /* base_url without a trailing '/' */
  size_t base_len;
  slot *slots;
  int n_slots, in_flight;
  req **waiting; /* retries with a due time; unordered */
  int n_waiting, max_waiting; /* no new request is pulled while max_waiting wait */
  double timeout_s, connect_s, backoff0, backoff_max, interval;
  double next_start; /* rpm gate */
  uint64_t rng;
  int exhausted, stopping;
  rs__http_stats st;
} pool;

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: a tiny seeded stream for the jitter factors. */
static double next_unit(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The libcurl functions this file calls, from the loaded library. */
typedef struct curl_api {
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *easy, CURLoption option, ...);
  CURLcode (*easy_getinfo)(CURL *easy, CURLINFO info, ...);
  CURLcode (*easy_perform)(CURL *easy);
  void (*easy_cleanup)(CURL *easy);
  const char *(*easy_strerror)(CURLcode code);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_setopt)(CURLM *multi, CURLMoption option, ...);
  CURLMcode (*multi_add_handle)(CURLM *multi, CURL *easy);
  CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *easy);
  CURLMcode (*multi_perform)(CURLM *multi, int *running);
  CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd extra[], unsigned n_extra, int timeout_ms, int *numfds);
  CURLMsg *(*multi_info_read)(CURLM *multi, int *left);
  CURLMcode (*multi_cleanup)(CURLM *multi);
  const char *(*multi_strerror)(CURLMcode code);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
  void (*slist_free_all)(struct curl_slist *list);
} curl_api;
static curl_api cu;

/* libcurl's soname since 7.16; the -dev package's unversioned link is
 * not installed on machines that only run ragsweep. */
#define CURL_SONAME "libcurl.so.4"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_ok;
static char global_why[320]; /* why libcurl is not usable, when !global_ok */

/* Each function by name into its slot of cu; 0 when one is missing. */
static int bind_curl(void *lib)
{
  static const struct {
    const char *name;
    size_t at;
  } table[] = {
#define SLOT(f) {"curl_" #f, offsetof(curl_api, f)}
      SLOT(global_init),   SLOT(easy_init),        SLOT(easy_setopt),         SLOT(easy_getinfo),
      SLOT(easy_perform),  SLOT(easy_cleanup),     SLOT(easy_strerror),       SLOT(multi_init),
      SLOT(multi_setopt),  SLOT(multi_add_handle), SLOT(multi_remove_handle), SLOT(multi_perform),
      SLOT(multi_poll),    SLOT(multi_info_read),  SLOT(multi_cleanup),       SLOT(multi_strerror),
      SLOT(slist_append),  SLOT(slist_free_all),
#undef SLOT
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    void *f = dlsym(lib, table[i].name);
    if (!f) {
      snprintf(global_why, sizeof global_why, "%s has no %s (libcurl 7.66 or later is needed)", CURL_SONAME,
               table[i].name);
      return 0;
    }
    /* POSIX guarantees a dlsym result converts to a function pointer;
     * memcpy says so without ISO C's object/function pointer cast. */
    memcpy((char *)&cu + table[i].at, &f, sizeof f);
  }
  return 1;
}

static void global_init(void)
{
  void *lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(global_why, sizeof global_why, "cannot load libcurl (%s); install it (Debian: apt-get install libcurl4)",
             why ? why : CURL_SONAME);
    return;
  }
  if (!bind_curl(lib)) return; /* the library stays loaded: unloading buys nothing */
  const CURLcode rc = cu.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    snprintf(global_why, sizeof global_why, "libcurl initialisation failed: %s", cu.easy_strerror(rc));
    return;
  }
  global_ok = 1;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
  slot *s = user;
  size_t add = size * n;
  if (s->len + add > RS_HTTP_MAX_BODY) {
    s->too_big = 1;
    return 0; /* libcurl aborts the transfer with CURLE_WRITE_ERROR */
  }
  if (s->len + add + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < s->len + add + 1) cap *= 2;
    char *b = realloc(s->buf, cap);
    if (!b) {
      s->too_big = 2; /* out of memory: reported as such */
      return 0;
    }
    s->buf = b;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, data, add);
  s->len += add;
  s->buf[s->len] = '\0';
  return add;
}

/* Retry-After: delta seconds (a decimal is accepted, which short tests use)
 * or an HTTP-date; -1 when absent or unreadable. */
static double parse_retry_after(const char *v, size_t n)
{
  char text[64];
  while (n && (*v == ' ' || *v == '\t')) v++, n--;
  while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ')) n--;
  if (n == 0 || n >= sizeof text) return -1;
  memcpy(text, v, n);
  text[n] = '\0';
  char *end;
  double d = strtod(text, &end);
  if (end != text && *end == '\0') return isfinite(d) && d >= 0 ? d : -1;
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *p = strptime(text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!p || *p) return -1;
  double delta = difftime(timegm(&tm), time(NULL));
  return delta > 0 ? delta : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *user)
{
  slot *s = user;
  size_t len = size * n;
  static const char name[] = "retry-after:";
  if (len > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0)
    s->retry_after = parse_retry_after(data + sizeof name - 1, len - (sizeof name - 1));
  return len;
}

static void pool_free(pool *p)
{
  if (p->slots) {
    for (int i = 0; i < p->n_slots; i++) {
      slot *s = &p->slots[i];
      if (s->easy) {
        if (s->r) cu.multi_remove_handle(p->multi, s->easy);
        cu.easy_cleanup(s->easy);
      }
      if (s->r) free(s->r->body);
      free(s->r);
      free(s->buf);
    }
  }
  for (int i = 0; i < p->n_waiting; i++) {
    free(p->waiting[i]->body);
    free(p->waiting[i]);
  }
  free(p->waiting);
  free(p->slots);
  if (p->multi) cu.multi_cleanup(p->multi);
  if (p->headers) cu.slist_free_all(p->headers); /* NULL too when libcurl was never loaded */
  if (p->auth) {
    /* volatile: the wipe must not be optimised away before free. */
    volatile char *a = p->auth;
    for (size_t i = 0; a[i]; i++) a[i] = 0;
    free(p->auth);
  }
  free(p->base);
}

static rs_code pool_init(pool *p, const rs__http_cfg *cfg, rs_error *err)
{
  if (!cfg->base_url || !*cfg->base_url) return rs__fail(err, RS_USAGE, "LLM client: no base URL given");
  if (cfg->concurrency < 1)
    return rs__fail(err, RS_USAGE, "LLM client: concurrency must be >= 1, found %d", cfg->concurrency);
  if (cfg->max_retries < 0)
    return rs__fail(err, RS_USAGE, "LLM client: max retries must be >= 0, found %d", cfg->max_retries);
  if (!(cfg->timeout_s >= 0) || !(cfg->connect_timeout_s >= 0) || !(cfg->rpm >= 0) ||
      !(cfg->backoff_initial_s >= 0) || !(cfg->backoff_max_s >= 0))
    return rs__fail(err, RS_USAGE, "LLM client: timeouts, rpm and backoff must be >= 0");
  pthread_once(&global_once, global_init);
  if (!global_ok) return rs__fail(err, RS_IO, "LLM client: %s", global_why);
  p->cfg = cfg;
  p->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 60;
  p->connect_s = cfg->connect_timeout_s > 0 ? cfg->connect_timeout_s : (p->timeout_s < 10 ? p->timeout_s : 10);
  p->backoff0 = cfg->backoff_initial_s > 0 ? cfg->backoff_initial_s : 1;
  p->backoff_max = cfg->backoff_max_s > 0 ? cfg->backoff_max_s : 30;
  p->interval = cfg->rpm > 0 ? 60.0 / cfg->rpm : 0;
  p->rng = cfg->seed;
  p->n_slots = cfg->concurrency;

  size_t bl = strlen(cfg->base_url);
  while (bl && cfg->base_url[bl - 1] == '/') bl--;
  if (!(p->base = malloc(bl + 1))) goto nomem;
  memcpy(p->base, cfg->base_url, bl);
  p->base[bl] = '\0';
  p->base_len = bl;

  if (!(p->multi = cu.multi_init())) goto nomem;
  cu.multi_setopt(p->multi, CURLMOPT_MAXCONNECTS, (long)p->n_slots);
  struct curl_slist *h = cu.slist_append(NULL, "Content-Type: application/json");
  if (!h) goto nomem;
  p->headers = h;
  /* No "Expect: 100-continue": it costs a round trip on every POST. */
  if (!(h = cu.slist_append(p->headers, "Expect:"))) goto nomem;
  if (cfg->api_key && *cfg->api_key) {
    static const char pre[] = "Authorization: Bearer ";
    size_t kl = strlen(cfg->api_key);
    if (!(p->auth = malloc(sizeof pre + kl))) goto nomem;
    memcpy(p->auth, pre, sizeof pre - 1);
    memcpy(p->auth + sizeof pre - 1, cfg->api_key, kl + 1);
    if (!(h = cu.slist_append(p->headers, p->auth))) goto nomem;
  }
  if (!(p->slots = calloc((size_t)p->n_slots, sizeof *p->slots))) goto nomem;
  /* The array also holds the in-flight requests that may fail while
   * max_waiting - 1 wait. */
  p->max_waiting = 2 * p->n_slots + 16;
  if (!(p->waiting = calloc((size_t)(p->max_waiting + p->n_slots), sizeof *p->waiting))) goto nomem;
  for (int i = 0; i < p->n_slots; i++) {
    slot *s = &p->slots[i];
    if (!(s->easy = cu.easy_init())) goto nomem;
    cu.easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(s->easy, CURLOPT_HTTPHEADER, p->headers);
    cu.easy_setopt(s->easy, CURLOPT_USERAGENT, "ragsweep/" RAGSWEEP_VERSION);
    cu.easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
    cu.easy_setopt(s->easy, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(s->easy, CURLOPT_HEADERDATA, s);
    cu.easy_setopt(s->easy, CURLOPT_PRIVATE, s);
    cu.easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, (long)ceil(p->timeout_s * 1000));
    cu.easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)ceil(p->connect_s * 1000));
    /* A redirect would turn the POST into a GET on some servers: report it. */
    cu.easy_setopt(s->easy, CURLOPT_FOLLOWLOCATION, 0L);
  }
  return RS_OK;
nomem:
  return rs__fail(err, RS_NOMEM, "LLM client: out of memory while setting up %d connections", p->n_slots);
}

/* Starts the next attempt of r on the idle slot s. */
static rs_code start(pool *p, slot *s, req *r, double now, rs_error *err)
{
  size_t pl = strlen(r->path);
  char *url = malloc(p->base_len + pl + 2);
  if (!url) return rs__fail(err, RS_NOMEM, "LLM client: out of memory");
  memcpy(url, p->base, p->base_len);
  size_t o = p->base_len;
  if (pl == 0 || r->path[0] != '/') url[o++] = '/';
  memcpy(url + o, r->path, pl + 1);
  cu.easy_setopt(s->easy, CURLOPT_URL, url); /* libcurl copies the string */
  free(url);
  cu.easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
  cu.easy_setopt(s->easy, CURLOPT_POSTFIELDS, r->body);
  s->len = 0;
  if (s->buf) s->buf[0] = '\0';
  s->too_big = 0;
  s->retry_after = -1;
  s->started = now;
  s->r = r;
  CURLMcode mc = cu.multi_add_handle(p->multi, s->easy);
  if (mc != CURLM_OK) {
    s->r = NULL;
    return rs__fail(err, RS_IO, "LLM client: cannot start a transfer: %s", cu.multi_strerror(mc));
  }
  if (r->attempts > 0) p->st.retries++;
  r->attempts++;
  p->st.attempts++;
  p->in_flight++;
  if (p->in_flight > p->st.max_in_flight) p->st.max_in_flight = p->in_flight;
  if (p->interval > 0) p->next_start = (p->next_start > now ? p->next_start : now) + p->interval;
  return RS_OK;
}

typedef enum { DONE_OK, DONE_RETRY, DONE_FATAL } verdict;

/* Copies the server's error message into the result, unless the status is
 * 401/403 (OpenAI echoes a masked key there) and without any copy of the key. */
static void add_server_message(pool *p, req *r, const char *body, size_t len)
{
  if (r->status == 401 || r->status == 403 || len == 0) return;
  char *m = rs__llm_error_message(body, len);
  if (!m) return;
  const char *key = p->cfg->api_key;
  if (!(key && *key && strstr(m, key))) {
    size_t o = strlen(r->message);
    snprintf(r->message + o, sizeof r->message - o, ": %s", m);
  }
  free(m);
}

static int body_has(const slot *s, const char *needle) { return s->len && strstr(s->buf, needle) != NULL; }

static verdict judge(pool *p, const slot *s, req *r, CURLcode res)
{
  long status = 0;
  cu.easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
  r->status = status;
  r->message[0] = '\0';
  if (res == CURLE_WRITE_ERROR && s->too_big) {
    snprintf(r->message, sizeof r->message, "%s",
             s->too_big == 1 ? "reply body larger than 16 MiB" : "out of memory while reading the reply");
    return DONE_FATAL;
  }
  switch (res) {
  case CURLE_OK:
    break;
  case CURLE_OPERATION_TIMEDOUT:
    snprintf(r->message, sizeof r->message, "timed out after %g s", p->timeout_s);
    return DONE_RETRY;
  case CURLE_COULDNT_CONNECT:
    snprintf(r->message, sizeof r->message, "connection refused");
    return DONE_RETRY;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    snprintf(r->message, sizeof r->message, "cannot resolve the host name");
    return DONE_RETRY;
  case CURLE_GOT_NOTHING:
    snprintf(r->message, sizeof r->message, "empty reply (the server closed the connection)");
    return DONE_RETRY;
  case CURLE_PARTIAL_FILE:
    snprintf(r->message, sizeof r->message, "truncated reply body (%zu bytes received)", s->len);
    return DONE_RETRY;
  case CURLE_RECV_ERROR:
    snprintf(r->message, sizeof r->message, "receive error (connection reset?)");
    return DONE_RETRY;
  case CURLE_SEND_ERROR:
    snprintf(r->message, sizeof r->message, "send error (connection reset?)");
    return DONE_RETRY;
  default:
    /* Bad URL, unsupported protocol, TLS problems: no retry can fix them. */
    snprintf(r->message, sizeof r->message, "%s", cu.easy_strerror(res));
    return DONE_FATAL;
  }
  if (status >= 200 && status < 300) return DONE_OK;
  snprintf(r->message, sizeof r->message, "HTTP %ld", status);
  verdict v;
  if (status == 429 && body_has(s, "insufficient_quota")) v = DONE_FATAL;
  else if (status == 408 || status == 409 || status == 425 || status == 429 || (status >= 500 && status < 600))
    v = DONE_RETRY;
  else v = DONE_FATAL;
  add_server_message(p, r, s->buf, s->len);
  return v;
}

/* Reports r and frees it; a non-zero return of done() or a FATAL stops. */
static void report(pool *p, req *r, rs__http_outcome oc, const char *body, size_t body_len,
                   rs__http_done_fn done, void *ctx)
{
  rs__http_result res;
  memset(&res, 0, sizeof res);
  res.tag = r->tag;
  res.outcome = oc;
  res.status = r->status;
  res.body = body ? body : "";
  res.body_len = body ? body_len : 0;
  res.retries = r->attempts > 0 ? r->attempts - 1 : 0;
  res.latency_ms = r->latency_ms;
  snprintf(res.message, sizeof res.message, "%s", oc == RS_HTTP_OK ? "" : r->message);
  if (oc == RS_HTTP_OK) p->st.ok++;
  else if (oc == RS_HTTP_GAVE_UP) p->st.gave_up++;
  else {
    p->st.fatal++;
    p->stopping = 1;
  }
  free(r->body);
  free(r);
  if (done(ctx, &res)) p->stopping = 1;
}

static double retry_delay(pool *p, int retry, double retry_after)
{
  double d = p->backoff0 * ldexp(1.0, retry - 1 < 60 ? retry - 1 : 60);
  if (d > p->backoff_max) d = p->backoff_max;
  d *= 0.5 + 0.5 * next_unit(&p->rng);
  if (retry_after > RS_HTTP_MAX_RETRY_AFTER_S) retry_after = RS_HTTP_MAX_RETRY_AFTER_S;
  return retry_after > d ? retry_after : d;
}

/* Handles the finished transfers; returns how many there were. */
static int collect(pool *p, rs__http_done_fn done, void *ctx)
{
  CURLMsg *m;
  int left, n = 0;
  while ((m = cu.multi_info_read(p->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    n++;
    CURL *e = m->easy_handle;
    CURLcode res = m->data.result;
    slot *s = NULL;
    cu.easy_getinfo(e, CURLINFO_PRIVATE, (char **)&s);
    cu.multi_remove_handle(p->multi, e);
    p->in_flight--;
    req *r = s->r;
    s->r = NULL;
    double t = now_s();
    r->latency_ms = (t - s->started) * 1e3;
    verdict v = judge(p, s, r, res);
    const char *body = s->buf ? s->buf : "";
    if (v == DONE_OK) report(p, r, RS_HTTP_OK, body, s->len, done, ctx);
    else if (v == DONE_FATAL) report(p, r, RS_HTTP_FATAL, body, s->len, done, ctx);
    else if (r->attempts > p->cfg->max_retries || p->stopping) {
      if (p->stopping && r->attempts <= p->cfg->max_retries) {
        size_t o = strlen(r->message);
        snprintf(r->message + o, sizeof r->message - o, "; not retried: the run was stopped");
      }
      report(p, r, RS_HTTP_GAVE_UP, body, s->len, done, ctx);
    } else {
      r->due = t + retry_delay(p, r->attempts, s->retry_after);
      p->waiting[p->n_waiting++] = r;
    }
  }
  return n;
}

/* Reports every waiting retry as given up (the run is stopping). */
static void drop_waiting(pool *p, rs__http_done_fn done, void *ctx)
{
  while (p->n_waiting > 0) {
    req *r = p->waiting[--p->n_waiting];
    size_t o = strlen(r->message);
    snprintf(r->message + o, sizeof r->message - o, "; not retried: the run was stopped");
    report(p, r, RS_HTTP_GAVE_UP, NULL, 0, done, ctx);
  }
}

rs_code rs__http_run(const rs__http_cfg *cfg, rs__http_next_fn next, rs__http_done_fn done, void *ctx,
                     rs__http_stats *stats, rs_error *err)
{
  pool p;
  memset(&p, 0, sizeof p);
  double t0 = now_s();
  rs_code rc = pool_init(&p, cfg, err);
  if (rc != RS_OK) goto out;

  for (;;) {
    if (p.stopping) drop_waiting(&p, done, ctx);
    double now = now_s();
    /* Fill idle slots: due retries first (they are older), then new requests. */
    double wake = now + 1.0;
    for (int i = 0; i < p.n_slots && p.in_flight < p.n_slots; i++) {
      slot *s = &p.slots[i];
      if (s->r) continue;
      if (p.interval > 0 && p.next_start > now) {
        if (p.next_start < wake) wake = p.next_start;
        break;
      }
      int w = -1;
      for (int j = 0; j < p.n_waiting; j++)
        if (p.waiting[j]->due <= now && (w < 0 || p.waiting[j]->due < p.waiting[w]->due)) w = j;
      req *r = NULL;
      if (w >= 0) {
        r = p.waiting[w];
        p.waiting[w] = p.waiting[--p.n_waiting];
      } else if (!p.exhausted && !p.stopping && p.n_waiting < p.max_waiting) {
        const char *path = NULL;
        char *body = NULL;
        size_t body_len = 0, tag = 0;
        if (!next(ctx, &path, &body, &body_len, &tag)) {
          p.exhausted = 1;
          break;
        }
        p.st.requests++;
        if (!(r = calloc(1, sizeof *r))) {
          free(body);
          rc = rs__fail(err, RS_NOMEM, "LLM client: out of memory");
          goto out;
        }
        *r = (req){.tag = tag, .path = path ? path : "", .body = body, .body_len = body_len};
      } else break;
      if ((rc = start(&p, s, r, now, err)) != RS_OK) {
        free(r->body);
        free(r);
        goto out;
      }
    }
    if (p.in_flight == 0 && p.n_waiting == 0 && (p.exhausted || p.stopping)) break;
    for (int j = 0; j < p.n_waiting; j++)
      if (p.waiting[j]->due < wake) wake = p.waiting[j]->due;

    if (p.in_flight == 0) {
      /* Nothing in flight: sleep until the next retry or rpm slot. */
      double d = wake - now_s();
      if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
        nanosleep(&ts, NULL);
      }
      continue;
    }
    int running = 0;
    CURLMcode mc = cu.multi_perform(p.multi, &running);
    if (mc == CURLM_OK && collect(&p, done, ctx) == 0) {
      /* Wait for socket activity, but no longer than the next due retry or
       * rpm slot, so waiting retries never block the others. */
      double ms = (wake - now_s()) * 1e3;
      int tmo = ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ceil(ms);
      mc = cu.multi_poll(p.multi, NULL, 0, tmo, NULL);
    }
    if (mc != CURLM_OK) {
      rc = rs__fail(err, RS_IO, "LLM client: libcurl multi error: %s", cu.multi_strerror(mc));
      goto out;
    }
  }
out:
  pool_free(&p);
  p.st.wall_s = now_s() - t0;
  if (stats) *stats = p.st;
  return rc;
}

/* --- one blocking request ------------------------------------------------------------- */

void rs__http_url_redacted(const char *url, char *out, size_t cap)
{
  if (!cap) return;
  const char *scheme = strstr(url, "://");
  const char *auth = scheme ? scheme + 3 : url;
  const size_t auth_len = strcspn(auth, "/?#");
  const char *at = NULL;
  for (const char *p = auth; p < auth + auth_len; p++)
    if (*p == '@') at = p; /* the last '@' ends the user information */
  const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
  if (!colon) {
    snprintf(out, cap, "%s", url);
    return;
  }
  snprintf(out, cap, "%.*s:***%s", (int)(colon - url), url, at);
}

typedef struct {
  char *buf;
  size_t len, cap;
  int nomem;
} reply_buf;

/* Keeps the first RS_HTTP_REQUEST_MAX_BODY bytes (enough for any message)
 * and consumes the rest, so a long reply does not fail the request. */
static size_t on_reply(char *data, size_t size, size_t n, void *user)
{
  reply_buf *b = user;
  const size_t add = size * n;
  size_t keep = b->len < RS_HTTP_REQUEST_MAX_BODY ? RS_HTTP_REQUEST_MAX_BODY - b->len : 0;
  if (keep > add) keep = add;
  if (keep && !b->nomem) {
    if (b->len + keep + 1 > b->cap) {
      size_t cap = b->cap ? b->cap : 1024;
      while (cap < b->len + keep + 1) cap *= 2;
      char *nb = realloc(b->buf, cap);
      if (!nb) {
        b->nomem = 1;
        return add;
      }
      b->buf = nb;
      b->cap = cap;
    }
    memcpy(b->buf + b->len, data, keep);
    b->len += keep;
    b->buf[b->len] = '\0';
  }
  return add;
}

/* The first non-empty line of a reply body, at most 200 bytes, with control
 * characters as spaces: enough to say what the server objected to. */
static void first_line(const char *body, size_t len, char *out, size_t cap)
{
  size_t i = 0, o = 0;
  while (i < len && (body[i] == '\n' || body[i] == '\r' || body[i] == ' ')) i++;
  for (; i < len && body[i] != '\n' && body[i] != '\r' && o + 1 < cap && o < 200; i++)
    out[o++] = (unsigned char)body[i] < 0x20 ? ' ' : body[i];
  out[o] = '\0';
}

void rs__http_reply_free(rs__http_reply *reply)
{
  if (!reply) return;
  free(reply->body);
  *reply = (rs__http_reply){0};
}

rs_code rs__http_request(const char *method, const char *url, const char *content_type, const char *body,
                         size_t body_len, double timeout_s, rs__http_reply *reply, rs_error *err)
{
  char shown[512];
  rs__http_url_redacted(url, shown, sizeof shown);
  if (reply) *reply = (rs__http_reply){0};
  pthread_once(&global_once, global_init);
  if (!global_ok) return rs__fail(err, RS_IO, "%s %s: %s", method, shown, global_why);
  if (!(timeout_s > 0)) timeout_s = 30;
  const double connect_s = timeout_s < 10 ? timeout_s : 10;
  rs_code rc = RS_OK;
  reply_buf rb = {0};
  struct curl_slist *headers = NULL, *h;
  char ct[256];
  CURL *easy = cu.easy_init();
  if (!easy || !(headers = cu.slist_append(NULL, "Expect:"))) goto nomem;
  if (content_type) {
    snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
    if (!(h = cu.slist_append(headers, ct))) goto nomem;
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  cu.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  cu.easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  if (cu.easy_setopt(easy, CURLOPT_URL, url) != CURLE_OK) {
    rc = rs__fail(err, RS_USAGE, "%s %s: not a URL libcurl can use", method, shown);
    goto done;
  }
  cu.easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  cu.easy_setopt(easy, CURLOPT_USERAGENT, "ragsweep/" RAGSWEEP_VERSION);
  cu.easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_reply);
  cu.easy_setopt(easy, CURLOPT_WRITEDATA, &rb);
  cu.easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)ceil(timeout_s * 1000));
  cu.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)ceil(connect_s * 1000));
  cu.easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  if (strcmp(method, "GET") == 0) cu.easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  else {
    /* POSTFIELDS sends the body; CUSTOMREQUEST names the method (PUT). */
    cu.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
    cu.easy_setopt(easy, CURLOPT_POSTFIELDS, body ? body : "");
    if (strcmp(method, "POST") != 0) cu.easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
  }
  const CURLcode res = cu.easy_perform(easy);
  long status = 0;
  cu.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  if (rb.nomem) goto nomem;
  if (res != CURLE_OK) {
    const char *what = res == CURLE_COULDNT_CONNECT        ? "connection refused (is the server running?)"
                       : res == CURLE_OPERATION_TIMEDOUT    ? "timed out"
                       : res == CURLE_COULDNT_RESOLVE_HOST ? "cannot resolve the host name"
                       : res == CURLE_GOT_NOTHING          ? "empty reply (the server closed the connection)"
                                                            : cu.easy_strerror(res);
    /* libcurl's detail names the host and port, never the password; it is
     * left out if it ever held the URL's user information. */
    const int detail = *errbuf && !strchr(errbuf, '@');
    if (res == CURLE_OPERATION_TIMEDOUT)
      rc = rs__fail(err, RS_IO, "%s %s: timed out after %g s", method, shown, timeout_s);
    else
      rc = rs__fail(err, RS_IO, "%s %s: %s%s%s%s", method, shown, what, detail ? " (" : "", detail ? errbuf : "",
                    detail ? ")" : "");
    goto done;
  }
  if (status < 200 || status >= 300) {
    char line[256];
    first_line(rb.buf ? rb.buf : "", rb.len, line, sizeof line);
    rc = rs__fail(err, RS_IO, "%s %s: HTTP %ld%s%s", method, shown, status, *line ? ": " : " (empty reply body)",
                  line);
  }
  if (reply) {
    reply->status = status;
    reply->body = rb.buf ? rb.buf : strdup("");
    reply->body_len = rb.len;
    rb.buf = NULL;
    if (!reply->body) goto nomem;
  }
  goto done;
nomem:
  rc = rs__fail(err, RS_NOMEM, "%s %s: out of memory", method, shown);
done:
  free(rb.buf);
  cu.slist_free_all(headers);
  if (easy) cu.easy_cleanup(easy);
  return rc;
}
