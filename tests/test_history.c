/* test_history.c: the history database and its alerts (issue 15, point 4):
 * appends read back exactly (from hand-written folders and from real eval,
 * compare and rag runs, bit for bit through aggregate.csv's text), the
 * schema as README shows it, two processes appending at once, filters, the
 * alert rule on hand-chosen values (window longer than the history, a drop
 * of exactly the threshold, several runs of which one degrades, relative
 * drops, rises), and bad input. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/numparse.h"
#include "helpers.h"
#include "llm/cache.h"
#include "report/alert.h"
#include "report/history.h"
#include "report/results.h"
#include "util/db.h"

/* --- helpers ------------------------------------------------------------------------ */

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* 2023-11-15T00:00:00Z, and one day. */
#define T0 1700006400
#define DAY 86400

/* A fresh output folder holding aggregate.csv (and latency.csv when
 * latency is non-NULL), as eval writes them. */
static char *folder(const char *aggregate, const char *latency)
{
  char *dir = th_fresh_dir();
  write_text(th_join(dir, "aggregate.csv"), aggregate);
  if (latency) write_text(th_join(dir, "latency.csv"), latency);
  return dir;
}

/* Appends the folder dir to the history at db as evaluation `label` at t;
 * returns its id. */
static int64_t append(const char *db, const char *dir, const char *label, int64_t t)
{
  rs__results r = {0};
  rs_error err = {0};
  int64_t id = -1;
  cr_assert_eq(rs__results_load(dir, &r, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__history_append(db, &r, "eval", label, t, &id, &err), RS_OK, "%s", err.msg);
  rs__results_free(&r);
  return id;
}


/* dir/c.h5: qrels q1 -> a, q2 -> b; run A ranks a for q1 and x for q2
 * (P@1 = 1/2). */
static char *small_corpus(const char *dir)
{
  char *qrels = th_join(dir, "qrels.txt"), *run = th_join(dir, "a.txt"), *corpus = th_join(dir, "c.h5");
  write_text(qrels, "q1 0 a 1\nq2 0 b 1\n");
  write_text(run, "q1 Q0 a 1 1 A\nq2 Q0 x 1 1 A\n");
  char ra[4200];
  snprintf(ra, sizeof ra, "A=%s", run);
  th_result r = th_rs("import", "-o", corpus, "--qrels", qrels, ra, NULL);
  cr_assert_eq(r.status, 0, "import: %s", r.err);
  th_free(&r);
  return corpus;
}

static const rs__history_point *point_of(const rs__history_series *s, const char *run, const char *measure,
                                         int64_t eval_id)
{
  for (size_t i = 0; i < s->n_points; i++) {
    const rs__history_point *p = &s->points[i];
    if (strcmp(s->runs.str[p->run], run) == 0 && strcmp(s->measures.str[p->measure], measure) == 0 &&
        s->evals[p->eval].id == eval_id)
      return p;
  }
  return NULL;
}

/* The line of text that contains needle (copied, without its newline). */
static char *line_with(const char *text, const char *needle)
{
  const char *hit = text ? strstr(text, needle) : NULL;
  if (!hit) return NULL;
  const char *a = hit, *b = hit;
  while (a > text && a[-1] != '\n') a--;
  while (*b && *b != '\n') b++;
  char *l = th_ring_slot();
  snprintf(l, 4096, "%.*s", (int)(b - a), a);
  return l;
}

/* The line of text that starts with prefix, its runs of spaces squeezed
 * to one (the table's column widths follow its contents). */
static char *row_of(const char *text, const char *prefix)
{
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    char *out = th_ring_slot(), *o = out;
    for (const char *p = l; *p && *p != '\n' && o < out + 4000; p++)
      if (*p != ' ' || o == out || o[-1] != ' ') *o++ = *p;
    *o = '\0';
    if (!strncmp(out, prefix, strlen(prefix))) return out;
  }
  return NULL;
}

/* --- appending and reading back ------------------------------------------------------ */

static const char *const AGG1 = "run,chunk,model,measure,value,queries\n"
                                "bm25,,bm25,nDCG@10,0.5,ranked\n"
                                "bm25,,bm25,num_q,3,ranked\n"
                                "dense,512,e5,nDCG@10,0.30369608260673436,ranked\n"
                                "dense,512,e5,R@5,0.25,ranked\n"
                                "dense,512,e5,R@10,NaN,ranked\n"
                                "dense,512,e5,num_q,3,ranked\n";
static const char *const LAT1 = "run,chunk,model,n,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms\n"
                                "dense,512,e5,3,10,9.5,12,12.5,13.25,13.5,14\n";

Test(history, append_and_read_back)
{
  char *db = th_join(th_fresh_dir(), "h.sqlite");
  char *d1 = folder(AGG1, LAT1);
  /* Appended out of time order: the series are ordered by time. */
  const int64_t late = append(db, d1, "v2", T0 + DAY);
  const int64_t early = append(db, folder("run,measure,value\nbm25,nDCG@10,0.25\n", NULL), NULL, T0);
  cr_assert_eq(late, 1);
  cr_assert_eq(early, 2);

  rs__history_series s = {0};
  rs_error err = {0};
  const char *all[] = {"nDCG@10", "R@5", "R@10", "num_q", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"};
  rs__history_filter f = {.measures = all, .n_measures = 7};
  cr_assert_eq(rs__history_series_load(db, &f, &s, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(s.n_evals, 2);
  cr_assert_eq(s.evals[0].id, 2);
  cr_assert_str_eq(s.evals[0].time, "2023-11-15T00:00:00Z");
  cr_assert_null(s.evals[0].label);
  cr_assert_str_eq(s.evals[1].time, "2023-11-16T00:00:00Z");
  cr_assert_eq(s.evals[1].unix_time, T0 + DAY);
  cr_assert_str_eq(s.evals[1].label, "v2");
  cr_assert_str_eq(s.evals[1].command, "eval");
  char *real = realpath(d1, NULL);
  cr_assert_str_eq(s.evals[1].output_dir, real);
  free(real);
  /* bm25: nDCG@10 (2 points), num_q; dense: 4 rows + 3 latency. */
  cr_assert_eq(s.n_points, 3 + 7, "%zu points", s.n_points);
  /* Order: run, measure (bytewise: 'R' < 'l' < 'n'), time. */
  static const char *const order[][2] = {{"bm25", "nDCG@10"},       {"bm25", "nDCG@10"},        {"bm25", "num_q"},
                                         {"dense", "R@10"},         {"dense", "R@5"},           {"dense", "latency_p50_ms"},
                                         {"dense", "latency_p95_ms"}, {"dense", "latency_p99_ms"}, {"dense", "nDCG@10"},
                                         {"dense", "num_q"}};
  for (size_t i = 0; i < 10; i++) {
    cr_expect_str_eq(s.runs.str[s.points[i].run], order[i][0], "point %zu", i);
    cr_expect_str_eq(s.measures.str[s.points[i].measure], order[i][1], "point %zu", i);
  }
  cr_expect_eq(s.points[0].value, 0.25);
  cr_expect_eq(s.evals[s.points[0].eval].id, early);
  cr_expect_eq(s.points[1].value, 0.5);
  cr_expect_eq(point_of(&s, "dense", "nDCG@10", late)->value, 0.30369608260673436);
  cr_expect(isnan(point_of(&s, "dense", "R@10", late)->value), "NaN is stored as NULL and read back as NaN");
  cr_expect_eq(point_of(&s, "dense", "latency_p50_ms", late)->value, 9.5);
  cr_expect_eq(point_of(&s, "dense", "latency_p95_ms", late)->value, 12.5);
  cr_expect_eq(point_of(&s, "dense", "latency_p99_ms", late)->value, 13.25);
  rs__history_series_free(&s);

  /* The attributes, empty values left out; and the file's marks. */
  static const rs__db_kind kind = {.noun = "history", .file_name = "history.sqlite", .app_id = 0x52534849,
                                   .version = RS_HISTORY_VERSION};
  rs__db *h = NULL;
  cr_assert_eq(rs__db_open(db, &kind, 0, &h, &err), RS_OK, "%s", err.msg);
  rs__db_stmt *st = NULL;
  cr_assert_eq(rs__db_prepare(h, "SELECT run || ':' || name || '=' || value FROM attributes WHERE evaluation_id = 1"
                                 " ORDER BY 1", "test", 0, &st, &err), RS_OK, "%s", err.msg);
  const char *want[] = {"bm25:model=bm25", "dense:chunk=512", "dense:model=e5"};
  int row = 0;
  for (size_t i = 0; i < 3; i++) {
    cr_assert_eq(rs__db_step(st, &row, &err), RS_OK);
    cr_assert_eq(row, 1);
    cr_expect_str_eq(rs__db_col_text(st, 0, NULL), want[i]);
  }
  cr_assert_eq(rs__db_step(st, &row, &err), RS_OK);
  cr_expect_eq(row, 0);
  rs__db_stmt_free(st);
  int64_t v = 0;
  cr_assert_eq(rs__db_query_int(h, "PRAGMA journal_mode = WAL", &v, &err), RS_OK); /* harmless: already WAL */
  cr_assert_eq(rs__db_query_int(h, "SELECT count(*) FROM series WHERE evaluation_id = 1", &v, &err), RS_OK);
  cr_expect_eq(v, 9);
  /* The trigger: deleting an evaluation deletes its rows. */
  cr_assert_eq(rs__db_exec(h, "DELETE FROM evaluations WHERE id = 1", "test", &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__db_query_int(h, "SELECT (SELECT count(*) FROM results) * 100 + (SELECT count(*) FROM attributes)",
                                &v, &err), RS_OK);
  cr_expect_eq(v, 100, "results*100+attributes = %lld", (long long)v);
  rs__db_close(h);
}

/* rag with several judges: the judge column changes within a run, so each
 * judge is a series of its own; the latency belongs to every one. */
Test(history, judges_are_series)
{
  char *db = th_join(th_fresh_dir(), "h.sqlite");
  char *d = folder("cfg,judge,metric,mean,n,failures,undefined,latency_p50_ms,latency_p99_ms\n"
                   "a,j1,faithfulness,0.5,2,0,0,110,119.8\n"
                   "a,j2,faithfulness,0.75,2,0,0,110,119.8\n",
                   NULL);
  const int64_t id = append(db, d, "r1", T0);
  rs__history_series s = {0};
  rs_error err = {0};
  cr_assert_eq(rs__history_series_load(db, NULL, &s, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(point_of(&s, "a judge=j1", "faithfulness", id)->value, 0.5);
  cr_expect_eq(point_of(&s, "a judge=j2", "faithfulness", id)->value, 0.75);
  cr_expect_eq(point_of(&s, "a judge=j2", "latency_p99_ms", id)->value, 119.8);
  cr_expect_null(point_of(&s, "a judge=j2", "latency_p95_ms", id), "rag has no p95");
  cr_expect_eq(s.n_points, 6);
  rs__history_series_free(&s);
}

Test(history, one_value_per_run_and_measure)
{
  char *db = th_join(th_fresh_dir(), "h.sqlite");
  char *d = folder("run,measure,value\nA,P@5,0.5\nA,P@5,0.25\n", NULL);
  rs__results r = {0};
  rs_error err = {0};
  cr_assert_eq(rs__results_load(d, &r, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__history_append(db, &r, "eval", NULL, T0, NULL, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "aggregate.csv:3: run 'A' has a second value of 'P@5'"), "%s", err.msg);
  rs__results_free(&r);
  cr_expect(!th_exists(db), "nothing is created for a folder that cannot be appended");
}

Test(history, filters)
{
  char *db = th_join(th_fresh_dir(), "h.sqlite");
  char *d = folder(AGG1, NULL);
  for (int i = 0; i < 5; i++) append(db, d, NULL, T0 + i * DAY);
  rs__history_series s = {0};
  rs_error err = {0};
  /* eval's spellings: ndcg_cut.10 is nDCG@10, R@{5,10} is two measures. */
  const char *m[] = {"ndcg_cut.10", "R@{5,10}"}, *runs[] = {"dense"};
  rs__history_filter f = {.runs = runs, .n_runs = 1, .measures = m, .n_measures = 2, .last = 2};
  cr_assert_eq(rs__history_series_load(db, &f, &s, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(s.n_points, 3 * 2);
  cr_expect_eq(s.runs.n, 1);
  cr_expect_eq(s.measures.n, 3);
  cr_expect_eq(s.evals[s.points[0].eval].unix_time, T0 + 3 * DAY, "--last 2 keeps the latest two");
  rs__history_series_free(&s);
  /* Default: every measure but the num_q counts. */
  cr_assert_eq(rs__history_series_load(db, NULL, &s, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(s.n_points, 5 * 4);
  rs__history_series_free(&s);
  const char *bad_run[] = {"sparse"};
  rs__history_filter g = {.runs = bad_run, .n_runs = 1};
  cr_assert_eq(rs__history_series_load(db, &g, &s, &err), RS_USAGE);
  cr_expect(strstr(err.msg, "h.sqlite has no run 'sparse' (its runs: bm25, dense)"), "%s", err.msg);
  rs__history_series_free(&s);
  const char *bad_m[] = {"P@5"};
  rs__history_filter h = {.measures = bad_m, .n_measures = 1};
  cr_assert_eq(rs__history_series_load(db, &h, &s, &err), RS_USAGE);
  cr_expect(strstr(err.msg, "has no measure 'P@5' (its measures: R@10, R@5, nDCG@10, num_q)"), "%s", err.msg);
  rs__history_series_free(&s);
}

/* README shows the schema verbatim: every CREATE statement the file has. */
Test(history, schema_is_in_readme)
{
  char *readme = th_slurp("README.md", NULL);
  cr_assert(readme, "README.md not found (run from the repository's root)");
  char *db = th_join(th_fresh_dir(), "h.sqlite");
  append(db, folder("run,measure,value\nA,P@5,0.5\n", NULL), NULL, T0);
  static const rs__db_kind kind = {.noun = "history", .file_name = "history.sqlite", .app_id = 0x52534849,
                                   .version = RS_HISTORY_VERSION};
  rs__db *h = NULL;
  rs__db_stmt *st = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__db_open(db, &kind, 0, &h, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(rs__db_prepare(h, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'",
                              "test", 0, &st, &err), RS_OK);
  int row = 0, n = 0;
  while (rs__db_step(st, &row, &err) == RS_OK && row) {
    const char *sql = rs__db_col_text(st, 0, NULL);
    cr_expect(strstr(readme, sql), "README lacks, verbatim:\n%s", sql);
    n++;
  }
  cr_expect_eq(n, 7, "3 tables, 2 indexes, a view and a trigger");
  cr_assert_eq(rs__db_query_int(h, "PRAGMA user_version", &(int64_t){0}, &err), RS_OK);
  rs__db_stmt_free(st);
  rs__db_close(h);
  free(readme);
}

/* --- bad files --------------------------------------------------------------------- */

Test(history, other_files)
{
  char *dir = th_fresh_dir(), *src = folder("run,measure,value\nA,P@5,0.5\n", NULL);
  rs__results r = {0};
  rs_error err = {0};
  cr_assert_eq(rs__results_load(src, &r, &err), RS_OK);
  char *txt = th_join(dir, "notes.txt");
  write_text(txt, "these are notes, not a database; they are long enough to fill a header of one hundred bytes....\n");
  cr_expect_eq(rs__history_append(txt, &r, "eval", NULL, T0, NULL, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, txt) && strstr(err.msg, "not a ragsweep history"), "%s", err.msg);
  /* Another ragsweep file: an LLM cache. */
  char *cache = th_join(dir, "cache.sqlite");
  rs__llm_cache *c = NULL;
  cr_assert_eq(rs__llm_cache_open(cache, &c, &err), RS_OK, "%s", err.msg);
  rs__llm_cache_close(c);
  cr_expect_eq(rs__history_append(cache, &r, "eval", NULL, T0, NULL, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "cache.sqlite: not a ragsweep history: expected SQLite application_id 0x52534849, "
                            "found 0x52534c43"), "%s", err.msg);
  /* A history of another schema version. */
  char *v2 = th_join(dir, "v2.sqlite");
  append(v2, src, NULL, T0);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c \"import sqlite3; d = sqlite3.connect('%s');"
                            " d.execute('pragma user_version=2'); d.commit()\"", v2);
  cr_assert_eq(system(cmd), 0);
  cr_expect_eq(rs__history_append(v2, &r, "eval", NULL, T0, NULL, &err), RS_FORMAT);
  cr_expect(strstr(err.msg, "v2.sqlite: ragsweep history schema version 2; this ragsweep reads version 1"), "%s",
            err.msg);
  rs__history_series s = {0};
  cr_expect_eq(rs__history_series_load(v2, NULL, &s, &err), RS_FORMAT);
  rs__history_series_free(&s);
  /* A folder; a folder that does not exist; a place nobody can write. */
  cr_expect_eq(rs__history_append(dir, &r, "eval", NULL, T0, NULL, &err), RS_IO);
  cr_expect(strstr(err.msg, dir) && strstr(err.msg, "is a folder"), "%s", err.msg);
  cr_expect_eq(rs__history_append(th_join(dir, "no/h.sqlite"), &r, "eval", NULL, T0, NULL, &err), RS_IO);
  cr_expect(strstr(err.msg, "cannot create the history: folder") && strstr(err.msg, "/no does not exist"), "%s",
            err.msg);
  cr_expect_eq(rs__history_append("/proc/self/h.sqlite", &r, "eval", NULL, T0, NULL, &err), RS_IO);
  cr_expect(strstr(err.msg, "/proc/self/h.sqlite: cannot create the history"), "%s", err.msg);
  rs__results_free(&r);
  /* Reading a file that is not there says how one is made. */
  cr_expect_eq(rs__history_series_load(th_join(dir, "none.sqlite"), NULL, &s, &err), RS_IO);
  cr_expect(strstr(err.msg, "none.sqlite: no such history; 'ragsweep eval' (or compare, rag) with --history"), "%s",
            err.msg);
  rs__history_series_free(&s);
}

Test(history, bad_input_on_the_command_line)
{
  char *dir = th_fresh_dir(), *txt = th_join(dir, "notes.txt");
  write_text(txt, "hello\n");
  struct {
    const char *file, *needle;
  } cases[] = {
      {th_join(dir, "missing.sqlite"), "no such history; 'ragsweep eval' (or compare, rag) with --history"},
      {txt, "notes.txt: not a ragsweep history"},
      {dir, "is a folder"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    th_result r = th_rs("history", cases[i].file, NULL);
    cr_expect_eq(r.status, 2, "%s: status %d: %s", cases[i].file, r.status, r.err);
    cr_expect(strstr(r.err, cases[i].needle) && strstr(r.err, cases[i].file), "%s", r.err);
    th_free(&r);
  }
  /* eval --history into a folder, a file that is not a history, an
   * unwritable place: exit 2, the path named, the CSVs written. */
  char *corpus = small_corpus(dir), *out = th_join(dir, "out");
  const char *bad[] = {dir, txt, "/proc/self/h.sqlite"};
  for (size_t i = 0; i < 3; i++) {
    th_result r = th_rs("eval", corpus, "-o", out, "--history", bad[i], NULL);
    cr_expect_eq(r.status, 2, "%s: status %d: %s", bad[i], r.status, r.err);
    cr_expect(strstr(r.err, bad[i]), "%s", r.err);
    cr_expect(strstr(r.err, "the CSV outputs in"), "%s", r.err);
    cr_expect(th_exists(th_join(out, "aggregate.csv")));
    th_free(&r);
  }
  /* --label without --history is a usage error. */
  th_result r = th_rs("eval", corpus, "-o", out, "--label", "x", NULL);
  cr_expect_eq(r.status, 1, "%s", r.err);
  th_free(&r);
}

/* --- two writers ------------------------------------------------------------------- */

/* Two processes append 25 evaluations each to one new file at the same
 * moment: WAL and the busy timeout serialise them, and none is lost. */
Test(history, two_processes_append_at_once, .timeout = 120)
{
  char *db = th_join(th_fresh_dir(), "shared.sqlite");
  char *d = folder(AGG1, LAT1);
  int go[2];
  cr_assert_eq(pipe(go), 0);
  pid_t pid[2];
  for (int w = 0; w < 2; w++) {
    pid[w] = fork();
    cr_assert_neq(pid[w], -1);
    if (pid[w] == 0) {
      close(go[1]);
      char c;
      if (read(go[0], &c, 1) != 0) _exit(5); /* starts when the parent closes the pipe */
      rs__results r = {0};
      if (rs__results_load(d, &r, NULL)) _exit(2);
      for (int i = 0; i < 25; i++) {
        char label[32];
        snprintf(label, sizeof label, "w%d-%02d", w, i);
        rs_error e = {0};
        if (rs__history_append(db, &r, "eval", label, T0 + i, NULL, &e)) {
          fprintf(stderr, "writer %d: %s\n", w, e.msg);
          _exit(3);
        }
      }
      rs__results_free(&r);
      _exit(0);
    }
  }
  close(go[0]);
  close(go[1]);
  for (int w = 0; w < 2; w++) {
    int st = 0;
    waitpid(pid[w], &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed (status %d)", w, st);
  }
  rs__history_series s = {0};
  rs_error err = {0};
  const char *all[] = {"nDCG@10", "R@5", "R@10", "num_q", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"};
  rs__history_filter f = {.measures = all, .n_measures = 7};
  cr_assert_eq(rs__history_series_load(db, &f, &s, &err), RS_OK, "%s", err.msg);
  cr_expect_eq(s.n_evals, 50);
  cr_expect_eq(s.n_points, 50 * 9, "every evaluation has all of its 9 rows: %zu", s.n_points);
  size_t per_writer[2] = {0, 0};
  for (size_t i = 0; i < s.n_evals; i++) per_writer[s.evals[i].label[1] - '0']++;
  cr_expect(per_writer[0] == 25 && per_writer[1] == 25);
  rs__history_series_free(&s);
}

/* The same through the program: two evals started together. */
Test(history, two_evals_append_at_once, .timeout = 120)
{
  char *dir = th_fresh_dir(), *db = th_join(dir, "h.sqlite"), *corpus = small_corpus(dir);
  pid_t pid[2];
  for (int w = 0; w < 2; w++) {
    char *out = th_join(dir, w ? "out1" : "out0");
    pid[w] = fork();
    cr_assert_neq(pid[w], -1);
    if (pid[w] == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      char *argv[] = {(char *)th_bin(), "eval", corpus, "-o", out, "--history", db, "--label", w ? "one" : "zero", NULL};
      execv(argv[0], argv);
      _exit(127);
    }
  }
  for (int w = 0; w < 2; w++) {
    int st = 0;
    waitpid(pid[w], &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "eval %d failed (status %d)", w, st);
  }
  th_result r = th_rs("history", db, "--format", "csv", "-m", "P@1", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, ",zero,A,P@1,0.5\n") && strstr(r.out, ",one,A,P@1,0.5\n"), "%s", r.out);
  th_free(&r);
}

/* --- what eval, compare and rag append ---------------------------------------------- */

/* The rows of aggregate.csv as (run, measure, value text); rag's run is
 * its configuration columns joined by '/'. */
typedef struct {
  char run[128], measure[128], value[64];
} agg_row;

static size_t read_aggregate(const char *path, agg_row *rows, size_t cap, int rag)
{
  char *text = th_slurp(path, NULL);
  cr_assert(text, "cannot read %s", path);
  char *save = NULL, *line = strtok_r(text, "\n", &save);
  char *hdr[32];
  size_t nh = 0, n = 0;
  for (char *p = line, *q; p && nh < 32; p = q ? q + 1 : NULL) {
    q = strchr(p, ',');
    if (q) *q = '\0';
    hdr[nh++] = p;
  }
  size_t c_run = 99, c_measure = 99, c_value = 99;
  for (size_t i = 0; i < nh; i++) {
    if (!strcmp(hdr[i], "run")) c_run = i;
    if (!strcmp(hdr[i], rag ? "metric" : "measure")) c_measure = i;
    if (!strcmp(hdr[i], rag ? "mean" : "value")) c_value = i;
  }
  cr_assert(c_measure < nh && c_value < nh && (rag || c_run < nh), "%s: unexpected header", path);
  while ((line = strtok_r(NULL, "\n", &save)) && n < cap) {
    char *f[32];
    size_t nf = 0;
    for (char *p = line, *q; p && nf < 32; p = q ? q + 1 : NULL) {
      q = strchr(p, ',');
      if (q) *q = '\0';
      f[nf++] = p;
    }
    if (!*f[c_value]) continue;
    agg_row *r = &rows[n++];
    if (rag) {
      r->run[0] = '\0';
      for (size_t i = 0; i < c_measure; i++)
        snprintf(r->run + strlen(r->run), sizeof r->run - strlen(r->run), "%s%s", i ? "/" : "", f[i]);
    } else {
      snprintf(r->run, sizeof r->run, "%s", f[c_run]);
    }
    snprintf(r->measure, sizeof r->measure, "%s", f[c_measure]);
    snprintf(r->value, sizeof r->value, "%s", f[c_value]);
  }
  free(text);
  return n;
}

/* Every aggregate.csv row of out is in the history as evaluation id, the
 * same double (bit for bit, through its shortest text); the evaluation
 * has those rows and extra_latency latency rows, nothing else. */
static void expect_exactly(const char *db, const char *out, int64_t id, int rag, size_t extra_latency)
{
  static agg_row rows[4096];
  const size_t n = read_aggregate(th_join(out, "aggregate.csv"), rows, 4096, rag);
  cr_assert_gt(n, 0);
  const char *measures[4096];
  size_t nm = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < nm && strcmp(measures[j], rows[i].measure)) j++;
    if (j == nm) measures[nm++] = rows[i].measure;
  }
  const char *lat[] = {"latency_p50_ms", "latency_p95_ms", "latency_p99_ms"};
  for (size_t i = 0; i < 3; i++) measures[nm++] = lat[i];
  rs__history_series s = {0};
  rs_error err = {0};
  rs__history_filter f = {.measures = measures, .n_measures = extra_latency ? nm : nm - 3};
  cr_assert_eq(rs__history_series_load(db, &f, &s, &err), RS_OK, "%s", err.msg);
  size_t in_eval = 0;
  for (size_t i = 0; i < s.n_points; i++) in_eval += s.evals[s.points[i].eval].id == id;
  cr_expect_eq(in_eval, n + extra_latency, "%s: %zu points for %zu rows and %zu latencies", out, in_eval, n,
               extra_latency);
  for (size_t i = 0; i < n; i++) {
    const rs__history_point *p = point_of(&s, rows[i].run, rows[i].measure, id);
    cr_assert(p, "%s: %s %s is not in the history", out, rows[i].run, rows[i].measure);
    char text[32];
    rs__format_double(p->value, text);
    cr_expect_str_eq(text, rows[i].value, "%s: %s %s", out, rows[i].run, rows[i].measure);
    const double want = strtod(rows[i].value, NULL);
    cr_expect(memcmp(&want, &p->value, sizeof want) == 0, "%s: %s %s: bits differ", out, rows[i].run, rows[i].measure);
  }
  rs__history_series_free(&s);
}

Test(history, eval_compare_rag_append_exactly, .timeout = 120)
{
  char *dir = th_fresh_dir(), *db = th_join(dir, "h.sqlite"), *corpus = th_join(dir, "g.h5");
  char gen[4096];
  snprintf(gen, sizeof gen, "%s", th_bin());
  strcpy(strrchr(gen, '/') + 1, "gen_sweep");
  char *gargv[] = {gen, "-o", corpus, "--queries", "150", "--k", "20", "--seed", "7", "--runs", "5", NULL};
  th_result g = th_run(NULL, gargv, NULL, NULL);
  cr_assert_eq(g.status, 0, "%s", g.err);
  th_free(&g);
  char *ev = th_join(dir, "ev"), *cmp = th_join(dir, "cmp"), *rag = th_join(dir, "rag");
  th_result r = th_rs("eval", corpus, "-o", ev, "-m", "nDCG@10", "-m", "P@{1,5}", "--history", db, "--label", "e1", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "appended evaluation 1 to the history"), "%s", r.out);
  th_free(&r);
  r = th_rs("compare", corpus, "-o", cmp, "--permutations", "200", "--bootstrap", "100", "--history", db, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *samples = th_join(dir, "s.jsonl");
  write_text(samples,
             "{\"cfg\":\"a\",\"k\":3,\"retrieved_context_ids\":[1,2],\"reference_context_ids\":[\"1\"],\"latency_ms\":120}\n"
             "{\"cfg\":\"b\",\"k\":3,\"retrieved_context_ids\":[1,2,3],\"reference_context_ids\":[1],\"latency_ms\":80}\n"
             "{\"cfg\":\"a\",\"k\":3,\"retrieved_context_ids\":[3],\"reference_context_ids\":[\"1\"],\"latency_ms\":100}\n"
             "{\"cfg\":\"b\",\"k\":3,\"retrieved_context_ids\":[1],\"reference_context_ids\":[1],\"latency_ms\":90}\n");
  r = th_rs("rag", samples, "-o", rag, "-m", "id_based_context_precision", "-m", "id_based_context_recall", "--history",
         db, "--label", "r1", NULL);
  cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  expect_exactly(db, ev, 1, 0, 5 * 3);
  expect_exactly(db, cmp, 2, 0, 0);
  expect_exactly(db, rag, 3, 1, 2 * 3); /* p50, p95, p99 from rag's latency.csv */

  /* The command's CSV is the same text as aggregate.csv, row for row. */
  r = th_rs("history", db, "--format", "csv", "-m", "nDCG@10", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  static agg_row rows[512];
  const size_t n = read_aggregate(th_join(ev, "aggregate.csv"), rows, 512, 0);
  size_t checked = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(rows[i].measure, "nDCG@10")) continue;
    char want[256];
    snprintf(want, sizeof want, ",e1,%s,nDCG@10,%s\n", rows[i].run, rows[i].value);
    cr_expect(strstr(r.out, want), "no line ending %s in\n%s", want, r.out);
    checked++;
  }
  cr_expect_eq(checked, 5);
  cr_expect(!strncmp(r.out, "evaluation,time,label,run,measure,value\n", 40), "%s", r.out);
  th_free(&r);
  /* --csv FILE writes the same. */
  char *csv = th_join(dir, "series.csv");
  th_result r2 = th_rs("history", db, "--csv", csv, "-m", "nDCG@10", NULL);
  cr_assert_eq(r2.status, 0, "%s", r2.err);
  th_result r3 = th_rs("history", db, "--format", "csv", "-m", "nDCG@10", NULL);
  char *file = th_slurp(csv, NULL);
  cr_expect_str_eq(file, r3.out);
  free(file);
  th_free(&r2);
  th_free(&r3);
}

/* --- the alert rule ----------------------------------------------------------------- */

Test(history, alert_parse)
{
  rs__alert a;
  rs_error err = {0};
  cr_assert_eq(rs__alert_parse("nDCG@10:window=20:drop=0.02", &a, &err), RS_OK, "%s", err.msg);
  cr_expect_str_eq(a.measure, "nDCG@10");
  cr_expect(a.window == 20 && !a.rise && !a.relative && a.amount == 0.02);
  rs__alert_free(&a);
  cr_assert_eq(rs__alert_parse(" factual_correctness(mode=f1) : drop=5% ", &a, &err), RS_OK, "%s", err.msg);
  cr_expect_str_eq(a.measure, "factual_correctness(mode=f1)");
  cr_expect(a.window == RS_ALERT_DEFAULT_WINDOW && a.relative && a.amount == 0.05);
  char text[128];
  rs__alert_text(&a, a.measure, text, sizeof text);
  cr_expect_str_eq(text, "factual_correctness(mode=f1):window=20:drop=5%");
  rs__alert_free(&a);
  cr_assert_eq(rs__alert_parse("latency_p95_ms:rise=15:window=3", &a, &err), RS_OK, "%s", err.msg);
  cr_expect(a.rise && a.window == 3 && a.amount == 15);
  rs__alert_free(&a);

  struct {
    const char *text, *msg;
  } bad[] = {
      {"nDCG@10", "alert 'nDCG@10': expected MEASURE:window=N:drop=NUMBER"},
      {":drop=0.1", "found no measure before ':'"},
      {"nDCG@10:window=0:drop=0.02", "window must be an integer >= 1 (the number of earlier values averaged), found '0'"},
      {"nDCG@10:window=2.5:drop=0.02", "window must be an integer >= 1"},
      {"nDCG@10:window=-3:drop=0.02", "window must be an integer >= 1"},
      {"nDCG@10:window=3:window=4:drop=0.02", "window is given twice"},
      {"nDCG@10:drop=-0.1", "drop must be a number >= 0 (such as 0.02) or a percentage of the mean (such as 5%), found '-0.1'"},
      {"nDCG@10:drop=abc%", "found 'abc%'"},
      {"nDCG@10:drop=", "drop must be a number >= 0"},
      {"nDCG@10:rise=inf", "rise must be a number >= 0"},
      {"nDCG@10:speed=3", "alert 'nDCG@10:speed=3': unknown key 'speed' (expected window, drop or rise)"},
      {"nDCG@10:window=3", "found neither drop= nor rise="},
      {"nDCG@10:drop=0.1:rise=0.1", "give one of drop= and rise=, once"},
      {"nDCG@10:0.02", "expected KEY=VALUE (window, drop or rise) after ':', found '0.02'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(rs__alert_parse(bad[i].text, &a, &err), RS_USAGE, "%s", bad[i].text);
    cr_expect(strstr(err.msg, bad[i].msg), "%s: %s", bad[i].text, err.msg);
    cr_expect_null(a.measure);
  }
}

Test(history, alert_rule)
{
  rs__alert drop, rel, rise, rise_rel;
  rs_error err = {0};
  cr_assert_eq(rs__alert_parse("m:window=3:drop=0.02", &drop, &err), RS_OK);
  cr_assert_eq(rs__alert_parse("m:window=3:drop=2.5%", &rel, &err), RS_OK);
  cr_assert_eq(rs__alert_parse("m:window=3:rise=20", &rise, &err), RS_OK);
  cr_assert_eq(rs__alert_parse("m:window=3:rise=20%", &rise_rel, &err), RS_OK);
  rs__alert_result res;
  /* A drop of exactly 0.02 from 0.80 (0.80 - 0.78 is 0.020000000000000018
   * in binary) is not an alert; a hair more is. */
  const double flat[] = {0.9, 0.80, 0.80, 0.80, 0.78};
  rs__alert_check(&drop, flat, 5, &res);
  /* (0.8 + 0.8 + 0.8) / 3 is 0.80000000000000016: the tolerance keeps
   * this a tie. */
  cr_expect(!res.fired && res.n_prev == 3, "mean %.17g limit %.17g", res.mean, res.limit);
  cr_expect_eq(res.mean, 0.80000000000000016);
  cr_expect_eq(res.limit, res.mean - 0.02);
  const double flat4[] = {0.80, 0.80, 0.80, 0.80, 0.78};
  rs__alert_check(&drop, flat4 + 1, 4, &res);
  cr_expect(!res.fired);
  rs__alert_check(&rel, flat, 5, &res);
  cr_expect(!res.fired, "2.5%% of 0.80 is 0.02: at the limit");
  const double below[] = {0.80, 0.80, 0.80, 0.7799};
  rs__alert_check(&drop, below, 4, &res);
  cr_expect(res.fired);
  cr_expect_float_eq(res.change, -0.0201, 1e-12);
  /* A window longer than the history averages what there is. */
  const double short_h[] = {0.70, 0.74, 0.60};
  rs__alert_check(&drop, short_h, 3, &res);
  cr_expect(res.fired && res.n_prev == 2 && res.mean == 0.72);
  /* No earlier value: no alert. */
  rs__alert_check(&drop, short_h, 1, &res);
  cr_expect(!res.fired && res.n_prev == 0 && isnan(res.mean));
  /* NaNs are passed over in the mean; a NaN latest fires. */
  const double gaps[] = {0.80, NAN, 0.70, NAN, 0.75, 0.74};
  rs__alert_check(&drop, gaps, 6, &res);
  cr_expect(!res.fired && res.n_prev == 3 && res.mean == (0.80 + 0.70 + 0.75) / 3);
  rs__alert_check(&drop, gaps, 4, &res);
  cr_expect(res.fired && isnan(res.latest));
  /* Latency: a rise of exactly 20 (or 20%) is not an alert. */
  const double lat[] = {100, 100, 100, 120};
  rs__alert_check(&rise, lat, 4, &res);
  cr_expect(!res.fired && res.limit == 120);
  rs__alert_check(&rise_rel, lat, 4, &res);
  cr_expect(!res.fired);
  const double lat2[] = {100, 100, 100, 120.001};
  rs__alert_check(&rise, lat2, 4, &res);
  cr_expect(res.fired);
  /* A rise alert does not fire on a fall, nor a drop alert on a rise. */
  const double fall[] = {100, 100, 100, 10};
  rs__alert_check(&rise, fall, 4, &res);
  cr_expect(!res.fired);
  rs__alert_check(&drop, lat2, 4, &res);
  cr_expect(!res.fired);
  size_t used = 0;
  const double w[] = {1, 2, 3, 4};
  cr_expect_eq(rs__alert_window_mean(w, 4, 2, &used), 3.5);
  cr_expect_eq(used, 2);
  rs__alert_free(&drop), rs__alert_free(&rel), rs__alert_free(&rise), rs__alert_free(&rise_rel);
}

/* A history built by hand, five nights (n1..n5, 2023-11-15 to -19):
 *   A  nDCG@10 0.80 0.80 0.80 0.80 0.78   latency_p95_ms 100 100 100 100 120
 *   B  nDCG@10 0.70 0.72 0.74 0.76 0.60
 *   C  nDCG@10 only on the last night: 0.5 */
static char *nights(void)
{
  char *db = th_join(th_fresh_dir(), "nights.sqlite");
  static const char *const a[] = {"0.8", "0.8", "0.8", "0.8", "0.78"}, *b[] = {"0.7", "0.72", "0.74", "0.76", "0.6"},
                           *la[] = {"100", "100", "100", "100", "120"};
  for (int i = 0; i < 5; i++) {
    char agg[512], lat[512], label[8];
    snprintf(agg, sizeof agg, "run,measure,value\nA,nDCG@10,%s\nB,nDCG@10,%s\n%s", a[i], b[i],
             i == 4 ? "C,nDCG@10,0.5\n" : "");
    snprintf(lat, sizeof lat, "run,n,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms\nA,5,1,1,1,%s,%s,1,1\n", la[i],
             la[i]);
    snprintf(label, sizeof label, "n%d", i + 1);
    append(db, folder(agg, lat), label, T0 + i * DAY);
  }
  return db;
}

Test(history, alerts_on_the_command_line, .timeout = 60)
{
  char *db = nights();
  /* One run degrades (B), one drops exactly the threshold (A), one has no
   * history (C): one ✗, exit 3. */
  th_result r = th_rs("history", db, "--alert", "nDCG@10:window=2:drop=0.02", NULL);
  cr_expect_eq(r.status, 3, "%s%s", r.out, r.err);
  char *la = line_with(r.out, "  A  "), *lb = line_with(r.out, "  B  "), *lc = line_with(r.out, "  C  ");
  cr_expect_str_eq(la, "  \xE2\x9C\x93 nDCG@10:window=2:drop=0.02  A  0.7800  mean 0.8000 of the previous 2, change "
                       "-0.0200 (limit 0.7800)");
  cr_expect_str_eq(lb, "  \xE2\x9C\x97 nDCG@10:window=2:drop=0.02  B  0.6000  fell 0.1500 below the mean 0.7500 of the "
                       "previous 2 (limit 0.7300); latest: n5, 2023-11-19T00:00:00Z");
  cr_expect_str_eq(lc, "  \xE2\x9C\x93 nDCG@10:window=2:drop=0.02  C  0.5000  no history yet: the first value (n5, "
                       "2023-11-19T00:00:00Z)");
  cr_expect(strstr(r.out, "alerts: 1 of 3 checks fired\n"), "%s", r.out);
  /* The trend shows the alerted measure. */
  cr_expect(strstr(r.out, "nights.sqlite: 5 evaluations, 2023-11-15T00:00:00Z (n1) to 2023-11-19T00:00:00Z (n5)"),
            "%s", r.out);
  cr_expect_str_eq(row_of(r.out, "B nDCG@10"), "B nDCG@10 5 0.7000 n1 0.6000 n5 0.7300 (4) -0.1300 "
                                                "\xE2\x96\x85\xE2\x96\x86\xE2\x96\x87\xE2\x96\x88\xE2\x96\x81");
  cr_expect_str_eq(row_of(r.out, "run "), "run measure evals first latest mean change last 5");
  cr_expect(!line_with(r.out, "latency"), "only the alerted measure: %s", r.out);
  th_free(&r);

  /* A window longer than the history: B's mean is of 4 values. */
  r = th_rs("history", db, "--alert", "nDCG@10:window=20:drop=0.02", "--run", "B", NULL);
  cr_expect_eq(r.status, 3);
  cr_expect(strstr(r.out, "fell 0.1300 below the mean 0.7300 of the previous 4 (limit 0.7100)"), "%s", r.out);
  th_free(&r);
  /* Only A: at the threshold, exit 0; relative 2.5% too; 2% fires. */
  r = th_rs("history", db, "--run", "A", "--alert", "nDCG@10:window=4:drop=0.02", "--alert", "ndcg_cut.10:drop=2.5%", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  cr_expect(strstr(r.out, "alerts: 0 of 2 checks fired"), "%s", r.out);
  cr_expect(strstr(r.out, "nDCG@10:window=20:drop=2.5%  A"), "canonical name: %s", r.out);
  th_free(&r);
  r = th_rs("history", db, "--run", "A", "--alert", "nDCG@10:drop=2%", NULL);
  cr_expect_eq(r.status, 3);
  cr_expect(strstr(r.out, "fell 0.0200 below the mean 0.8000 of the previous 4 (limit 0.7840)"), "%s", r.out);
  th_free(&r);
  /* Latency rises. */
  r = th_rs("history", db, "--alert", "latency_p95_ms:window=4:rise=20", NULL);
  cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
  th_free(&r);
  r = th_rs("history", db, "--alert", "latency_p95_ms:window=4:rise=15%", NULL);
  cr_expect_eq(r.status, 3);
  cr_expect(strstr(r.out, "rose 20.0000 above the mean 100.0000 of the previous 4 (limit 115.0000); latest: n5"), "%s",
            r.out);
  th_free(&r);
  /* With the CSV on stdout, the alert lines go to stderr. */
  r = th_rs("history", db, "--format", "csv", "--alert", "nDCG@10:window=2:drop=0.02", NULL);
  cr_expect_eq(r.status, 3);
  cr_expect(!strstr(r.out, "alerts:") && strstr(r.err, "alerts: 1 of 3 checks fired"), "%s", r.err);
  cr_expect(strstr(r.out, "5,2023-11-19T00:00:00Z,n5,B,nDCG@10,0.6\n"), "%s", r.out);
  th_free(&r);
  /* Usage errors: exit 1, the alert quoted. */
  r = th_rs("history", db, "--alert", "nDCG@10:window=0:drop=0.02", NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "ragsweep history: alert 'nDCG@10:window=0:drop=0.02': window must be an integer >= 1"),
            "%s", r.err);
  th_free(&r);
  r = th_rs("history", db, "--alert", "P@5:drop=0.1", NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "--alert P@5:drop=0.1: ") && strstr(r.err, "has no measure 'P@5' (its measures: latency_p50_ms"),
            "%s", r.err);
  th_free(&r);
  r = th_rs("history", db, "--last", "0", NULL);
  cr_expect_eq(r.status, 1);
  th_free(&r);
}

Test(history, trend_on_the_command_line)
{
  char *db = nights();
  th_result r = th_rs("history", db, "--last", "3", "--window", "1", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  /* --last 3: n3..n5; --window 1: the mean is the value before the latest. */
  cr_expect_str_eq(row_of(r.out, "A nDCG@10"),
                   "A nDCG@10 3 0.8000 n3 0.7800 n5 0.8000 (1) -0.0200 \xE2\x96\x88\xE2\x96\x88\xE2\x96\x81");
  cr_expect_str_eq(row_of(r.out, "A latency_p95_ms"),
                   "A latency_p95_ms 3 100.0000 n3 120.0000 n5 100.0000 (1) +20.0000 \xE2\x96\x81\xE2\x96\x81\xE2\x96\x88");
  /* Equal values: a flat line, no change (not -0.0000). */
  cr_expect_str_eq(row_of(r.out, "A latency_p50_ms"),
                   "A latency_p50_ms 3 1.0000 n3 1.0000 n5 1.0000 (1) +0.0000 \xE2\x96\x84\xE2\x96\x84\xE2\x96\x84");
  cr_expect_str_eq(row_of(r.out, "B nDCG@10"),
                   "B nDCG@10 3 0.7400 n3 0.6000 n5 0.7600 (1) -0.1600 \xE2\x96\x87\xE2\x96\x88\xE2\x96\x81");
  cr_expect_str_eq(row_of(r.out, "C nDCG@10"), "C nDCG@10 1 0.5000 n5 0.5000 n5 - - \xE2\x96\x84");
  th_free(&r);
}
