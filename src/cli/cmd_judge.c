/* cmd_judge.c: "ragsweep judge": LLM relevance labels for a sweep's top-k. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "direct_input.h"
#include "engine/shard.h"
#include "llm/judge.h"
#include "llm/judge_ranks.h"
#include "llm_opts.h"
#include "shard_io.h"
#include "sweep_io.h"
#include "util/mpi.h"


static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep judge CORPUS.h5 [RUNS.h5 ...] -o OUTDIR --model NAME [options]\n"
          "       ragsweep judge BEIR_DIR RUN [RUN ...] -o OUTDIR --model NAME [options]\n"
          "       ragsweep judge --queries FILE --docs FILE RUN [RUN ...] -o OUTDIR --model NAME\n"
          "\n"
          "Asks an LLM, over an OpenAI-compatible API (OpenAI, Ollama, vLLM, llama.cpp's\n"
          "server), to label every (query, passage) pair in the top --depth of the runs,\n"
          "each pair once however many runs retrieved it.  Every reply is cached as it\n"
          "arrives: a second identical command sends nothing, and a killed run resumes.\n"
          "Writes OUTDIR/qrels.txt (TREC qrels of the labelled pairs), OUTDIR/judgments.jsonl\n"
          "(one line per pair, failures included) and, when the corpus has human qrels for\n"
          "some pairs, OUTDIR/agreement.csv.  Score with: ragsweep eval --qrels OUTDIR/qrels.txt\n"
          "\n"
          "Text runs (TREC, JSONL, CSV/TSV; see 'ragsweep eval --help') are imported into a\n"
          "temporary corpus first.  With a BEIR folder the queries are those of its qrels\n"
          "(--split), the texts its queries.jsonl and corpus.jsonl; with --queries and no\n"
          "judgments, the queries are the ids of the queries file; --qrels gives judgments\n"
          "already made (for --holes-only and agreement.csv).\n"
          "\n"
          "what to judge:\n"
          "  -o, --out DIR            output folder (created if missing)\n"
          "      --depth K            top docs per run and query (default 10)\n"
          "      --holes-only         skip pairs the corpus's qrels already judge\n"
          "      --ties=trec|stored   ranking as in eval (default trec)\n"
          "      --queries FILE       query texts (TSV id<TAB>text or JSONL _id/id + text; .gz ok);\n"
          "                           default: the corpus's /queries/text\n"
          "      --docs FILE          passage texts (TSV, or BEIR corpus.jsonl with title); default:\n"
          "                           the corpus's /docs/text\n"
          "      --qrels FILE         judgments: with a corpus, in place of its /qrels; with text\n"
          "                           runs, TREC qrels, BEIR qrels or a JSON eval set\n"
          "      --split NAME         a BEIR folder's qrels/NAME.tsv (default test)\n"
          "how to ask:\n"
          "      --prompt P           binary (default: YES/NO -> 1/0), graded (0-3, UMBRELA's\n"
          "                           scale), or a prompt file (README, \"Prompt files\")\n"
          "      --samples N          ask N times, keep the most frequent label (default 1)\n"
          "      --max-doc-chars N    cut passages to N characters (default 8000; 0: never)\n"
          "where:\n"
          "      --shard I/N          ask share I of N of the distinct pairs only (0 <= I < N, e.g.\n"
          "                           $SLURM_ARRAY_TASK_ID/N) into the shard folder -o, with its own\n"
          "                           cache (OUTDIR/cache.sqlite; resumable, --dry-run and --max-cost\n"
          "                           are the share's); then 'ragsweep merge SHARD_DIR... -o OUTDIR'\n"
          "                           merges the caches into --cache (default OUTDIR/cache.sqlite) and\n"
          "                           writes the outputs of one process, sending nothing.  Under\n"
          "                           mpirun the ranks are the shares (rank caches CACHE.rankR)\n");
  llm_opts_help(f);
  fprintf(f,
          "  -h, --help               this help\n"
          "\n"
          "exit status: 0 ok; 1 usage; 2 bad input, too many failures, an API error that\n"
          "cannot heal (401, 400, 404, quota), or the --max-cost budget reached (everything\n"
          "judged so far is written and cached).\n");
}

static void show_progress(void *ctx, const rs__judge_stats *s)
{
  llm_progress_show(ctx, "judge", NULL, s->done, s->requests, s->cached, s->sent, s->wall_s, s->request_failures);
}

enum { OPT_DEPTH = 256, OPT_HOLES, OPT_TIES, OPT_QUERIES, OPT_DOCS, OPT_PROMPT, OPT_SAMPLES, OPT_MAX_DOC, OPT_QRELS, OPT_SPLIT,
       OPT_SHARD };

/* The inputs a judge shard manifest records (size and modification time):
 * the positional words, the text and judgment files, a prompt file. */
static size_t judge_inputs(char **pos, size_t n_pos, const char *queries, const char *docs, const char *qrels,
                           const char *prompt, char **inputs)
{
  size_t n = 0;
  struct stat st;
  for (size_t i = 0; i < n_pos; i++) inputs[n++] = pos[i];
  if (queries) inputs[n++] = (char *)queries;
  if (docs) inputs[n++] = (char *)docs;
  if (qrels) inputs[n++] = (char *)qrels;
  if (prompt && stat(prompt, &st) == 0) inputs[n++] = (char *)prompt;
  return n;
}

static int judge_main(int argc, char **argv, const shard_set *merge);

int rs_cli_judge(int argc, char **argv) { return judge_main(argc, argv, NULL); }

int judge_merge(const shard_set *s, const char *out_dir, int quiet)
{
  int argc = 0;
  char **argv = shard_merge_argv(s, "judge", out_dir, quiet, &argc);
  if (!argv) return RS_EXIT_INPUT;
  const int status = judge_main(argc, argv, s);
  free(argv);
  return status;
}

static int judge_main(int argc, char **argv, const shard_set *merge)
{
  static const struct option longs[] = {
      {"out", required_argument, 0, 'o'},           {"depth", required_argument, 0, OPT_DEPTH},
      {"holes-only", no_argument, 0, OPT_HOLES},    {"ties", required_argument, 0, OPT_TIES},
      {"queries", required_argument, 0, OPT_QUERIES}, {"docs", required_argument, 0, OPT_DOCS},
      {"prompt", required_argument, 0, OPT_PROMPT}, {"samples", required_argument, 0, OPT_SAMPLES},
      {"max-doc-chars", required_argument, 0, OPT_MAX_DOC}, {"qrels", required_argument, 0, OPT_QRELS},
      {"split", required_argument, 0, OPT_SPLIT},   {"shard", required_argument, 0, OPT_SHARD}, LLM_OPTS_LONG,
      {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
  const char *out_dir = NULL, *prompt_spec = "binary", *cache_path = NULL, *qrels_path = NULL, *split = NULL;
  rs__judge_cfg cfg = {0};
  cfg.depth = 10;
  cfg.samples = 1;
  cfg.max_doc_chars = 8000;
  llm_opts lo;
  llm_opts_init(&lo);
  long v;
  int shard = 0;
  size_t shard_i = 0, shard_n = 0;
  /* The words that define the judging, for a shard manifest: all but the
   * output folder, --shard and the options llm_opt_per_shard names. */
  char **orig = calloc((size_t)argc + 1, sizeof *orig), **words = calloc((size_t)argc + 5, sizeof *words);
  unsigned char *drop = calloc((size_t)argc + 1, 1);
  size_t n_words = 0;
  if (!orig || !words || !drop) {
    free(orig), free(words), free(drop);
    fprintf(stderr, "ragsweep judge: out of memory\n");
    return RS_EXIT_INPUT;
  }
  memcpy(orig, argv, (size_t)argc * sizeof *orig);
  optind = 1;
  int c, status = RS_EXIT_OK;
  while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    if (c == 'o' || c == OPT_SHARD || llm_opt_per_shard(c)) shard_drop_option_words(orig, argc, argv, optarg, drop);
    const llm_opt_result lr = llm_opts_parse(&lo, c, optarg, "judge");
    if (lr == LLM_OPT_BAD) {
      status = RS_EXIT_USAGE;
      goto early;
    }
    if (lr == LLM_OPT_HANDLED) continue;
    switch (c) {
    case 'o': out_dir = optarg; break;
    case OPT_SHARD:
      if (!rs__shard_parse(optarg, &shard_i, &shard_n)) {
        status = llm_usage_error("judge", "--shard: expected I/N with 0 <= I < N <= %d (e.g. --shard "
                                 "$SLURM_ARRAY_TASK_ID/8), found '%s'", RS__SHARD_MAX_N, optarg);
        goto early;
      }
      shard = 1;
      break;
    case OPT_DEPTH:
      if (!parse_count(optarg, 1, &v) || v > 100000) { status = llm_usage_error("judge", "--depth: expected an integer from 1 to 100000, found '%s'", optarg); goto early; }
      cfg.depth = (size_t)v;
      break;
    case OPT_HOLES: cfg.holes_only = 1; break;
    case OPT_TIES:
      if (strcmp(optarg, "trec") == 0) cfg.ties_stored = 0;
      else if (strcmp(optarg, "stored") == 0) cfg.ties_stored = 1;
      else { status = llm_usage_error("judge", "--ties: expected 'trec' or 'stored', found '%s'", optarg); goto early; }
      break;
    case OPT_QUERIES: cfg.queries_path = optarg; break;
    case OPT_DOCS: cfg.docs_path = optarg; break;
    case OPT_PROMPT: prompt_spec = optarg; break;
    case OPT_QRELS: qrels_path = optarg; break;
    case OPT_SPLIT: split = optarg; break;
    case OPT_SAMPLES:
      if (!parse_count(optarg, 1, &v) || v > 1000) { status = llm_usage_error("judge", "--samples: expected an integer from 1 to 1000, found '%s'", optarg); goto early; }
      cfg.samples = (int)v;
      break;
    case OPT_MAX_DOC:
      if (!parse_count(optarg, 0, &v)) { status = llm_usage_error("judge", "--max-doc-chars: expected an integer >= 0, found '%s'", optarg); goto early; }
      cfg.max_doc_chars = (size_t)v;
      break;
    case 'h': help(stdout); status = RS_EXIT_OK; goto early;
    default: { status = llm_usage_error("judge", "unknown option or missing value in '%s'", argv[optind - 1]); goto early; }
    }
  }
  for (int k = 1; k < argc; k++)
    if (!drop[k]) words[n_words++] = orig[k];
  cfg.model = lo.model;
  cfg.temperature = lo.temperature;
  cfg.max_tokens = lo.max_tokens;
  cfg.http = lo.http;
  cfg.dry_run = lo.dry_run;
  cfg.price_in = lo.price_in, cfg.price_out = lo.price_out, cfg.max_cost = lo.max_cost;
  cfg.max_failures = lo.max_failures;
  cache_path = lo.cache_path;
  const int quiet = lo.quiet;
  const int ranks = rs__mpi_size() > 1;
  /* getopt moved the positional arguments to the end */
  char **pos = argv + optind;
  const size_t n_pos = (size_t)(argc - optind);
  if (n_pos == 0) {
    status = llm_usage_error("judge", "expected CORPUS.h5 (and run files), or a BEIR folder and runs, or --queries FILE and runs");
    goto early;
  }
  if (!out_dir) {
    status = llm_usage_error("judge", "-o OUTDIR is required");
    goto early;
  }
  if (!cfg.model || !*cfg.model) {
    status = llm_usage_error("judge", "--model NAME is required (or set RAGSWEEP_MODEL), e.g. --model gpt-4o-mini");
    goto early;
  }
  if (shard && ranks) {
    status = llm_usage_error("judge", "--shard and MPI both split the pairs: under mpirun the ranks take the shares");
    goto early;
  }
  if ((shard || ranks) && !llm_opts_store_words(&lo, "judge", words, &n_words)) {
    status = RS_EXIT_USAGE;
    goto early;
  }
  rs_error err = {0};
  rs__prompt prompt;
  if (rs__prompt_load(prompt_spec, &prompt, &err)) {
    fprintf(stderr, "ragsweep judge: %s\n", err.msg);
    status = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto early;
  }
  cfg.prompt = &prompt;
  sweep_input in = {0};
  rs__judge *j = NULL;
  rs__llm_replay *replay = NULL;
  char *cache_buf = NULL, *common = NULL;
  char **inputs = calloc(n_pos + 4, sizeof *inputs);
  llm_progress ps = {0};
  direct_plan plan = {0};
  const direct_opts dop = {.cmd = "judge", .qrels_path = qrels_path, .split = split, .queries_path = cfg.queries_path};
  const size_t n_inputs =
      inputs ? judge_inputs(pos, n_pos, cfg.queries_path, cfg.docs_path, qrels_path, prompt_spec, inputs) : 0;
  rs_code rc = inputs ? RS_OK : rs__fail(&err, RS_NOMEM, "out of memory");
  if (!rc && merge && !shard_llm_complete(merge, "pairs")) {
    status = RS_EXIT_INPUT;
    goto done;
  }
  if (!rc) rc = sweep_input_open_args(&in, pos, n_pos, &dop, &plan, &err);
  /* A BEIR folder's texts, unless --queries/--docs give others. */
  if (!rc && plan.beir_dir && !cfg.queries_path && plan.beir_queries[0]) cfg.queries_path = plan.beir_queries;
  if (!rc && plan.beir_dir && !cfg.docs_path && plan.beir_corpus[0]) cfg.docs_path = plan.beir_corpus;
  struct stat out_st;
  const int out_existed = stat(out_dir, &out_st) == 0;
  const int root = rs__mpi_rank() == 0;
  if (!rc && !cfg.dry_run && shard) rc = shard_llm_begin(out_dir, &err);
  else if (!rc && !cfg.dry_run && root && mkdir_p(out_dir) != 0)
    rc = rs__fail(&err, RS_IO, "-o %s: cannot create the folder: %s", out_dir, strerror(errno));
  if (ranks) rc = rs__mpi_agree(rc, &err);
  if (!rc) {
    /* A shard keeps its own cache in its folder; --cache names the job's,
     * which the merge fills. */
    if (!cache_path || shard) {
      size_t n = strlen(out_dir) + 32;
      if (!(cache_buf = malloc(n))) rc = rs__fail(&err, RS_NOMEM, "out of memory");
      else snprintf(cache_buf, n, "%s/" SHARD_CACHE, out_dir), cache_path = cache_buf;
    }
    cfg.cache_path = cache_path;
    cfg.corpus = in.corpus;
    cfg.runs = in.runs;
    cfg.n_runs = in.n_runs;
    if (shard) cfg.share_i = shard_i, cfg.share_n = shard_n, cfg.record_sent = 1;
    if (!quiet && root && isatty(STDERR_FILENO)) cfg.progress = show_progress, cfg.progress_ctx = &ps;
  }
  if (!rc && merge) {
    rc = shard_llm_merge_caches(merge, cache_path, &replay, quiet, &err);
    cfg.offline = 1, cfg.replay = replay;
  }
  if (!rc) rc = ranks ? rs__judge_run_ranks(&cfg, &j, &err) : rs__judge_run(&cfg, &j, &err);
  llm_progress_end(&ps);
  if (ranks && !root) goto done; /* rank 0 writes and prints */
  const rs__judge_stats *s = j ? rs__judge_get_stats(j) : NULL;
  if (!rc && merge && s->missing) {
    uint64_t *counts = calloc(merge->n, sizeof *counts);
    if (!counts) rc = rs__fail(&err, RS_NOMEM, "out of memory");
    else {
      rs__judge_missing_by_share(j, merge->n, counts);
      shard_llm_report_missing(merge, counts, "pairs");
      free(counts);
      status = RS_EXIT_INPUT;
      goto done;
    }
  }
  /* The shards' common manifest part, and the merge's check of it against
   * the inputs as they are now. */
  if (!rc && !cfg.dry_run && (shard || merge)) {
    char lines[96];
    snprintf(lines, sizeof lines, "pairs %llu\nsamples %d\n", (unsigned long long)s->pairs_all, cfg.samples);
    rc = shard_manifest_llm("judge", words, n_words, inputs, n_inputs, lines, shard ? shard_n : merge->n, &common, &err);
    if (!rc && merge && strcmp(common, merge->common) != 0)
      rc = rs__fail(&err, RS_FORMAT, "%s: the shards do not match their inputs now (an input changed since the "
                    "shards ran, or another ragsweep version merges): run the shards again", merge->dir[0]);
  }
  if (!rc && cfg.dry_run) {
    printf("ragsweep judge --dry-run: %zu run%s, depth %zu: %llu retrieved, %llu distinct pairs", in.n_runs,
           in.n_runs == 1 ? "" : "s", cfg.depth, (unsigned long long)s->retrieved, (unsigned long long)s->pairs_all);
    if (cfg.holes_only) printf(" (%llu already judged, skipped)", (unsigned long long)s->already_judged);
    if (shard)
      printf("\n  shard %zu/%zu: pairs %llu..%llu (%llu pairs)", shard_i, shard_n, (unsigned long long)s->share_first,
             (unsigned long long)(s->share_first + s->pairs), (unsigned long long)s->pairs);
    printf("\n  requests %llu: %llu cached, %llu to send\n", (unsigned long long)s->requests,
           (unsigned long long)s->cached, (unsigned long long)(s->requests - s->cached));
    printf("  estimated tokens to send: %llu prompt + %llu completion\n", (unsigned long long)s->est_prompt_tokens,
           (unsigned long long)s->est_completion_tokens);
    printf("  estimated cost: $%.4f at $%g / $%g per million prompt / completion tokens\n", s->est_cost, cfg.price_in,
           cfg.price_out);
    if (cfg.max_cost >= 0 && s->est_cost > cfg.max_cost)
      printf("  over the --max-cost budget of $%g: a real run would stop after about %.0f%% of the requests\n",
             cfg.max_cost, 100.0 * cfg.max_cost / s->est_cost);
  } else if (!rc && shard) {
    char own[256];
    snprintf(own, sizeof own, "pairs-from %llu\npairs-to %llu\nrequests %llu\nsent %llu\ncached %llu\nstopped %s\n"
             "not-sent %llu\n", (unsigned long long)s->share_first, (unsigned long long)(s->share_first + s->pairs),
             (unsigned long long)s->requests, (unsigned long long)s->sent, (unsigned long long)s->cached,
             s->stopped_fatal ? "fatal" : s->stopped_budget ? "budget" : "none", (unsigned long long)s->not_sent);
    rc = shard_llm_commit(out_dir, common, shard_i, own, &err);
  } else if (!rc) {
    rc = rs__judge_write(j, out_dir, &err);
  }
  if (s && !cfg.dry_run && (s->sent || s->cached || !rc)) {
    const double dedup = s->retrieved ? 100.0 * (1.0 - (double)s->pairs_all / (double)s->retrieved) : 0.0;
    printf("ragsweep judge: %zu run%s, depth %zu: %llu retrieved, %llu distinct pairs (%.1f%% de-duplicated)\n",
           in.n_runs, in.n_runs == 1 ? "" : "s", cfg.depth, (unsigned long long)s->retrieved,
           (unsigned long long)s->pairs_all, dedup);
    if (shard)
      printf("  shard %zu/%zu: pairs %llu..%llu (%llu pairs)\n", shard_i, shard_n, (unsigned long long)s->share_first,
             (unsigned long long)(s->share_first + s->pairs), (unsigned long long)s->pairs);
    if (cfg.holes_only) printf("  %llu pairs already judged by the corpus's qrels, skipped\n", (unsigned long long)s->already_judged);
    printf("  requests %llu: %llu sent, %llu cache hits, %llu retries\n", (unsigned long long)s->requests,
           (unsigned long long)s->sent, (unsigned long long)s->cached, (unsigned long long)s->retries);
    printf("  judged %llu, failures %llu (%llu unparsed, %llu truncated, %llu bad replies, %llu HTTP errors)",
           (unsigned long long)s->judged, (unsigned long long)s->failures, (unsigned long long)s->unparsed,
           (unsigned long long)s->truncated, (unsigned long long)s->bad_reply, (unsigned long long)s->http_error);
    if (s->not_sent) printf(", not sent %llu", (unsigned long long)s->not_sent);
    printf("\n  tokens %llu prompt + %llu completion; cost of the requests sent $%.4f\n",
           (unsigned long long)s->prompt_tokens, (unsigned long long)s->completion_tokens, s->cost);
    if (s->cut) printf("  %llu passages cut to %zu characters\n", (unsigned long long)s->cut, cfg.max_doc_chars);
    if (!merge) printf("  %.2f s, %.1f requests/s sent\n", s->wall_s, s->wall_s > 0 ? (double)s->sent / s->wall_s : 0.0);
    if (!rc && shard)
      printf("  wrote the shard %s/" SHARD_MANIFEST " (cache: %s)\n"
             "merge every shard with: ragsweep merge SHARD_DIR... -o OUTDIR\n", out_dir, cache_path);
    else if (!rc) printf("  wrote %s/qrels.txt and %s/judgments.jsonl (cache: %s)\n", out_dir, out_dir, cache_path);
  }
  if (rc) {
    if (!out_existed && !cfg.dry_run && !merge) rmdir(out_dir); /* only if still empty: nothing of this run is left */
    fprintf(stderr, "ragsweep %s: %s\n", merge ? "merge" : "judge", err.msg);
    status = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  } else if (!cfg.dry_run) {
    const uint64_t attempted = s->judged + s->failures;
    if (s->stopped_fatal) {
      fprintf(stderr, "ragsweep judge: stopped: %s\n"
                      "(%llu pairs judged so far are %s; fix the cause and re-run to resume)\n",
              s->fatal_message, (unsigned long long)s->judged, shard ? "cached" : "written and cached");
      status = RS_EXIT_INPUT;
    } else if (s->stopped_budget) {
      fprintf(stderr, "ragsweep judge: stopped at the --max-cost budget of $%g ($%.4f spent): %llu pairs not "
                      "judged; re-run with a larger budget to resume from the cache\n",
              cfg.max_cost, s->cost, (unsigned long long)s->not_sent);
      status = RS_EXIT_INPUT;
    }
    /* A shard's failures are judged with the others' by the merge, as one
     * process judges them. */
    if (!shard && attempted && (double)s->failures > cfg.max_failures * (double)attempted) {
      fprintf(stderr, "ragsweep %s: %llu of %llu pairs (%.2f%%) got no label, more than --max-failures %g%%; "
                      "see the status of each in %s/judgments.jsonl\n", merge ? "merge" : "judge",
              (unsigned long long)s->failures, (unsigned long long)attempted,
              100.0 * (double)s->failures / (double)attempted, 100.0 * cfg.max_failures, out_dir);
      status = RS_EXIT_INPUT;
    }
  }
done:
  if (ranks) rs__mpi_wait_all(); /* the ranks wait here (asleep) while rank 0 writes: the files' close is collective */
  rs__judge_free(j);
  rs__llm_replay_free(replay);
  sweep_input_close(&in);
  direct_plan_free(&plan);
  rs__prompt_free(&prompt);
  free(cache_buf);
  free(common);
  free(inputs);
early:
  free(orig), free(words), free(drop);
  return status;
}
