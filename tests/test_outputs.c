/* test_outputs.c: outputs that cannot mislead (issue 13, point 4): attribute
 * names that clash with CSV columns, run names repeated across files,
 * temporary files on signals and after SIGKILL, re-runs into an output
 * folder, export's all-or-nothing files, and the query policy column. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

/* --- helpers ------------------------------------------------------------------------ */

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Names in dir that contain ".tmp." (ragsweep's temporary files). */
static size_t count_tmp(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

static th_result run_argv(char **argv)
{
  argv[0] = (char *)th_bin();
  return th_run(NULL, argv, NULL, NULL);
}

/* Three judged queries (one relevant doc each).
 *   A ranks q1: x a (RR 1/2) and q2: b (RR 1), not q3;
 *   B ranks q1: a, q2: b, q3: c (RR 1 each).
 * A's RR: 3/4 over the queries it ranks, (1/2 + 1 + 0)/3 = 1/2 over all. */
static const char *const QRELS = "q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n";
static const char *const RUN_A = "q1 Q0 x 1 2 A\nq1 Q0 a 2 1 A\nq2 Q0 b 1 1 A\n";
static const char *const RUN_B = "q1 Q0 a 1 1 B\nq2 Q0 b 1 1 B\nq3 Q0 c 1 1 B\n";

/* dir/c.h5 with runs A and B; attr ("A:key=value") is given to import when non-NULL. */
static char *make_corpus(const char *dir, const char *attr)
{
  char *qrels = th_join(dir, "qrels.txt"), *a = th_join(dir, "a.txt"), *b = th_join(dir, "b.txt"), *corpus = th_join(dir, "c.h5");
  write_text(qrels, QRELS);
  write_text(a, RUN_A);
  write_text(b, RUN_B);
  char ra[4200], rb[4200];
  snprintf(ra, sizeof ra, "A=%s", a);
  snprintf(rb, sizeof rb, "B=%s", b);
  char *argv[] = {NULL, "import", "-o", corpus, "--qrels", qrels, ra, rb, "--attr", (char *)attr, NULL};
  if (!attr) argv[8] = NULL;
  th_result r = run_argv(argv);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);
  return corpus;
}

/* The first data line of path that starts with prefix, copied; "" when none. */
static char *line_with(const char *path, const char *prefix)
{
  char *p = th_ring_slot();
  p[0] = '\0';
  char *text = th_slurp(path, NULL);
  cr_assert(text, "cannot read %s", path);
  for (char *l = text; *l;) {
    char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    if (strncmp(l, prefix, strlen(prefix)) == 0 && n < 4096) {
      memcpy(p, l, n);
      p[n] = '\0';
      break;
    }
    l += n + (nl != NULL);
  }
  free(text);
  return p;
}

/* --- attribute names that clash with output columns ----------------------------------- */

Test(outputs, attribute_named_like_a_column_is_rejected_by_eval_compare_and_check)
{
  static const char *const clash[] = {"A:measure=x", "A:run=x", "A:value=1", "A:n=3", "A:mean_ms=1", "A:queries=all"};
  for (size_t i = 0; i < sizeof clash / sizeof *clash; i++) {
    char *dir = th_fresh_dir(), *corpus = make_corpus(dir, clash[i]), *out = th_join(dir, "out");
    char key[64];
    snprintf(key, sizeof key, "attribute '%.*s'", (int)(strchr(clash[i], '=') - clash[i] - 2), clash[i] + 2);

    char *ev[] = {NULL, "eval", corpus, "-o", out, "--quiet", NULL};
    th_result r = run_argv(ev);
    cr_expect_eq(r.status, 2, "%s: eval exit %d: %s", clash[i], r.status, r.err);
    cr_expect(strstr(r.err, key) && strstr(r.err, "/runs/A") && strstr(r.err, corpus) && strstr(r.err, "rename"),
              "%s: %s", clash[i], r.err);
    cr_expect(!th_exists(th_join(out, "aggregate.csv")), "%s: eval left an aggregate.csv", clash[i]);
    th_free(&r);

    char *cmp[] = {NULL, "compare", corpus, "-o", out, NULL};
    r = run_argv(cmp);
    cr_expect_eq(r.status, 2, "%s: compare exit %d: %s", clash[i], r.status, r.err);
    cr_expect(strstr(r.err, key), "%s: %s", clash[i], r.err);
    cr_expect(!th_exists(th_join(out, "compare.csv")), "%s: compare left a compare.csv", clash[i]);
    th_free(&r);

    char *chk[] = {NULL, "check", corpus, NULL};
    r = run_argv(chk);
    cr_expect_eq(r.status, 2, "%s: check exit %d: %s", clash[i], r.status, r.out);
    cr_expect(strstr(r.out, "run A: INVALID") && strstr(r.out, key), "%s: %s", clash[i], r.out);
    cr_expect(strstr(r.out, "run B: ok"), "%s: %s", clash[i], r.out);
    th_free(&r);
  }
}

Test(outputs, attribute_with_a_free_name_is_kept)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, "A:model=m1"), *out = th_join(dir, "out");
  char *ev[] = {NULL, "eval", corpus, "-o", out, "--quiet", "-m", "RR", NULL};
  th_result r = run_argv(ev);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect_str_eq(line_with(th_join(out, "aggregate.csv"), "run,"), "run,model,measure,base,cutoff,value,queries");
  cr_expect_str_eq(line_with(th_join(out, "aggregate.csv"), "A,m1,RR,"), "A,m1,RR,RR,,0.75,ranked");
}

/* --- run names repeated across files -------------------------------------------------- */

Test(outputs, check_rejects_a_run_name_repeated_across_files)
{
  /* The corpus given again as a run file repeats both of its runs. */
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL);
  char *chk[] = {NULL, "check", corpus, corpus, NULL};
  th_result r = run_argv(chk);
  cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.out);
  char want[8400];
  snprintf(want, sizeof want, "run 'A' is in both %s and %s; run names must be unique", corpus, corpus);
  cr_expect(strstr(r.out, want), "%s", r.out);
  cr_expect(strstr(r.out, "run 'B' is in both"), "%s", r.out);
  cr_expect(strstr(r.out, "problems found"), "%s", r.out);
  th_free(&r);
  /* eval says the same */
  char *out = th_join(dir, "out");
  char *ev[] = {NULL, "eval", corpus, corpus, "-o", out, "--quiet", NULL};
  r = run_argv(ev);
  cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
  cr_expect(strstr(r.err, "run 'A' is in both"), "%s", r.err);
  th_free(&r);
}

/* --- query policy ----------------------------------------------------------------------- */

Test(outputs, eval_and_compare_write_their_query_policy)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL);
  char *e_out = th_join(dir, "e"), *c_out = th_join(dir, "c"), *a_out = th_join(dir, "a"), *j_out = th_join(dir, "j");
  char *ev[] = {NULL, "eval", corpus, "-o", e_out, "--quiet", "-m", "RR", NULL};
  th_result r = run_argv(ev);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "queries: ranked (the judged queries each run ranks"), "%s", r.out);
  th_free(&r);
  cr_expect_str_eq(line_with(th_join(e_out, "aggregate.csv"), "run,"), "run,measure,base,cutoff,value,queries");
  cr_expect_str_eq(line_with(th_join(e_out, "aggregate.csv"), "A,RR,"), "A,RR,RR,,0.75,ranked");
  cr_expect_str_eq(line_with(th_join(e_out, "aggregate.csv"), "A,num_q,"), "A,num_q,num_q,,2,ranked");

  char *ea[] = {NULL, "eval", corpus, "-o", a_out, "--quiet", "-m", "RR", "--queries=all", NULL};
  r = run_argv(ea);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect_str_eq(line_with(th_join(a_out, "aggregate.csv"), "A,RR,"), "A,RR,RR,,0.5,all");

  char *cmp[] = {NULL, "compare", corpus, "-o", c_out, "-m", "RR", NULL};
  r = run_argv(cmp);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "queries: all (every judged query"), "%s", r.out);
  th_free(&r);
  cr_expect_str_eq(line_with(th_join(c_out, "aggregate.csv"), "A,RR,"), "A,RR,RR,,0.5,all");
  cr_expect(strstr(line_with(th_join(c_out, "compare.csv"), "run,"), ",p_perm_adj,queries"), "compare.csv header");
  cr_expect(strstr(line_with(th_join(c_out, "summary.csv"), "measure,"), ",p_adj_vs_best,queries"), "summary.csv header");
  const char *row = line_with(th_join(c_out, "summary.csv"), "RR,A,");
  cr_expect(strncmp(row, "RR,A,0.5,", 9) == 0 && strcmp(row + strlen(row) - 4, ",all") == 0, "%s", row);

  /* --queries=judged: the queries both runs rank (q1, q2): A 3/4, B 1 */
  char *cj[] = {NULL, "compare", corpus, "-o", j_out, "-m", "RR", "--queries=judged", NULL};
  r = run_argv(cj);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect_str_eq(line_with(th_join(j_out, "aggregate.csv"), "A,RR,"), "A,RR,RR,,0.75,common");
  cr_expect_str_eq(line_with(th_join(j_out, "aggregate.csv"), "B,RR,"), "B,RR,RR,,1,common");
}

/* --- re-runs into an output folder ------------------------------------------------------- */

Test(outputs, eval_rerun_removes_the_files_it_no_longer_writes)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL), *out = th_join(dir, "out");
  char *first[] = {NULL, "eval", corpus, "-o", out, "--quiet", "-m", "RR", "--per-query", "--worst", "1",
                   "--gate", "RR>=0.1", NULL};
  th_result r = run_argv(first);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  static const char *const all[] = {"aggregate.csv", "latency.csv", "per_query.csv", "worst.csv", "gates.csv"};
  for (size_t i = 0; i < 5; i++) cr_assert(th_exists(th_join(out, all[i])), "first run: no %s", all[i]);
  write_text(th_join(out, "notes.txt"), "mine\n");

  char *second[] = {NULL, "eval", corpus, "-o", out, "--quiet", "-m", "RR", NULL};
  r = run_argv(second);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect(th_exists(th_join(out, "aggregate.csv")) && th_exists(th_join(out, "latency.csv")));
  cr_expect(!th_exists(th_join(out, "per_query.csv")), "stale per_query.csv kept");
  cr_expect(!th_exists(th_join(out, "worst.csv")), "stale worst.csv kept");
  cr_expect(!th_exists(th_join(out, "gates.csv")), "stale gates.csv kept");
  cr_expect(th_exists(th_join(out, "notes.txt")), "a file eval does not own was removed");
}

Test(outputs, a_failed_eval_keeps_the_previous_outputs_whole)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL), *out = th_join(dir, "out");
  char *first[] = {NULL, "eval", corpus, "-o", out, "--quiet", "-m", "RR", "--per-query", NULL};
  th_result r = run_argv(first);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *bad[] = {NULL, "eval", corpus, th_join(dir, "missing.h5"), "-o", out, "--quiet", NULL};
  r = run_argv(bad);
  cr_expect_eq(r.status, 2, "%s", r.err);
  th_free(&r);
  cr_expect(th_exists(th_join(out, "per_query.csv")) && th_exists(th_join(out, "aggregate.csv")));
  cr_expect_eq(count_tmp(out), 0);
}

Test(outputs, compare_rerun_removes_the_files_it_no_longer_writes)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL), *out = th_join(dir, "out");
  char *first[] = {NULL, "compare", corpus, "-o", out, "-m", "RR", "--worst", "1", "--gate", "RR>=0.1", NULL};
  th_result r = run_argv(first);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_assert(th_exists(th_join(out, "worst.csv")) && th_exists(th_join(out, "gates.csv")));
  char *second[] = {NULL, "compare", corpus, "-o", out, "-m", "RR", NULL};
  r = run_argv(second);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect(th_exists(th_join(out, "compare.csv")) && th_exists(th_join(out, "summary.csv")) && th_exists(th_join(out, "aggregate.csv")));
  cr_expect(!th_exists(th_join(out, "worst.csv")), "stale worst.csv kept");
  cr_expect(!th_exists(th_join(out, "gates.csv")), "stale gates.csv kept");
}

/* --- temporary files --------------------------------------------------------------------- */

/* A pid that is certainly not running: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
  pid_t p = fork();
  cr_assert(p >= 0, "fork");
  if (p == 0) _exit(0);
  int st;
  waitpid(p, &st, 0);
  return p;
}

Test(outputs, stale_temporary_files_of_dead_processes_are_removed)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL), *out = th_join(dir, "out");
  cr_assert_eq(mkdir(out, 0777), 0);
  char name[256];
  snprintf(name, sizeof name, ".per_query.csv.tmp.%ld", (long)dead_pid());
  char *stale = th_join(out, name);
  write_text(stale, "run,query,measure,value\n");
  snprintf(name, sizeof name, ".aggregate.csv.tmp.%ld", (long)getpid()); /* a live process's: kept */
  char *live = th_join(out, name);
  write_text(live, "x\n");
  char *other = th_join(out, ".notes.tmp.12ab"); /* not ragsweep's pattern: kept */
  write_text(other, "x\n");
  char *ev[] = {NULL, "eval", corpus, "-o", out, "--quiet", "-m", "RR", NULL};
  th_result r = run_argv(ev);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_expect(!th_exists(stale), "stale temporary file kept");
  cr_expect(th_exists(live), "a live process's temporary file was removed");
  cr_expect(th_exists(other), "a file outside the pattern was removed");
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Starts eval --per-query on a big sweep, sends sig once its temporary
 * per_query.csv exists, and expects it to die of sig with no temporary file
 * left.  Every wait is bounded; the child is SIGKILLed if it outlives them. */
static void signal_mid_write(int sig)
{
  char *dir = th_fresh_dir(), *corpus = th_join(dir, "g.h5"), *out = th_join(dir, "out");
  char gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *g[] = {gen, "-o", corpus, "--queries", "20000", "--k", "100", "--runs", "4", "--grid", "model=a,b", NULL};
  th_result r = th_run(NULL, g, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  cr_assert_eq(mkdir(out, 0777), 0);

  pid_t pid = fork();
  cr_assert(pid >= 0, "fork");
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    /* A test run started in the background by a shell inherits SIGINT
     * ignored, and eval keeps an ignored signal ignored (as it should):
     * what is tested here is the default disposition. */
    signal(sig, SIG_DFL);
    execl(th_bin(), th_bin(), "eval", corpus, "-o", out, "--per-query", "--quiet", "--threads", "1", "--batch-docs",
          "1", "-m", "P@{1,2,3,4,5,10,20,50,100}", (char *)NULL);
    _exit(127);
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.per_query.csv.tmp.%ld", out, (long)pid);
  int st = 0, reaped = 0;
  const double t0 = now();
  while (!th_exists(tmp) && now() - t0 < 30.0) {
    if (waitpid(pid, &st, WNOHANG) == pid) {
      reaped = 1;
      break;
    }
    usleep(2000);
  }
  const int seen = th_exists(tmp);
  if (!reaped) kill(pid, seen ? sig : SIGKILL);
  for (const double t1 = now(); !reaped && now() - t1 < 20.0; usleep(10000))
    if (waitpid(pid, &st, WNOHANG) == pid) reaped = 1;
  if (!reaped) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  cr_assert(seen, "eval ended before its temporary per_query.csv was seen (status %d)", st);
  cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == sig, "eval did not die of signal %d (status 0x%x)", sig, st);
  cr_expect(!th_exists(tmp), "%s left behind", tmp);
  cr_expect_eq(count_tmp(out), 0, "temporary files left in %s", out);
  cr_expect(!th_exists(th_join(out, "per_query.csv")), "a per_query.csv was committed");
}

Test(outputs, sigterm_during_eval_per_query_removes_the_temporary_files, .timeout = 120)
{
  signal_mid_write(SIGTERM);
}

Test(outputs, sigint_during_eval_per_query_removes_the_temporary_files, .timeout = 120)
{
  signal_mid_write(SIGINT);
}

/* import writes its corpus as DIR/.NAME.tmp.PID too: SIGTERM while it
 * writes (a million doc ids take a second) removes it.  The TREC input is
 * a generated sweep exported as text: 20000 queries x 100 docs, 1M doc ids.
 * Every wait is bounded; the child is SIGKILLed if it outlives them. */
Test(outputs, sigterm_during_import_removes_the_temporary_corpus, .timeout = 180)
{
  char *dir = th_fresh_dir(), *g = th_join(dir, "g.h5"), *txt = th_join(dir, "txt"), *corpus = th_join(dir, "imp.h5");
  char gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *ga[] = {gen, "-o", g, "--queries", "20000", "--k", "100", "--runs", "1", "--grid", "model=a", "--docs", "1000000",
                NULL};
  th_result r = th_run(NULL, ga, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *ex[] = {NULL, "export", g, "-o", txt, NULL};
  r = run_argv(ex);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);

  pid_t pid = fork();
  cr_assert(pid >= 0, "fork");
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(th_bin(), th_bin(), "import", "-o", corpus, "--qrels", th_join(txt, "qrels.txt"), th_join(txt, "a.txt"),
          (char *)NULL);
    _exit(127);
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.imp.h5.tmp.%ld", dir, (long)pid);
  int st = 0, reaped = 0;
  const double t0 = now();
  while (!th_exists(tmp) && now() - t0 < 60.0) {
    if (waitpid(pid, &st, WNOHANG) == pid) {
      reaped = 1;
      break;
    }
    usleep(1000);
  }
  const int seen = th_exists(tmp);
  if (!reaped) kill(pid, seen ? SIGTERM : SIGKILL);
  for (const double t1 = now(); !reaped && now() - t1 < 20.0; usleep(10000))
    if (waitpid(pid, &st, WNOHANG) == pid) reaped = 1;
  if (!reaped) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  cr_assert(seen, "import ended before its temporary corpus %s was seen (status 0x%x)", tmp, st);
  cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "import did not die of SIGTERM (status 0x%x)", st);
  cr_expect(!th_exists(tmp), "%s left behind", tmp);
  cr_expect_eq(count_tmp(dir), 0, "temporary files left in %s", dir);
  cr_expect(!th_exists(corpus), "a corpus was committed");
}

/* A SIGKILLed import's temporary corpus is removed by the next import of the
 * same name; other names' temporary files in the folder (which import does
 * not own) are left alone. */
Test(outputs, stale_temporary_corpus_is_removed_by_the_next_import)
{
  char *dir = th_fresh_dir(), name[256];
  snprintf(name, sizeof name, ".c.h5.tmp.%ld", (long)dead_pid());
  char *stale = th_join(dir, name);
  write_text(stale, "half an HDF5 file\n");
  snprintf(name, sizeof name, ".other.h5.tmp.%ld", (long)dead_pid());
  char *foreign = th_join(dir, name);
  write_text(foreign, "x\n");
  char *corpus = make_corpus(dir, NULL);
  cr_expect(th_exists(corpus));
  cr_expect(!th_exists(stale), "the stale temporary corpus was kept");
  cr_expect(th_exists(foreign), "another output's temporary file was removed");
}

/* --- export ------------------------------------------------------------------------------ */

Test(outputs, export_that_fails_late_leaves_no_file)
{
  char *dir = th_fresh_dir(), *corpus = make_corpus(dir, NULL), *out = th_join(dir, "exp");
  /* qrels.txt, A.txt and B.txt are written before the missing run file fails. */
  char *ex[] = {NULL, "export", corpus, th_join(dir, "missing.h5"), "-o", out, NULL};
  th_result r = run_argv(ex);
  cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
  cr_expect(strstr(r.err, "missing.h5"), "%s", r.err);
  th_free(&r);
  cr_expect(!th_exists(th_join(out, "qrels.txt")), "a complete-looking qrels.txt was left");
  cr_expect(!th_exists(th_join(out, "A.txt")) && !th_exists(th_join(out, "B.txt")), "run files were left");
  cr_expect_eq(count_tmp(out), 0);

  char *ok[] = {NULL, "export", corpus, "-o", out, NULL};
  r = run_argv(ok);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *q = th_slurp(th_join(out, "qrels.txt"), NULL);
  cr_expect_str_eq(q, QRELS);
  free(q);
  cr_expect(th_exists(th_join(out, "A.txt")) && th_exists(th_join(out, "B.txt")));
  cr_expect_eq(count_tmp(out), 0);
}
