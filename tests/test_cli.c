/* test_cli.c: `ragsweep trec_eval` end to end: inputs that must be rejected
 * (exit code and message), input variants that must give the same bytes
 * (gzip, stdin, interleaved topics, tiny read blocks, the trec_eval name),
 * and bit-identical output at 1, 2, 3 and 8 threads and in the serial build. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"

/* ---- must-reject inputs ------------------------------------------------ */

struct reject_case {
  char name[48];
  char qrels[256];
  char run[256];
  char args[128];
  int exit_code;
  char message[160]; /* must appear in stderr */
};

#define OKQ "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
#define OKR "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 5.0 t\n"

ParameterizedTestParameters(reject, inputs)
{
  static struct reject_case cases[] = {
      {"qrels with 3 fields", "q1 0 d1 1\nq1 0 d2\n", OKR, "", 2, "qrels.txt:2: malformed qrels line: expected 4 fields"},
      {"qrels with 5 fields", "q1 0 d1 1 x\n", OKR, "", 2, "qrels.txt:1: malformed qrels line"},
      {"qrels blank line", "q1 0 d1 1\n\nq2 0 d3 2\n", OKR, "", 2, "qrels.txt:2: malformed qrels line"},
      {"qrels trailing comment", OKQ "# the end\n", OKR, "", 2, "qrels.txt:4: a comment is the last line"},
      {"qrels two comments", "# a\n# b\n" OKQ, OKR, "", 2, "qrels.txt:2: two consecutive comment lines"},
      {"qrels empty", "", OKR, "", 2, "qrels.txt: the qrels file is empty"},
      {"run with 5 fields", OKQ, "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 5.0\n", "", 2,
       "run.txt:3: malformed run line: expected at least 6 fields"},
      {"run empty", OKQ, "", "", 2, "run.txt: the run file is empty"},
      {"duplicate docs", OKQ, "q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 5.0 t\n", "", 4,
       "topic 'q1': duplicate docs d1"},
      /* docnos of 8 to 16 bytes and of more (two ways of hashing them in
       * the set of a topic's ranked docs): the smallest one twice is told */
      {"duplicate 8-16 byte docs", "q1 0 doc-0000002 1\n",
       "q1 Q0 doc-0000009 1 4.0 t\nq1 Q0 doc-0000002 2 3.0 t\nq1 Q0 doc-0000009 3 2.0 t\n"
       "q1 Q0 doc-00000010 4 1.5 t\nq1 Q0 doc-0000002 5 1.0 t\n",
       "", 4, "topic 'q1': duplicate docs doc-0000002"},
      {"duplicate long docs", "q1 0 msmarco_passage_01_002 1\n",
       "q1 Q0 msmarco_passage_01_009 1 4.0 t\nq1 Q0 msmarco_passage_01_002 2 3.0 t\n"
       "q1 Q0 msmarco_passage_01_009 3 2.0 t\n",
       "", 4, "topic 'q1': duplicate docs msmarco_passage_01_009"},
      {"missing topic", OKQ, "q1 Q0 d1 1 2.0 t\n", "", 4, "topic 'q2' is judged in the qrels but has no ranking"},
      {"unknown measure", OKQ, OKR, "-m foo", 1, "unknown measure 'foo'"},
      {"zero cutoff", OKQ, OKR, "-m P.0", 1, "measure P: cutoff '0' is not a positive integer"},
      {"duplicate cutoff", OKQ, OKR, "-m P.5,5", 1, "measure P: cutoff 5 is given twice"},
      {"bad -M", OKQ, OKR, "-M many", 1, "-M expects a number"},
      {"unsupported -Z", OKQ, OKR, "-Z z.txt", 1, "-Z (z-scores) is not supported"},
      {"params on map", OKQ, OKR, "-m map.5", 1, "measure map takes no parameters"},
  };
  return cr_make_param_array(struct reject_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct reject_case *c, reject, inputs)
{
  const char *q = th_write_temp(0, "qrels.txt", c->qrels);
  const char *r = th_write_temp(1, "run.txt", c->run);
  char args[128];
  snprintf(args, sizeof args, "%s", c->args);
  char *argv[32];
  int n = th_split(args, th_bin(), "trec_eval", argv, 30);
  argv[n++] = (char *)q;
  argv[n++] = (char *)r;
  argv[n] = NULL;
  th_result res = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(res.status, c->exit_code, "%s: exit %d, want %d (stderr: %s)", c->name, res.status, c->exit_code,
               res.err);
  cr_expect(res.err && strstr(res.err, c->message), "%s: stderr lacks \"%s\"; it says: %s", c->name, c->message,
            res.err);
  if (c->exit_code == 2 || c->exit_code == 1)
    cr_expect_eq(res.out_len, 0, "%s: input errors print nothing on stdout, got: %s", c->name, res.out);
  th_free(&res);
}

Test(reject, nonexistent_file)
{
  const char *q = th_write_temp(0, "qrels.txt", OKQ);
  char *argv[] = {(char *)th_bin(), "trec_eval", (char *)q, "/nonexistent/run.txt", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "/nonexistent/run.txt: cannot open"), "stderr: %s", r.err);
  th_free(&r);
}

Test(reject, wrong_file_count)
{
  char *argv[] = {(char *)th_bin(), "trec_eval", "-q", "only-one-file", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "expected 2 files"), "stderr: %s", r.err);
  th_free(&r);
}

Test(reject, corrupt_gzip)
{
  const char *q = th_write_temp(0, "qrels.txt", OKQ);
  const char *r = th_write_temp(1, "run.gz", "\x1f\x8b\x08\x00garbage that is not deflate");
  char *argv[] = {(char *)th_bin(), "trec_eval", (char *)q, (char *)r, NULL};
  th_result res = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(res.status, 2, "stderr: %s", res.err);
  cr_expect(strstr(res.err, "run.gz: corrupt gzip stream") || strstr(res.err, "run.gz: gzip stream is truncated"),
            "stderr: %s", res.err);
  th_free(&res);
}

/* A malformed line deep in a file read in small blocks is reported with its
 * true line number. */
Test(reject, line_number_across_blocks)
{
  size_t cap = 1 << 20, len = 0;
  char *run = malloc(cap);
  for (int i = 1; i <= 5000; i++) len += (size_t)snprintf(run + len, cap - len, "q1 Q0 d%d %d %d.5 t\n", i, i, 9000 - i);
  len += (size_t)snprintf(run + len, cap - len, "q1 Q0 broken line\n");
  const char *q = th_write_temp(0, "qrels.txt", "q1 0 d7 1\n");
  const char *r = th_write_temp(1, "run.txt", run);
  char *argv[] = {(char *)th_bin(), "trec_eval", (char *)q, (char *)r, NULL};
  for (int copied = 0; copied < 2; copied++) { /* mapped, then read(2) */
    char *env[] = {"RAGSWEEP_BLOCK_BYTES=4096", copied ? NULL : "RAGSWEEP_MAP_RUN=1", NULL};
    th_result res = th_run(NULL, argv, env, NULL);
    cr_expect_eq(res.status, 2);
    cr_expect(strstr(res.err, "run.txt:5001: malformed run line"), "%s stderr: %s", copied ? "read" : "mapped",
              res.err);
    th_free(&res);
  }
  free(run);
}

/* -c scores a judged topic that has no ranking as 0 (num_rel keeps R). */
Test(cli, complete_scores_missing_topic_zero)
{
  const char *q = th_write_temp(0, "qrels.txt", OKQ);
  const char *r = th_write_temp(1, "run.txt", "q1 Q0 d1 1 2.0 t\n");
  char *argv[] = {(char *)th_bin(), "trec_eval", "-c", "-q", "-m", "P.1", "-m", "num_rel", (char *)q, (char *)r, NULL};
  th_result res = th_run(NULL, argv, NULL, NULL);
  cr_assert_eq(res.status, 0, "stderr: %s", res.err);
  /* q1: d1 relevant at rank 1 -> P_1 = 1; q2 missing -> 0; mean 0.5. */
  cr_expect_str_eq(res.out,
                   "num_rel               \tq1\t1\n"
                   "P_1                   \tq1\t1.0000\n"
                   "num_rel               \tq2\t1\n"
                   "P_1                   \tq2\t0.0000\n"
                   "num_rel               \tall\t2\n"
                   "P_1                   \tall\t0.5000\n");
  th_free(&res);
}

/* ---- same bytes from equivalent inputs ---------------------------------- */

static char *run_capture(char *const argv[], char *const env[], const char *stdin_path, int *status)
{
  th_result r = th_run(NULL, argv, env, stdin_path);
  *status = r.status;
  free(r.err);
  return r.out;
}

static const char *trec_test(const char *file)
{
  static char path[8][4096];
  static int k;
  const char *dir = th_conformance_dir();
  if (!dir) return NULL;
  k = (k + 1) % 8;
  snprintf(path[k], sizeof path[k], "%s/trec_eval-test/%s", dir, file);
  return path[k];
}

/* `ragsweep trec_eval -q -m all_trec` on qrels and run, with env: the
 * reference the other ways of running trec_eval must print byte for byte. */
static char *all_trec(const char *qrels, const char *run, char *const env[], int *status)
{
  char *argv[] = {(char *)th_bin(), "trec_eval", "-q", "-m", "all_trec", (char *)qrels, (char *)run, NULL};
  return run_capture(argv, env, NULL, status);
}

/* A run whose last line has no newline and ends on a page boundary, the
 * mapping's last byte: the line scanner's window reads the zero pad after
 * it.  The output equals that of the same run with the newline, read with
 * read(2), and counts every line. */
Test(cli, mapped_run_ending_on_a_page_boundary)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *run = malloc(page + 2);
  cr_assert(run);
  size_t len = 0;
  int i = 1;
  for (; len + 48 < page; i++) len += (size_t)sprintf(run + len, "q1 Q0 d%d %d %d.25 tag\n", i, i, 5000 - i);
  len += (size_t)sprintf(run + len, "q1 Q0 d%d %d %d.25 ", i, i, 5000 - i);
  while (len < page) run[len++] = 't'; /* the last line's tag fills the page */
  run[len] = '\0';
  const char *q = th_write_temp(0, "qrels.txt", "q1 0 d3 1\nq1 0 d7 2\nq1 0 d9 0\n");
  const char *r = th_write_temp(1, "run.txt", run);
  run[len] = '\n';
  run[len + 1] = '\0';
  const char *r_nl = th_write_temp(2, "run_nl.txt", run);
  char *argv[] = {(char *)th_bin(), "trec_eval", (char *)q, (char *)r, NULL};
  char *argv_nl[] = {(char *)th_bin(), "trec_eval", (char *)q, (char *)r_nl, NULL};
  char *map_env[] = {"RAGSWEEP_MAP_RUN=1", NULL};
  int st = 0, st_nl = 0;
  char *out = run_capture(argv, map_env, NULL, &st), *out_nl = run_capture(argv_nl, NULL, NULL, &st_nl);
  cr_expect_eq(st, 0);
  cr_expect_eq(st_nl, 0);
  char want[64];
  snprintf(want, sizeof want, "num_ret               \tall\t%d\n", i);
  cr_expect(strstr(out, want), "expected '%s' in:\n%s", want, out);
  cr_expect_str_eq(out, out_nl);
  free(out);
  free(out_nl);
  free(run);
}

Test(variants, gzip_stdin_interleaved_and_small_blocks_agree)
{
  if (!th_conformance_dir()) cr_skip_test("conformance data not found at ../shared/conformance");
  const char *qrels = trec_test("qrels.test"), *run = trec_test("results.test");
  int st = 0;
  char *ref = all_trec(qrels, run, NULL, &st);
  cr_assert_eq(st, 0);
  cr_assert(strstr(ref, "map                   \tall\t0.1785\n"), "reference output lacks trec_eval's map");

  /* gzip of the run */
  size_t len = 0;
  char *text = th_slurp(run, &len);
  const char *gz_path = th_write_temp(2, "run.gz", "");
  gzFile gz = gzopen(gz_path, "wb");
  gzwrite(gz, text, (unsigned)len);
  gzclose(gz);
  char *gz_argv[] = {(char *)th_bin(), "trec_eval", "-q", "-m", "all_trec", (char *)qrels, (char *)gz_path, NULL};
  char *got = run_capture(gz_argv, NULL, NULL, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "gzip input differs");
  free(got);

  /* stdin */
  char *in_argv[] = {(char *)th_bin(), "trec_eval", "-q", "-m", "all_trec", (char *)qrels, "-", NULL};
  got = run_capture(in_argv, NULL, gz_path, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "gzip on stdin differs");
  free(got);

  /* interleaved topics: lines dealt round-robin over the three topics */
  char *lines[2000];
  size_t n = 0;
  for (char *l = strtok(text, "\n"); l && n < 2000; l = strtok(NULL, "\n")) lines[n++] = l;
  char *mixed = malloc(len + n + 1);
  size_t w = 0;
  for (size_t i = 0; i < n / 3; i++)
    for (size_t part = 0; part < 3; part++) w += (size_t)sprintf(mixed + w, "%s\n", lines[part * (n / 3) + i]);
  for (size_t i = 3 * (n / 3); i < n; i++) w += (size_t)sprintf(mixed + w, "%s\n", lines[i]);
  const char *mixed_path = th_write_temp(3, "mixed.txt", mixed);
  char *mix_argv[] = {(char *)th_bin(), "trec_eval", "-q", "-m", "all_trec", (char *)qrels, (char *)mixed_path, NULL};
  got = run_capture(mix_argv, NULL, NULL, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "interleaved topics differ");
  free(got);

  /* tiny read blocks: every topic crosses block boundaries, in windows of
   * the mapped run and in blocks read with read(2) */
  char *env[] = {"RAGSWEEP_BLOCK_BYTES=1000", "RAGSWEEP_MAP_RUN=1", NULL};
  got = all_trec(qrels, run, env, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "1000-byte blocks differ");
  free(got);
  char *read_env[] = {"RAGSWEEP_BLOCK_BYTES=1000", NULL};
  got = all_trec(qrels, run, read_env, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "1000-byte blocks read with read(2) differ");
  free(got);

  /* the baseline (SSE2) line scan, which a CPU with AVX2 does not take
   * otherwise (tokens.h), in whole blocks and in small ones */
  char *base_env[] = {"RAGSWEEP_BASELINE_SIMD=1", NULL};
  got = all_trec(qrels, run, base_env, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "the baseline line scan differs");
  free(got);
  char *base_small_env[] = {"RAGSWEEP_BASELINE_SIMD=1", "RAGSWEEP_BLOCK_BYTES=1000", NULL};
  got = all_trec(qrels, run, base_small_env, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "the baseline line scan in 1000-byte blocks differs");
  free(got);

  /* options after the file names, as GNU getopt allows trec_eval */
  char *late_argv[] = {(char *)th_bin(), "trec_eval", (char *)qrels, (char *)run, "-q", "-m", "all_trec", NULL};
  got = run_capture(late_argv, NULL, NULL, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "options after the files differ");
  free(got);

  /* invoked under the name trec_eval (a symlink) */
  char link_path[512];
  snprintf(link_path, sizeof link_path, "%s", th_write_temp(4, "trec_eval", ""));
  unlink(link_path);
  cr_assert_eq(symlink(th_bin(), link_path), 0);
  char *te_argv[] = {link_path, "-q", "-m", "all_trec", (char *)qrels, (char *)run, NULL};
  got = run_capture(te_argv, NULL, NULL, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "the trec_eval symlink differs");
  free(got);

  free(mixed);
  free(text);
  free(ref);
}

/* The trec_eval program (src/cli/trec_eval_main.c): the subcommand's bytes
 * (the golden tests run every conformance command through it too), its
 * checks of the environment, and none of the libraries it is linked apart
 * to avoid. */
Test(variants, trec_eval_program)
{
  if (!th_conformance_dir()) cr_skip_test("conformance data not found at ../shared/conformance");
  const char *qrels = trec_test("qrels.test"), *run = trec_test("results.test");
  int st = 0;
  char *ref = all_trec(qrels, run, NULL, &st);
  cr_assert_eq(st, 0);
  char *te_argv[] = {(char *)th_trec_eval_bin(), "-q", "-m", "all_trec", (char *)qrels, (char *)run, NULL};
  char *got = run_capture(te_argv, NULL, NULL, &st);
  cr_expect_eq(st, 0);
  cr_expect_str_eq(got, ref, "the trec_eval program differs from 'ragsweep trec_eval'");
  free(got);
  free(ref);

  char *bad_omp[] = {"OMP_NUM_THREADS=0", NULL};
  th_result r = th_run(NULL, te_argv, bad_omp, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(r.err && strstr(r.err, "trec_eval: OMP_NUM_THREADS: expected an integer from 1 to 4096"), "stderr: %s",
            r.err ? r.err : "");
  th_free(&r);
  char *mpi[] = {"OMPI_COMM_WORLD_SIZE=2", NULL};
  r = th_run(NULL, te_argv, mpi, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(r.err && strstr(r.err, "trec_eval: does not split its work across MPI ranks"), "stderr: %s",
            r.err ? r.err : "");
  th_free(&r);

  /* what the dynamic loader would load (ldd's own mechanism) */
  char *trace[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
  r = th_run(NULL, te_argv, trace, NULL);
  cr_assert_not_null(r.out);
  cr_expect(strstr(r.out, "libgomp") || strstr(r.out, "libc."), "no loader trace: %s", r.out);
  cr_expect(!strstr(r.out, "libhdf5") && !strstr(r.out, "libcurl") && !strstr(r.out, "libsqlite"),
            "the trec_eval program loads:\n%s", r.out);
  th_free(&r);
}

/* What ragsweep loads at start: not libcurl and its TLS, Kerberos and LDAP
 * libraries (http.c loads libcurl with the first request; the program takes
 * HDF5 from its static archive, where Debian's libhdf5.so would bring
 * libcurl).  The LLM tests make requests through the same program. */
Test(cli, start_up_loads_no_http_stack)
{
  char *argv[] = {(char *)th_bin(), "--version", NULL};
  char *trace[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
  th_result r = th_run(NULL, argv, trace, NULL);
  cr_assert_not_null(r.out);
  cr_expect(strstr(r.out, "libgomp") && strstr(r.out, "libc."), "no loader trace: %s", r.out);
  static const char *const avoided[] = {"libcurl", "libssl", "libcrypto", "libgnutls", "libkrb5", "libldap"};
  for (size_t i = 0; i < sizeof avoided / sizeof avoided[0]; i++)
    cr_expect(!strstr(r.out, avoided[i]), "ragsweep loads %s at start:\n%s", avoided[i], r.out);
  th_free(&r);
}

/* ---- determinism --------------------------------------------------------- */

struct det_case {
  char dataset[48];
  char qrels[64];
  char run[64];
  char args[64];
};

ParameterizedTestParameters(determinism, threads_and_serial)
{
  static struct det_case cases[] = {
      {"webtrack-2011-2014", "qrels.wt09-14.txt", "run.ql.wt11-14.txt", "-q -c -m all_trec"},
      {"rag24-test", "qrels.rag24.test.txt", "run.rag24.txt", "-q -J -m all_trec"},
      {"trec-covid-round5", "qrels.covid-round5.txt", "run.bm25.covid-r5.txt", "-q -l 2 -m all_trec"},
      {"dl-hard-passage", "qrels.dl-hard-passage.txt", "run.bm25+t5-zs.txt", "-q -M 100 -m all_trec"},
  };
  return cr_make_param_array(struct det_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct det_case *c, determinism, threads_and_serial, .timeout = 120)
{
  const char *dir = th_conformance_dir();
  if (!dir) cr_skip_test("conformance data not found at ../shared/conformance");
  char qrels[4200], run[4200], args[64];
  snprintf(qrels, sizeof qrels, "%s/%s/%s", dir, c->dataset, c->qrels);
  snprintf(run, sizeof run, "%s/%s/%s", dir, c->dataset, c->run);
  char *ref = NULL;
  const char *threads[] = {"--threads=1", "--threads=2", "--threads=3", "--threads=8"};
  for (int k = 0; k < 5; k++) {
    snprintf(args, sizeof args, "%s", c->args);
    char *argv[32];
    const char *bin = k < 4 ? th_bin() : th_serial_bin();
    if (!bin) continue;
    int n = th_split(args, bin, "trec_eval", argv, 28);
    argv[n++] = (char *)(k < 4 ? threads[k] : "--threads=1");
    argv[n++] = qrels;
    argv[n++] = run;
    argv[n] = NULL;
    /* Small blocks too, so topics are spread over many parallel batches. */
    char *env[] = {k == 3 ? "RAGSWEEP_BLOCK_BYTES=65536" : "RAGSWEEP_UNUSED=1", NULL};
    int st = 0;
    char *out = run_capture(argv, env, NULL, &st);
    cr_assert_eq(st, 0, "%s %s: exit %d", c->dataset, argv[n - 3], st);
    cr_assert_gt(strlen(out), 1000);
    if (!ref) ref = out;
    else {
      cr_expect_str_eq(out, ref, "%s: %s output differs from 1 thread", c->dataset, k < 4 ? threads[k] : "serial build");
      free(out);
    }
  }
  free(ref);
}
