/* llm_opts.c: the options shared by the commands that call an LLM. */
#define _GNU_SOURCE
#include "llm_opts.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sweep_io.h"
#include "internal.h"

void llm_opts_init(llm_opts *o)
{
  memset(o, 0, sizeof *o);
  o->model = getenv("RAGSWEEP_MODEL");
  if (o->model && !*o->model) o->model = NULL;
  o->http.base_url = getenv("OPENAI_BASE_URL");
  if (!o->http.base_url || !*o->http.base_url) o->http.base_url = LLM_DEFAULT_BASE_URL;
  o->http.api_key = getenv("OPENAI_API_KEY");
  o->http.concurrency = 8;
  o->http.timeout_s = 120;
  o->http.max_retries = 5;
  o->http.backoff_initial_s = 1;
  o->http.backoff_max_s = 60;
  o->http.seed = 42;
  o->max_failures = 0.01;
  o->max_cost = -1;
}

int llm_opt_per_shard(int c)
{
  return c == LLM_OPT_CONC || c == LLM_OPT_TIMEOUT || c == LLM_OPT_RPM || c == LLM_OPT_RETRIES ||
         c == LLM_OPT_MAX_COST || c == LLM_OPT_DRY || c == LLM_OPT_QUIET;
}

int llm_opts_store_words(const llm_opts *o, const char *cmd, char **words, size_t *n_words)
{
  const char *url = o->http.base_url ? o->http.base_url : "";
  const char *auth = strstr(url, "://");
  auth = auth ? auth + 3 : url;
  const size_t auth_len = strcspn(auth, "/?#");
  if (memchr(auth, '@', auth_len) || strchr(url, '?')) {
    fprintf(stderr, "ragsweep %s: --shard: the base URL holds credentials or a query string, which a shard "
                    "manifest would keep in clear; give the key in OPENAI_API_KEY and a base URL without them\n",
            cmd);
    return 0;
  }
  static char w_model[] = "--model", w_url[] = "--base-url";
  if (!o->model_given && o->model) words[(*n_words)++] = w_model, words[(*n_words)++] = (char *)o->model;
  if (!o->base_url_given) words[(*n_words)++] = w_url, words[(*n_words)++] = (char *)url;
  return 1;
}

static llm_opt_result bad(const char *cmd, const char *fmt, ...) RS_PRINTF(2, 3);
static llm_opt_result bad(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ragsweep %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see 'ragsweep %s --help')\n", cmd);
  va_end(ap);
  return LLM_OPT_BAD;
}

int llm_parse_fraction(const char *s, double *out)
{
  char buf[64];
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, s, n + 1);
  double scale = 1.0;
  if (buf[n - 1] == '%') buf[n - 1] = '\0', scale = 100.0;
  double v;
  if (!parse_real(buf, &v) || v < 0) return 0;
  v /= scale;
  if (v > 1) return 0;
  *out = v;
  return 1;
}

llm_opt_result llm_opts_parse(llm_opts *o, int c, const char *arg, const char *cmd)
{
  long v;
  double d;
  switch (c) {
  case LLM_OPT_MODEL: o->model = arg, o->model_given = 1; break;
  case LLM_OPT_BASE_URL: o->http.base_url = arg, o->base_url_given = 1; break;
  case LLM_OPT_TEMP:
    if (!parse_real(arg, &d) || d < 0 || d > 2) return bad(cmd, "--temperature: expected a number from 0 to 2, found '%s'", arg);
    o->temperature = d;
    break;
  case LLM_OPT_MAX_TOKENS:
    if (!parse_count(arg, 1, &v) || v > 1000000) return bad(cmd, "--max-tokens: expected an integer from 1 to 1000000, found '%s'", arg);
    o->max_tokens = (int)v;
    break;
  case LLM_OPT_CONC:
    if (!parse_count(arg, 1, &v) || v > 4096) return bad(cmd, "--concurrency: expected an integer from 1 to 4096, found '%s'", arg);
    o->http.concurrency = (int)v;
    break;
  case LLM_OPT_TIMEOUT:
    if (!parse_real(arg, &d) || d <= 0 || d > 86400) return bad(cmd, "--timeout: expected seconds > 0 (at most 86400), found '%s'", arg);
    o->http.timeout_s = d;
    break;
  case LLM_OPT_RPM:
    if (!parse_real(arg, &d) || d < 0) return bad(cmd, "--rpm: expected a number of requests per minute >= 0, found '%s'", arg);
    o->http.rpm = d;
    break;
  case LLM_OPT_RETRIES:
    if (!parse_count(arg, 0, &v) || v > 100) return bad(cmd, "--max-retries: expected an integer from 0 to 100, found '%s'", arg);
    o->http.max_retries = (int)v;
    break;
  case LLM_OPT_CACHE: o->cache_path = arg; break;
  case LLM_OPT_DRY: o->dry_run = 1; break;
  case LLM_OPT_PRICE_IN:
    if (!parse_real(arg, &d) || d < 0) return bad(cmd, "--price-in: expected USD per million tokens >= 0, found '%s'", arg);
    o->price_in = d;
    break;
  case LLM_OPT_PRICE_OUT:
    if (!parse_real(arg, &d) || d < 0) return bad(cmd, "--price-out: expected USD per million tokens >= 0, found '%s'", arg);
    o->price_out = d;
    break;
  case LLM_OPT_MAX_COST:
    if (!parse_real(arg, &d) || d < 0) return bad(cmd, "--max-cost: expected USD >= 0, found '%s'", arg);
    o->max_cost = d;
    break;
  case LLM_OPT_MAX_FAIL:
    if (!llm_parse_fraction(arg, &o->max_failures))
      return bad(cmd, "--max-failures: expected a fraction from 0 to 1 or a percentage (1%%), found '%s'", arg);
    break;
  case LLM_OPT_QUIET: o->quiet = 1; break;
  default: return LLM_OPT_NOT_MINE;
  }
  return LLM_OPT_HANDLED;
}

void llm_opts_help(FILE *f)
{
  fputs("the model:\n"
        "      --model NAME         model name (required; or RAGSWEEP_MODEL)\n"
        "      --base-url URL       API base (default: OPENAI_BASE_URL, else " LLM_DEFAULT_BASE_URL ");\n"
        "                           the key is read from OPENAI_API_KEY (optional for local servers)\n"
        "      --temperature T      sampling temperature (default 0)\n"
        "      --max-tokens N       completion limit sent with each request (default: none)\n"
        "transport:\n"
        "      --concurrency N      requests in flight (default 8)\n"
        "      --timeout S          seconds per request attempt (default 120)\n"
        "      --rpm N              at most N requests started per minute (default: no limit)\n"
        "      --max-retries N      retries on 429, 5xx, timeouts, broken connections (default 5)\n"
        "      --cache PATH         reply cache, SQLite (default OUTDIR/cache.sqlite); may be shared\n"
        "budget and failures:\n"
        "      --dry-run            send nothing: requests, cached, estimated tokens and cost\n"
        "      --price-in USD       price per million prompt tokens (default 0)\n"
        "      --price-out USD      price per million completion tokens (default 0)\n"
        "      --max-cost USD       stop before the spend would exceed USD (what is done is kept)\n"
        "      --max-failures F     fail (exit 2) when more than F of the items get no answer: a\n"
        "                           fraction or a percentage (default 1%)\n"
        "      --quiet              no progress line on stderr\n",
        f);
}

int llm_usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ragsweep %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see 'ragsweep %s --help')\n", cmd);
  va_end(ap);
  return RS_EXIT_USAGE;
}

void llm_progress_show(llm_progress *p, const char *cmd, const char *stage, uint64_t done, uint64_t requests,
                       uint64_t cached, uint64_t sent, double wall_s, uint64_t failed)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const double now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
  if (now - p->last < 0.25 && done < requests) return;
  p->last = now;
  const double rate = wall_s > 0 ? (double)sent / wall_s : 0.0;
  const uint64_t left = requests > done ? requests - done : 0;
  fprintf(stderr, "\rragsweep %s%s%s: %llu/%llu requests (%llu cached), %.1f req/s", cmd, stage ? ": " : "",
          stage ? stage : "", (unsigned long long)done, (unsigned long long)requests, (unsigned long long)cached, rate);
  if (rate > 0 && left) fprintf(stderr, ", ETA %.0f s", (double)left / rate);
  fprintf(stderr, ", %llu failed   ", (unsigned long long)failed);
  p->shown = 1;
}

void llm_progress_end(llm_progress *p)
{
  if (p->shown) fprintf(stderr, "\n");
  p->shown = 0;
}
