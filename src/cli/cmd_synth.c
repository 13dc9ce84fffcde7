/* cmd_synth.c: "ragsweep synth": an evaluation set from a document collection. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "llm/synth.h"
#include "llm_opts.h"
#include "sweep_io.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep synth --docs COLLECTION -n N -o EVALSET.json --model NAME [options]\n"
          "\n"
          "Draws N documents with text from the collection (seeded), and asks an LLM for one\n"
          "question each document answers and its reference answer, the question types taken in\n"
          "turn from --types.  Near-duplicate questions are dropped (Jaccard similarity >= 0.8 of\n"
          "their lower-cased word sets; the first drawn is kept).  Writes EVALSET.json, the JSON\n"
          "eval set that 'ragsweep import --json' reads (the source document relevant at grade\n"
          "2), and a ragas-style JSONL (user_input, reference, reference_contexts,\n"
          "reference_context_ids, id) for 'ragsweep rag'.  Every reply is cached as it arrives.\n"
          "\n"
          "what to ask:\n"
          "      --docs FILE          the documents: TSV id<TAB>text or BEIR corpus.jsonl (.gz ok)\n"
          "  -n N                     documents to draw (at most the documents with text)\n"
          "  -o, --out FILE           the eval set (JSON); its folder is created if missing\n"
          "      --jsonl FILE         the ragas-style JSONL (default: FILE with .json replaced\n"
          "                           by .jsonl, else FILE.jsonl)\n"
          "      --types LIST         question types in turn, comma-separated (default\n"
          "                           " RS_SYNTH_TYPES ")\n"
          "      --seed S             the draw's seed, an integer >= 0 (default 42)\n"
          "      --max-doc-chars N    cut documents in the prompt to N characters (default 8000;\n"
          "                           0: never)\n");
  llm_opts_help(f);
  fprintf(f,
          "  -h, --help               this help\n"
          "\n"
          "The cache defaults to cache.sqlite in the folder of -o.\n"
          "exit status: 0 ok; 1 usage (including -n above the documents with text); 2 bad input,\n"
          "too many failures, an API error that cannot heal (401, 400, 404, quota), or the\n"
          "--max-cost budget reached (everything answered so far is written and cached).\n");
}

static void show_progress(void *ctx, const rs__synth_stats *s)
{
  llm_progress_show(ctx, "synth", NULL, s->done, s->requests, s->cached, s->sent, s->wall_s, s->request_failures);
}

/* Splits "a,b,c" in place into types[]; the count, or 0 for an empty item. */
static size_t split_types(char *list, const char **types, size_t cap)
{
  size_t n = 0;
  for (char *p = list;; p++) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p || n == cap) return 0;
    types[n++] = p;
    if (!comma) return n;
    p = comma;
  }
}

/* The folder of path ("." when it has none), malloc'd. */
static char *folder_of(const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* path with a final ".json" replaced by ".jsonl", else with ".jsonl" added. */
static char *default_jsonl(const char *path)
{
  const size_t n = strlen(path);
  char *s = malloc(n + 8);
  if (!s) return NULL;
  if (n > 5 && strcmp(path + n - 5, ".json") == 0) snprintf(s, n + 8, "%sl", path);
  else snprintf(s, n + 8, "%s.jsonl", path);
  return s;
}

enum { OPT_DOCS = 256, OPT_JSONL, OPT_TYPES, OPT_SEED, OPT_MAX_DOC };

int rs_cli_synth(int argc, char **argv)
{
  static const struct option longs[] = {{"out", required_argument, 0, 'o'},
                                        {"docs", required_argument, 0, OPT_DOCS},
                                        {"jsonl", required_argument, 0, OPT_JSONL},
                                        {"types", required_argument, 0, OPT_TYPES},
                                        {"seed", required_argument, 0, OPT_SEED},
                                        {"max-doc-chars", required_argument, 0, OPT_MAX_DOC},
                                        LLM_OPTS_LONG,
                                        {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  const char *out_path = NULL, *jsonl_arg = NULL, *types_arg = RS_SYNTH_TYPES, *n_arg = NULL;
  rs__synth_cfg cfg = {0};
  cfg.seed = 42;
  cfg.max_doc_chars = 8000;
  llm_opts lo;
  llm_opts_init(&lo);
  long v;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "o:n:h", longs, NULL)) != -1) {
    const llm_opt_result lr = llm_opts_parse(&lo, c, optarg, "synth");
    if (lr == LLM_OPT_BAD) return RS_EXIT_USAGE;
    if (lr == LLM_OPT_HANDLED) continue;
    switch (c) {
    case 'o': out_path = optarg; break;
    case 'n': n_arg = optarg; break;
    case OPT_DOCS: cfg.docs_path = optarg; break;
    case OPT_JSONL: jsonl_arg = optarg; break;
    case OPT_TYPES: types_arg = optarg; break;
    case OPT_SEED:
      if (!parse_count(optarg, 0, &v)) return llm_usage_error("synth", "--seed: expected an integer >= 0, found '%s'", optarg);
      cfg.seed = (uint64_t)v;
      break;
    case OPT_MAX_DOC:
      if (!parse_count(optarg, 0, &v)) return llm_usage_error("synth", "--max-doc-chars: expected an integer >= 0, found '%s'", optarg);
      cfg.max_doc_chars = (size_t)v;
      break;
    case 'h': help(stdout); return RS_EXIT_OK;
    default: return llm_usage_error("synth", "unknown option or missing value in '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return llm_usage_error("synth", "unexpected argument '%s'", argv[optind]);
  if (!cfg.docs_path) return llm_usage_error("synth", "--docs FILE is required (TSV id<TAB>text, or BEIR corpus.jsonl)");
  if (!n_arg) return llm_usage_error("synth", "-n N is required: the number of documents to draw");
  if (!parse_count(n_arg, 1, &v)) return llm_usage_error("synth", "-n: expected an integer >= 1, found '%s'", n_arg);
  cfg.n = (size_t)v;
  if (!out_path) return llm_usage_error("synth", "-o EVALSET.json is required");
  if (!lo.model || !*lo.model)
    return llm_usage_error("synth", "--model NAME is required (or set RAGSWEEP_MODEL), e.g. --model gpt-4o-mini");
  /* The types are split in a copy: argv stays as it was. */
  char *types_buf = strdup(types_arg);
  const char *types[64];
  const size_t n_types = types_buf ? split_types(types_buf, types, sizeof types / sizeof *types) : 0;
  if (!n_types) {
    free(types_buf);
    return llm_usage_error("synth", "--types: expected a comma-separated list of at most 64 of %s, without empty items, "
                       "found '%s'", RS_SYNTH_TYPES, types_arg);
  }
  cfg.types = types, cfg.n_types = n_types;
  cfg.model = lo.model;
  cfg.temperature = lo.temperature;
  cfg.max_tokens = lo.max_tokens;
  cfg.http = lo.http;
  cfg.dry_run = lo.dry_run;
  cfg.price_in = lo.price_in, cfg.price_out = lo.price_out, cfg.max_cost = lo.max_cost;

  rs_error err = {0};
  rs_code rc = RS_OK;
  char *out_dir = folder_of(out_path), *jsonl_buf = NULL, *cache_buf = NULL;
  const char *jsonl_path = jsonl_arg;
  if (!jsonl_path) jsonl_path = jsonl_buf = default_jsonl(out_path);
  if (!out_dir || !jsonl_path) rc = rs__fail(&err, RS_NOMEM, "out of memory");
  if (!rc && strcmp(jsonl_path, out_path) == 0) {
    free(out_dir), free(jsonl_buf), free(types_buf);
    return llm_usage_error("synth", "--jsonl %s: the same file as -o; give another name", jsonl_path);
  }
  const char *cache_path = lo.cache_path;
  if (!rc && !cache_path) {
    const size_t n = strlen(out_dir) + 32;
    if (!(cache_buf = malloc(n))) rc = rs__fail(&err, RS_NOMEM, "out of memory");
    else snprintf(cache_buf, n, "%s/cache.sqlite", out_dir), cache_path = cache_buf;
  }
  cfg.cache_path = cache_path;
  struct stat st;
  const int dir_existed = out_dir && stat(out_dir, &st) == 0;
  if (!rc && !cfg.dry_run && mkdir_p(out_dir) != 0)
    rc = rs__fail(&err, RS_IO, "-o %s: cannot create the folder %s: %s", out_path, out_dir, strerror(errno));
  llm_progress ps = {0};
  if (!lo.quiet && isatty(STDERR_FILENO)) cfg.progress = show_progress, cfg.progress_ctx = &ps;
  rs__synth *syn = NULL;
  if (!rc) rc = rs__synth_run(&cfg, &syn, &err);
  llm_progress_end(&ps);
  const rs__synth_stats *s = syn ? rs__synth_get_stats(syn) : NULL;
  if (!rc && cfg.dry_run) {
    printf("ragsweep synth --dry-run: %llu documents drawn (seed %llu) of %llu with text in %s\n",
           (unsigned long long)s->drawn, (unsigned long long)cfg.seed, (unsigned long long)s->usable, cfg.docs_path);
    printf("  requests %llu: %llu cached, %llu to send\n", (unsigned long long)s->requests,
           (unsigned long long)s->cached, (unsigned long long)(s->requests - s->cached));
    printf("  estimated tokens to send: %llu prompt + %llu completion\n", (unsigned long long)s->est_prompt_tokens,
           (unsigned long long)s->est_completion_tokens);
    printf("  estimated cost: $%.4f at $%g / $%g per million prompt / completion tokens\n", s->est_cost, cfg.price_in,
           cfg.price_out);
    if (cfg.max_cost >= 0 && s->est_cost > cfg.max_cost)
      printf("  over the --max-cost budget of $%g: a real run would stop after about %.0f%% of the requests\n",
             cfg.max_cost, 100.0 * cfg.max_cost / s->est_cost);
  } else if (!rc) {
    rc = rs__synth_write(syn, out_path, jsonl_path, &err);
  }
  int status = RS_EXIT_OK;
  if (s && !cfg.dry_run && (s->sent || s->cached || !rc)) {
    printf("ragsweep synth: %llu documents drawn (seed %llu) of %llu with text in %s\n", (unsigned long long)s->drawn,
           (unsigned long long)cfg.seed, (unsigned long long)s->usable, cfg.docs_path);
    printf("  requests %llu: %llu sent, %llu cache hits, %llu retries\n", (unsigned long long)s->requests,
           (unsigned long long)s->sent, (unsigned long long)s->cached, (unsigned long long)s->retries);
    printf("  failures %llu (%llu unparsed, %llu empty, %llu truncated, %llu bad replies, %llu HTTP errors)",
           (unsigned long long)s->failures, (unsigned long long)s->unparsed, (unsigned long long)s->empty,
           (unsigned long long)s->truncated, (unsigned long long)s->bad_reply, (unsigned long long)s->http_error);
    if (s->not_sent) printf(", not sent %llu", (unsigned long long)s->not_sent);
    printf("\n  duplicates dropped %llu (Jaccard >= 0.8 of the questions' word sets)\n",
           (unsigned long long)s->duplicates);
    printf("  written %llu questions\n", (unsigned long long)s->written);
    printf("  tokens %llu prompt + %llu completion; cost of the requests sent $%.4f\n",
           (unsigned long long)s->prompt_tokens, (unsigned long long)s->completion_tokens, s->cost);
    if (s->cut) printf("  %llu documents cut to %zu characters\n", (unsigned long long)s->cut, cfg.max_doc_chars);
    printf("  %.2f s, %.1f requests/s sent\n", s->wall_s, s->wall_s > 0 ? (double)s->sent / s->wall_s : 0.0);
    if (!rc) printf("  wrote %s and %s (cache: %s)\n", out_path, jsonl_path, cache_path);
  }
  if (rc) {
    if (!dir_existed && !cfg.dry_run && out_dir) rmdir(out_dir); /* only if still empty */
    fprintf(stderr, "ragsweep synth: %s\n", err.msg);
    status = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  } else if (!cfg.dry_run) {
    const uint64_t attempted = s->drawn - s->not_sent;
    if (s->failures) fprintf(stderr, "ragsweep synth: first failure: %s\n", s->first_failure);
    if (s->stopped_fatal) {
      fprintf(stderr, "ragsweep synth: stopped: %s\n"
                      "(the %llu questions answered so far are written and cached; fix the cause and re-run to "
                      "resume)\n",
              s->fatal_message, (unsigned long long)s->written);
      status = RS_EXIT_INPUT;
    } else if (s->stopped_budget) {
      fprintf(stderr, "ragsweep synth: stopped at the --max-cost budget of $%g ($%.4f spent): %llu documents not "
                      "asked; re-run with a larger budget to resume from the cache\n",
              cfg.max_cost, s->cost, (unsigned long long)s->not_sent);
      status = RS_EXIT_INPUT;
    }
    if (attempted && (double)s->failures > lo.max_failures * (double)attempted) {
      fprintf(stderr, "ragsweep synth: %llu of %llu documents (%.2f%%) gave no question and answer, more than "
                      "--max-failures %g%%\n",
              (unsigned long long)s->failures, (unsigned long long)attempted,
              100.0 * (double)s->failures / (double)attempted, 100.0 * lo.max_failures);
      status = RS_EXIT_INPUT;
    }
  }
  rs__synth_free(syn);
  free(out_dir);
  free(jsonl_buf);
  free(cache_buf);
  free(types_buf);
  return status;
}
