/* cmd_eval.c: "ragsweep eval": score every run of a sweep into CSV files. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "annb_cli.h"
#include "cli.h"
#include "direct_input.h"
#include "formats/corpus.h"
#include "formats/csvio.h"
#include "gate.h"
#include "engine/sched.h"
#include "metrics/spec.h"
#include "engine/shard.h"
#include "engine/sweep.h"
#include "engine/sweep_ranks.h"
#include "sweep_io.h"
#include "publish.h"
#include "report_files.h"
#include "shard_io.h"
#include "sweep_opts.h"
#include "util/mpi.h"
#include "worst.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep eval CORPUS.h5 [RUNS.h5 ...] -o OUTDIR [options]\n"
          "       ragsweep eval QRELS|BEIR_DIR RUN [RUN ...] -o OUTDIR [options]\n"
          "       ragsweep eval --qrels QRELS RUN [RUN ...] -o OUTDIR [options]\n"
          "       ragsweep eval DATASET.hdf5 RESULT.hdf5 [...] -o OUTDIR [options]   (ann-benchmarks;\n"
          "       measures k-nn, epsilon, largeepsilon, qps, build, indexsize, candidates, distcomps)\n"
          "\n"
          "Scores every run of the corpus and of the run files (which follow the corpus's\n"
          "query order), or text runs against their judgments, and writes\n"
          "OUTDIR/aggregate.csv, OUTDIR/latency.csv (percentiles), OUTDIR/latency_hist.csv\n"
          "(histogram) and, with --per-query, OUTDIR/per_query.csv.  Prints a leaderboard.\n"
          "aggregate.csv's last column, queries, names the query policy: ranked (default)\n"
          "or all.  A re-run replaces eval's files in OUTDIR: per_query.csv, worst.csv and\n"
          "gates.csv are removed when this run does not write them.\n"
          "\n"
          "Text inputs (detected from the content; plain or gzip): QRELS is TREC qrels, BEIR\n"
          "qrels (TSV query-id, corpus-id, score) or a JSON eval set; BEIR_DIR a BEIR folder\n"
          "(qrels/SPLIT.tsv); a RUN is PATH (named after the file without its extensions)\n"
          "or NAME=PATH, in TREC (qid Q0 doc rank score tag), JSONL ({\"query_id\",\n"
          "\"doc_ids\", \"scores\", \"latency_ms\"} a line) or CSV/TSV (a header naming\n"
          "query_id, doc_id and optionally rank, score, latency_ms).  They are imported as\n"
          "'ragsweep import' does into a temporary corpus (in TMPDIR, removed at the end),\n"
          "then scored: the values are those of import followed by eval.\n"
          "\n");
  fprintf(f,
          "options:\n"
          "  -o, --out DIR          output folder (created if missing)\n"
          "  -m, --measure NAME     measure (repeatable); ir_measures names: P@5 R@100 F1@5\n"
          "                         Success@1 RR RR@10 AP AP@100 nDCG@10 DCG@10 Rprec bpref\n"
          "                         Judged@10 NumRet NumRel NumRelRet; P(rel=2)@5;\n"
          "                         nDCG(gain=exp)@10; lists and ranges: nDCG@{1,3,5} R@1..100;\n"
          "                         trec_eval spellings too: ndcg_cut.10 P.5,10 map infAP\n"
          "                         default: P@{1,5,10} R@{1,5,10,100} Success@{1,5,10} RR@10\n"
          "                         AP@100 nDCG@{5,10}\n"
          "      --per-query        also write per_query.csv\n"
          "      --depths K1,K2,... also score every run cut at each depth K (its top K docs as\n"
          "                         ranked), in the same pass: run R becomes R/top_k=K with the\n"
          "                         attribute top_k (the K of a top-K sweep; the N is a cutoff)\n"
          "      --queries=judged   evaluate judged queries the run ranks (trec_eval; default)\n"
          "      --queries=all      every judged query; those the run misses score 0 (trec_eval -c)\n"
          "      --ties=trec        rank by score descending, ties by doc id descending (default)\n"
          "      --ties=stored      the stored order is the ranking\n"
          "      --threads N        threads, 1 to 4096 (default: OMP_NUM_THREADS or all cores)\n"
          "      --top N            leaderboard rows on stdout (default 10; 0: none)\n"
          "      --quiet            no progress on stderr\n"
          "      --timing           print where the time went on stderr (at 2+ threads: each scoring\n"
          "                         thread's rows and time a row)\n"
          "      --shard I/N        evaluate share I of N only (0 <= I < N, e.g. a Slurm array's\n"
          "                         $SLURM_ARRAY_TASK_ID/N) into the shard folder -o; then\n"
          "                         'ragsweep merge SHARD_DIR... -o OUTDIR' writes the files this\n"
          "                         command writes without --shard, byte for byte (the other\n"
          "                         options are stored in the shard and done by the merge)\n"
          );
  fprintf(f,
          "      --gate 'M>=X'      quality gate (repeatable; >=, >, <=, <): prints a check line per\n"
          "                         configuration, writes OUTDIR/gates.csv, exit status 3 if any fails\n"
          "      --qrels FILE       TREC qrels to score with, in place of the corpus's /qrels\n"
          "                         (ids matched to the corpus); with text runs: their judgments\n"
          "                         (TREC qrels, BEIR qrels or a JSON eval set), and every\n"
          "                         positional is a run\n"
          "      --split NAME       a BEIR folder's qrels/NAME.tsv (default test)\n"
          "      --worst N          write OUTDIR/worst.csv: per run and measure the N worst queries\n"
          "                         (value, first relevant rank, relevant count), and the queries\n"
          "                         with no relevant doc retrieved; with query texts in the corpus,\n"
          "                         also OUTDIR/query_texts.csv (query,text) for those queries\n"

          PUBLISH_OPTS_HELP
          "  -h, --help             this help\n"
          "\n"
          "--report also writes what the report draws: OUTDIR/curves.csv (Success, R, P and\n"
          "nDCG at cutoffs 1..10,15,20,30,50,100, and the 11-point interpolated precision) and\n"
          "OUTDIR/latency_cdf.csv (latency quantiles 0, 0.01, ..., 0.99, 0.999, 1).\n"
          "\n"
          "exit status: 0 ok; 1 usage; 2 unreadable, malformed or inconsistent input;\n"
          "3 a --gate failed (every output is still written).\n");
}

/* --- outputs --------------------------------------------------------------------- */

typedef struct {
  rs__csv *w;        /* per_query.csv, or NULL */
  worst_file *worst; /* worst.csv, or NULL */
  const sweep_input *in;
  const rs__spec *spec;
  const measure_cols *mc; /* the spec's visible measures */
} per_query_sink;

static rs_code write_per_query(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  per_query_sink *s = ctx;
  if (s->worst) {
    rs_code rc = worst_add(s->worst, run, s->in->runs[run]->name, query, v, err);
    if (rc) return rc;
  }
  for (size_t k = 0; s->w && k < s->spec->n_out; k++) {
    rs__csv_str(s->w, s->in->runs[run]->name);
    rs__csv_str(s->w, s->in->corpus->query_id[query]);
    measure_cols_put(s->w, s->mc, k);
    rs__csv_num(s->w, v[k]);
    rs_code rc = rs__csv_end_row(s->w, err);
    if (rc) return rc;
  }
  return RS_OK;
}

static const rs__latency *latency_of_result(const void *ctx, size_t run)
{
  const rs__run_result *res = ctx;
  return res[run].has_latency ? &res[run].latency : NULL;
}

/* latency_hist.csv: per run, one row per bucket of the fixed histogram:
 * le_ms (the bucket's upper bound; inf for the last) and count (the
 * queries above the previous bound and at most le_ms).  What an
 * explicit-bucket histogram (OTLP, Prometheus) needs and percentiles lack. */
static rs_code write_latency_hist(rs__csv *w, const sweep_input *in, const rs__run_result *res, rs_error *err)
{
  rs_code rc;
  rs__csv_str(w, "run");
  for (size_t k = 0; k < in->n_keys; k++) rs__csv_str(w, in->keys[k]);
  rs__csv_str(w, "le_ms");
  rs__csv_str(w, "count");
  if ((rc = rs__csv_end_row(w, err))) return rc;
  for (size_t r = 0; r < in->n_runs; r++) {
    if (!res[r].has_latency) continue;
    for (size_t b = 0; b <= RS__LATENCY_N_BOUNDS; b++) {
      csv_run_columns(w, in, r);
      rs__csv_num(w, b < RS__LATENCY_N_BOUNDS ? rs__latency_bounds_ms[b] : INFINITY);
      rs__csv_uint(w, res[r].latency.bucket[b]);
      if ((rc = rs__csv_end_row(w, err))) return rc;
    }
  }
  return RS_OK;
}

/* --- leaderboard and progress ------------------------------------------------------ */

static const rs__run_result *sort_res;
static int by_first_measure(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  double vx = sort_res[x].value[0], vy = sort_res[y].value[0];
  if (vx != vy) return vx > vy ? -1 : 1;
  return (x > y) - (x < y);
}

static void print_leaderboard(const sweep_input *in, const rs__spec *spec, const rs__run_result *res, size_t top)
{
  if (top == 0 || in->n_runs == 0) return;
  size_t *ord = malloc(in->n_runs * sizeof *ord);
  if (!ord) return;
  for (size_t i = 0; i < in->n_runs; i++) ord[i] = i;
  sort_res = res;
  qsort(ord, in->n_runs, sizeof *ord, by_first_measure);
  const size_t n_show = spec->n_out < 4 ? spec->n_out : 4, n = top < in->n_runs ? top : in->n_runs;
  int width = 3;
  for (size_t i = 0; i < n; i++) {
    int l = (int)strlen(in->runs[ord[i]]->name);
    if (l > width) width = l;
  }
  if (width > 40) width = 40;
  printf("%zu run%s, ranked by %s:\n\n  #  %-*s", in->n_runs, in->n_runs == 1 ? "" : "s", spec->req[0].name, width,
         "run");
  int col[4]; /* a column is as wide as its measure's name (AnswerPresence@10) */
  for (size_t k = 0; k < n_show; k++) {
    const int l = (int)strlen(spec->req[k].name);
    col[k] = l > 10 ? l : 10;
  }
  for (size_t k = 0; k < n_show; k++) printf("  %*s", col[k], spec->req[k].name);
  printf("  %10s  %9s\n", "queries", "p95 ms");
  for (size_t i = 0; i < n; i++) {
    const size_t r = ord[i];
    printf("%3zu  %-*.*s", i + 1, width, width, in->runs[r]->name);
    for (size_t k = 0; k < n_show; k++) printf("  %*.4f", col[k], res[r].value[k]);
    printf("  %10zu", res[r].num_q);
    if (res[r].has_latency) printf("  %9.2f\n", res[r].latency.p95 * 1000.0);
    else printf("  %9s\n", "-");
  }
  free(ord);
}

typedef struct {
  struct timespec start, last;
  int shown;
} progress_state;

static double seconds_since(const struct timespec *t)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t->tv_sec) + 1e-9 * (double)(now.tv_nsec - t->tv_nsec);
}

static void show_progress(void *ctx, size_t run, size_t n_runs, uint64_t done, uint64_t total)
{
  progress_state *p = ctx;
  if (seconds_since(&p->last) < 0.5 && done < total) return;
  clock_gettime(CLOCK_MONOTONIC, &p->last);
  fprintf(stderr, "\rragsweep eval: run %zu/%zu, %.1f%% of %llu queries, %.1f s   ", run + 1 < n_runs ? run + 1 : n_runs,
          n_runs, total ? 100.0 * (double)done / (double)total : 100.0, (unsigned long long)total,
          seconds_since(&p->start));
  p->shown = 1;
}

/* --------------------------------------------------------------------------- */

static const char *const defaults[] = {RS_DEFAULT_MEASURES};
static const size_t n_default_measures = sizeof defaults / sizeof *defaults;

enum { OPT_PER_QUERY = 256, OPT_TOP, OPT_QUIET, OPT_BATCH, OPT_SHARD };

/* An eval command line, parsed. */
typedef struct eval_args {
  sweep_opts so;
  publish_opts po;
  int per_query, quiet;
  long top, batch_docs;
  int shard;              /* --shard I/N given */
  size_t shard_i, shard_n;
  int argc;               /* eval's argv (argv[0] "eval"), permuted by getopt: inputs from first_input */
  char **argv;
  int first_input;
  /* The words of the command line that define the evaluation, in their
   * order: all but -o, --shard, --threads, --quiet and --timing, which may
   * differ between the shards of one evaluation (a shard manifest stores
   * these words; merge parses them again).  --batch-docs stays: with
   * --depths it sets the order of per_query.csv's rows. */
  char **words;
  size_t n_words;
} eval_args;

static void eval_args_free(eval_args *a)
{
  sweep_opts_free(&a->so);
  free(a->words);
  a->words = NULL;
}

/* Parses eval's command line into *a; -1 to go on, else the exit status
 * (after --help, or a message). */
static int eval_parse(int argc, char **argv, eval_args *a)
{
  static const struct option longs[] = {
      SWEEP_OPTS_LONG,
      {"per-query", no_argument, 0, OPT_PER_QUERY}, {"top", required_argument, 0, OPT_TOP},
      {"quiet", no_argument, 0, OPT_QUIET},         {"batch-docs", required_argument, 0, OPT_BATCH},
      {"shard", required_argument, 0, OPT_SHARD},
      PUBLISH_OPTS_LONG,
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  *a = (eval_args){.top = 10, .argc = argc, .argv = argv};
  if (sweep_opts_init(&a->so, argc, n_default_measures, 0) != 0) return RS_EXIT_INPUT;
  char **orig = calloc((size_t)argc + 1, sizeof *orig);
  unsigned char *drop = calloc((size_t)argc + 1, 1);
  a->words = calloc((size_t)argc + 1, sizeof *a->words);
  if (!orig || !drop || !a->words) {
    free(orig), free(drop);
    eval_args_free(a);
    return RS_EXIT_INPUT;
  }
  memcpy(orig, argv, (size_t)argc * sizeof *orig);
  int status = -1, c, li = -1;
  optind = 1;
  opterr = 0;
  while (status < 0 && (c = getopt_long(argc, argv, SWEEP_OPTS_SHORT "h", longs, &li)) != -1) {
    if (c == 'o' || c == SWEEP_OPT_THREADS || c == SWEEP_OPT_TIMING || c == OPT_QUIET || c == OPT_SHARD)
      shard_drop_option_words(orig, argc, argv, optarg, drop);
    const sweep_opt_result shared = sweep_opts_parse(&a->so, c, optarg, "eval");
    if (shared == SWEEP_OPT_HANDLED) continue;
    if (shared == SWEEP_OPT_BAD) {
      status = RS_EXIT_USAGE;
      break;
    }
    const publish_result pub = publish_opts_parse(&a->po, c, optarg, "eval");
    if (pub == PUBLISH_HANDLED) continue;
    if (pub == PUBLISH_BAD) {
      status = RS_EXIT_USAGE;
      break;
    }
    switch (c) {
    case OPT_PER_QUERY: a->per_query = 1; break;
    case OPT_QUIET: a->quiet = 1; break;
    case OPT_TOP:
      if (!parse_count(optarg, 0, &a->top)) goto bad_value;
      break;
    case OPT_BATCH:
      if (!parse_count(optarg, 1, &a->batch_docs)) goto bad_value;
      break;
    case OPT_SHARD:
      if (!rs__shard_parse(optarg, &a->shard_i, &a->shard_n)) {
        fprintf(stderr, "ragsweep eval: --shard: expected I/N with 0 <= I < N <= %d (e.g. "
                        "--shard $SLURM_ARRAY_TASK_ID/8), found '%s' (see 'ragsweep eval --help')\n",
                RS__SHARD_MAX_N, optarg);
        status = RS_EXIT_USAGE;
        break;
      }
      a->shard = 1;
      break;
    case 'h':
      help(stdout);
      status = RS_EXIT_OK;
      break;
    default:
      fprintf(stderr, "ragsweep eval: unknown option '%s' (see 'ragsweep eval --help')\n", argv[optind - 1]);
      status = RS_EXIT_USAGE;
      break;
    bad_value:
      fprintf(stderr, "ragsweep eval: invalid value '%s' for --%s (see 'ragsweep eval --help')\n", optarg,
              li >= 0 ? longs[li].name : "?");
      status = RS_EXIT_USAGE;
      break;
    }
  }
  for (int k = 1; k < argc; k++)
    if (!drop[k]) a->words[a->n_words++] = orig[k];
  free(orig);
  free(drop);
  a->first_input = optind;
  if (status < 0 && (optind >= argc || !a->so.out_dir)) {
    fprintf(stderr, "ragsweep eval: expected CORPUS.h5 [RUNS.h5 ...] -o OUTDIR, or QRELS RUN [RUN ...] -o OUTDIR "
                    "(see 'ragsweep eval --help')\n");
    status = RS_EXIT_USAGE;
  }
  if (status < 0 && publish_opts_check(&a->po, "eval", 1) != 0) status = RS_EXIT_USAGE;
  if (status >= 0) eval_args_free(a);
  return status;
}

/* Evaluates (merge NULL) or merges the shards of merge, and writes eval's
 * outputs; with --shard, evaluates the share and writes the shard folder.
 * Frees a; returns the exit status. */
static int eval_run(eval_args *a, const shard_set *merge)
{
  sweep_opts *const so = &a->so;
  publish_opts *const po = &a->po;
  rs__sweep_cfg cfg = {0};
  rs_error err = {0};
  rs_code rc;
  gate *gates = NULL;
  if (rs__mpi_size() > 1 && (a->shard || annb_is_dataset(a->argv[a->first_input]))) {
    fprintf(stderr, "ragsweep eval: %s; run it as one process (without mpirun, or -np 1)\n",
            a->shard ? "--shard and MPI both split the work: under mpirun the ranks take the shares"
                     : "ann-benchmarks inputs are evaluated by one process");
    eval_args_free(a);
    return RS_EXIT_USAGE;
  }
  if (annb_is_dataset(a->argv[a->first_input])) { /* an ann-benchmarks dataset and its results: annb_eval.c */
    const annb_eval_args aa = {.dataset = a->argv[a->first_input], .results = a->argv + a->first_input + 1,
                               .n_results = (size_t)(a->argc - a->first_input - 1), .so = so, .po = po,
                               .per_query = a->per_query, .quiet = a->quiet, .top = a->top, .batch_docs = a->batch_docs,
                               .argc = a->argc, .argv = a->argv};
    if (a->shard || merge) {
      fprintf(stderr, "ragsweep eval: --shard: ann-benchmarks inputs are not sharded; evaluate them in one process "
                      "(or import them with 'ragsweep import' and shard the corpus)\n");
      eval_args_free(a);
      return RS_EXIT_USAGE;
    }
    if (so->n_depths) {
      fprintf(stderr, "ragsweep eval: --depths is for ranked runs; %s is an ann-benchmarks dataset, whose results "
                      "are k-nn lists of the count each was run with (compare counts as separate results)\n",
              a->argv[a->first_input]);
      eval_args_free(a);
      return RS_EXIT_USAGE;
    }
    const int status = annb_eval(&aa);
    eval_args_free(a);
    return status;
  }
  if ((rc = sweep_opts_gates(so, 0, &gates, &err))) {
    fprintf(stderr, "ragsweep eval: %s\n", err.msg);
    eval_args_free(a);
    return rc == RS_NOMEM ? RS_EXIT_INPUT : RS_EXIT_USAGE;
  }
  const char *const out_dir = so->out_dir;
  const size_t n_gates = so->n_gates;
  const long n_worst = so->n_worst, threads = so->threads;
  cfg.all_queries = so->all_queries;
  const char *const policy = so->all_queries ? POLICY_ALL : POLICY_RANKED;
  cfg.ties_stored = so->ties_stored;

  sweep_input in = {0};
  worst_file *worst = NULL;
  gate_report gr = {0};
  const char **run_names = NULL, **measure_names = NULL;
  rs__spec *spec = NULL;
  rs__run_result *res = NULL;
  rs__csv *agg = NULL, *lat = NULL, *hist = NULL, *pq = NULL, *curves = NULL, *cdf = NULL;
  char **curve_names = NULL;
  size_t n_curve_names = 0;
  measure_cols pq_cols = {0};
  progress_state prog = {0};
  int exit_code = RS_EXIT_INPUT;
  int made_out_dir = 0; /* -o created by this run: removed again if the run fails before writing */
  rs__shard_plan plan = {0};
  char *common = NULL; /* the manifest part shared by the shards (--shard, merge) */
  char **inputs = NULL;

  rs__sweep_timing tm = {0};
  /* Under MPI every rank scores its share and rank 0 alone writes. */
  const int root = rs__mpi_rank() == 0;
  const double t_start = rs__seconds();
  const direct_opts dop = {
      .cmd = "eval", .qrels_path = so->qrels_path, .split = so->split, .threads = (int)threads, .rows_only = 1};
  if ((rc = sweep_input_open_args(&in, a->argv + a->first_input, (size_t)(a->argc - a->first_input), &dop, NULL,
                                  &err)) ||
      (so->n_depths && (rc = sweep_input_add_depths(&in, so->depths, so->n_depths, &err))))
    goto fail;
  {
    /* Nothing judged (a corpus imported without qrels): every run scores
     * num_q 0, as trec_eval does; say why, and how to get scores. */
    size_t judged = 0;
    for (size_t q = 0; q < in.corpus->nq; q++) judged += in.corpus->qoff[q + 1] > in.corpus->qoff[q];
    if (judged == 0 && so->qrels_path)
      fprintf(stderr, "ragsweep eval: note: %s judges none of the %zu queries of %s; every run scores 0 queries\n",
              so->qrels_path, in.corpus->nq, a->argv[a->first_input]);
    else if (judged == 0)
      fprintf(stderr, "ragsweep eval: note: %s has no judgments (empty /qrels), so no query is scored (num_q 0); "
                      "give --qrels FILE, e.g. the qrels.txt written by 'ragsweep judge'\n", a->argv[a->first_input]);
  }
  const double t_corpus = rs__seconds(), t_runs = t_corpus;
  const size_t max_k = sweep_input_max_k(&in);
  sweep_opts_default_measures(so, defaults, n_default_measures);
  /* --report: the curves' values ride along as extra values of the same
   * sweep (the visible measures and their files do not change). */
  if (po->report && (rc = report_curve_names(max_k, &curve_names, &n_curve_names, &err))) goto fail;
  if ((rc = gate_spec(so->measures, so->n_measures, gates, n_gates, (const char *const *)curve_names, n_curve_names,
                      max_k ? max_k : 1000, &spec, &err)))
    goto fail;
  cfg.spec = spec;
  cfg.latency_cdf = po->report;
  cfg.threads = (int)threads;
  cfg.batch_docs = (size_t)a->batch_docs;
  const char *baseline = getenv("RAGSWEEP_BASELINE_SIMD"); /* the baseline row kernels (rs__sweep_cfg.baseline_simd) */
  cfg.baseline_simd = baseline && *baseline && strcmp(baseline, "0") != 0;
  if (!a->quiet && root && isatty(STDERR_FILENO)) {
    clock_gettime(CLOCK_MONOTONIC, &prog.start);
    prog.last = prog.start;
    cfg.progress = show_progress;
    cfg.progress_ctx = &prog;
  }
  if (so->timing) cfg.timing = &tm;
  /* One process evaluates share 0 of 1: the units a shard or an MPI rank
   * evaluates, through the same engine and the same sums. */
  if ((rc = rs__shard_plan_make(in.runs, in.n_runs, 0, &plan, &err))) goto fail;
  if (a->shard || merge) {
    const size_t n_pos = (size_t)(a->argc - a->first_input);
    if (!(inputs = calloc(n_pos + 2, sizeof *inputs))) {
      rc = rs__fail(&err, RS_NOMEM, "out of memory");
      goto fail;
    }
    memcpy(inputs, a->argv + a->first_input, n_pos * sizeof *inputs);
    if (so->qrels_path) inputs[n_pos] = (char *)so->qrels_path;
    if ((rc = shard_manifest_common("eval", a->words, a->n_words, inputs, n_pos + (so->qrels_path != NULL), spec,
                                    in.n_runs, in.corpus->nq, &plan, a->shard ? a->shard_n : merge->n, &common, &err)))
      goto fail;
  }
  if (a->shard) {
    rc = shard_write(out_dir, &cfg, &in, &plan, a->shard_i, a->shard_n, a->per_query || n_worst, common, &err);
    if (prog.shown) fputc('\n', stderr);
    if (rc) goto fail;
    exit_code = RS_EXIT_OK;
    goto done;
  }
  struct stat out_st;
  const int out_existed = root && stat(out_dir, &out_st) == 0;
  per_query_sink sink = {.in = &in, .spec = spec};
  /* Rank 0 opens the outputs; whatever fails there fails every rank
   * before the sweep's collectives. */
  if (root && mkdir_p(out_dir) != 0) {
    if (errno == EEXIST || errno == ENOTDIR) rc = rs__fail(&err, RS_IO, "-o %s: is a file, expected a folder", out_dir);
    else rc = rs__fail(&err, RS_IO, "-o %s: cannot create the output folder: %s", out_dir, strerror(errno));
  }
  made_out_dir = root && !rc && !out_existed;
  if (!rc && root && (a->per_query || n_worst)) {
    if (!(rc = rs__corpus_load_queries(in.corpus, &err))) {
      cfg.per_query = write_per_query;
      cfg.per_query_ctx = &sink;
    }
  }
  if (!rc && root && a->per_query) {
    if (!(measure_names = calloc(spec->n_out + 1, sizeof *measure_names))) rc = rs__fail(&err, RS_NOMEM, "out of memory");
    for (size_t k = 0; !rc && k < spec->n_out; k++) measure_names[k] = spec->req[k].name;
    if (!rc && !(rc = measure_cols_init(&pq_cols, measure_names, spec->n_out, &err)) &&
        !(rc = rs__csv_create(out_dir, "per_query.csv", &pq, &err))) {
      rs__csv_str(pq, "run");
      rs__csv_str(pq, "query");
      measure_cols_header(pq);
      rs__csv_str(pq, "value");
      rc = rs__csv_end_row(pq, &err);
    }
    sink.w = pq;
    sink.mc = &pq_cols;
  }
  if (!rc && root && n_worst) rc = worst_open(&worst, out_dir, (size_t)n_worst, spec, in.corpus, &err);
  if ((rc = rs__mpi_agree(rc, &err))) goto fail;
  sink.worst = worst;
  if (!(res = calloc(in.n_runs ? in.n_runs : 1, sizeof *res))) {
    rc = rs__fail(&err, RS_NOMEM, "out of memory");
    goto fail;
  }
  const double t_sweep = rs__seconds();
  if (merge)
    rc = shard_set_replay(merge, common, spec, res, in.n_runs, in.corpus->nq, cfg.per_query, cfg.per_query_ctx, &err);
  else rc = rs__sweep_ranks(&cfg, in.corpus, in.runs, &plan, res, &err); /* share 0 of 1 without MPI */
  if (prog.shown) fputc('\n', stderr);
  if (rc) goto fail;
  if (!root) { /* rank 0 writes and prints */
    exit_code = RS_EXIT_OK;
    goto done;
  }
  const double t_write = rs__seconds();
  if (!(run_names = calloc(in.n_runs + 1, sizeof *run_names)) ||
      (!measure_names && !(measure_names = calloc(spec->n_out + 1, sizeof *measure_names)))) {
    rc = rs__fail(&err, RS_NOMEM, "out of memory");
    goto fail;
  }
  for (size_t r = 0; r < in.n_runs; r++) run_names[r] = in.runs[r]->name;
  for (size_t k = 0; k < spec->n_out; k++) measure_names[k] = spec->req[k].name;
  if ((rc = rs__csv_create(out_dir, "aggregate.csv", &agg, &err)) ||
      (rc = write_aggregate(agg, &in, run_names, in.n_runs, measure_names, spec->n_out, res, 1, policy, &err)) ||
      (rc = rs__csv_create(out_dir, "latency.csv", &lat, &err)) || (rc = write_latency_csv(lat, &in, latency_of_result, res, &err)) ||
      (rc = rs__csv_create(out_dir, "latency_hist.csv", &hist, &err)) ||
      (rc = write_latency_hist(hist, &in, res, &err)))
    goto fail;
  if (po->report && ((rc = rs__csv_create(out_dir, "curves.csv", &curves, &err)) ||
                    (rc = report_write_curves(curves, &in, spec, res, max_k, policy, &err)) ||
                    (rc = rs__csv_create(out_dir, "latency_cdf.csv", &cdf, &err)) ||
                    (rc = report_write_latency_cdf(cdf, &in, res, &err))))
    goto fail;
  const int wrote_texts = worst_has_texts(worst);
  /* All written: only now do the files take their final names. */
  char agg_path[4096], lat_path[4096], hist_path[4096], pq_path[4096] = "";
  snprintf(agg_path, sizeof agg_path, "%s", rs__csv_path(agg));
  snprintf(lat_path, sizeof lat_path, "%s", rs__csv_path(lat));
  snprintf(hist_path, sizeof hist_path, "%s", rs__csv_path(hist));
  if (pq) snprintf(pq_path, sizeof pq_path, "%s", rs__csv_path(pq));
  rc = rs__csv_commit(agg, &err);
  agg = NULL;
  if (!rc) rc = rs__csv_commit(lat, &err);
  lat = NULL;
  if (!rc) rc = rs__csv_commit(hist, &err);
  hist = NULL;
  if (!rc && pq) rc = rs__csv_commit(pq, &err);
  pq = NULL;
  if (!rc && curves) rc = rs__csv_commit(curves, &err);
  curves = NULL;
  if (!rc && cdf) rc = rs__csv_commit(cdf, &err);
  cdf = NULL;
  if (!rc && worst) rc = worst_commit(worst, &err);
  worst = NULL;
  if (rc) goto fail;
  {
    /* A re-run replaces eval's whole output set: files this run does not
     * write go.  gates.csv always goes here and is written anew below, and
     * report.html with --report (an older one would show older results). */
    const char *const stale[] = {a->per_query ? NULL : "per_query.csv", n_worst ? NULL : "worst.csv",
                                 wrote_texts ? NULL : "query_texts.csv", po->report ? NULL : "curves.csv",
                                 po->report ? NULL : "latency_cdf.csv", "report.html", "gates.csv"};
    remove_outputs(out_dir, stale, sizeof stale / sizeof *stale);
  }
  const double t_end = rs__seconds();
  if (so->timing)
    fprintf(stderr,
            "timing (s): open corpus %.3f, open runs %.3f, spec %.3f, setup %.3f, "
            "score+read %.3f (beside the scoring: reader busy %.3f, combine %.3f), %" PRIu64 " batches, write %.3f; "
            "total %.3f\n",
            t_corpus - t_start, t_runs - t_corpus, t_sweep - t_runs, tm.setup, tm.score, tm.read, tm.combine,
            tm.batches, t_end - t_write, t_end - t_start);
  if (so->timing && tm.n_threads > 1) {
    /* Unequal rates on equal rows: the vCPUs run at different speeds (a
     * busy neighbour on the host), not the work split (rows are claimed
     * in chunks as threads free up). */
    fprintf(stderr, "timing (s): scoring threads, time in rows and rows (ns a row):");
    for (int k = 0; k < tm.n_threads; k++)
      fprintf(stderr, "%s #%d %.3f, %" PRIu64 " (%.0f)", k ? ";" : "", k, tm.thread_s[k], tm.thread_rows[k],
              tm.thread_rows[k] ? 1e9 * tm.thread_s[k] / (double)tm.thread_rows[k] : 0.0);
    fprintf(stderr, "\n");
  }
  print_leaderboard(&in, spec, res, (size_t)a->top);
  printf("%squeries: %s (%s)\n", a->top ? "\n" : "", policy,
         so->all_queries ? "every judged query; a query a run does not rank scores 0"
                        : "the judged queries each run ranks, as trec_eval");
  printf("wrote %s\n      %s\n      %s\n", agg_path, lat_path, hist_path);
  if (*pq_path) printf("      %s\n", pq_path);
  if (n_worst) printf("      %s/worst.csv\n", out_dir);
  if (wrote_texts) printf("      %s/query_texts.csv\n", out_dir);
  if (po->report) printf("      %s/curves.csv\n      %s/latency_cdf.csv\n", out_dir, out_dir);
  exit_code = RS_EXIT_OK;
  if (n_gates) {
    printf("\ngates:\n");
    int width = 0;
    for (size_t r = 0; r < in.n_runs; r++)
      if ((int)strlen(run_names[r]) > width) width = (int)strlen(run_names[r]);
    if ((rc = gate_report_open(&gr, out_dir, width, gates_width(gates, n_gates), &err)) ||
        (rc = gates_check(&gr, gates, n_gates, measure_names, spec->n_out, run_names, in.n_runs, res, &err)) ||
        (rc = gate_report_commit(&gr, &err)))
      goto fail;
    printf("wrote %s/gates.csv\n", out_dir);
    if (gr.n_failed) exit_code = RS_EXIT_GATE;
  }
  {
    /* The morning-after outputs read the folder just written; their
     * failure (a push refused) is an input/output error, not a gate. */
    const publish_run pr = {.cmd = "eval", .out_dir = out_dir, .argc = a->argc, .argv = a->argv, .inputs = a->argv + a->first_input,
                            .n_inputs = (size_t)(a->argc - a->first_input), .extra_input = so->qrels_path,
                            .exit_status = exit_code};
    exit_code = publish_outputs(po, &pr, stdout);
  }
  goto done;

fail:
  fprintf(stderr, "ragsweep %s: %s\n", merge ? "merge" : "eval", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  rs__csv_abort(agg);
  rs__csv_abort(lat);
  rs__csv_abort(hist);
  rs__csv_abort(pq);
  rs__csv_abort(curves);
  rs__csv_abort(cdf);
  worst_abort(worst);
  gate_report_abort(&gr);
  if (made_out_dir) rmdir(out_dir); /* only if still empty: nothing of this run is left */
done:
  free(run_names);
  free(measure_names);
  measure_cols_free(&pq_cols);
  report_curve_names_free(curve_names, n_curve_names);
  for (size_t i = 0; i < n_gates; i++) gate_free(&gates[i]);
  free(gates);
  for (size_t i = 0; res && i < in.n_runs; i++) rs__run_result_free(&res[i]);
  free(res);
  rs__spec_free(spec);
  rs__mpi_wait_all(); /* the ranks wait here (asleep) while rank 0 writes */
  sweep_input_close(&in);
  rs__shard_plan_free(&plan);
  free(common);
  free(inputs);
  eval_args_free(a);
  return exit_code;
}

int eval_merge(const shard_set *s, const char *out_dir, int quiet)
{
  /* The shards' command line, with the merge's output folder. */
  int argc = 0;
  char **argv = shard_merge_argv(s, "eval", out_dir, quiet, &argc);
  if (!argv) return RS_EXIT_INPUT;
  eval_args a;
  int status = eval_parse(argc, argv, &a);
  if (status < 0) status = eval_run(&a, s);
  free(argv);
  return status;
}

int rs_cli_eval(int argc, char **argv)
{
  eval_args a;
  const int status = eval_parse(argc, argv, &a);
  if (status >= 0) return status;
  return eval_run(&a, NULL);
}
