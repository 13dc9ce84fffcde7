/* history.c: the history database (see history.h), kept through util/db.h. */
#define _GNU_SOURCE
#include "report/history.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "metrics/spec.h"
#include "util/db.h"
#include "util/strbuf.h"

/* The schema, as README ("History and alerts") shows it: users query the
 * file with sqlite3 or DuckDB, and `.schema` prints these texts, comments
 * included.  Plain rowid tables (no WITHOUT ROWID), which every SQLite
 * reader (DuckDB's sqlite extension included) can scan. */
static const char SCHEMA[] =
    "CREATE TABLE evaluations(\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  time TEXT NOT NULL,              -- ISO-8601 UTC: 2026-11-23T02:00:00Z\n"
    "  unix_time INTEGER NOT NULL,      -- the same instant, seconds since 1970\n"
    "  label TEXT,                      -- --label (a commit, a model version), or NULL\n"
    "  command TEXT NOT NULL,           -- eval, compare or rag\n"
    "  output_dir TEXT NOT NULL,        -- the command's -o folder\n"
    "  ragsweep_version TEXT NOT NULL,\n"
    "  hostname TEXT\n"
    ");\n"
    "CREATE TABLE results(\n"
    "  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),\n"
    "  run TEXT NOT NULL,\n"
    "  measure TEXT NOT NULL,           -- as in aggregate.csv: nDCG@10, faithfulness, latency_p95_ms\n"
    "  value REAL,                      -- NULL where aggregate.csv has no number (NaN)\n"
    "  PRIMARY KEY (evaluation_id, run, measure)\n"
    ");\n"
    "CREATE TABLE attributes(\n"
    "  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),\n"
    "  run TEXT NOT NULL,\n"
    "  name TEXT NOT NULL,              -- model, chunk, ... (the configuration's attributes)\n"
    "  value TEXT NOT NULL,\n"
    "  PRIMARY KEY (evaluation_id, run, name)\n"
    ");\n"
    "CREATE INDEX evaluations_by_time ON evaluations(unix_time, id);\n"
    "CREATE INDEX results_by_series ON results(run, measure, evaluation_id);\n"
    "CREATE VIEW series AS\n"
    "  SELECT e.id AS evaluation_id, e.time, e.unix_time, e.label, e.command, r.run, r.measure, r.value\n"
    "  FROM results AS r JOIN evaluations AS e ON e.id = r.evaluation_id;\n"
    "CREATE TRIGGER evaluations_delete AFTER DELETE ON evaluations BEGIN\n"
    "  DELETE FROM results WHERE evaluation_id = old.id;\n"
    "  DELETE FROM attributes WHERE evaluation_id = old.id;\n"
    "END;\n";

static const rs__db_kind HISTORY_KIND = {
    .noun = "history",
    .file_name = "history.sqlite",
    .app_id = 0x52534849, /* "RSHI" */
    .version = RS_HISTORY_VERSION,
    .schema = SCHEMA,
};

/* --- appending ---------------------------------------------------------------------- */

/* The latency percentiles stored as measures. */
static const char *const LATENCY_MEASURE[] = {"latency_p50_ms", "latency_p95_ms", "latency_p99_ms"};

static double latency_value(const rs__results_latency *l, size_t i)
{
  return i == 0 ? l->p50_ms : i == 1 ? l->p95_ms : l->p99_ms;
}

/* What one append writes, worked out before the file is touched. */
typedef struct {
  char **series_of; /* [agg rows] the history run of each row */
  rs__strdict keys; /* "run\x1fmeasure" of the rows (duplicates) */
} plan;

static void plan_free(plan *p, size_t n_rows)
{
  for (size_t i = 0; p->series_of && i < n_rows; i++) free(p->series_of[i]);
  free(p->series_of);
  rs__strdict_free(&p->keys);
}

/* Adds run/measure to the keys; *dup is 1 when it was there already. */
static rs_code add_key(plan *p, const char *run, const char *measure, int *dup, rs_error *err)
{
  rs__sb b = {0};
  rs__sb_str(&b, run);
  rs__sb_add(&b, "\x1f", 1);
  rs__sb_str(&b, measure);
  char *k = rs__sb_take(&b);
  if (!k) return rs__fail(err, RS_NOMEM, "out of memory");
  const size_t before = p->keys.n;
  uint32_t id;
  rs_code rc = rs__strdict_add(&p->keys, k, &id, err);
  free(k);
  *dup = !rc && p->keys.n == before;
  return rc;
}

/* Names each row's series: the run, plus " name=value" for every label
 * whose value changes within the run (rag's judge), and checks that no
 * series has a measure twice. */
static rs_code plan_make(const rs__results *r, plan *p, rs_error *err)
{
  const rs__agg *t = &r->agg;
  const size_t nl = rs__results_n_labels(r), nr = r->n_runs;
  rs_code rc = RS_OK;
  uint32_t *first = rs__calloc(rs__mul(nr, nl), sizeof *first);
  unsigned char *seen = rs__calloc(nr, 1), *varies = rs__calloc(rs__mul(nr, nl), 1);
  if (!(p->series_of = rs__calloc(t->n_rows, sizeof *p->series_of)) || !first || !seen || !varies) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < t->n_rows; i++) {
    const size_t run = rs__results_run_id(r, i);
    for (size_t l = 0; l < nl; l++) {
      const uint32_t v = t->id[i * t->n_keys + 1 + l];
      if (!seen[run]) first[run * nl + l] = v;
      else if (first[run * nl + l] != v) varies[run * nl + l] = 1;
    }
    seen[run] = 1;
  }
  for (size_t i = 0; i < t->n_rows && !rc; i++) {
    const size_t run = rs__results_run_id(r, i);
    rs__sb b = {0};
    rs__sb_str(&b, rs__results_run(r, i));
    for (size_t l = 0; l < nl; l++)
      if (varies[run * nl + l])
        rs__sb_printf(&b, " %s=%s", rs__results_label_name(r, l), rs__results_label_value(r, i, l));
    if (!(p->series_of[i] = rs__sb_take(&b))) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    int dup = 0;
    if (!(rc = add_key(p, p->series_of[i], rs__results_measure(r, i), &dup, err)) && dup)
      rc = rs__fail(err, RS_FORMAT,
                    "%s:%zu: run '%s' has a second value of '%s' (expected one value per run and measure, as "
                    "'ragsweep %s' writes aggregate.csv)",
                    r->agg_path, t->line[i], p->series_of[i], rs__results_measure(r, i), rs__results_kind_name(r->kind));
  }
done:
  free(first);
  free(seen);
  free(varies);
  return rc;
}

static void iso_time(int64_t unix_time, char out[32])
{
  const time_t tt = (time_t)unix_time;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(out, 32, "@%lld", (long long)unix_time);
}

/* Inserts the evaluation's rows; inside the caller's transaction. */
static rs_code insert_rows(rs__db *db, const rs__results *r, plan *p, int64_t eval_id, rs_error *err)
{
  const rs__agg *t = &r->agg;
  const size_t nl = rs__results_n_labels(r);
  rs__db_stmt *res = NULL, *attr = NULL;
  rs_code rc;
  int row;
  if ((rc = rs__db_prepare(db, "INSERT INTO results(evaluation_id, run, measure, value) VALUES (?1, ?2, ?3, ?4)",
                           "cannot append the evaluation's results", 1, &res, err)) ||
      (rc = rs__db_prepare(db, "INSERT OR IGNORE INTO attributes(evaluation_id, run, name, value) VALUES (?1, ?2, ?3, ?4)",
                           "cannot append the evaluation's attributes", 1, &attr, err)))
    goto done;
  for (size_t i = 0; i < t->n_rows && !rc; i++) {
    rs__db_bind_int64(res, 1, eval_id);
    rs__db_bind_text(res, 2, p->series_of[i]);
    rs__db_bind_text(res, 3, rs__results_measure(r, i));
    rs__db_bind_double(res, 4, t->value[i]);
    rc = rs__db_step(res, &row, err);
    rs__db_reset(res);
    for (size_t l = 0; l < nl && !rc; l++) {
      const char *v = rs__results_label_value(r, i, l);
      if (!*v) continue;
      rs__db_bind_int64(attr, 1, eval_id);
      rs__db_bind_text(attr, 2, p->series_of[i]);
      rs__db_bind_text(attr, 3, rs__results_label_name(r, l));
      rs__db_bind_text(attr, 4, v);
      rc = rs__db_step(attr, &row, err);
      rs__db_reset(attr);
    }
  }
  /* Latency, per series of each run that has it (a run measured once has
   * one latency whatever its judges), unless aggregate.csv had the name. */
  for (size_t i = 0; i < t->n_rows && !rc; i++) {
    const size_t run = rs__results_run_id(r, i);
    if (!r->has_latency[run]) continue;
    for (size_t m = 0; m < sizeof LATENCY_MEASURE / sizeof *LATENCY_MEASURE && !rc; m++) {
      const double v = latency_value(&r->latency[run], m);
      int dup = 0;
      if (isnan(v) || (rc = add_key(p, p->series_of[i], LATENCY_MEASURE[m], &dup, err)) || dup) continue;
      rs__db_bind_int64(res, 1, eval_id);
      rs__db_bind_text(res, 2, p->series_of[i]);
      rs__db_bind_text(res, 3, LATENCY_MEASURE[m]);
      rs__db_bind_double(res, 4, v);
      rc = rs__db_step(res, &row, err);
      rs__db_reset(res);
    }
  }
done:
  rs__db_stmt_free(res);
  rs__db_stmt_free(attr);
  return rc;
}

rs_code rs__history_append(const char *path, const rs__results *r, const char *command, const char *label,
                           int64_t unix_time, int64_t *evaluation_id, rs_error *err)
{
  plan p = {0};
  rs__db *db = NULL;
  rs__db_stmt *ev = NULL;
  char when[32], host[256], *dir = NULL;
  int row;
  rs_code rc;
  if ((rc = plan_make(r, &p, err)) || (rc = rs__db_open(path, &HISTORY_KIND, 1, &db, err))) goto done;
  iso_time(unix_time, when);
  if (gethostname(host, sizeof host) != 0) host[0] = '\0';
  host[sizeof host - 1] = '\0';
  dir = realpath(r->dir, NULL);
  if ((rc = rs__db_prepare(db,
                           "INSERT INTO evaluations(time, unix_time, label, command, output_dir, ragsweep_version,"
                           " hostname) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                           "cannot append an evaluation", 0, &ev, err)) ||
      (rc = rs__db_begin(db, "cannot append an evaluation", err)))
    goto done;
  rs__db_bind_text(ev, 1, when);
  rs__db_bind_int64(ev, 2, unix_time);
  rs__db_bind_text(ev, 3, label);
  rs__db_bind_text(ev, 4, command);
  rs__db_bind_text(ev, 5, dir ? dir : r->dir);
  rs__db_bind_text(ev, 6, RAGSWEEP_VERSION);
  rs__db_bind_text(ev, 7, host[0] ? host : NULL);
  if ((rc = rs__db_step(ev, &row, err))) goto rollback;
  const int64_t id = rs__db_last_id(db);
  if ((rc = insert_rows(db, r, &p, id, err)) || (rc = rs__db_commit(db, "cannot append an evaluation", err)))
    goto rollback;
  if (evaluation_id) *evaluation_id = id;
  goto done;
rollback:
  rs__db_rollback(db);
done:
  rs__db_stmt_free(ev);
  rs__db_close(db);
  plan_free(&p, r->agg.n_rows);
  free(dir);
  return rc;
}

/* --- reading ------------------------------------------------------------------------ */

void rs__history_series_free(rs__history_series *s)
{
  if (!s) return;
  rs__strdict_free(&s->runs);
  rs__strdict_free(&s->measures);
  for (size_t i = 0; s->evals && i < s->n_evals; i++) {
    free(s->evals[i].time);
    free(s->evals[i].label);
    free(s->evals[i].command);
    free(s->evals[i].output_dir);
  }
  free(s->evals);
  free(s->points);
  *s = (rs__history_series){0};
}

static char *dup_col(rs__db_stmt *st, int i, int *oom)
{
  const char *t = rs__db_col_text(st, i, NULL);
  if (!t) return NULL;
  char *c = strdup(t);
  if (!c) *oom = 1;
  return c;
}

static rs_code load_evals(rs__db *db, rs__history_series *s, rs_error *err)
{
  rs__db_stmt *st = NULL;
  size_t cap = 0;
  int row = 0;
  rs_code rc = rs__db_prepare(db, "SELECT id, unix_time, time, label, command, output_dir FROM evaluations"
                                  " ORDER BY unix_time, id",
                              "cannot read the evaluations", 0, &st, err);
  while (!rc && !(rc = rs__db_step(st, &row, err)) && row) {
    if (s->n_evals == cap) {
      cap = cap ? 2 * cap : 64;
      rs__history_eval *g = rs__realloc(s->evals, rs__mul(cap, sizeof *g));
      if (!g) { rc = rs__fail(err, RS_NOMEM, "out of memory"); break; }
      s->evals = g;
    }
    rs__history_eval *e = &s->evals[s->n_evals++];
    int oom = 0;
    *e = (rs__history_eval){.id = rs__db_col_int64(st, 0), .unix_time = rs__db_col_int64(st, 1)};
    e->time = dup_col(st, 2, &oom);
    e->label = dup_col(st, 3, &oom);
    e->command = dup_col(st, 4, &oom);
    e->output_dir = dup_col(st, 5, &oom);
    if (oom || !e->time || !e->command || !e->output_dir) rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  rs__db_stmt_free(st);
  return rc;
}

/* The distinct values of column `col` of results, bytewise. */
static rs_code distinct(rs__db *db, const char *sql, rs__strdict *out, rs_error *err)
{
  rs__db_stmt *st = NULL;
  int row = 0;
  uint32_t id;
  rs_code rc = rs__db_prepare(db, sql, "cannot read the runs and measures", 0, &st, err);
  while (!rc && !(rc = rs__db_step(st, &row, err)) && row) {
    const char *v = rs__db_col_text(st, 0, NULL);
    rc = rs__strdict_add(out, v ? v : "", &id, err);
  }
  rs__db_stmt_free(st);
  return rc;
}

static rs_code not_there(const char *path, const char *name, const char *what, const rs__strdict *have, rs_error *err)
{
  rs__sb b = {0};
  rs__sb_list(&b, have->str, have->n, 300);
  char *list = rs__sb_take(&b);
  rs_code rc = rs__fail(err, RS_USAGE, "%s has no %s '%s' (its %ss: %s)", path, what, name, what,
                        list && *list ? list : "none");
  free(list);
  return rc;
}

/* want[id] for the measures of `have` that f selects. */
static rs_code select_measures(const char *path, const rs__history_filter *f, const rs__strdict *have,
                               unsigned char *want, rs_error *err)
{
  if (!f || f->n_measures == 0) {
    for (size_t i = 0; i < have->n; i++) want[i] = strncmp(have->str[i], "num_q", 5) != 0;
    return RS_OK;
  }
  for (size_t a = 0; a < f->n_measures; a++) {
    long id = rs__strdict_find(have, f->measures[a]);
    if (id >= 0) {
      want[id] = 1;
      continue;
    }
    rs__spec *spec = NULL;
    rs_error perr = {0};
    const char *missing = f->measures[a];
    if (rs__spec_build(&f->measures[a], 1, 1000, &spec, &perr) == RS_OK) {
      missing = NULL;
      for (size_t i = 0; i < spec->n_out && !missing; i++) {
        if ((id = rs__strdict_find(have, spec->req[i].name)) < 0) missing = spec->req[i].name;
        else want[id] = 1;
      }
    }
    rs_code rc = missing ? not_there(path, missing, "measure", have, err) : RS_OK;
    rs__spec_free(spec);
    if (rc) return rc;
  }
  return RS_OK;
}

typedef struct {
  int64_t id;
  size_t index; /* into evals */
} eval_ref;

static int by_id_cmp(const void *a, const void *b)
{
  const int64_t x = ((const eval_ref *)a)->id, y = ((const eval_ref *)b)->id;
  return (x > y) - (x < y);
}

rs_code rs__history_series_load(const char *path, const rs__history_filter *f, rs__history_series *s, rs_error *err)
{
  rs__db *db = NULL;
  rs__db_stmt *st = NULL;
  rs__strdict runs = {0}, measures = {0};
  unsigned char *want_run = NULL, *want_measure = NULL;
  eval_ref *by_id = NULL;
  size_t cap = 0;
  int row = 0;
  rs_code rc;
  struct stat sb;
  if (stat(path, &sb) != 0 && errno == ENOENT)
    return rs__fail(err, RS_IO, "%s: no such history; 'ragsweep eval' (or compare, rag) with --history %s creates "
                                "it and appends its first evaluation", path, path);
  if ((rc = rs__db_open(path, &HISTORY_KIND, 0, &db, err)) || (rc = load_evals(db, s, err)) ||
      (rc = distinct(db, "SELECT DISTINCT run FROM results ORDER BY run", &runs, err)) ||
      (rc = distinct(db, "SELECT DISTINCT measure FROM results ORDER BY measure", &measures, err)))
    goto done;
  if (!(want_run = rs__calloc(runs.n, 1)) || !(want_measure = rs__calloc(measures.n, 1)) ||
      !(by_id = rs__calloc(s->n_evals, sizeof *by_id))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < runs.n; i++) want_run[i] = !f || f->n_runs == 0;
  for (size_t a = 0; f && a < f->n_runs && !rc; a++) {
    const long id = rs__strdict_find(&runs, f->runs[a]);
    if (id < 0) rc = not_there(path, f->runs[a], "run", &runs, err);
    else want_run[id] = 1;
  }
  if (rc || (rc = select_measures(path, f, &measures, want_measure, err))) goto done;
  /* Evaluations by id, for the lookup of each point's. */
  for (size_t i = 0; i < s->n_evals; i++) by_id[i] = (eval_ref){s->evals[i].id, i};
  qsort(by_id, s->n_evals, sizeof *by_id, by_id_cmp);
  if ((rc = rs__db_prepare(db,
                           "SELECT r.run, r.measure, r.value, e.id FROM results AS r JOIN evaluations AS e"
                           " ON e.id = r.evaluation_id ORDER BY r.run, r.measure, e.unix_time, e.id",
                           "cannot read the results", 0, &st, err)))
    goto done;
  while (!(rc = rs__db_step(st, &row, err)) && row) {
    const char *run = rs__db_col_text(st, 0, NULL), *measure = rs__db_col_text(st, 1, NULL);
    const long rid = rs__strdict_find(&runs, run ? run : ""), mid = rs__strdict_find(&measures, measure ? measure : "");
    if (rid < 0 || mid < 0 || !want_run[rid] || !want_measure[mid]) continue;
    const int64_t eid = rs__db_col_int64(st, 3);
    const eval_ref key = {eid, 0}, *e = bsearch(&key, by_id, s->n_evals, sizeof *by_id, by_id_cmp);
    if (!e) continue; /* appended after the evaluations were read */
    if (s->n_points == cap) {
      cap = cap ? 2 * cap : 256;
      rs__history_point *g = rs__realloc(s->points, rs__mul(cap, sizeof *g));
      if (!g) { rc = rs__fail(err, RS_NOMEM, "out of memory"); break; }
      s->points = g;
    }
    uint32_t r_id, m_id;
    if ((rc = rs__strdict_add(&s->runs, run, &r_id, err)) || (rc = rs__strdict_add(&s->measures, measure, &m_id, err)))
      break;
    s->points[s->n_points++] =
        (rs__history_point){.run = r_id, .measure = m_id, .eval = e->index, .value = rs__db_col_double(st, 2)};
  }
  if (rc || !f || !f->last) goto done;
  /* Keep the last `last` points of each series. */
  size_t kept = 0;
  for (size_t a = 0, b; a < s->n_points; a = b) {
    b = a + 1;
    while (b < s->n_points && s->points[b].run == s->points[a].run && s->points[b].measure == s->points[a].measure) b++;
    const size_t from = b - a > f->last ? b - f->last : a;
    for (size_t i = from; i < b; i++) s->points[kept++] = s->points[i];
  }
  s->n_points = kept;
done:
  rs__db_stmt_free(st);
  rs__db_close(db);
  rs__strdict_free(&runs);
  rs__strdict_free(&measures);
  free(want_run);
  free(want_measure);
  free(by_id);
  return rc;
}
