/* test_sweep_opts.c: the options eval and compare share (src/cli/
 * sweep_opts.c), through the binary: each bad value is refused with exit 1
 * and a message that names the option, before any input is read; good
 * values get past option parsing (to the missing corpus: exit 2). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

struct opt_case {
  char args[96];
  int status;
  char want[160]; /* a part of stderr */
};

ParameterizedTestParameters(sweep_opts, values)
{
  static struct opt_case cases[] = {
      {"eval no.h5 -o OUT --threads 0", 1,
       "ragsweep eval: --threads: expected an integer from 1 to 4096, found '0' (see 'ragsweep eval --help')"},
      {"eval no.h5 -o OUT --threads=4097", 1, "--threads: expected an integer from 1 to 4096, found '4097'"},
      {"compare no.h5 -o OUT --threads two", 1,
       "ragsweep compare: --threads: expected an integer from 1 to 4096, found 'two'"},
      {"eval no.h5 -o OUT --queries=some", 1, "ragsweep eval: --queries: expected judged or all, found 'some'"},
      {"compare no.h5 -o OUT --ties rank", 1, "ragsweep compare: --ties: expected trec or stored, found 'rank'"},
      {"eval no.h5 -o OUT --worst 0", 1, "ragsweep eval: --worst: expected an integer of at least 1, found '0'"},
      {"compare no.h5 -o OUT --worst=-3", 1, "--worst: expected an integer of at least 1, found '-3'"},
      {"eval no.h5 -o OUT --top x", 1, "ragsweep eval: invalid value 'x' for --top"},
      {"compare no.h5 -o OUT --seed -1", 1, "ragsweep compare: invalid value '-1' for --seed"},
      {"eval no.h5 -o OUT --gate nDCG@10", 1, "ragsweep eval: gate 'nDCG@10': expected MEASURE>=VALUE"},
      {"compare no.h5 -o OUT --gate nDCG@10", 1, "ragsweep compare: gate 'nDCG@10': expected MEASURE>=VALUE"},
      {"eval no.h5 --threads 2", 1, "ragsweep eval: expected CORPUS.h5 [RUNS.h5 ...] -o OUTDIR"},
      /* accepted: the command goes on to the corpus, which is not there */
      {"eval no.h5 -o OUT --threads 4096 --queries=all --ties=stored --timing --worst 3 --qrels q.txt", 2, "no.h5"},
      {"compare no.h5 -o OUT --threads=1 --queries judged --ties trec --gate nDCG@10>=0.5 --qrels=q.txt", 2,
       "no.h5"},
  };
  return cr_make_param_array(struct opt_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct opt_case *tc, sweep_opts, values)
{
  char args[96], out[512], *argv[32];
  const char *dir = th_write_temp(0, "placeholder", "");
  snprintf(out, sizeof out, "%.*s", (int)(strrchr(dir, '/') - dir), dir);
  memcpy(args, tc->args, sizeof args);
  int n = th_split(args, th_bin(), NULL, argv, 31);
  for (int i = 0; i < n; i++)
    if (strcmp(argv[i], "OUT") == 0) argv[i] = out;
  argv[n] = NULL;
  th_result r = th_run(out, argv, NULL, NULL);
  cr_assert_eq(r.status, tc->status, "%s: exit %d, stderr: %s", tc->args, r.status, r.err);
  cr_assert(strstr(r.err, tc->want), "%s: stderr: %s", tc->args, r.err);
  th_free(&r);
}

Test(sweep_opts, help_documents_qrels)
{
  const char *cmds[] = {"eval", "compare"};
  for (int i = 0; i < 2; i++) {
    char *argv[] = {(char *)th_bin(), (char *)cmds[i], "--help", NULL};
    th_result r = th_run(NULL, argv, NULL, NULL);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "--qrels FILE") &&
                  strstr(r.out, "TREC qrels to score with, in place of the corpus's /qrels") &&
                  strstr(r.out, "(ids matched to the corpus)"),
              "%s --help: %s", cmds[i], r.out);
    cr_assert(strstr(r.out, "threads, 1 to 4096"), "%s", r.out);
    th_free(&r);
  }
}
