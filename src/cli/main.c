/* main.c: ragsweep's entry point.  Invoked as "trec_eval" (a symlink), it is
 * a drop-in trec_eval (as is the lighter trec_eval program, trec_eval_main.c);
 * otherwise the first argument names the subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "formats/textio.h"
#include "internal.h"
#include "util/mpi.h"


static void usage(FILE *f)
{
  fprintf(f,
          "ragsweep %s: fast, exact evaluation of retrieval runs\n"
          "\n"
          "usage: ragsweep COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  eval CORPUS.h5 [RUNS.h5 ...] -o OUTDIR   score every run of a sweep into CSV\n"
          "  eval QRELS|BEIR_DIR RUN ... -o OUTDIR    the same for TREC, JSONL or CSV runs\n"
          "  compare CORPUS.h5 ... -o OUTDIR significance tests, intervals and gates between runs\n"
          "  merge SHARD_DIR ... -o OUTDIR   the outputs of 'eval/compare --shard I/N' shards, as one process\n"
          "  check FILE.h5 ... [--qrels F]   validate corpora, run files (and TREC qrels) against the format\n"
          "  import -o OUT.h5 ...            qrels (TREC, BEIR, JSON) and runs (TREC, JSONL, CSV) -> corpus\n"
          "  export CORPUS.h5 -o DIR         corpus -> TREC qrels and runs\n"
          "  table OUTDIR|aggregate.csv      Markdown or CSV pivot of measures across configurations\n"
          "  report DIR ... -o REPORT.html   one self-contained HTML page of eval/compare/rag/judge outputs\n"
          "  judge CORPUS.h5 ... -o OUTDIR   LLM relevance labels (qrels) for the runs' top-k, cached\n"
          "  rag DATASET.jsonl ... -o OUTDIR generation metrics (faithfulness, answer relevancy, ...)\n"
          "  synth --docs F -n N -o EVAL.json an eval set of LLM-written questions from your documents\n"
          "  history FILE [--alert SPEC]     trends of a --history database; degradation alerts\n"
          "  cache stats|merge CACHE ...     inspect or merge LLM reply caches\n"
          "  trec_eval [options] QRELS RUN   drop-in trec_eval 10.0 (same output, same exit codes)\n"
          "  version                         print the version\n"
          "  help                            this text\n"
          "\n"
          "'ragsweep COMMAND --help' describes each command.  A symlink named\n"
          "trec_eval to this binary behaves as 'ragsweep trec_eval'.\n",
          RAGSWEEP_VERSION);
}

/* Under mpirun with more than one rank, the commands that split their work
 * across the ranks (README, "MPI"); any other would run P times over. */
static int splits_under_mpi(const char *cmd)
{
  return strcmp(cmd, "eval") == 0 || strcmp(cmd, "compare") == 0 || strcmp(cmd, "judge") == 0;
}

static int run(int argc, char **argv)
{
  const char *base = strrchr(argv[0], '/');
  base = base ? base + 1 : argv[0];
  if (!rs_cli_omp_env_ok(strcmp(base, "trec_eval") == 0 ? "trec_eval" : "ragsweep")) return RS_EXIT_USAGE;
  if (strcmp(base, "trec_eval") == 0 && rs__mpi_size() > 1) {
    fprintf(stderr, "trec_eval: does not split its work across MPI ranks; run it as one process\n");
    return RS_EXIT_USAGE;
  }
  if (strcmp(base, "trec_eval") == 0) return rs_cli_trec_eval(argc, argv, "trec_eval");
  if (argc < 2) {
    usage(stderr);
    return RS_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (rs__mpi_size() > 1 && !splits_under_mpi(cmd) && strcmp(cmd, "version") != 0 && strcmp(cmd, "--version") != 0) {
    fprintf(stderr, "ragsweep: '%s' does not split its work across MPI ranks (eval, compare and judge do); run it as one "
                    "process (without mpirun, or mpirun -np 1)\n", cmd);
    return RS_EXIT_USAGE;
  }
  if (strcmp(cmd, "trec_eval") == 0) return rs_cli_trec_eval(argc - 1, argv + 1, "ragsweep trec_eval");
  if (strcmp(cmd, "eval") == 0) return rs_cli_eval(argc - 1, argv + 1);
  if (strcmp(cmd, "compare") == 0) return rs_cli_compare(argc - 1, argv + 1);
  if (strcmp(cmd, "merge") == 0) return rs_cli_merge(argc - 1, argv + 1);
  if (strcmp(cmd, "check") == 0) return rs_cli_check(argc - 1, argv + 1);
  if (strcmp(cmd, "import") == 0) return rs_cli_import(argc - 1, argv + 1);
  if (strcmp(cmd, "export") == 0) return rs_cli_export(argc - 1, argv + 1);
  if (strcmp(cmd, "table") == 0) return rs_cli_table(argc - 1, argv + 1);
  if (strcmp(cmd, "report") == 0) return rs_cli_report(argc - 1, argv + 1);
  if (strcmp(cmd, "judge") == 0) return rs_cli_judge(argc - 1, argv + 1);
  if (strcmp(cmd, "rag") == 0) return rs_cli_rag(argc - 1, argv + 1);
  if (strcmp(cmd, "synth") == 0) return rs_cli_synth(argc - 1, argv + 1);
  if (strcmp(cmd, "cache") == 0) return rs_cli_cache(argc - 1, argv + 1);
  if (strcmp(cmd, "history") == 0) return rs_cli_history(argc - 1, argv + 1);
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("ragsweep %s\n", RAGSWEEP_VERSION);
    return RS_EXIT_OK;
  }
  if (strcmp(cmd, "help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
    usage(stdout);
    return RS_EXIT_OK;
  }
  fprintf(stderr, "ragsweep: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return RS_EXIT_USAGE;
}

/* Open files up to the hard limit: a sweep keeps each run file open (one
 * descriptor, two when libhdf5 reads it too), and the usual soft limit of
 * 1024 had stopped one of about 510 run files.  Nothing here uses
 * select(); the raise stops at 2^20 (a hard limit may be "unlimited", and
 * code that walks every possible descriptor would then walk billions). */
static void allow_open_files_to_the_hard_limit(void)
{
  enum { MOST_OPEN_FILES = 1 << 20 };
  struct rlimit l;
  if (getrlimit(RLIMIT_NOFILE, &l) != 0) return;
  const rlim_t want = l.rlim_max < (rlim_t)MOST_OPEN_FILES ? l.rlim_max : (rlim_t)MOST_OPEN_FILES;
  if (l.rlim_cur < want) {
    l.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &l);
  }
}

int main(int argc, char **argv)
{
  allow_open_files_to_the_hard_limit();
  if (rs__mpi_init(&argc, &argv) != 0) return RS_EXIT_INPUT;
  rs__mapped_guard_sigbus("ragsweep", RS_EXIT_INPUT); /* text runs and qrels are read through mappings */
  const int status = run(argc, argv);
  rs__mpi_finalize();
  return status;
}
