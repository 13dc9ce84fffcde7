/* cmd_import.c: "ragsweep import": TREC files or a JSON eval set -> corpus. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annb_cli.h"
#include "cli.h"
#include "direct_input.h"
#include "formats/import.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep import -o OUT.h5 (--qrels QRELS | --json EVALSET.json) [--docs FILE]\n"
          "                       [--queries FILE] [RUN ...]\n"
          "       ragsweep import -o OUT.h5 QRELS|BEIR_DIR [--split NAME] [RUN ...]\n"
          "       ragsweep import -o OUT.h5 --queries FILE [--docs FILE] [RUN ...]\n"
          "       ragsweep import -o OUT.h5 DATASET.hdf5 RESULT.hdf5 [...]   (ann-benchmarks)\n"
          "\n"
          "Writes a corpus (format version 1) from judgments and any number of runs.\n"
          "Judgments: TREC qrels, BEIR qrels (TSV query-id, corpus-id, score), a JSON eval\n"
          "set, or a BEIR folder (its qrels/SPLIT.tsv, and the texts of queries.jsonl and\n"
          "corpus.jsonl), given with --qrels/--json or as the first positional.  A RUN is a\n"
          "TREC run, a JSONL run ({\"query_id\", \"doc_ids\", \"scores\", \"latency_ms\"} a line)\n"
          "or a CSV/TSV run (a header naming query_id, doc_id and optionally rank, score,\n"
          "latency_ms), plain or gzip, detected from the content; PATH (named after the\n"
          "file without its extensions) or NAME=PATH.  Rankings are stored in trec_eval's\n"
          "order with their scores (a run without scores ranks in its listed order), so\n"
          "'ragsweep eval' on the corpus gives what trec_eval gives on the files.  Run\n"
          "topics the judgments do not judge are dropped (trec_eval ignores them);\n"
          "latency_ms is stored in seconds.\n"
          "\n"
          "No judgments yet: give --queries without --qrels/--json.  The corpus's queries are the\n"
          "ids of the queries file, its qrels are empty, and each run's rankings of those queries\n"
          "are stored; run topics not in the queries file are dropped, with a note on stderr.\n"
          "Label the corpus with 'ragsweep judge', then score it with 'ragsweep eval CORPUS\n"
          "--qrels QRELS' (any TREC qrels).  A JSON eval set's queries without judgments keep\n"
          "their rankings too; eval skips them until they are judged.\n"
          "\n"
          "options:\n"
          "  -o, --out FILE           the corpus to write (replaced atomically)\n"
          "      --qrels FILE         TREC qrels (qid iter docno grade), BEIR qrels or a JSON eval\n"
          "                           set; every positional is then a run\n"
          "      --json FILE          {\"queries\": [{\"id\", \"query\", \"relevant_doc_ids\",\n"
          "                           \"graded_relevance\": {doc: grade}}]}\n"
          "      --docs FILE          doc texts -> /docs/text: TSV \"id<TAB>text\" (MS MARCO) or JSONL\n"
          "                           {\"_id\", \"title\", \"text\"} (BEIR); plain or gzip.  Every doc\n"
          "                           of the corpus (judged or retrieved) needs a text\n"
          "      --queries FILE       query texts -> /queries/text, same layouts; replaces the\n"
          "                           JSON eval set's \"query\" texts; every query needs one.\n"
          "                           Without --qrels/--json, its ids are the queries\n"
          "      --attr NAME:KEY=VAL  a configuration attribute of run NAME (repeatable);\n"
          "                           integers and decimals are stored as numbers\n"
          "      --split NAME         a BEIR folder's qrels/NAME.tsv (default test)\n"
          "      --threads N          threads for reading runs\n"
          "  -h, --help               this help\n");
}

static rs__attr_kind kind_of(const char *v, double *num)
{
  char *end;
  errno = 0;
  long long i = strtoll(v, &end, 10);
  if (*v && !*end && !errno) {
    *num = (double)i;
    return RS_ATTR_INT;
  }
  errno = 0;
  double d = strtod(v, &end);
  if (*v && !*end && !errno) {
    *num = d;
    return RS_ATTR_FLOAT;
  }
  return RS_ATTR_STRING;
}

int rs_cli_import(int argc, char **argv)
{
  enum { OPT_QRELS = 256, OPT_JSON, OPT_ATTR, OPT_THREADS, OPT_DOCS, OPT_QUERIES, OPT_SPLIT };
  static const struct option longs[] = {{"out", required_argument, 0, 'o'},      {"qrels", required_argument, 0, OPT_QRELS},
                                        {"json", required_argument, 0, OPT_JSON}, {"attr", required_argument, 0, OPT_ATTR},
                                        {"threads", required_argument, 0, OPT_THREADS}, {"help", no_argument, 0, 'h'},
                                        {"docs", required_argument, 0, OPT_DOCS},
                                        {"queries", required_argument, 0, OPT_QUERIES},
                                        {"split", required_argument, 0, OPT_SPLIT},
                                        {0, 0, 0, 0}};
  rs__import_cfg cfg = {0};
  const char *out = NULL;
  char **attr_args = calloc((size_t)argc + 1, sizeof *attr_args);
  size_t n_attr_args = 0;
  rs__import_run *runs = NULL;
  size_t n_runs = 0, *dropped = NULL, *no_latency = NULL;
  direct_plan plan = {0};
  const char *split = NULL;
  int exit_code = RS_EXIT_USAGE, c;
  rs_error err = {0};
  if (!attr_args) return RS_EXIT_INPUT;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case OPT_QRELS: cfg.qrels_path = optarg; break;
    case OPT_JSON: cfg.json_path = optarg; break;
    case OPT_ATTR: attr_args[n_attr_args++] = optarg; break;
    case OPT_THREADS: {
      /* The cap of every other command's --threads (1..4096). */
      char *end = NULL;
      errno = 0;
      const long v = strtol(optarg, &end, 10);
      if (errno || end == optarg || *end || v < 1 || v > 4096) {
        fprintf(stderr, "ragsweep import: --threads: expected an integer from 1 to 4096, found '%s' "
                        "(see 'ragsweep import --help')\n", optarg);
        goto done;
      }
      cfg.threads = (int)v;
      break;
    }
    case OPT_DOCS: cfg.docs_path = optarg; break;
    case OPT_QUERIES: cfg.queries_path = optarg; break;
    case OPT_SPLIT: split = optarg; break;
    case 'h': help(stdout); free(attr_args); return RS_EXIT_OK;
    default:
      fprintf(stderr, "ragsweep import: unknown option '%s' (see 'ragsweep import --help')\n", argv[optind - 1]);
      goto done;
    }
  }
  if (out && !cfg.qrels_path && !cfg.json_path && !cfg.queries_path && !cfg.docs_path && !n_attr_args && !split &&
      optind < argc && annb_is_dataset(argv[optind])) { /* ann-benchmarks dataset + results: annb_eval.c */
    free(attr_args);
    return annb_import(out, argv + optind, (size_t)(argc - optind));
  }
  if (!out) {
    fprintf(stderr, "ragsweep import: expected -o OUT.h5 (see --help)\n");
    goto done;
  }
  {
    /* The positionals: runs, or judgments (qrels, BEIR qrels, a JSON eval
     * set, a BEIR folder) and runs, sorted out as eval does. */
    const direct_opts dop = {.cmd = "import",
                             .qrels_path = cfg.qrels_path ? cfg.qrels_path : cfg.json_path,
                             .split = split,
                             .queries_path = cfg.queries_path,
                             .runs_optional = 1};
    if (optind < argc && direct_plan_make(&plan, argv + optind, (size_t)(argc - optind), &dop, &err)) {
      if (err.code == RS_USAGE && !dop.qrels_path && !cfg.queries_path && !plan.qrels_path)
        fprintf(stderr, "ragsweep import: expected -o OUT.h5 and one of --qrels, --json or (no judgments yet) "
                        "--queries alone, or judgments (TREC or BEIR qrels, a JSON eval set, a BEIR folder) before "
                        "the runs (%s; see --help)\n", err.msg);
      else fprintf(stderr, "ragsweep import: %s\n", err.msg);
      exit_code = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
      goto done;
    }
    if (plan.corpus) {
      fprintf(stderr, "ragsweep import: %s: an HDF5 file; import reads text inputs (qrels, runs, a BEIR folder) "
                      "into a corpus\n", argv[optind]);
      goto done;
    }
    if (optind < argc) {
      if (plan.qrels_path != cfg.json_path) cfg.qrels_path = plan.qrels_path, cfg.json_path = NULL;
      if (plan.beir_dir && !cfg.queries_path && plan.beir_queries[0]) cfg.queries_path = plan.beir_queries;
      if (plan.beir_dir && !cfg.docs_path && plan.beir_corpus[0]) cfg.docs_path = plan.beir_corpus;
    }
    runs = plan.runs;
    n_runs = plan.n_runs;
  }
  if (!out || (cfg.qrels_path && cfg.json_path) || (!cfg.qrels_path && !cfg.json_path && !cfg.queries_path)) {
    fprintf(stderr, "ragsweep import: expected -o OUT.h5 and one of --qrels, --json, judgments first (qrels or a "
                    "BEIR folder) or (no judgments yet) --queries alone (see --help)\n");
    goto done;
  }
  if (!(dropped = calloc(n_runs ? n_runs : 1, sizeof *dropped)) ||
      !(no_latency = calloc(n_runs ? n_runs : 1, sizeof *no_latency))) {
    exit_code = RS_EXIT_INPUT;
    goto done;
  }
  for (size_t a = 0; a < n_attr_args; a++) {
    char *colon = strchr(attr_args[a], ':'), *eq = colon ? strchr(colon, '=') : NULL;
    if (!colon || !eq || eq == colon + 1) {
      fprintf(stderr, "ragsweep import: --attr '%s': expected RUN:KEY=VALUE\n", attr_args[a]);
      goto done;
    }
    *colon = '\0';
    *eq = '\0';
    size_t r = 0;
    while (r < n_runs && strcmp(runs[r].name, attr_args[a]) != 0) r++;
    if (r == n_runs) {
      fprintf(stderr, "ragsweep import: --attr: no run named '%s'\n", attr_args[a]);
      goto done;
    }
    rs__attr *na = realloc(runs[r].attrs, (runs[r].n_attrs + 1) * sizeof *na);
    if (!na) { exit_code = RS_EXIT_INPUT; goto done; }
    runs[r].attrs = na;
    rs__attr *at = &na[runs[r].n_attrs++];
    at->key = colon + 1;
    at->text = eq + 1;
    at->kind = kind_of(at->text, &at->num);
  }
  cfg.runs = runs;
  cfg.n_runs = n_runs;
  cfg.dropped = dropped;
  cfg.no_latency = no_latency;
  if (rs__import(&cfg, out, &err)) {
    fprintf(stderr, "ragsweep import: %s\n", err.msg);
    exit_code = err.code == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
    goto done;
  }
  /* A note, not an error: a queries file that is a subset of the runs'
   * topics (a dev split, a sample to judge) is the usual case. */
  for (size_t i = 0; i < n_runs; i++)
    if (dropped[i])
      fprintf(stderr, "ragsweep import: note: run %s: %zu topic%s not in %s %s dropped\n", runs[i].name, dropped[i],
              dropped[i] == 1 ? "" : "s", cfg.queries_path, dropped[i] == 1 ? "was" : "were");
  for (size_t i = 0; i < n_runs; i++)
    if (no_latency[i])
      fprintf(stderr, "ragsweep import: note: run %s gives no latency_ms for %zu of the corpus's queries (it does not "
                      "rank them), so its latencies are not stored\n", runs[i].name, no_latency[i]);
  printf("wrote %s (%zu run%s%s%s)\n", out, n_runs, n_runs == 1 ? "" : "s", cfg.queries_path ? ", query texts" : "",
         cfg.docs_path ? ", doc texts" : "");
  exit_code = RS_EXIT_OK;
done:
  for (size_t i = 0; runs && i < n_runs; i++) free(runs[i].attrs);
  direct_plan_free(&plan);
  free(dropped);
  free(no_latency);
  free(attr_args);
  return exit_code;
}
