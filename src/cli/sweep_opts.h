/* sweep_opts.h: the options that the sweep commands (`eval`, `compare`)
 * share, parsed in one place: -o/--out, -m/--measure, --queries, --ties,
 * --threads, --timing, --gate, --worst, --qrels and --split.
 *
 * A command puts SWEEP_OPTS_LONG at the head of its struct option array and
 * SWEEP_OPTS_SHORT in its short-option string, and in its getopt loop hands
 * every option to sweep_opts_parse before its own switch. */
#ifndef RAGSWEEP_CLI_SWEEP_OPTS_H
#define RAGSWEEP_CLI_SWEEP_OPTS_H

#include <getopt.h>
#include <stddef.h>

#include "gate.h"

/* getopt codes of the shared long options; above any command's own (which
 * start at 256). */
enum {
  SWEEP_OPT_QUERIES = 0x1000,
  SWEEP_OPT_TIES,
  SWEEP_OPT_THREADS,
  SWEEP_OPT_TIMING,
  SWEEP_OPT_GATE,
  SWEEP_OPT_WORST,
  SWEEP_OPT_QRELS,
  SWEEP_OPT_SPLIT,
  SWEEP_OPT_DEPTHS
};

/* The shared entries of a struct option array (no terminator).  --depths
 * is eval's and compare's (a command without it rejects it). */
#define SWEEP_OPTS_LONG                                                                              \
  {"out", required_argument, 0, 'o'}, {"measure", required_argument, 0, 'm'},                        \
      {"queries", required_argument, 0, SWEEP_OPT_QUERIES}, {"ties", required_argument, 0, SWEEP_OPT_TIES}, \
      {"threads", required_argument, 0, SWEEP_OPT_THREADS}, {"timing", no_argument, 0, SWEEP_OPT_TIMING},   \
      {"gate", required_argument, 0, SWEEP_OPT_GATE}, {"worst", required_argument, 0, SWEEP_OPT_WORST},     \
      {"qrels", required_argument, 0, SWEEP_OPT_QRELS}, {"split", required_argument, 0, SWEEP_OPT_SPLIT}, \
      {"depths", required_argument, 0, SWEEP_OPT_DEPTHS}
/* The shared short options. */
#define SWEEP_OPTS_SHORT "o:m:"

/* Most threads --threads accepts (as trec_eval mode's --threads). */
#define SWEEP_MAX_THREADS 4096

typedef struct sweep_opts {
  const char *out_dir;     /* -o, or NULL */
  const char **measures;   /* -m in order (views into argv); room for the defaults too */
  size_t n_measures;
  const char **gate_text;  /* --gate texts in order (views into argv) */
  size_t n_gates;
  const char *qrels_path;  /* --qrels FILE, or NULL (sweep_input_open_args) */
  const char *split;       /* --split NAME: a BEIR folder's qrels/NAME.tsv, or NULL (test) */
  long threads;            /* --threads, 1 .. SWEEP_MAX_THREADS; 0: not given (OMP_NUM_THREADS or all cores) */
  long n_worst;            /* --worst N (>= 1); 0: not given */
  int timing;              /* --timing */
  int all_queries;         /* --queries=all (1) or judged (0); the command's default until given */
  int ties_stored;         /* --ties=stored (1) or trec (0, the default) */
  size_t *depths;          /* --depths K1,K2,...: each run also cut at each K (sweep_input_add_depths) */
  size_t n_depths;
} sweep_opts;

/* Most depths one --depths takes, and the deepest. */
#define SWEEP_MAX_DEPTHS 64
#define SWEEP_MAX_DEPTH 100000000

/* Empty options for a command line of argc words, with room for
 * n_default_measures defaults (sweep_opts_default_measures) and the
 * command's default for --queries.  0 on success, -1 when out of memory. */
int sweep_opts_init(sweep_opts *o, int argc, size_t n_default_measures, int all_queries);
/* Frees the arrays of *o (not the strings, which are argv's); accepts a
 * zeroed *o. */
void sweep_opts_free(sweep_opts *o);

typedef enum {
  SWEEP_OPT_HANDLED,  /* c was a shared option, now stored */
  SWEEP_OPT_NOT_MINE, /* c is not a shared option: the command's own switch takes it */
  SWEEP_OPT_BAD       /* a shared option with a bad value: already reported on stderr */
} sweep_opt_result;

/* Takes getopt's code c and its optarg.  A bad value is reported on stderr
 * as "ragsweep CMD: --threads: expected ..., found '0' (see 'ragsweep CMD
 * --help')"; the command then exits with RS_EXIT_USAGE. */
sweep_opt_result sweep_opts_parse(sweep_opts *o, int c, const char *arg, const char *cmd);

/* The defaults in place of -m, when no -m was given (the room was kept by
 * sweep_opts_init). */
void sweep_opts_default_measures(sweep_opts *o, const char *const *defaults, size_t n);

/* Parses the --gate texts into *out ([n_gates + 1], each to gate_free, then
 * free), or fails with gate_parse's code and message (nothing to free).
 * plain_names: measures kept as written (gate_parse_plain), for rag's
 * metrics. */
rs_code sweep_opts_gates(const sweep_opts *o, int plain_names, gate **out, rs_error *err);

#endif
