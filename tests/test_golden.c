/* test_golden.c: every command of ../shared/conformance/<dataset>/expected/
 * COMMANDS.tsv, run through `ragsweep trec_eval` in that folder: stdout must
 * equal trec_eval 10.0's byte for byte, and the exit code must match.  The
 * serial build must print the same bytes, and so must the trec_eval program
 * (linked apart, see src/cli/trec_eval_main.c).  Without ../shared the tests
 * report themselves skipped, with the reason. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

struct golden_case {
  char dataset[256];
  char output[256];
  char args[1200];
  int exit_code;
};

/* Expected number of COMMANDS.tsv lines over the five datasets; a change in
 * the conformance data should be noticed, not silently shrink the test. */
#define GOLDEN_EXPECTED 50

static size_t load_cases(struct golden_case *cases, size_t max)
{
  const char *dir = th_conformance_dir();
  if (!dir) return 0;
  size_t n = 0;
  DIR *d = opendir(dir);
  struct dirent *de;
  char names[16][256];
  size_t nn = 0;
  while (d && (de = readdir(d)) && nn < 16)
    if (de->d_name[0] != '.') snprintf(names[nn++], sizeof names[0], "%s", de->d_name);
  if (d) closedir(d);
  for (size_t k = 0; k < nn; k++) {
    char path[4352];
    snprintf(path, sizeof path, "%s/%s/expected/COMMANDS.tsv", dir, names[k]);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[1024];
    while (fgets(line, sizeof line, f) && n < max) {
      line[strcspn(line, "\n")] = '\0';
      char *out = strtok(line, "\t"), *code = strtok(NULL, "\t"), *cmd = strtok(NULL, "\t");
      if (!out || !code || !cmd || strcmp(out, "output") == 0) continue;
      if (strncmp(cmd, "trec_eval ", 10) != 0) continue;
      struct golden_case *c = &cases[n++];
      snprintf(c->dataset, sizeof c->dataset, "%s", names[k]);
      snprintf(c->output, sizeof c->output, "%s", out);
      snprintf(c->args, sizeof c->args, "%s", cmd + 10);
      c->exit_code = atoi(code);
    }
    fclose(f);
  }
  return n;
}

ParameterizedTestParameters(golden, trec_eval_10)
{
  static struct golden_case none[1];
  struct golden_case *cases = cr_malloc(sizeof *cases * 128);
  size_t n = cases ? load_cases(cases, 128) : 0;
  if (n == 0) {
    /* One placeholder case, which reports the skip and its reason. */
    return cr_make_param_array(struct golden_case, none, 1);
  }
  return cr_make_param_array(struct golden_case, cases, n);
}

static void check_case(const struct golden_case *c, const char *bin, const char *sub)
{
  char dir[4352], exp_path[4608], args[1200];
  snprintf(dir, sizeof dir, "%s/%s", th_conformance_dir(), c->dataset);
  snprintf(exp_path, sizeof exp_path, "%s/expected/%s", dir, c->output);
  snprintf(args, sizeof args, "%s", c->args);
  char *argv[64];
  th_split(args, bin, sub, argv, 64);
  size_t exp_len = 0;
  char *expected = th_slurp(exp_path, &exp_len);
  cr_assert_not_null(expected, "cannot read %s", exp_path);
  th_result r = th_run(dir, argv, NULL, NULL);
  cr_expect_eq(r.status, c->exit_code, "%s/%s: exit %d, trec_eval exits %d (stderr: %s)", c->dataset, c->output,
               r.status, c->exit_code, r.err ? r.err : "");
  cr_assert_not_null(r.out);
  size_t first = 0;
  while (first < r.out_len && first < exp_len && r.out[first] == expected[first]) first++;
  cr_expect(r.out_len == exp_len && first == exp_len,
            "%s/%s (%s): stdout differs from trec_eval at byte %zu (got %zu bytes, want %zu)\n got: %.60s\nwant: %.60s",
            c->dataset, c->output, bin, first, r.out_len, exp_len, r.out + first, expected + first);
  th_free(&r);
  free(expected);
}

ParameterizedTest(struct golden_case *c, golden, trec_eval_10, .timeout = 120)
{
  if (!c->dataset[0])
    cr_skip_test("conformance data not found at ../shared/conformance (or $RAGSWEEP_CONFORMANCE): "
                 "the golden tests need it; CI always has it");
  check_case(c, th_bin(), "trec_eval");
  const char *serial = th_serial_bin();
  if (serial) check_case(c, serial, "trec_eval");
  check_case(c, th_trec_eval_bin(), NULL);
}

/* The parameter table above must really cover every COMMANDS.tsv line. */
Test(golden, covers_every_command)
{
  if (!th_conformance_dir()) cr_skip_test("conformance data not found at ../shared/conformance");
  static struct golden_case cases[128];
  size_t n = load_cases(cases, 128);
  cr_assert_eq(n, GOLDEN_EXPECTED, "found %zu COMMANDS.tsv lines under expected/, expected %d", n, GOLDEN_EXPECTED);
  int datasets = 0;
  for (size_t i = 0; i < n; i++) datasets += i == 0 || strcmp(cases[i].dataset, cases[i - 1].dataset) != 0;
  cr_assert_eq(datasets, 5, "expected the five conformance datasets, found %d", datasets);
}
