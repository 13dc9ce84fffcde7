/* cmd_rag.c: "ragsweep rag": generation metrics of RAG samples by LLM judges. */
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
#include "formats/csvio.h"
#include "formats/rag_samples.h"
#include "gate.h"
#include "llm/rag_eval.h"
#include "llm_opts.h"
#include "engine/shard.h"
#include "publish.h"
#include "shard_io.h"
#include "sweep_io.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep rag DATASET.jsonl [MORE.jsonl ...] -o OUTDIR -m METRIC ... [options]\n"
          "\n"
          "Scores RAG answers with LLM judges over an OpenAI-compatible API, with ragas's\n"
          "metric definitions and field names.  One sample per JSONL line: user_input,\n"
          "response, retrieved_contexts, reference, reference_contexts, retrieved_context_ids,\n"
          "reference_context_ids; optional id, latency_ms, cost_usd.  Every other string,\n"
          "number or boolean field (model, chunking, ...) is a configuration column.  Every\n"
          "reply is cached as it arrives: a killed run resumes, a re-run sends nothing.\n"
          "Writes OUTDIR/per_sample.csv, OUTDIR/aggregate.csv, OUTDIR/calls.jsonl, with\n"
          "several judges OUTDIR/agreement.csv, and when samples have latency_ms\n"
          "OUTDIR/latency.csv and OUTDIR/latency_hist.csv.  Paired tests between configurations:\n"
          "ragsweep compare --per-query OUTDIR/per_sample.csv -o DIR\n"
          "\n"
          "what to measure:\n"
          "  -o, --out DIR            output folder (created if missing)\n"
          "  -m, --metric NAME        faithfulness, answer_relevancy, context_precision,\n"
          "                           context_recall, factual_correctness[(mode=f1|precision|recall)],\n"
          "                           id_based_context_precision, id_based_context_recall (repeat)\n"
          "      --criterion NAME=FILE  a 1-5 rubric: FILE is a template with {user_input},\n"
          "                           {response}, {retrieved_contexts}, {reference} (repeat)\n"
          "      --judge-model NAME   a judge; repeat for several (one value each, and their\n"
          "                           agreement); default: --model\n"
          "      --embed-model NAME   embeddings for answer_relevancy (or RAGSWEEP_EMBED_MODEL)\n"
          "      --questions N        questions generated for answer_relevancy (default 3)\n"
          "checks (exit 3 when one fails):\n"
          "      --gate 'METRIC>=X'   on every configuration's mean (>=, >, <=, <; repeat)\n"
          "      --tiers FILE         CSV metric,minimum,target,excellent: prints a table of\n"
          "                           x (below minimum), . (minimum), v (target), * (excellent)\n"
          "where:\n"
          "      --shard I/N          score share I of N of the samples only (0 <= I < N; the\n"
          "                           distinct sample ids, with every configuration's sample of\n"
          "                           each) into the shard folder -o, with its own cache\n"
          "                           (resumable; --dry-run and --max-cost are the share's); then\n"
          "                           'ragsweep merge SHARD_DIR... -o OUTDIR' merges the caches into\n"
          "                           --cache (default OUTDIR/cache.sqlite) and writes the outputs of\n"
          "                           one process (gates, tiers, publishing too), sending nothing\n");
  llm_opts_help(f);
  fprintf(f, "publishing (once the outputs are written):\n");
  fputs(PUBLISH_OPTS_HELP, f);
  fprintf(f,
          "  -h, --help               this help\n"
          "\n"
          "exit status: 0 ok; 1 usage; 2 bad input, too many failures, an API error that\n"
          "cannot heal, or the --max-cost budget reached (what was scored is written);\n"
          "3 a gate or a tier minimum failed.\n");
}

static void show_progress(void *ctx, const rs__llm_calls_stats *s, const char *stage)
{
  llm_progress_show(ctx, "rag", stage, s->done, s->requests, s->cached, s->sent, s->wall_s, s->failed);
}

/* A configuration's name for lines and gates.csv: its values joined by
 * '/', or "all" when there are no configuration columns. */
static char *config_label(const rs__rag_set *set, size_t k)
{
  size_t n = 4;
  for (size_t c = 0; c < set->n_columns; c++) n += strlen(set->config_values[k * set->n_columns + c]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  if (!set->n_columns) return strcpy(s, "all");
  s[0] = '\0';
  for (size_t c = 0; c < set->n_columns; c++) {
    if (c) strcat(s, "/");
    strcat(s, set->config_values[k * set->n_columns + c]);
  }
  return s;
}

/* --- tiers ------------------------------------------------------------------------ */

typedef struct tier {
  char *metric;
  double minimum, target, excellent;
} tier;

typedef struct tier_load {
  const char *path;
  tier *t;
  size_t n;
  int col[4];
} tier_load;

static rs_code take_tier_row(void *ctx, char **f, size_t n_f, size_t line, rs_error *err)
{
  tier_load *l = ctx;
  static const char *const need[4] = {"metric", "minimum", "target", "excellent"};
  if (line == 1) {
    for (int c = 0; c < 4; c++) {
      l->col[c] = -1;
      for (size_t i = 0; i < n_f; i++)
        if (strcmp(f[i], need[c]) == 0) l->col[c] = (int)i;
      if (l->col[c] < 0)
        return rs__fail(err, RS_FORMAT, "%s:1: expected a header with columns metric,minimum,target,excellent; found "
                                        "no '%s' column", l->path, need[c]);
    }
    return RS_OK;
  }
  double v[3];
  for (int c = 0; c < 4; c++)
    if ((size_t)l->col[c] >= n_f)
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected %d fields, found %zu", l->path, line, l->col[c] + 1, n_f);
  for (int c = 1; c < 4; c++)
    if (!parse_real(f[l->col[c]], &v[c - 1]))
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column '%s', found '%s'", l->path, line, need[c],
                      f[l->col[c]]);
  if (!(v[0] <= v[1] && v[1] <= v[2]))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected minimum <= target <= excellent, found %s, %s, %s", l->path, line,
                    f[l->col[1]], f[l->col[2]], f[l->col[3]]);
  tier *t = realloc(l->t, (l->n + 1) * sizeof *t);
  if (!t) return rs__fail(err, RS_NOMEM, "out of memory");
  l->t = t;
  if (!(t[l->n].metric = strdup(f[l->col[0]]))) return rs__fail(err, RS_NOMEM, "out of memory");
  t[l->n].minimum = v[0], t[l->n].target = v[1], t[l->n].excellent = v[2];
  l->n++;
  return RS_OK;
}

static size_t metric_index(const rs__rag_metric *m, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(m[i].name, name) == 0) return i;
  /* factual_correctness alone means its default mode */
  if (strcmp(name, "factual_correctness") == 0) return metric_index(m, n, "factual_correctness(mode=f1)");
  return SIZE_MAX;
}

/* Prints the tier table and writes tiers.csv; *failed counts means below
 * minimum (or without a value). */
static rs_code check_tiers(const rs__rag *r, const rs__rag_cfg *cfg, const tier *t, size_t n_t, const char *dir,
                           size_t *failed, rs_error *err)
{
  const rs__rag_set *set = cfg->set;
  rs__csv *w = NULL;
  rs_code rc = rs__csv_create(dir, "tiers.csv", &w, err);
  if (rc) return rc;
  static const char *const hdr[] = {"configuration", "judge", "metric", "mean", "minimum", "target", "excellent", "tier"};
  for (size_t i = 0; i < sizeof hdr / sizeof *hdr; i++) rs__csv_str(w, hdr[i]);
  rc = rs__csv_end_row(w, err);
  printf("tiers (x below minimum, . minimum, v target, * excellent):\n");
  for (size_t k = 0; k < set->n_configs && !rc; k++) {
    char *label = config_label(set, k);
    if (!label) rc = rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t i = 0; i < n_t && !rc; i++) {
      const size_t m = metric_index(cfg->metrics, cfg->n_metrics, t[i].metric);
      const size_t nj = rs__rag_metric_uses_llm(&cfg->metrics[m]) ? cfg->n_judges : 1;
      for (size_t j = 0; j < nj && !rc; j++) {
        const rs__rag_agg a = rs__rag_aggregate(r, k, m, j);
        const double x = a.mean;
        const char *name, *mark;
        if (isnan(x) || x < t[i].minimum) name = "below_minimum", mark = "\xE2\x9C\x97", ++*failed;
        else if (x >= t[i].excellent) name = "excellent", mark = "\xE2\x98\x85";
        else if (x >= t[i].target) name = "target", mark = "\xE2\x9C\x93";
        else name = "minimum", mark = "\xC2\xB7";
        char judge_tag[300] = "";
        if (nj > 1) snprintf(judge_tag, sizeof judge_tag, " [%s]", cfg->judges[j]);
        if (isnan(x)) printf("  %s %-28s %s%s  no value\n", mark, label, cfg->metrics[m].name, judge_tag);
        else printf("  %s %-28s %s%s  %.4f\n", mark, label, cfg->metrics[m].name, judge_tag, x);
        rs__csv_str(w, label);
        rs__csv_str(w, nj > 1 ? cfg->judges[j] : (rs__rag_metric_uses_llm(&cfg->metrics[m]) && cfg->n_judges ? cfg->judges[0] : ""));
        rs__csv_str(w, cfg->metrics[m].name);
        if (isnan(x)) rs__csv_str(w, "");
        else rs__csv_num(w, x);
        rs__csv_num(w, t[i].minimum), rs__csv_num(w, t[i].target), rs__csv_num(w, t[i].excellent);
        rs__csv_str(w, name);
        rc = rs__csv_end_row(w, err);
      }
    }
    free(label);
  }
  if (!rc) rc = rs__csv_commit(w, err), w = NULL;
  rs__csv_abort(w);
  return rc;
}

/* --- the command ------------------------------------------------------------------ */

enum { OPT_CRITERION = 256, OPT_JUDGE, OPT_EMBED, OPT_QUESTIONS, OPT_GATE, OPT_TIERS, OPT_SHARD };

static void remove_stale(const char *dir, const char *name)
{
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
}

static int rag_main(int argc, char **argv, const shard_set *merge);

int rs_cli_rag(int argc, char **argv) { return rag_main(argc, argv, NULL); }

int rag_merge(const shard_set *s, const char *out_dir, int quiet)
{
  int argc = 0;
  char **argv = shard_merge_argv(s, "rag", out_dir, quiet, &argc);
  if (!argv) return RS_EXIT_INPUT;
  const int status = rag_main(argc, argv, s);
  free(argv);
  return status;
}

static int rag_main(int argc, char **argv, const shard_set *merge)
{
  static const struct option longs[] = {
      {"out", required_argument, 0, 'o'},          {"metric", required_argument, 0, 'm'},
      {"criterion", required_argument, 0, OPT_CRITERION}, {"judge-model", required_argument, 0, OPT_JUDGE},
      {"embed-model", required_argument, 0, OPT_EMBED}, {"questions", required_argument, 0, OPT_QUESTIONS},
      {"gate", required_argument, 0, OPT_GATE},    {"tiers", required_argument, 0, OPT_TIERS},
      {"shard", required_argument, 0, OPT_SHARD},  LLM_OPTS_LONG,                               PUBLISH_OPTS_LONG,
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  const char *out_dir = NULL, *tiers_path = NULL, *embed_model = getenv("RAGSWEEP_EMBED_MODEL");
  const size_t cap = (size_t)argc + 1;
  const char **metric_text = calloc(cap, sizeof *metric_text), **crit_text = calloc(cap, sizeof *crit_text);
  const char **judges = calloc(cap, sizeof *judges), **gate_text = calloc(cap, sizeof *gate_text);
  size_t n_metric_text = 0, n_crit = 0, n_judges = 0, n_gates = 0;
  int n_questions = 3;
  llm_opts lo;
  llm_opts_init(&lo);
  publish_opts po = {0};
  int status = RS_EXIT_OK;
  rs__rag_metric *metrics = NULL;
  size_t n_metrics = 0;
  gate *gates = NULL;
  tier_load tl = {0};
  rs__rag_set set = {0};
  rs__rag *r = NULL;
  char *cache_buf = NULL;
  llm_progress ps = {0};
  rs_error err = {0};
  rs_code rc = RS_OK;
  int out_existed = 1;
  int shard = 0, embed_given = 0;
  size_t shard_i = 0, shard_n = 0, n_words = 0;
  rs__llm_replay *replay = NULL;
  char *common = NULL;
  char **inputs = calloc(cap + 4, sizeof *inputs);
  /* The words that define the scoring, for a shard manifest: all but the
   * output folder, --shard and the options llm_opt_per_shard names. */
  char **orig = calloc(cap, sizeof *orig), **words = calloc(cap + 6, sizeof *words);
  unsigned char *drop = calloc(cap, 1);
  if (orig) memcpy(orig, argv, (size_t)argc * sizeof *orig);
  if (!metric_text || !crit_text || !judges || !gate_text || !inputs || !orig || !words || !drop) {
    fprintf(stderr, "ragsweep rag: out of memory\n");
    status = RS_EXIT_INPUT;
    goto done;
  }
  optind = 1;
  int c;
  long v;
  while ((c = getopt_long(argc, argv, "o:m:h", longs, NULL)) != -1) {
    if (c == 'o' || c == OPT_SHARD || llm_opt_per_shard(c)) shard_drop_option_words(orig, argc, argv, optarg, drop);
    const llm_opt_result lr = llm_opts_parse(&lo, c, optarg, "rag");
    if (lr == LLM_OPT_BAD) {
      status = RS_EXIT_USAGE;
      goto done;
    }
    if (lr == LLM_OPT_HANDLED) continue;
    const publish_result pub = publish_opts_parse(&po, c, optarg, "rag");
    if (pub == PUBLISH_BAD) {
      status = RS_EXIT_USAGE;
      goto done;
    }
    if (pub == PUBLISH_HANDLED) continue;
    switch (c) {
    case 'o': out_dir = optarg; break;
    case 'm': metric_text[n_metric_text++] = optarg; break;
    case OPT_CRITERION: crit_text[n_crit++] = optarg; break;
    case OPT_JUDGE: judges[n_judges++] = optarg; break;
    case OPT_EMBED: embed_model = optarg, embed_given = 1; break;
    case OPT_SHARD:
      if (!rs__shard_parse(optarg, &shard_i, &shard_n)) {
        status = llm_usage_error("rag", "--shard: expected I/N with 0 <= I < N <= %d (e.g. --shard "
                                 "$SLURM_ARRAY_TASK_ID/8), found '%s'", RS__SHARD_MAX_N, optarg);
        goto done;
      }
      shard = 1;
      break;
    case OPT_QUESTIONS:
      if (!parse_count(optarg, 1, &v) || v > 20) {
        status = llm_usage_error("rag", "--questions: expected an integer from 1 to 20, found '%s'", optarg);
        goto done;
      }
      n_questions = (int)v;
      break;
    case OPT_GATE: gate_text[n_gates++] = optarg; break;
    case OPT_TIERS: tiers_path = optarg; break;
    case 'h':
      help(stdout);
      goto done;
    default: status = llm_usage_error("rag", "unknown option or missing value in '%s'", argv[optind - 1]); goto done;
    }
  }
  char **pos = argv + optind;
  const size_t n_pos = (size_t)(argc - optind);
  for (int k = 1; k < argc; k++)
    if (!drop[k]) words[n_words++] = orig[k];
  if (n_pos == 0) {
    status = llm_usage_error("rag", "expected DATASET.jsonl (ragas fields, one sample per line)");
    goto done;
  }
  if (shard) {
    static char w_embed[] = "--embed-model";
    if (!llm_opts_store_words(&lo, "rag", words, &n_words)) {
      status = RS_EXIT_USAGE;
      goto done;
    }
    if (!embed_given && embed_model) words[n_words++] = w_embed, words[n_words++] = (char *)embed_model;
  }
  /* The inputs a shard manifest records: the sample files, the criteria's
   * templates (NAME=FILE), the tiers. */
  size_t n_inputs = 0;
  for (size_t i = 0; i < n_pos; i++) inputs[n_inputs++] = pos[i];
  for (size_t i = 0; i < n_crit; i++) inputs[n_inputs++] = (char *)crit_text[i];
  if (tiers_path) inputs[n_inputs++] = (char *)tiers_path;
  if (!out_dir) {
    status = llm_usage_error("rag", "-o OUTDIR is required");
    goto done;
  }
  if (publish_opts_check(&po, "rag", 0) != 0) {
    status = RS_EXIT_USAGE;
    goto done;
  }
  if (n_metric_text + n_crit == 0) {
    status = llm_usage_error("rag", "expected at least one -m METRIC or --criterion NAME=FILE, e.g. -m faithfulness");
    goto done;
  }
  if (!(metrics = calloc(n_metric_text + n_crit, sizeof *metrics))) {
    status = llm_usage_error("rag", "out of memory");
    goto done;
  }
  int any_llm = 0;
  for (size_t i = 0; i < n_metric_text + n_crit && !rc; i++) {
    rc = i < n_metric_text ? rs__rag_metric_parse(metric_text[i], &metrics[n_metrics], &err)
                           : rs__rag_criterion_load(crit_text[i - n_metric_text], &metrics[n_metrics], &err);
    if (rc) break;
    for (size_t k = 0; k < n_metrics; k++)
      if (strcmp(metrics[k].name, metrics[n_metrics].name) == 0) rc = rs__fail(&err, RS_USAGE, "metric %s is asked twice", metrics[k].name);
    any_llm |= rs__rag_metric_uses_llm(&metrics[n_metrics]);
    n_metrics++;
  }
  if (!rc && n_judges == 0 && lo.model) judges[n_judges++] = lo.model;
  if (!rc && any_llm && n_judges == 0)
    rc = rs__fail(&err, RS_USAGE, "--model NAME (or --judge-model NAME, or RAGSWEEP_MODEL) is required for LLM metrics");
  for (size_t i = 0; i < n_judges && !rc; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(judges[i], judges[k]) == 0) rc = rs__fail(&err, RS_USAGE, "--judge-model %s is given twice", judges[i]);
  if (!rc && n_gates && !(gates = calloc(n_gates, sizeof *gates))) rc = rs__fail(&err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n_gates && !rc; i++) {
    if ((rc = gate_parse_plain(gate_text[i], &gates[i], &err))) break;
    if (metric_index(metrics, n_metrics, gates[i].measure) == SIZE_MAX)
      rc = rs__fail(&err, RS_USAGE, "gate '%s': '%s' is not among the metrics asked for (-m, --criterion)", gate_text[i],
                    gates[i].measure);
  }
  if (!rc && tiers_path) {
    tl.path = tiers_path;
    rc = rs__csv_read(tiers_path, take_tier_row, &tl, &err);
    for (size_t i = 0; !rc && i < tl.n; i++)
      if (metric_index(metrics, n_metrics, tl.t[i].metric) == SIZE_MAX)
        rc = rs__fail(&err, RS_USAGE, "%s: metric '%s' is not among the metrics asked for (-m, --criterion)", tiers_path,
                      tl.t[i].metric);
  }
  if (rc) {
    fprintf(stderr, "ragsweep rag: %s%s\n", err.msg, err.code == RS_USAGE ? " (see 'ragsweep rag --help')" : "");
    status = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto done;
  }
  if (merge && !shard_llm_complete(merge, "values")) {
    status = RS_EXIT_INPUT;
    goto done;
  }
  rc = rs__rag_set_load((const char *const *)pos, n_pos, &set, &err);
  struct stat out_st;
  out_existed = stat(out_dir, &out_st) == 0;
  if (!rc && !lo.dry_run && shard) rc = shard_llm_begin(out_dir, &err);
  else if (!rc && !lo.dry_run && mkdir_p(out_dir) != 0)
    rc = rs__fail(&err, RS_IO, "-o %s: cannot create the folder: %s", out_dir, strerror(errno));
  rs__rag_cfg cfg = {0};
  const char *cache_path = lo.cache_path;
  if (!rc) {
    /* A shard keeps its own cache in its folder; --cache names the job's,
     * which the merge fills. */
    if (!cache_path || shard) {
      const size_t n = strlen(out_dir) + 32;
      if (!(cache_buf = malloc(n))) rc = rs__fail(&err, RS_NOMEM, "out of memory");
      else snprintf(cache_buf, n, "%s/" SHARD_CACHE, out_dir), cache_path = cache_buf;
    }
    cfg.set = &set;
    cfg.metrics = metrics, cfg.n_metrics = n_metrics;
    cfg.judges = judges, cfg.n_judges = n_judges;
    cfg.embed_model = embed_model;
    cfg.n_questions = n_questions;
    cfg.temperature = lo.temperature, cfg.max_tokens = lo.max_tokens;
    cfg.http = lo.http;
    cfg.cache_path = cache_path;
    cfg.price_in = lo.price_in, cfg.price_out = lo.price_out, cfg.max_cost = lo.max_cost;
    cfg.dry_run = lo.dry_run;
    if (shard) cfg.share_i = shard_i, cfg.share_n = shard_n, cfg.record_sent = 1;
    if (!lo.quiet && isatty(STDERR_FILENO)) cfg.progress = show_progress, cfg.progress_ctx = &ps;
  }
  if (!rc && merge) {
    rc = shard_llm_merge_caches(merge, cache_path, &replay, lo.quiet, &err);
    cfg.offline = 1, cfg.replay = replay;
  }
  if (!rc) rc = rs__rag_run(&cfg, &r, &err);
  llm_progress_end(&ps);
  const rs__rag_stats *st = r ? rs__rag_get_stats(r) : NULL;
  if (!rc && merge && st->missing) {
    uint64_t *counts = calloc(merge->n, sizeof *counts);
    if (!counts) rc = rs__fail(&err, RS_NOMEM, "out of memory");
    else {
      rs__rag_missing_by_share(r, merge->n, counts);
      shard_llm_report_missing(merge, counts, "samples");
      free(counts);
      status = RS_EXIT_INPUT;
      goto done;
    }
  }
  if (!rc && !lo.dry_run && (shard || merge)) {
    char lines[96];
    snprintf(lines, sizeof lines, "samples %zu\nconfigurations %zu\n", set.n, set.n_configs);
    rc = shard_manifest_llm("rag", words, n_words, inputs, n_inputs, lines, shard ? shard_n : merge->n, &common, &err);
    if (!rc && merge && strcmp(common, merge->common) != 0)
      rc = rs__fail(&err, RS_FORMAT, "%s: the shards do not match their inputs now (an input changed since the "
                    "shards ran, or another ragsweep version merges): run the shards again", merge->dir[0]);
  }
  if (!rc && !lo.dry_run && shard) {
    const rs__llm_calls_stats *cs = &st->calls;
    char own[256];
    snprintf(own, sizeof own, "samples-in-share %llu\nrequests %llu\nsent %llu\ncached %llu\nstopped %s\n"
             "not-sent %llu\n", (unsigned long long)st->samples, (unsigned long long)cs->requests,
             (unsigned long long)cs->sent, (unsigned long long)cs->cached,
             cs->stopped_fatal ? "fatal" : cs->stopped_budget ? "budget" : "none", (unsigned long long)st->not_sent);
    rc = shard_llm_commit(out_dir, common, shard_i, own, &err);
    if (!rc) {
      printf("ragsweep rag: shard %zu/%zu: %llu of %zu samples\n"
             "  requests %llu: %llu sent, %llu cache hits, %llu retries; tokens %llu prompt + %llu completion; "
             "cost $%.4f\n  values %llu, undefined %llu, failures %llu, not sent %llu\n"
             "  wrote the shard %s/" SHARD_MANIFEST " (cache: %s)\n"
             "merge every shard with: ragsweep merge SHARD_DIR... -o OUTDIR\n",
             shard_i, shard_n, (unsigned long long)st->samples, set.n, (unsigned long long)cs->requests,
             (unsigned long long)cs->sent, (unsigned long long)cs->cached, (unsigned long long)cs->retries,
             (unsigned long long)cs->prompt_tokens, (unsigned long long)cs->completion_tokens, cs->cost,
             (unsigned long long)st->values, (unsigned long long)st->undefined, (unsigned long long)st->failures,
             (unsigned long long)st->not_sent, out_dir, cache_path);
      if (cs->stopped_fatal) fprintf(stderr, "ragsweep rag: stopped: %s\n(what was answered is cached; fix the cause "
                                             "and run the shard again to resume)\n", cs->fatal_message);
      else if (cs->stopped_budget)
        fprintf(stderr, "ragsweep rag: stopped at the --max-cost budget of $%g ($%.4f spent): run the shard again "
                        "with a larger budget to resume from its cache\n", lo.max_cost, cs->cost);
      /* Its failures are judged with the others' by the merge (--max-failures), as one process judges them. */
      if (cs->stopped_fatal || cs->stopped_budget) status = RS_EXIT_INPUT;
      goto done;
    }
  }
  if (!rc && lo.dry_run) {
    const rs__llm_calls_stats *cs = &st->calls;
    printf("ragsweep rag --dry-run: %zu samples, %zu configuration%s, %zu metric%s, %zu judge%s\n", set.n,
           set.n_configs, set.n_configs == 1 ? "" : "s", n_metrics, n_metrics == 1 ? "" : "s", n_judges,
           n_judges == 1 ? "" : "s");
    printf("  requests: about %llu (%llu cached); where a first-stage reply is not cached yet, the checks and\n"
           "  embeddings that depend on it are estimated as one request per statement or question list\n",
           (unsigned long long)cs->requests, (unsigned long long)cs->cached);
    printf("  estimated tokens to send: %llu prompt + %llu completion\n", (unsigned long long)cs->est_prompt_tokens,
           (unsigned long long)cs->est_completion_tokens);
    printf("  estimated cost: $%.4f at $%g / $%g per million prompt / completion tokens\n", cs->est_cost, lo.price_in,
           lo.price_out);
    if (lo.max_cost >= 0 && cs->est_cost > lo.max_cost)
      printf("  over the --max-cost budget of $%g\n", lo.max_cost);
    goto done;
  }
  if (!rc) rc = rs__rag_write(r, out_dir, &err);
  if (rc) {
    if (!out_existed && !lo.dry_run && !merge) rmdir(out_dir); /* only if still empty */
    fprintf(stderr, "ragsweep %s: %s\n", merge ? "merge" : "rag", err.msg);
    status = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto done;
  }
  /* The summary: a row per configuration and metric, a column per judge. */
  printf("ragsweep rag: %zu samples, %zu configuration%s\n", set.n, set.n_configs, set.n_configs == 1 ? "" : "s");
  printf("  %-28s %-30s", "configuration", "metric");
  for (size_t j = 0; j < (n_judges ? n_judges : 1); j++) printf(" %14.14s", n_judges ? judges[j] : "value");
  printf("  %6s %8s\n", "n", "failures");
  for (size_t k = 0; k < set.n_configs; k++) {
    char *label = config_label(&set, k);
    for (size_t m = 0; m < n_metrics; m++) {
      const size_t nj = rs__rag_metric_uses_llm(&metrics[m]) ? n_judges : 1;
      printf("  %-28s %-30s", label ? label : "?", metrics[m].name);
      uint64_t n = 0, fails = 0;
      for (size_t j = 0; j < (n_judges ? n_judges : 1); j++) {
        if (j >= nj) {
          printf(" %14s", "");
          continue;
        }
        const rs__rag_agg a = rs__rag_aggregate(r, k, m, j);
        if (a.n) printf(" %14.4f", a.mean);
        else printf(" %14s", "-");
        n += a.n, fails += a.failures + a.not_sent;
      }
      printf("  %6llu %8llu\n", (unsigned long long)n, (unsigned long long)fails);
    }
    free(label);
  }
  const rs__llm_calls_stats *cs = &st->calls;
  printf("  values %llu, undefined %llu, failures %llu", (unsigned long long)st->values,
         (unsigned long long)st->undefined, (unsigned long long)st->failures);
  if (st->not_sent) printf(", not sent %llu", (unsigned long long)st->not_sent);
  printf("\n  requests %llu: %llu sent, %llu cache hits, %llu retries; tokens %llu prompt + %llu completion; "
         "cost $%.4f\n",
         (unsigned long long)cs->requests, (unsigned long long)cs->sent, (unsigned long long)cs->cached,
         (unsigned long long)cs->retries, (unsigned long long)cs->prompt_tokens,
         (unsigned long long)cs->completion_tokens, cs->cost);
  if (!merge)
    printf("  %.2f s, %.1f requests/s sent; ", cs->wall_s, cs->wall_s > 0 ? (double)cs->sent / cs->wall_s : 0.0);
  else printf("  ");
  printf("wrote %s/per_sample.csv, aggregate.csv, calls.jsonl%s%s\n", out_dir, n_judges > 1 ? ", agreement.csv" : "",
         set.has_latency ? ", latency.csv, latency_hist.csv" : "");
  /* Checks: after every output is written. */
  size_t checks_failed = 0;
  if (n_gates) {
    gate_report gr;
    int name_w = 8;
    for (size_t k = 0; k < set.n_configs; k++) {
      char *label = config_label(&set, k);
      if (label && (int)strlen(label) > name_w) name_w = (int)strlen(label);
      free(label);
    }
    rc = gate_report_open(&gr, out_dir, name_w, gates_width(gates, n_gates), &err);
    for (size_t k = 0; k < set.n_configs && !rc; k++) {
      char *label = config_label(&set, k);
      for (size_t i = 0; i < n_gates && !rc && label; i++) {
        const size_t m = metric_index(metrics, n_metrics, gates[i].measure);
        const size_t nj = rs__rag_metric_uses_llm(&metrics[m]) ? n_judges : 1;
        for (size_t j = 0; j < nj && !rc; j++) {
          const rs__rag_agg a = rs__rag_aggregate(r, k, m, j);
          char check[512], who[600];
          snprintf(check, sizeof check, "%s%s%s", gates[i].measure, gate_op_text(gates[i].op), gates[i].threshold_text);
          snprintf(who, sizeof who, "%s%s%s%s", label, nj > 1 ? " [" : "", nj > 1 ? judges[j] : "", nj > 1 ? "]" : "");
          const int pass = a.n > 0 && gate_pass(&gates[i], a.mean);
          rc = gate_report_line(&gr, who, check, metrics[m].name, gate_op_text(gates[i].op), gates[i].threshold_text,
                                a.mean, pass, &err);
        }
      }
      free(label);
    }
    if (!rc) rc = gate_report_commit(&gr, &err);
    else gate_report_abort(&gr);
    checks_failed += gr.n_failed;
  } else {
    remove_stale(out_dir, "gates.csv");
  }
  if (!rc && tl.n) rc = check_tiers(r, &cfg, tl.t, tl.n, out_dir, &checks_failed, &err);
  else if (!rc) remove_stale(out_dir, "tiers.csv");
  if (rc) {
    fprintf(stderr, "ragsweep rag: %s\n", err.msg);
    status = RS_EXIT_INPUT;
    goto done;
  }
  const uint64_t attempted = st->values + st->undefined + st->failures;
  if (cs->stopped_fatal) {
    fprintf(stderr, "ragsweep rag: stopped: %s\n(what was scored is written and cached; fix the cause and re-run "
                    "to resume)\n", cs->fatal_message);
    status = RS_EXIT_INPUT;
  } else if (cs->stopped_budget) {
    fprintf(stderr, "ragsweep rag: stopped at the --max-cost budget of $%g ($%.4f spent): %llu values not scored; "
                    "re-run with a larger budget to resume from the cache\n",
            lo.max_cost, cs->cost, (unsigned long long)st->not_sent);
    status = RS_EXIT_INPUT;
  }
  if (attempted && (double)st->failures > lo.max_failures * (double)attempted) {
    fprintf(stderr, "ragsweep rag: %llu of %llu values (%.2f%%) failed, more than --max-failures %g%%; see the "
                    "reason column of %s/per_sample.csv and the errors in calls.jsonl\n",
            (unsigned long long)st->failures, (unsigned long long)attempted,
            100.0 * (double)st->failures / (double)attempted, 100.0 * lo.max_failures, out_dir);
    status = RS_EXIT_INPUT;
  }
  /* Only a complete evaluation is published: a stopped one's means would
   * read as a quality change on a dashboard. */
  if (status == RS_EXIT_OK && checks_failed) status = RS_EXIT_GATE;
  if (status == RS_EXIT_OK || status == RS_EXIT_GATE) {
    const publish_run pr = {.cmd = "rag", .out_dir = out_dir, .argc = argc, .argv = argv, .inputs = pos,
                            .n_inputs = n_pos, .exit_status = status};
    status = publish_outputs(&po, &pr, stdout);
  }
done:
  rs__rag_free(r);
  rs__rag_set_free(&set);
  for (size_t i = 0; i < n_metrics; i++) rs__rag_metric_free(&metrics[i]);
  free(metrics);
  for (size_t i = 0; gates && i < n_gates; i++) gate_free(&gates[i]);
  free(gates);
  for (size_t i = 0; i < tl.n; i++) free(tl.t[i].metric);
  free(tl.t);
  free(cache_buf);
  free(metric_text), free(crit_text), free(judges), free(gate_text);
  rs__llm_replay_free(replay);
  free(common), free(inputs), free(orig), free(words), free(drop);
  return status;
}
