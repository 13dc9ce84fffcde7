/* cli.h: the subcommands of the ragsweep program.  Only the CLI prints to
 * stderr and chooses exit codes. */
#ifndef RAGSWEEP_CLI_H
#define RAGSWEEP_CLI_H

/* Exit codes shared by all subcommands (trec_eval's where they overlap). */
enum {
  RS_EXIT_OK = 0,
  RS_EXIT_USAGE = 1,   /* bad option, unknown measure */
  RS_EXIT_INPUT = 2,   /* unreadable or malformed input */
  RS_EXIT_GATE = 3,    /* eval/compare/rag: a quality gate or tier (--gate, --fail-if-worse-than) failed;
                          history: an --alert fired */
  RS_EXIT_TOPIC = 4    /* duplicate docs, or a judged topic missing from the run */
};

/* 0 (after a message naming prog) when OMP_NUM_THREADS is set but not
 * 1..4096 for each entry of its list. */
int rs_cli_omp_env_ok(const char *prog);

int rs_cli_trec_eval(int argc, char **argv, const char *prog);
int rs_cli_eval(int argc, char **argv);
int rs_cli_compare(int argc, char **argv);
int rs_cli_check(int argc, char **argv);
int rs_cli_merge(int argc, char **argv);
int rs_cli_import(int argc, char **argv);
int rs_cli_export(int argc, char **argv);
int rs_cli_table(int argc, char **argv);
int rs_cli_judge(int argc, char **argv);
int rs_cli_rag(int argc, char **argv);
int rs_cli_cache(int argc, char **argv);
int rs_cli_synth(int argc, char **argv);
int rs_cli_history(int argc, char **argv);
int rs_cli_report(int argc, char **argv);

#endif
