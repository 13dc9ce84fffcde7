/* cmd_trec_eval.c: "ragsweep trec_eval", trec_eval 10.0's command line. */
#define _GNU_SOURCE /* GNU getopt: options may follow the file names, as in trec_eval */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "metrics/spec.h"
#include "ragsweep/measures.h"
#include "ragsweep/trec_eval.h"

static void help(FILE *f, const char *prog)
{
  fprintf(f,
          "usage: %s [options] QRELS RUN\n"
          "\n"
          "Evaluates a TREC run against TREC qrels exactly as trec_eval 10.0 does, printing the\n"
          "same bytes.  Files may be gzip-compressed; '-' for either file reads stdin.\n"
          "\n"
          "options:\n"
          "  -q          also print each topic's values\n"
          "  -n          no summary ('all') lines\n"
          "  -m MEASURE  measure, with optional parameters: -m P.5,10  -m ndcg_cut.10\n"
          "              -m ndcg.1=1,2=3  -m rbp.p=0.8; nicknames: official (default), all_trec\n"
          "  -c          average over every qrels topic; topics missing from the run score 0\n"
          "  -l LEVEL    lowest grade that counts as relevant (default 1)\n"
          "  -M NUM      evaluate only the top NUM docs of each ranking\n"
          "  -J          judged docs only: drop unjudged and unpooled docs before scoring\n"
          "  -N NUM      number of docs in the collection (for utility)\n"
          "  -o, -D N    accepted and ignored (trec_eval compatibility)\n"
          "  -Z FILE     z-scores: not supported (exit 1)\n"
          "  -R qrels, -T trec_results  accepted (the only formats)\n"
          "  --threads N threads to use (ragsweep; default: OMP_NUM_THREADS or all cores)\n"
          "  -v          version\n"
          "  -h          this help\n"
          "\n"
          "measures (all_trec, in print order):\n  ",
          prog);
  for (int id = 0; id < RS_N_MEASURES; id++)
    fprintf(f, "%s%s", rs_measure_name((rs_measure_id)id), id + 1 < RS_N_MEASURES ? " " : "\n");
  fprintf(f,
          "\n"
          "exit status: 0 ok; 1 usage or unknown measure; 2 unreadable or malformed input;\n"
          "4 duplicate docs in a ranking, or a qrels topic missing from the run (without -c).\n");
}

static int parse_long(const char *s, long *out)
{
  /* trec_eval reads these numbers with atol, so "-M x" silently means 0;
   * we reject a value that is not a number instead. */
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s) return 0;
  *out = v;
  return 1;
}

int rs_cli_trec_eval(int argc, char **argv, const char *prog)
{
  rs_te_config cfg = {0};
  rs_error err = {RS_OK, ""};
  rs_te_result *res = NULL;
  int per_topic = 0, summary = 1, status = RS_EXIT_OK, any_measure = 0, opt;
  rs_plan_init(&cfg.plan);
  /* --threads N (or --threads=N) is ragsweep's own; take it out before
   * getopt sees trec_eval's short options. */
  int kept = 1;
  for (int i = 1; i < argc; i++) {
    const char *val = NULL;
    if (strcmp(argv[i], "--help") == 0) { /* trec_eval has -h only; --help is what users try first */
      help(stdout, prog);
      goto out;
    }
    if (strncmp(argv[i], "--threads=", 10) == 0) val = argv[i] + 10;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) val = argv[++i];
    else if (strcmp(argv[i], "--") == 0) {
      while (i < argc) argv[kept++] = argv[i++];
      break;
    } else {
      argv[kept++] = argv[i];
      continue;
    }
    long v = 0;
    if (!parse_long(val, &v) || v < 1 || v > 4096) {
      fprintf(stderr, "%s: --threads expects a number from 1 to 4096, found '%s'\n", prog, val);
      status = RS_EXIT_USAGE;
      goto out;
    }
    cfg.threads = (int)v;
  }
  argc = kept;
  opterr = 0;
  while ((opt = getopt(argc, argv, ":hvqncJom:l:M:N:T:R:Z:D:")) != -1) {
    long v = 0;
    switch (opt) {
    case 'h': help(stdout, prog); goto out;
    case 'v': printf("%s: ragsweep 0.1.0, compatible with trec_eval version 10.0\n", prog); goto out;
    case 'q': per_topic = 1; break;
    case 'n': summary = 0; break;
    case 'c': cfg.complete = 1; break;
    case 'J': cfg.plan.judged_only = 1; break;
    case 'o': break;
    case 'm':
      if (rs_plan_add(&cfg.plan, optarg, &err)) {
        char spelling[256];
        if (rs__spec_trec_spelling(optarg, spelling, sizeof spelling))
          fprintf(stderr, "%s: %s; '%s' is an ir_measures name: trec_eval spells it '%s'\n", prog, err.msg, optarg,
                  spelling);
        else
          fprintf(stderr, "%s: %s\n", prog, err.msg);
        status = RS_EXIT_USAGE;
        goto out;
      }
      any_measure = 1;
      break;
    case 'T':
      if (strcmp(optarg, "trec_results") != 0) {
        fprintf(stderr, "%s: -T %s is not supported; only -T trec_results (the standard format) is\n", prog,
                optarg);
        status = RS_EXIT_USAGE;
        goto out;
      }
      break;
    case 'l':
    case 'M':
    case 'N':
      if (!parse_long(optarg, &v)) {
        fprintf(stderr, "%s: -%c expects a number, found '%s'\n", prog, opt, optarg);
        status = RS_EXIT_USAGE;
        goto out;
      }
      if (opt == 'l') cfg.plan.relevance_level = v;
      if (opt == 'M') cfg.plan.max_docs = v < 0 ? 0 : v;
      if (opt == 'N') cfg.plan.n_docs_coll = v;
      break;
    case 'R':
      if (strcmp(optarg, "qrels") != 0) {
        fprintf(stderr, "%s: -R %s is not supported; only -R qrels (the standard format) is\n", prog, optarg);
        status = RS_EXIT_USAGE;
        goto out;
      }
      break;
    case 'Z':
      fprintf(stderr, "%s: -Z (z-scores) is not supported\n", prog);
      status = RS_EXIT_USAGE;
      goto out;
    case 'D': break; /* debug level: no debug output */
    case ':':
      fprintf(stderr, "%s: option -%c needs an argument\n", prog, optopt);
      status = RS_EXIT_USAGE;
      goto out;
    default:
      fprintf(stderr, "%s: unknown option -%c (see -h)\n", prog, optopt);
      status = RS_EXIT_USAGE;
      goto out;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr, "%s: expected 2 files, QRELS and RUN, found %d (see -h)\n", prog, argc - optind);
    status = RS_EXIT_USAGE;
    goto out;
  }
  if (cfg.plan.relevance_level > INT32_MAX || cfg.plan.relevance_level < INT32_MIN) {
    fprintf(stderr, "%s: -l %ld is out of range\n", prog, cfg.plan.relevance_level);
    status = RS_EXIT_USAGE;
    goto out;
  }
  if (!any_measure) rs_plan_add(&cfg.plan, "official", &err);
  if (rs_plan_finish(&cfg.plan, 1000, &err)) {
    fprintf(stderr, "%s: %s\n", prog, err.msg);
    status = RS_EXIT_INPUT;
    goto out;
  }
  /* Test hook: a small read block exercises the streaming boundaries. */
  const char *block = getenv("RAGSWEEP_BLOCK_BYTES");
  if (block) cfg.block_bytes = (size_t)strtoul(block, NULL, 10);
  const char *map_run = getenv("RAGSWEEP_MAP_RUN"); /* the mapped path (rs_te_config.map_run), for tests and machines it suits */
  cfg.map_run = map_run && *map_run && strcmp(map_run, "0") != 0;
  const char *baseline = getenv("RAGSWEEP_BASELINE_SIMD"); /* the SSE2 line scan (rs_te_config.baseline_simd) */
  cfg.baseline_simd = baseline && *baseline && strcmp(baseline, "0") != 0;
  rs_code rc = rs_te_evaluate(&cfg, argv[optind], argv[optind + 1], &res, &err);
  if (rc) {
    fprintf(stderr, "%s: %s\n", prog, err.msg);
    status = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto out;
  }
  static char outbuf[1 << 16];
  setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
  const rs_code wrc = rs_te_write(&cfg, res, per_topic, summary, stdout);
  if (wrc || fflush(stdout)) {
    fprintf(stderr, "%s: %s\n", prog,
            wrc == RS_NOMEM ? "out of memory for the per-topic lines" : "cannot write the output");
    status = RS_EXIT_INPUT;
    goto out;
  }
  if (rs_te_status(res, &err)) {
    fprintf(stderr, "%s: %s\n", prog, err.msg);
    status = RS_EXIT_TOPIC;
  }
out:
  rs_te_result_free(res);
  rs_plan_free(&cfg.plan);
  return status;
}
