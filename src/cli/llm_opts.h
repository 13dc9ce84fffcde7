/* llm_opts.h: the options of the commands that call an LLM (`judge`,
 * `rag`, `synth`), parsed in one place: model and endpoint, sampling,
 * transport, cache, dry run, budget and failures.
 *
 * As with sweep_opts.h: a command puts LLM_OPTS_LONG in its struct option
 * array, hands every option to llm_opts_parse before its own switch, and
 * prints llm_opts_help in its --help. */
#ifndef RAGSWEEP_CLI_LLM_OPTS_H
#define RAGSWEEP_CLI_LLM_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"

#include "llm/http.h"

/* getopt codes; above sweep_opts' (0x1000) and any command's own (256). */
enum {
  LLM_OPT_MODEL = 0x2000,
  LLM_OPT_BASE_URL,
  LLM_OPT_TEMP,
  LLM_OPT_MAX_TOKENS,
  LLM_OPT_CONC,
  LLM_OPT_TIMEOUT,
  LLM_OPT_RPM,
  LLM_OPT_RETRIES,
  LLM_OPT_CACHE,
  LLM_OPT_DRY,
  LLM_OPT_PRICE_IN,
  LLM_OPT_PRICE_OUT,
  LLM_OPT_MAX_COST,
  LLM_OPT_MAX_FAIL,
  LLM_OPT_QUIET
};

#define LLM_OPTS_LONG                                                                                   \
  {"model", required_argument, 0, LLM_OPT_MODEL}, {"base-url", required_argument, 0, LLM_OPT_BASE_URL}, \
      {"temperature", required_argument, 0, LLM_OPT_TEMP},                                              \
      {"max-tokens", required_argument, 0, LLM_OPT_MAX_TOKENS},                                         \
      {"concurrency", required_argument, 0, LLM_OPT_CONC}, {"timeout", required_argument, 0, LLM_OPT_TIMEOUT}, \
      {"rpm", required_argument, 0, LLM_OPT_RPM}, {"max-retries", required_argument, 0, LLM_OPT_RETRIES},   \
      {"cache", required_argument, 0, LLM_OPT_CACHE}, {"dry-run", no_argument, 0, LLM_OPT_DRY},             \
      {"price-in", required_argument, 0, LLM_OPT_PRICE_IN},                                             \
      {"price-out", required_argument, 0, LLM_OPT_PRICE_OUT},                                           \
      {"max-cost", required_argument, 0, LLM_OPT_MAX_COST},                                             \
      {"max-failures", required_argument, 0, LLM_OPT_MAX_FAIL}, {"quiet", no_argument, 0, LLM_OPT_QUIET}

#define LLM_DEFAULT_BASE_URL "https://api.openai.com/v1"

typedef struct llm_opts {
  const char *model;      /* --model, else RAGSWEEP_MODEL; NULL when neither */
  double temperature;     /* --temperature (default 0) */
  int max_tokens;         /* --max-tokens (0: not sent) */
  rs__http_cfg http;      /* base URL (--base-url, else OPENAI_BASE_URL, else OpenAI's), key (OPENAI_API_KEY), transport */
  const char *cache_path; /* --cache, or NULL: the command's default */
  int dry_run;
  double price_in, price_out; /* USD per million tokens */
  double max_cost;            /* USD; < 0: no budget */
  double max_failures;        /* fraction (default 0.01) */
  int quiet;
  int model_given, base_url_given; /* --model, --base-url on the command line (not the environment) */
} llm_opts;

/* The options that may differ between the shards (or ranks) of one job
 * without changing an answer or an output byte: transport (--concurrency,
 * --timeout, --rpm, --max-retries), the budget (--max-cost: a shard stopped
 * on it is re-run with a larger one), --dry-run and --quiet.  A shard
 * manifest does not store them. */
int llm_opt_per_shard(int c);

/* For a shard manifest's stored words (room for 4 more): the model and the
 * base URL when they came from the environment (RAGSWEEP_MODEL,
 * OPENAI_BASE_URL), so that the merge, wherever it runs, asks the same
 * cache keys.  The API key is never a word (it is read from OPENAI_API_KEY
 * only); a base URL with credentials (user:password@) or a query string is
 * refused, as a manifest would keep it in clear: 0 after a message on
 * stderr, else 1. */
int llm_opts_store_words(const llm_opts *o, const char *cmd, char **words, size_t *n_words);

/* The defaults, with the environment read (RAGSWEEP_MODEL, OPENAI_BASE_URL,
 * OPENAI_API_KEY). */
void llm_opts_init(llm_opts *o);

typedef enum { LLM_OPT_HANDLED, LLM_OPT_NOT_MINE, LLM_OPT_BAD } llm_opt_result;

/* Takes getopt's code c and its optarg; a bad value is reported on stderr
 * as "ragsweep CMD: --timeout: expected ..., found '...' (see 'ragsweep CMD
 * --help')". */
llm_opt_result llm_opts_parse(llm_opts *o, int c, const char *arg, const char *cmd);

/* The help lines of these options ("  --model NAME ..."), for --help. */
void llm_opts_help(FILE *f);

/* "ragsweep CMD: MESSAGE (see 'ragsweep CMD --help')" on stderr; returns
 * RS_EXIT_USAGE. */
int llm_usage_error(const char *cmd, const char *fmt, ...) RS_PRINTF(2, 3);

/* The progress line of a long LLM job on stderr, at most every 250 ms (and
 * at the last request): "ragsweep CMD[: STAGE]: done/requests (cached),
 * rate, ETA, failed". */
typedef struct llm_progress {
  double last;
  int shown; /* a line was printed: end it with llm_progress_end */
} llm_progress;
void llm_progress_show(llm_progress *p, const char *cmd, const char *stage, uint64_t done, uint64_t requests,
                       uint64_t cached, uint64_t sent, double wall_s, uint64_t failed);
/* Ends the line (a newline) when one was shown. */
void llm_progress_end(llm_progress *p);

/* --max-failures' value: "1%" or a fraction in [0, 1]; 1 on success. */
int llm_parse_fraction(const char *s, double *out);

#endif
