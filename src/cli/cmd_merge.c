/* cmd_merge.c: "ragsweep merge": the outputs of the shards of one sharded
 * eval, compare, judge or rag, byte for byte those of one process. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "shard_io.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep merge SHARD_DIR [SHARD_DIR ...] -o OUTDIR [--quiet]\n"
          "\n"
          "Writes in OUTDIR exactly the files that the command of the shards ('ragsweep eval\n"
          "... --shard I/N -o SHARD_DIR', or compare, judge, rag) writes when run in one process\n"
          "with the same inputs and options (aggregate.csv, latency*.csv, per_query.csv,\n"
          "gates.csv, worst.csv, --report, --json, --history, ...; judge's qrels.txt,\n"
          "judgments.jsonl, agreement.csv; rag's per_sample.csv, calls.jsonl, ...), and prints\n"
          "what it prints.  The shards' command line is stored in their manifests; the merge\n"
          "runs it again in the shards' working folder, reading the inputs' names, ids and\n"
          "attributes, and takes the scores from the shards.\n"
          "\n"
          "judge and rag shards: their caches (SHARD_DIR/cache.sqlite) are merged into the\n"
          "cache the command names (--cache, default OUTDIR/cache.sqlite), and the command runs\n"
          "on it without sending a request: every reply, failure, retry count and 'cached'\n"
          "flag is the shards'.  A shard that stopped early (its --max-cost, an error that\n"
          "cannot heal) or a pair no cache answers is an error naming the shard (exit 2).\n"
          "\n"
          "The folders may come in any order.  They must be shards of one evaluation: the\n"
          "same inputs (unchanged since: size and modification time), the same options and\n"
          "ragsweep version, the same N, and every index 0..N-1 exactly once; otherwise an\n"
          "error names the folders and the missing, repeated or differing part (exit 2).\n"
          "\n"
          "options:\n"
          "  -o, --out DIR   output folder (created if missing)\n"
          "      --quiet     no progress on stderr\n"
          "  -h, --help      this help\n"
          "\n"
          "exit status: as the shards' command (0 ok, 3 a gate failed); 1 usage; 2 shards\n"
          "that do not belong together, or unreadable inputs.\n");
}

int rs_cli_merge(int argc, char **argv)
{
  static const struct option longs[] = {
      {"out", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *out = NULL;
  int quiet = 0, c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case 'q': quiet = 1; break;
    case 'h': help(stdout); return RS_EXIT_OK;
    default:
      fprintf(stderr, "ragsweep merge: unknown option '%s' (see 'ragsweep merge --help')\n", argv[optind - 1]);
      return RS_EXIT_USAGE;
    }
  }
  if (optind >= argc || !out) {
    fprintf(stderr, "ragsweep merge: expected SHARD_DIR [SHARD_DIR ...] -o OUTDIR (see 'ragsweep merge --help')\n");
    return RS_EXIT_USAGE;
  }
  /* The merge runs in the shards' working folder (their relative input
   * paths are relative to it).  Merged where the shards ran (a Slurm job's
   * submission folder), -o stays as written, so that files naming the
   * output folder (report.html) read as one process's; elsewhere it is made
   * absolute first. */
  char cwd[PATH_MAX], out_abs[PATH_MAX + 4096];
  if (!getcwd(cwd, sizeof cwd)) {
    fprintf(stderr, "ragsweep merge: cannot read the working folder: %s\n", strerror(errno));
    return RS_EXIT_INPUT;
  }
  if (out[0] == '/') snprintf(out_abs, sizeof out_abs, "%s", out);
  else snprintf(out_abs, sizeof out_abs, "%s/%s", cwd, out);
  shard_set s;
  rs_error err = {0};
  if (shard_set_open(argv + optind, (size_t)(argc - optind), &s, &err)) {
    fprintf(stderr, "ragsweep merge: %s\n", err.msg);
    return RS_EXIT_INPUT;
  }
  int status;
  const int same_cwd = strcmp(s.cwd, cwd) == 0;
  if (!same_cwd && chdir(s.cwd) != 0) {
    fprintf(stderr, "ragsweep merge: the shards ran in %s, which cannot be entered (%s): their relative input "
                    "paths are relative to it; merge where those inputs are\n", s.cwd, strerror(errno));
    status = RS_EXIT_INPUT;
  } else if (strcmp(s.cmd, "eval") == 0) status = eval_merge(&s, same_cwd ? out : out_abs, quiet);
  else if (strcmp(s.cmd, "compare") == 0) status = compare_merge(&s, same_cwd ? out : out_abs);
  else if (strcmp(s.cmd, "judge") == 0) status = judge_merge(&s, same_cwd ? out : out_abs, quiet);
  else if (strcmp(s.cmd, "rag") == 0) status = rag_merge(&s, same_cwd ? out : out_abs, quiet);
  else {
    fprintf(stderr, "ragsweep merge: %s: shards of '%s', expected eval, compare, judge or rag\n", s.dir[0], s.cmd);
    status = RS_EXIT_INPUT;
  }
  if (!same_cwd && chdir(cwd) != 0) { /* nothing left to do here; the status stands */
  }
  shard_set_close(&s);
  return status;
}
