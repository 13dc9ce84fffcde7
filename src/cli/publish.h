/* publish.h: what eval, compare and rag do with their outputs once they are
 * written: the HTML report (--report), the Prometheus text file
 * (--metrics-out), a Pushgateway push (--pushgateway), an OTLP/HTTP push
 * (--otlp) and a row set in the history database (--history, --label).
 * Parsed in one place, done by the library from the output folder (so a
 * later `ragsweep report DIR` sees exactly what these saw).
 *
 * A command puts PUBLISH_OPTS_LONG in its struct option array, hands every
 * getopt code to publish_opts_parse before its own switch, and calls
 * publish_outputs after its files are in place. */
#ifndef RAGSWEEP_CLI_PUBLISH_H
#define RAGSWEEP_CLI_PUBLISH_H

#include <getopt.h>
#include <stdio.h>

/* getopt codes, above sweep_opts' (0x1000..), llm_opts' (0x2000..) and any
 * command's own (256..): rag takes both llm_opts and these. */
enum {
  PUBLISH_OPT_REPORT = 0x3000,
  PUBLISH_OPT_METRICS_OUT,
  PUBLISH_OPT_PUSHGATEWAY,
  PUBLISH_OPT_PUSH_JOB,
  PUBLISH_OPT_OTLP,
  PUBLISH_OPT_HISTORY,
  PUBLISH_OPT_LABEL,
  PUBLISH_OPT_PUSH_LABEL,
  PUBLISH_OPT_JSON
};

#define PUBLISH_OPTS_LONG                                                                                    \
  {"report", no_argument, 0, PUBLISH_OPT_REPORT}, {"metrics-out", required_argument, 0, PUBLISH_OPT_METRICS_OUT}, \
      {"pushgateway", required_argument, 0, PUBLISH_OPT_PUSHGATEWAY},                                          \
      {"push-job", required_argument, 0, PUBLISH_OPT_PUSH_JOB}, {"otlp", required_argument, 0, PUBLISH_OPT_OTLP}, \
      {"push-label", required_argument, 0, PUBLISH_OPT_PUSH_LABEL},                                          \
      {"history", required_argument, 0, PUBLISH_OPT_HISTORY}, {"label", required_argument, 0, PUBLISH_OPT_LABEL}, \
      {"json", required_argument, 0, PUBLISH_OPT_JSON}

/* The options' help lines, for a command's --help. */
#define PUBLISH_OPTS_HELP                                                                           \
  "      --report           also write OUTDIR/report.html (see 'ragsweep report --help')\n"        \
  "      --metrics-out FILE Prometheus text exposition of the results (ragsweep_measure,\n"        \
  "                         ragsweep_latency_seconds), written atomically (node_exporter's\n"     \
  "                         textfile collector)\n"                                                  \
  "      --pushgateway URL  push the same metrics to a Prometheus Pushgateway (PUT: replaces\n"   \
  "                         the group job=NAME,command=eval|compare|rag[,KEY=VALUE...])\n"        \
  "      --push-job NAME    the Pushgateway job (default ragsweep)\n"                                \
  "      --push-label K=V   one more grouping label of the push (repeatable), e.g. instance=ci-3\n"  \
  "      --otlp URL         push OTLP/HTTP JSON metrics (e.g. http://127.0.0.1:4318/v1/metrics)\n"  \
  "      --history FILE     append the aggregates to a SQLite history (see 'ragsweep history')\n"  \
  "      --label TEXT       the history's label of this evaluation (a commit, a model version)\n"  \
  "      --json FILE        one JSON document for CI: time, inputs, every configuration's\n"      \
  "                         aggregates, the gates with pass/fail, the overall status\n"

#define PUBLISH_MAX_PUSH_LABELS 16

typedef struct publish_opts {
  int report;              /* --report (eval, compare) */
  const char *metrics_out; /* --metrics-out FILE, or NULL */
  const char *pushgateway; /* --pushgateway URL, or NULL */
  const char *push_job;    /* --push-job NAME, or NULL (ragsweep) */
  const char *push_label[PUBLISH_MAX_PUSH_LABELS]; /* --push-label KEY=VALUE, in order */
  size_t n_push_label;
  const char *otlp;        /* --otlp URL, or NULL */
  const char *history;     /* --history FILE, or NULL */
  const char *label;       /* --label TEXT, or NULL */
  const char *json;        /* --json FILE, or NULL */
} publish_opts;

/* The evaluation whose outputs are published. */
typedef struct publish_run {
  const char *cmd;            /* eval, compare, rag */
  const char *out_dir;
  int argc;                   /* the command's own argv (argv[0] is the command name) */
  char **argv;
  char **inputs;              /* the input files named on the command line */
  size_t n_inputs;
  const char *extra_input;    /* one more (--qrels FILE, --per-query FILE), or NULL */
  int exit_status;            /* RS_EXIT_OK, or RS_EXIT_GATE when a check failed */
} publish_run;

typedef enum { PUBLISH_HANDLED, PUBLISH_NOT_MINE, PUBLISH_BAD } publish_result;

/* Takes getopt's code c and its optarg; a bad value is reported on stderr
 * ("ragsweep CMD: --label: ...") and the command exits with RS_EXIT_USAGE. */
publish_result publish_opts_parse(publish_opts *o, int c, const char *arg, const char *cmd);
/* Checks the combination once parsing is done (--label without --history,
 * --report where the command has none); 0, or -1 after a message. */
int publish_opts_check(const publish_opts *o, const char *cmd, int report_allowed);
/* 1 when any output is asked for. */
int publish_any(const publish_opts *o);

/* Does what *o asks with the outputs of run->cmd in run->out_dir, printing
 * a "wrote ..." or "pushed ..." line for each on `out`.  Every output is
 * attempted even when one fails (a refused push does not cost the history
 * entry or the report).  Returns the command's exit status: run->exit_status,
 * or RS_EXIT_INPUT when an output failed, after a message on stderr per
 * failure (the command's own files stay written). */
int publish_outputs(const publish_opts *o, const publish_run *run, FILE *out);

#endif
