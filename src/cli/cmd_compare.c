/* cmd_compare.c: "ragsweep compare": which configuration is better, and is
 * the difference real?  Paired tests on per-query values, corrected for
 * multiple comparisons, with gates for CI. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "direct_input.h"
#include "stats/compare.h"
#include "formats/csvio.h"
#include "gate.h"
#include "engine/sched.h"
#include "metrics/spec.h"
#include "engine/shard.h"
#include "engine/sweep.h"
#include "shard_io.h"
#include "sweep_io.h"
#include "publish.h"
#include "engine/sweep_ranks.h"
#include "util/mpi.h"
#include "sweep_opts.h"
#include "util/strbuf.h"
#include "worst.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep compare CORPUS.h5 [RUNS.h5 ...] -o OUTDIR [options]\n"
          "       ragsweep compare QRELS|BEIR_DIR RUN RUN [RUN ...] -o OUTDIR [options]\n"
          "       ragsweep compare --qrels QRELS RUN RUN [RUN ...] -o OUTDIR [options]\n"
          "       ragsweep compare --per-query FILE.csv -o OUTDIR [options]\n"
          "\n"
          "Text inputs (TREC, JSONL or CSV/TSV runs with their judgments) are read as in\n"
          "'ragsweep eval --help'.\n"
          "\n"
          "Compares configurations on per-query values: every run against a baseline\n"
          "(--baseline RUN, default the first run) or every pair (--all-pairs).  Per measure\n"
          "and comparison: the two means and their difference, a paired two-sided t-test,\n"
          "a two-sided paired randomization test, a bootstrap interval of the mean difference\n"
          "and the effect size (Cohen's d_z), with p-values adjusted over the runs compared\n"
          "on that measure.  Writes OUTDIR/compare.csv, OUTDIR/summary.csv (the best run per\n"
          "measure and the runs not significantly worse than it) and OUTDIR/aggregate.csv\n"
          "(the means compared, as eval writes them); prints the summary.  The last column\n"
          "of all three, queries, names the query policy: all (default), common\n"
          "(--queries=judged) or values (--per-query).  A re-run removes worst.csv and\n"
          "gates.csv from OUTDIR when this run does not write them.\n"
          "\n"
          "Queries: every judged query, a query a run does not rank scoring 0 (trec_eval -c),\n"
          "so all runs are compared on the same queries; with --queries=judged, the queries\n"
          "every run ranks.  From per_query.csv: the queries with a value in every run.\n"
          "\n"
          "--per-query also reads rag's per_sample.csv (columns sample, the configuration\n"
          "columns, [judge], metric, value, reason): a run is a configuration, named by its\n"
          "values joined with '/' (gpt-4o/256/none); a query is a sample; a measure is a\n"
          "metric, or METRIC[JUDGE] when the judge column is filled.  An empty value (a\n"
          "metric undefined or failed for that sample) is left out.  -m and --gate take\n"
          "rag's metric names as written (-m faithfulness also takes faithfulness[JUDGE]);\n"
          "without -m every metric of the file is compared.\n"
          "\n"
          "options:\n"
          "  -o, --out DIR             output folder (created if missing)\n"
          "  -m, --measure NAME        measure (repeatable; as in eval); default nDCG@10 RR@10 R@10\n"
          "      --per-query FILE      read per-query values from eval's per_query.csv, or\n"
          "                            per-sample values from rag's per_sample.csv\n"
          "      --baseline RUN        compare every run with RUN (default: the first run)\n"
          "      --all-pairs           compare every pair of runs instead\n"
          "      --permutations N      randomization test permutations (default 10000; 0: none)\n"
          "      --bootstrap N         bootstrap replicates (default 1000; 0: none)\n"
          "      --ci LEVEL            interval level (default 0.95)\n"
          "      --seed S              seed of the random streams (default 42)\n"
          "      --correction C        holm (default), bh (Benjamini-Hochberg) or none\n"
          "      --test T              perm (default) or ttest: the adjusted p-value that decides\n"
          "                            significance in the summary and the gates\n"
          "      --alpha A             significance level (default 0.05)\n"
          "      --gate 'M>=X'         quality gate on the means (repeatable; >=, >, <=, <)\n"
          "      --fail-if-worse-than RUN\n"
          "                            fail when a run is significantly worse than RUN (which\n"
          "                            becomes the baseline) on a gated measure (every measure\n"
          "                            when there are no gates), after correction\n"
          "      --worst N             write OUTDIR/worst.csv (see eval --help; not with --per-query)\n"
          "      --depths K1,K2,...    compare every run cut at each depth K too, as R/top_k=K\n"
          "                            (see eval --help; not with --per-query)\n"
          "      --queries=all|judged  see above (default all)\n"
          "      --ties=trec|stored    as in eval\n"
          "      --threads N           threads, 1 to 4096 (default: OMP_NUM_THREADS or all cores)\n"
          "      --timing              print where the time went on stderr\n"
          );
  fprintf(f,
          "      --shard I/N           score share I of N of the runs' queries only (0 <= I < N)\n"
          "                            into the shard folder -o; 'ragsweep merge SHARD_DIR...\n"
          "                            -o OUTDIR' runs the tests and writes compare's files\n"
          "      --qrels FILE          TREC qrels to score with, in place of the corpus's /qrels\n"
          "                            (ids matched to the corpus); with text runs: their\n"
          "                            judgments (TREC qrels, BEIR qrels or a JSON eval set), and\n"
          "                            every positional is a run\n"
          "      --split NAME          a BEIR folder's qrels/NAME.tsv (default test)\n");
  fputs(PUBLISH_OPTS_HELP, f);
  fprintf(f,
          "  -h, --help                this help\n"
          "\n"
          "Every figure is the same at any thread count: the random streams are\n"
          "counter-based (Philox4x32-10), keyed by the seed and the permutation or replicate.\n"
          "\n"
          "exit status: 0 ok; 1 usage; 2 unreadable, malformed or inconsistent input;\n"
          "3 a --gate or --fail-if-worse-than check failed (every output is still written).\n");
}

/* --- the per-query values ----------------------------------------------------- */

/* values[(k * n_runs + r) * nq + q]: measure k, run r, query q; NaN where
 * the run has no value for the query. */
typedef struct values {
  size_t n_meas, n_runs, nq;
  double *v;
  char **measures; /* [n_meas] (owned) */
  char **runs;     /* [n_runs] (owned) */
  char **queries;  /* [nq] (owned; NULL when read from a corpus) */
} values;

static void values_free(values *x)
{
  for (size_t i = 0; x->measures && i < x->n_meas; i++) free(x->measures[i]);
  for (size_t i = 0; x->runs && i < x->n_runs; i++) free(x->runs[i]);
  for (size_t i = 0; x->queries && i < x->nq; i++) free(x->queries[i]);
  free(x->measures);
  free(x->runs);
  free(x->queries);
  free(x->v);
}

static double *slot(const values *x, size_t k, size_t r) { return x->v + (k * x->n_runs + r) * x->nq; }

static rs_code values_alloc(values *x, rs_error *err)
{
  size_t n = rs__mul(x->n_meas, rs__mul(x->n_runs, x->nq));
  if (!(x->v = rs__malloc(rs__mul(n, sizeof *x->v))))
    return rs__fail(err, RS_NOMEM, "out of memory (%zu measures x %zu runs x %zu queries)", x->n_meas, x->n_runs,
                    x->nq);
  for (size_t i = 0; i < n; i++) x->v[i] = NAN;
  return RS_OK;
}

/* From a corpus: the sweep's per-query callback. */
typedef struct corpus_sink {
  values *x;
  const rs__spec *spec;
  worst_file *worst;
  const sweep_input *in;
} corpus_sink;

static rs_code take_query(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  corpus_sink *s = ctx;
  if (s->worst) {
    rs_code rc = worst_add(s->worst, run, s->in->runs[run]->name, query, v, err);
    if (rc) return rc;
  }
  for (size_t k = 0; k < s->spec->n_out; k++) slot(s->x, k, run)[query] = v[k];
  /* The two hidden values behind num_q_no_rel_ret and num_q_perfect_P@1. */
  slot(s->x, s->spec->n_out, run)[query] = v[s->spec->hidden_relret];
  slot(s->x, s->spec->n_out + 1, run)[query] = v[s->spec->hidden_p1];
  return RS_OK;
}

/* From per_query.csv: one pass keeps (run, query, measure, value, line). */
typedef struct triple {
  uint32_t run, query, meas;
  double value;
  size_t line;
} triple;

typedef struct name_table {
  char **name;
  size_t n, cap;
  uint32_t *slot; /* open addressing: index + 1, 0 empty */
  size_t n_slots;
} name_table;

static void names_free(name_table *t)
{
  for (size_t i = 0; i < t->n; i++) free(t->name[i]);
  free(t->name);
  free(t->slot);
}

/* The index of s, added when new; SIZE_MAX when out of memory. */
static size_t names_intern(name_table *t, const char *s)
{
  if (2 * (t->n + 1) > t->n_slots) {
    size_t n_slots = t->n_slots ? 2 * t->n_slots : 64;
    uint32_t *slots = rs__calloc(n_slots, sizeof *slots);
    if (!slots) return SIZE_MAX;
    for (size_t i = 0; i < t->n; i++) {
      size_t h = rs__hash_bytes(t->name[i], strlen(t->name[i])) & (n_slots - 1);
      while (slots[h]) h = (h + 1) & (n_slots - 1);
      slots[h] = (uint32_t)(i + 1);
    }
    free(t->slot);
    t->slot = slots, t->n_slots = n_slots;
  }
  size_t h = rs__hash_bytes(s, strlen(s)) & (t->n_slots - 1);
  while (t->slot[h]) {
    if (strcmp(t->name[t->slot[h] - 1], s) == 0) return t->slot[h] - 1;
    h = (h + 1) & (t->n_slots - 1);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    char **p = rs__realloc(t->name, rs__mul(cap, sizeof *p));
    if (!p) return SIZE_MAX;
    t->name = p, t->cap = cap;
  }
  if (!(t->name[t->n] = strdup(s))) return SIZE_MAX;
  t->slot[h] = (uint32_t)(t->n + 1);
  return t->n++;
}

/* Which file --per-query names: eval's per_query.csv or rag's
 * per_sample.csv, told apart by the header alone. */
typedef enum { LAYOUT_PER_QUERY, LAYOUT_PER_SAMPLE } pq_layout;

static int has_column(char **f, size_t n_f, const char *name)
{
  for (size_t i = 0; i < n_f; i++)
    if (strcmp(f[i], name) == 0) return 1;
  return 0;
}

static rs_code take_layout(void *ctx, char **f, size_t n_f, size_t line, rs_error *err)
{
  pq_layout *layout = ctx;
  /* rag's per_sample.csv has sample and metric; eval's per_query.csv has
   * query (rag refuses a configuration column named sample or metric, and
   * a query column is eval's). */
  *layout = !has_column(f, n_f, "query") && has_column(f, n_f, "sample") && has_column(f, n_f, "metric")
                ? LAYOUT_PER_SAMPLE
                : LAYOUT_PER_QUERY;
  return RS_OK;
}

static rs_code read_layout(const char *path, pq_layout *layout, rs_error *err)
{
  *layout = LAYOUT_PER_QUERY;
  return rs__csv_read_header(path, take_layout, layout, err);
}

/* The columns of per_sample.csv that are not configuration columns. */
static int rag_fixed_column(const char *name)
{
  static const char *const fixed[] = {"sample", "judge", "metric", "value", "reason"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (strcmp(name, fixed[i]) == 0) return 1;
  return 0;
}

typedef struct csv_load {
  const char *path;
  pq_layout layout;
  name_table runs, queries, measures;
  const rs__spec *want; /* per_query.csv: measures to keep (NULL: all) */
  /* per_sample.csv: the names to keep, each a metric or a METRIC[JUDGE]
   * measure (n_want 0: all), and which of them had a value. */
  const char *const *want_names;
  size_t n_want;
  unsigned char *want_hit;
  int col[4];           /* run (-1 in per_sample.csv), query or sample, measure or metric, value */
  int judge_col;        /* per_sample.csv: judge, or -1 */
  size_t *config_col;   /* per_sample.csv: the configuration columns, in file order */
  size_t n_config;
  char **run_tuple;     /* per_sample.csv: [n_tuples] each run's values joined by 0x1F (see run_of) */
  size_t n_tuples, cap_tuples;
  rs__sb name, tuple, measure; /* per_sample.csv: scratch for one row */
  triple *t;
  size_t n, cap;
} csv_load;

static rs_code per_sample_header(csv_load *l, char **f, size_t n_f, rs_error *err)
{
  l->col[0] = l->col[1] = l->col[2] = l->col[3] = l->judge_col = -1;
  if (!(l->config_col = rs__calloc(n_f, sizeof *l->config_col))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n_f; i++) {
    if (strcmp(f[i], "sample") == 0) l->col[1] = (int)i;
    else if (strcmp(f[i], "metric") == 0) l->col[2] = (int)i;
    else if (strcmp(f[i], "value") == 0) l->col[3] = (int)i;
    else if (strcmp(f[i], "judge") == 0) l->judge_col = (int)i;
    if (!rag_fixed_column(f[i])) l->config_col[l->n_config++] = i;
  }
  if (l->col[3] < 0)
    return rs__fail(err, RS_FORMAT, "%s:1: expected a per_sample.csv header with columns sample,...,metric,value; "
                                    "found no 'value' column", l->path);
  return RS_OK;
}

/* The run of a per_sample.csv row: its configuration's values joined with
 * '/'.  Two different configurations can join to one name ("a/b" + "c" and
 * "a" + "b/c"); that is an error, not a silent merge, so each run keeps its
 * values joined by the unit separator (0x1F), which no configuration value
 * of rag's carries in practice, and a name met again must bring them back. */
static rs_code run_of(csv_load *l, char **f, size_t line, size_t *run, rs_error *err)
{
  rs__sb_free(&l->name);
  rs__sb_free(&l->tuple);
  for (size_t c = 0; c < l->n_config; c++) {
    if (c) {
      rs__sb_add(&l->name, "/", 1);
      rs__sb_add(&l->tuple, "\x1f", 1);
    }
    rs__sb_str(&l->name, f[l->config_col[c]]);
    rs__sb_str(&l->tuple, f[l->config_col[c]]);
  }
  if (l->name.failed || l->tuple.failed) return rs__fail(err, RS_NOMEM, "out of memory");
  const size_t before = l->runs.n;
  const size_t r = names_intern(&l->runs, rs__sb_view(&l->name));
  if (r == SIZE_MAX) return rs__fail(err, RS_NOMEM, "out of memory");
  if (l->runs.n > before) { /* a new run: r == n_tuples */
    if (l->n_tuples == l->cap_tuples) {
      size_t cap = l->cap_tuples ? 2 * l->cap_tuples : 16;
      char **p = rs__realloc(l->run_tuple, rs__mul(cap, sizeof *p));
      if (!p) return rs__fail(err, RS_NOMEM, "out of memory");
      l->run_tuple = p, l->cap_tuples = cap;
    }
    if (!(l->run_tuple[l->n_tuples] = strdup(rs__sb_view(&l->tuple)))) return rs__fail(err, RS_NOMEM, "out of memory");
    l->n_tuples++;
  } else if (strcmp(l->run_tuple[r], rs__sb_view(&l->tuple)) != 0) {
    return rs__fail(err, RS_FORMAT,
                    "%s:%zu: two configurations read as run '%s' (their values joined with '/'); expected values "
                    "that keep them apart (a '/' inside a value?)", l->path, line, l->runs.name[r]);
  }
  *run = r;
  return RS_OK;
}

/* Whether a per_sample.csv row of metric (and measure, metric[judge] or
 * metric) is asked for; marks the names it answers. */
static int sample_wanted(csv_load *l, const char *metric, const char *measure, int mark)
{
  if (!l->n_want) return 1;
  int wanted = 0;
  for (size_t i = 0; i < l->n_want; i++)
    if (strcmp(l->want_names[i], metric) == 0 || strcmp(l->want_names[i], measure) == 0) {
      wanted = 1;
      if (mark) l->want_hit[i] = 1;
    }
  return wanted;
}

static rs_code take_row(void *ctx, char **f, size_t n_f, size_t line, rs_error *err)
{
  csv_load *l = ctx;
  static const char *const need[4] = {"run", "query", "measure", "value"};
  const int rag = l->layout == LAYOUT_PER_SAMPLE;
  if (line == 1) {
    if (rag) return per_sample_header(l, f, n_f, err);
    for (int c = 0; c < 4; c++) {
      l->col[c] = -1;
      for (size_t i = 0; i < n_f; i++)
        if (strcmp(f[i], need[c]) == 0) l->col[c] = (int)i;
      if (l->col[c] < 0)
        return rs__fail(err, RS_FORMAT,
                        "%s:1: expected eval's per_query.csv header (run,query,measure,value) or rag's "
                        "per_sample.csv header (sample,...,metric,value); found no '%s' column", l->path, need[c]);
    }
    return RS_OK;
  }
  size_t width = (size_t)(l->judge_col + 1);
  for (int c = 0; c < 4; c++)
    if (l->col[c] >= 0 && (size_t)l->col[c] + 1 > width) width = (size_t)l->col[c] + 1;
  for (size_t c = 0; c < l->n_config; c++)
    if (l->config_col[c] + 1 > width) width = l->config_col[c] + 1;
  if (n_f < width)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected at least %zu fields, found %zu", l->path, line, width, n_f);
  const char *meas = f[l->col[2]];
  if (rag) {
    const char *judge = l->judge_col >= 0 ? f[l->judge_col] : "";
    rs__sb_free(&l->measure);
    rs__sb_str(&l->measure, meas);
    if (*judge) rs__sb_printf(&l->measure, "[%s]", judge);
    if (l->measure.failed) return rs__fail(err, RS_NOMEM, "out of memory");
    if (!sample_wanted(l, meas, rs__sb_view(&l->measure), 0)) return RS_OK;
    /* No value: the metric is undefined or failed for this sample; it is
     * left out of the mean and n, as rag's aggregate.csv leaves it out. */
    if (!f[l->col[3]][0]) return RS_OK;
    meas = rs__sb_view(&l->measure);
  } else if (l->want && spec_find(l->want, meas) == SIZE_MAX) {
    return RS_OK;
  }
  char *end;
  const char *text = f[l->col[3]];
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno == EINVAL)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column 'value', found '%s'", l->path, line, text);
  if (isnan(v))
    return rs__fail(err, RS_FORMAT, "%s:%zu: value is NaN; a paired test needs a value for every query", l->path,
                    line);
  size_t r = 0;
  if (rag) {
    rs_code rc = run_of(l, f, line, &r, err);
    if (rc) return rc;
  } else if ((r = names_intern(&l->runs, f[l->col[0]])) == SIZE_MAX) {
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  size_t q = names_intern(&l->queries, f[l->col[1]]), m = names_intern(&l->measures, meas);
  if (q == SIZE_MAX || m == SIZE_MAX) return rs__fail(err, RS_NOMEM, "out of memory");
  if (rag) sample_wanted(l, f[l->col[2]], meas, 1);
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 4096;
    triple *p = rs__realloc(l->t, rs__mul(cap, sizeof *p));
    if (!p) return rs__fail(err, RS_NOMEM, "out of memory (%zu rows of %s)", l->n, l->path);
    l->t = p, l->cap = cap;
  }
  l->t[l->n++] = (triple){(uint32_t)r, (uint32_t)q, (uint32_t)m, v, line};
  return RS_OK;
}

static char **take_names(name_table *t)
{
  char **n = t->name;
  t->name = NULL, t->n = 0;
  return n;
}

/* Reads eval's per_query.csv (want: the measures to keep, or NULL) or
 * rag's per_sample.csv (want_names[0..n_want): the metrics or measures to
 * keep, each of which must have a value; n_want 0: all). */
static rs_code load_per_query_csv(const char *path, pq_layout layout, const rs__spec *want,
                                  const char *const *want_names, size_t n_want, values *x, rs_error *err)
{
  csv_load l = {.path = path, .layout = layout, .want = want, .want_names = want_names, .n_want = n_want,
                .judge_col = -1};
  rs_code rc = RS_OK;
  const int rag = layout == LAYOUT_PER_SAMPLE;
  if (rag && n_want && !(l.want_hit = rs__calloc(n_want, 1))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) rc = rs__csv_read(path, take_row, &l, err);
  for (size_t i = 0; !rc && i < n_want; i++)
    if (!l.want_hit[i]) rc = rs__fail(err, RS_FORMAT, "%s: no values of metric '%s'", path, want_names[i]);
  if (!rc && l.t == NULL)
    rc = rs__fail(err, RS_FORMAT, "%s: no per-%s values%s", path, rag ? "sample" : "query",
                  want ? " for the measures asked for" : "");
  if (!rc) {
    x->n_meas = l.measures.n, x->n_runs = l.runs.n, x->nq = l.queries.n;
    rc = values_alloc(x, err);
  }
  for (size_t i = 0; !rc && i < l.n; i++) {
    const triple *t = &l.t[i];
    double *v = &slot(x, t->meas, t->run)[t->query];
    if (!isnan(*v))
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: %s '%s', %s '%s', measure '%s' is given twice", path, t->line,
                    rag ? "configuration" : "run", l.runs.name[t->run], rag ? "sample" : "query",
                    l.queries.name[t->query], l.measures.name[t->meas]);
    *v = t->value;
  }
  if (!rc) {
    x->measures = take_names(&l.measures);
    x->runs = take_names(&l.runs);
    x->queries = take_names(&l.queries);
  }
  for (size_t i = 0; i < l.n_tuples; i++) free(l.run_tuple[i]);
  free(l.run_tuple);
  free(l.want_hit);
  free(l.config_col);
  rs__sb_free(&l.name);
  rs__sb_free(&l.tuple);
  rs__sb_free(&l.measure);
  free(l.t);
  names_free(&l.runs);
  names_free(&l.queries);
  names_free(&l.measures);
  return rc;
}

/* --- output helpers ------------------------------------------------------------- */

static void csv_num_or_empty(rs__csv *w, double v)
{
  if (isnan(v)) rs__csv_str(w, "");
  else rs__csv_num(w, v);
}

static void run_cols(rs__csv *w, const sweep_input *in, const values *x, size_t r)
{
  if (in) csv_run_columns(w, in, r);
  else rs__csv_str(w, x->runs[r]);
}

typedef enum { TEST_PERM, TEST_TTEST } test_kind;

static double p_adj(const rs__comparison *c, test_kind t) { return t == TEST_PERM ? c->p_perm_adj : c->p_ttest_adj; }

/* --- one measure ------------------------------------------------------------------ */

typedef struct measure_result {
  size_t n;            /* paired queries */
  rs__comparison *cmp; /* the family asked for */
  size_t n_cmp;
  size_t best;
  rs__comparison *vs_best; /* [n_runs]: run r vs the best (vs_best[best] unused) */
} measure_result;

static void measure_result_free(measure_result *m)
{
  free(m->cmp);
  free(m->vs_best);
}

/* ------------------------------------------------------------------------------------- */

enum {
  OPT_PER_QUERY = 256, OPT_BASELINE, OPT_ALL_PAIRS, OPT_PERMS, OPT_BOOT, OPT_CI, OPT_SEED, OPT_CORRECTION, OPT_TEST,
  OPT_ALPHA, OPT_FAIL_WORSE, OPT_SHARD
};

/* The words of a command line that define the comparison (a shard
 * manifest stores them): all but -o, --shard, --threads and --timing. */
typedef struct word_track {
  char **orig;         /* argv as given (getopt permutes argv's pointers) */
  unsigned char *drop; /* [argc]: words left out */
  char **words;
  size_t n_words;
} word_track;

static int compare_main(int argc, char **argv, const shard_set *merge, word_track *wt)
{
  static const struct option longs[] = {
      SWEEP_OPTS_LONG,
      {"per-query", required_argument, 0, OPT_PER_QUERY},
      {"baseline", required_argument, 0, OPT_BASELINE},
      {"all-pairs", no_argument, 0, OPT_ALL_PAIRS},
      {"permutations", required_argument, 0, OPT_PERMS},
      {"bootstrap", required_argument, 0, OPT_BOOT},
      {"ci", required_argument, 0, OPT_CI},
      {"seed", required_argument, 0, OPT_SEED},
      {"correction", required_argument, 0, OPT_CORRECTION},
      {"test", required_argument, 0, OPT_TEST},
      {"alpha", required_argument, 0, OPT_ALPHA},
      {"fail-if-worse-than", required_argument, 0, OPT_FAIL_WORSE},
      {"shard", required_argument, 0, OPT_SHARD},
      PUBLISH_OPTS_LONG,
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  static const char *const defaults[] = {"nDCG@10", "RR@10", "R@10"};
  sweep_opts so;
  publish_opts po = {0};
  const char *pq_path = NULL, *baseline_name = NULL, *worse_than = NULL;
  int all_pairs = 0;
  long n_perm = 10000, n_boot = 1000;
  double level = 0.95, alpha = 0.05;
  unsigned long long seed = 42;
  test_kind test = TEST_PERM;
  rs__compare_cfg ccfg = {.adjust = RS_ADJ_HOLM};
  rs__sweep_cfg scfg = {0};
  int shard = 0;
  size_t shard_i = 0, shard_n = 1;
  if (sweep_opts_init(&so, argc, sizeof defaults / sizeof *defaults, 1) != 0) return RS_EXIT_INPUT;
  int c, li = -1;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, SWEEP_OPTS_SHORT "h", longs, &li)) != -1) {
    if (c == 'o' || c == SWEEP_OPT_THREADS || c == SWEEP_OPT_TIMING || c == OPT_SHARD)
      shard_drop_option_words(wt->orig, argc, argv, optarg, wt->drop);
    const sweep_opt_result shared = sweep_opts_parse(&so, c, optarg, "compare");
    if (shared == SWEEP_OPT_HANDLED) continue;
    if (shared == SWEEP_OPT_BAD) {
      sweep_opts_free(&so);
      return RS_EXIT_USAGE;
    }
    const publish_result pub = publish_opts_parse(&po, c, optarg, "compare");
    if (pub == PUBLISH_HANDLED) continue;
    if (pub == PUBLISH_BAD) {
      sweep_opts_free(&so);
      return RS_EXIT_USAGE;
    }
    switch (c) {
    case OPT_PER_QUERY: pq_path = optarg; break;
    case OPT_BASELINE: baseline_name = optarg; break;
    case OPT_ALL_PAIRS: all_pairs = 1; break;
    case OPT_PERMS:
      if (!parse_count(optarg, 0, &n_perm)) goto bad_value;
      break;
    case OPT_BOOT:
      if (!parse_count(optarg, 0, &n_boot)) goto bad_value;
      break;
    case OPT_CI:
      if (!parse_real(optarg, &level) || !(level > 0.0 && level < 1.0)) goto bad_value;
      break;
    case OPT_SEED: {
      char *end;
      errno = 0;
      seed = strtoull(optarg, &end, 10);
      if (end == optarg || *end || errno || *optarg == '-') goto bad_value;
      break;
    }
    case OPT_CORRECTION:
      if (rs__adjust_parse(optarg, &ccfg.adjust) != 0) goto bad_value;
      break;
    case OPT_TEST:
      if (strcmp(optarg, "perm") == 0) test = TEST_PERM;
      else if (strcmp(optarg, "ttest") == 0) test = TEST_TTEST;
      else goto bad_value;
      break;
    case OPT_ALPHA:
      if (!parse_real(optarg, &alpha) || !(alpha > 0.0 && alpha < 1.0)) goto bad_value;
      break;
    case OPT_FAIL_WORSE: worse_than = optarg; break;
    case OPT_SHARD:
      if (!rs__shard_parse(optarg, &shard_i, &shard_n)) {
        fprintf(stderr, "ragsweep compare: --shard: expected I/N with 0 <= I < N <= %d (e.g. "
                        "--shard $SLURM_ARRAY_TASK_ID/8), found '%s' (see 'ragsweep compare --help')\n",
                RS__SHARD_MAX_N, optarg);
        sweep_opts_free(&so);
        return RS_EXIT_USAGE;
      }
      shard = 1;
      break;
    case 'h':
      help(stdout);
      sweep_opts_free(&so);
      return RS_EXIT_OK;
    default:
      fprintf(stderr, "ragsweep compare: unknown option '%s' (see 'ragsweep compare --help')\n", argv[optind - 1]);
      sweep_opts_free(&so);
      return RS_EXIT_USAGE;
    }
  }
  for (int k = 1; k < argc; k++)
    if (!wt->drop[k]) wt->words[wt->n_words++] = wt->orig[k];
  const char *const out_dir = so.out_dir;
  const size_t n_gates = so.n_gates;
  const long n_worst = so.n_worst, threads = so.threads;
  scfg.all_queries = so.all_queries;
  const char *const policy = pq_path ? POLICY_VALUES : so.all_queries ? POLICY_ALL : POLICY_COMMON;
  scfg.ties_stored = so.ties_stored;
  const char *usage_msg = NULL;
  if (!out_dir || (pq_path ? optind != argc : optind >= argc))
    usage_msg = "expected CORPUS.h5 [RUNS.h5 ...] -o OUTDIR, QRELS RUN RUN ... -o OUTDIR, or --per-query FILE.csv -o OUTDIR";
  else if (all_pairs && (baseline_name || worse_than))
    usage_msg = "--all-pairs compares every pair; it takes no --baseline or --fail-if-worse-than";
  else if (worse_than && baseline_name && strcmp(worse_than, baseline_name) != 0)
    usage_msg = "--fail-if-worse-than RUN makes RUN the baseline; it differs from --baseline";
  else if (pq_path && so.n_depths)
    usage_msg = "--depths needs the rankings (a corpus or runs), not --per-query";
  else if (pq_path && n_worst)
    usage_msg = "--worst needs the rankings (a corpus), not --per-query";
  else if (pq_path && so.qrels_path)
    usage_msg = "--qrels scores a corpus's runs; --per-query reads values already scored";
  else if (pq_path && (shard || merge))
    usage_msg = "--shard splits the scoring of runs; --per-query values are compared in one process";
  else if (pq_path && rs__mpi_size() > 1)
    usage_msg = "--per-query reads values already scored: nothing to split across MPI ranks; run it as one process";
  else if (shard && rs__mpi_size() > 1)
    usage_msg = "--shard and MPI both split the work: under mpirun the ranks take the shares; run --shard as one process";
  if (usage_msg || publish_opts_check(&po, "compare", 1) != 0) {
    if (usage_msg) fprintf(stderr, "ragsweep compare: %s (see 'ragsweep compare --help')\n", usage_msg);
    sweep_opts_free(&so);
    return RS_EXIT_USAGE;
  }
  if (worse_than) baseline_name = worse_than;

  rs_error err = {0};
  rs_code rc = RS_OK;
  int exit_code = RS_EXIT_INPUT;
  gate *gates = NULL;
  size_t n_parsed = 0;
  sweep_input in = {0}, *inp = NULL;
  rs__spec *spec = NULL;
  values x = {0};
  worst_file *worst = NULL;
  rs__run_result *res = NULL;
  measure_result *mr = NULL;
  double *buf = NULL;
  const double **cols = NULL;
  const char **run_names = NULL;
  rs__csv *cmp_csv = NULL, *sum_csv = NULL, *agg = NULL;
  rs__shard_plan plan = {0};
  char *common = NULL; /* the manifest part shared by the shards (--shard, merge) */
  char **inputs = NULL;
  gate_report gr = {0};
  int made_out_dir = 0; /* -o created by this run: removed again if the run fails before writing */
  size_t n_meas = 0, base = 0;
  /* rag's per_sample.csv names its metrics in rag's words: -m and the
   * gates are plain strings there, so the layout is known before they are
   * read. */
  pq_layout layout = LAYOUT_PER_QUERY;
  if (pq_path && (rc = read_layout(pq_path, &layout, &err))) goto fail;
  const int rag = pq_path && layout == LAYOUT_PER_SAMPLE;
  if ((rc = sweep_opts_gates(&so, rag, &gates, &err))) goto fail;
  n_parsed = n_gates;

  const double t_start = rs__seconds();
  double t_tests = 0.0;
  struct stat out_st;
  /* Under MPI the ranks score their shares of the corpus; rank 0 alone
   * tests and writes, and its failures here are everyone's. */
  const int root = rs__mpi_rank() == 0;
  const int out_existed = root && stat(out_dir, &out_st) == 0;
  if (root && mkdir_p(out_dir) != 0) {
    if (errno == EEXIST || errno == ENOTDIR) rc = rs__fail(&err, RS_IO, "-o %s: is a file, expected a folder", out_dir);
    else rc = rs__fail(&err, RS_IO, "-o %s: cannot create the output folder: %s", out_dir, strerror(errno));
  }
  if ((rc = rs__mpi_agree(rc, &err))) goto fail;
  made_out_dir = root && !out_existed;
  /* 1. Per-query values. */
  const int explicit_measures = so.n_measures > 0;
  sweep_opts_default_measures(&so, defaults, sizeof defaults / sizeof *defaults);
  const char **const measures = so.measures;
  const size_t n_measures = so.n_measures;
  if (rag) {
    /* -m and the gates' metrics, or every metric of the file (no -m). */
    const char **want = NULL;
    size_t n_want = 0;
    if (explicit_measures) {
      if (!(want = calloc(n_measures + n_gates, sizeof *want))) goto nomem;
      for (size_t i = 0; i < n_measures; i++) want[n_want++] = measures[i];
      for (size_t i = 0; i < n_gates; i++) want[n_want++] = gates[i].measure;
    }
    rc = load_per_query_csv(pq_path, layout, NULL, want, n_want, &x, &err);
    free(want);
    if (rc) goto fail;
    n_meas = x.n_meas;
    /* A gate checks one mean: with judges, faithfulness is several. */
    for (size_t i = 0; i < n_gates; i++) {
      size_t k = 0;
      while (k < x.n_meas && strcmp(x.measures[k], gates[i].measure) != 0) k++;
      if (k == x.n_meas) {
        rs__sb list = {0};
        rs__sb_list(&list, x.measures, x.n_meas, 200);
        rc = rs__fail(&err, RS_USAGE, "gate on '%s': %s has no measure of that name; expected one of: %s "
                                      "(METRIC[JUDGE] when the file has a judge column)",
                      gates[i].measure, pq_path, rs__sb_view(&list));
        rs__sb_free(&list);
        goto fail;
      }
    }
  } else if (pq_path) {
    if ((rc = gate_spec(measures, n_measures, gates, n_gates, NULL, 0, 1000, &spec, &err))) goto fail;
    if ((rc = load_per_query_csv(pq_path, layout, explicit_measures || n_gates ? spec : NULL, NULL, 0, &x, &err)))
      goto fail;
    n_meas = x.n_meas;
    for (size_t k = 0; k < spec->n_out && (explicit_measures || n_gates); k++) {
      int found = 0;
      for (size_t j = 0; j < x.n_meas && !found; j++) found = strcmp(x.measures[j], spec->req[k].name) == 0;
      if (!found) {
        rc = rs__fail(&err, RS_FORMAT, "%s: no values of measure '%s'", pq_path, spec->req[k].name);
        goto fail;
      }
    }
  } else {
    inp = &in; /* set first: a partly opened input is closed on the way out too */
    const direct_opts dop = {
        .cmd = "compare", .qrels_path = so.qrels_path, .split = so.split, .threads = (int)threads, .rows_only = 1};
    if ((rc = sweep_input_open_args(&in, argv + optind, (size_t)(argc - optind), &dop, NULL, &err)) ||
        (so.n_depths && (rc = sweep_input_add_depths(&in, so.depths, so.n_depths, &err))))
      goto fail;
    const size_t max_k = sweep_input_max_k(&in);
    if ((rc = gate_spec(measures, n_measures, gates, n_gates, NULL, 0, max_k ? max_k : 1000, &spec, &err))) goto fail;
    n_meas = spec->n_out;
    x.n_meas = n_meas + 2, x.n_runs = in.n_runs, x.nq = in.corpus->nq;
    if (!(x.measures = calloc(n_meas + 2, sizeof *x.measures))) goto nomem; /* + the two hidden */
    for (size_t k = 0; k < n_meas; k++)
      if (!(x.measures[k] = strdup(spec->req[k].name))) goto nomem;
    if (!(x.runs = calloc(in.n_runs + 1, sizeof *x.runs))) goto nomem;
    for (size_t r = 0; r < in.n_runs; r++)
      if (!(x.runs[r] = strdup(in.runs[r]->name))) goto nomem;
    /* One process evaluates share 0 of 1 (as eval does). */
    if ((rc = rs__shard_plan_make(in.runs, in.n_runs, 0, &plan, &err))) goto fail;
    if (shard || merge) {
      const size_t n_pos = (size_t)(argc - optind);
      if (!(inputs = calloc(n_pos + 2, sizeof *inputs))) goto nomem;
      memcpy(inputs, argv + optind, n_pos * sizeof *inputs);
      if (so.qrels_path) inputs[n_pos] = (char *)so.qrels_path;
      if ((rc = shard_manifest_common("compare", wt->words, wt->n_words, inputs, n_pos + (so.qrels_path != NULL),
                                      spec, in.n_runs, in.corpus->nq, &plan, shard ? shard_n : merge->n, &common,
                                      &err)))
        goto fail;
    }
    if (shard) { /* the share's values, for 'ragsweep merge' to compare */
      scfg.spec = spec;
      scfg.threads = (int)threads;
      if ((rc = shard_write(out_dir, &scfg, &in, &plan, shard_i, shard_n, 1, common, &err))) goto fail;
      exit_code = RS_EXIT_OK;
      goto done;
    }
    if ((rc = values_alloc(&x, &err))) goto fail;
    if (n_worst && root && !(rc = rs__corpus_load_queries(in.corpus, &err)))
      rc = worst_open(&worst, out_dir, (size_t)n_worst, spec, in.corpus, &err);
    if ((rc = rs__mpi_agree(rc, &err))) goto fail;
    corpus_sink sink = {.x = &x, .spec = spec, .worst = worst, .in = &in};
    if (!(res = calloc(in.n_runs + 1, sizeof *res))) goto nomem;
    scfg.spec = spec;
    scfg.threads = (int)threads;
    scfg.per_query = take_query;
    scfg.per_query_ctx = &sink;
    if (merge)
      rc = shard_set_replay(merge, common, spec, res, in.n_runs, in.corpus->nq, take_query, &sink, &err);
    else rc = rs__sweep_ranks(&scfg, in.corpus, in.runs, &plan, res, &err); /* share 0 of 1 without MPI */
    for (size_t r = 0; r < in.n_runs; r++) rs__run_result_free(&res[r]);
    free(res);
    res = NULL;
    if (rc) goto fail;
    if (!root) { /* rank 0 has every value: it tests and writes */
      exit_code = RS_EXIT_OK;
      goto done;
    }
  }
  const double t_values = rs__seconds();
  const size_t n_runs = x.n_runs;
  if (n_runs < 2) {
    rc = rs__fail(&err, RS_USAGE, "%s: %zu run; a comparison needs at least two", pq_path ? pq_path : argv[optind],
                  n_runs);
    goto fail;
  }
  if (baseline_name) {
    for (base = 0; base < n_runs && strcmp(x.runs[base], baseline_name) != 0; base++) {}
    if (base == n_runs) {
      rc = rs__fail(&err, RS_USAGE, "baseline run '%s' is not among the %zu runs (the first is '%s')", baseline_name,
                    n_runs, x.runs[0]);
      goto fail;
    }
  }

  /* 2. Per measure: the paired queries, the family, and the runs against the best. */
  ccfg.resample = (rs__resample_cfg){.seed = seed, .n_perm = (size_t)n_perm, .n_boot = (size_t)n_boot,
                                     .level = level, .threads = (int)threads};
  if (!(mr = calloc(n_meas, sizeof *mr)) || !(buf = rs__malloc(rs__mul(n_runs, rs__mul(x.nq, sizeof *buf)))) ||
      !(cols = calloc(n_runs, sizeof *cols)) || !(res = calloc(n_runs, sizeof *res)) ||
      !(run_names = calloc(n_runs, sizeof *run_names)))
    goto nomem;
  for (size_t r = 0; r < n_runs; r++) {
    run_names[r] = x.runs[r];
    if (!(res[r].value = calloc(n_meas + 1, sizeof *res[r].value))) goto nomem;
  }
  const size_t n_family = all_pairs ? n_runs * (n_runs - 1) / 2 : n_runs - 1;
  for (size_t k = 0; k < n_meas; k++) {
    measure_result *m = &mr[k];
    /* The queries with a value in every run, compacted. */
    size_t n = 0;
    for (size_t q = 0; q < x.nq; q++) {
      int all = 1;
      for (size_t r = 0; r < n_runs && all; r++) all = !isnan(slot(&x, k, r)[q]);
      if (!all) continue;
      for (size_t r = 0; r < n_runs; r++) buf[r * x.nq + n] = slot(&x, k, r)[q];
      if (!pq_path && k == 0)
        for (size_t r = 0; r < n_runs; r++) {
          res[r].no_rel_ret += slot(&x, n_meas, r)[q] == 0.0;
          res[r].perfect_p1 += slot(&x, n_meas + 1, r)[q] == 1.0;
        }
      n++;
    }
    m->n = n;
    for (size_t r = 0; r < n_runs; r++) cols[r] = buf + r * x.nq;
    if (!(m->cmp = calloc(n_family, sizeof *m->cmp)) || !(m->vs_best = calloc(n_runs, sizeof *m->vs_best))) goto nomem;
    m->n_cmp = 0;
    if (all_pairs) {
      for (size_t i = 0; i < n_runs; i++)
        for (size_t j = i + 1; j < n_runs; j++) m->cmp[m->n_cmp++] = (rs__comparison){.run = j, .base = i};
    } else {
      for (size_t r = 0; r < n_runs; r++)
        if (r != base) m->cmp[m->n_cmp++] = (rs__comparison){.run = r, .base = base};
    }
    const double t0 = rs__seconds();
    rc = rs__compare(&ccfg, cols, n, m->cmp, m->n_cmp, &err);
    t_tests += rs__seconds() - t0;
    if (rc) goto fail;
    /* Means (the same sums as the comparisons'); the best: the highest mean, the first run on ties. */
    for (size_t r = 0; r < n_runs; r++) {
      double s = 0.0;
      for (size_t i = 0; i < n; i++) s += cols[r][i];
      res[r].value[k] = n ? s / (double)n : NAN;
      if (k == 0) res[r].num_q = n;
    }
    m->best = 0;
    for (size_t r = 1; r < n_runs; r++)
      if (res[r].value[k] > res[m->best].value[k]) m->best = r;
    if (!all_pairs && m->best == base) {
      for (size_t i = 0; i < m->n_cmp; i++) m->vs_best[m->cmp[i].run] = m->cmp[i];
    } else {
      rs__comparison *vb = calloc(n_runs, sizeof *vb);
      size_t nb = 0;
      if (!vb) goto nomem;
      for (size_t r = 0; r < n_runs; r++)
        if (r != m->best) vb[nb++] = (rs__comparison){.run = r, .base = m->best};
      const double t1 = rs__seconds();
      rc = rs__compare(&ccfg, cols, n, vb, nb, &err);
      t_tests += rs__seconds() - t1;
      for (size_t i = 0; i < nb && !rc; i++) m->vs_best[vb[i].run] = vb[i];
      free(vb);
      if (rc) goto fail;
    }
  }

  /* 3. compare.csv, summary.csv, aggregate.csv. */
  if ((rc = rs__csv_create(out_dir, "compare.csv", &cmp_csv, &err))) goto fail;
  rs__csv_str(cmp_csv, "run");
  for (size_t i = 0; inp && i < in.n_keys; i++) rs__csv_str(cmp_csv, in.keys[i]);
  static const char *const cmp_hdr[] = {"baseline", "measure", "n", "mean", "baseline_mean", "diff", "ci_low",
                                        "ci_high", "effect_size", "t", "p_ttest", "p_perm", "p_ttest_adj",
                                        "p_perm_adj", "queries"};
  for (size_t i = 0; i < sizeof cmp_hdr / sizeof *cmp_hdr; i++) rs__csv_str(cmp_csv, cmp_hdr[i]);
  if ((rc = rs__csv_end_row(cmp_csv, &err))) goto fail;
  for (size_t k = 0; k < n_meas; k++)
    for (size_t i = 0; i < mr[k].n_cmp; i++) {
      const rs__comparison *q = &mr[k].cmp[i];
      run_cols(cmp_csv, inp, &x, q->run);
      rs__csv_str(cmp_csv, x.runs[q->base]);
      rs__csv_str(cmp_csv, x.measures[k]);
      rs__csv_uint(cmp_csv, q->n);
      const double v[] = {q->mean, q->base_mean, q->diff, q->ci_low, q->ci_high, q->effect,
                          q->t, q->p_ttest, q->p_perm, q->p_ttest_adj, q->p_perm_adj};
      for (size_t j = 0; j < sizeof v / sizeof *v; j++) csv_num_or_empty(cmp_csv, v[j]);
      rs__csv_str(cmp_csv, policy);
      if ((rc = rs__csv_end_row(cmp_csv, &err))) goto fail;
    }
  if ((rc = rs__csv_create(out_dir, "summary.csv", &sum_csv, &err))) goto fail;
  static const char *const sum_hdr[] = {"measure", "run", "mean", "rank", "group", "best", "diff_to_best",
                                        "p_adj_vs_best", "queries"};
  for (size_t i = 0; i < sizeof sum_hdr / sizeof *sum_hdr; i++) rs__csv_str(sum_csv, sum_hdr[i]);
  if ((rc = rs__csv_end_row(sum_csv, &err))) goto fail;
  printf("%zu runs; %s; %s test, %s correction, alpha %g; %ld permutations, %ld bootstrap replicates, seed %llu\n",
         n_runs, all_pairs ? "all pairs" : "baseline", test == TEST_PERM ? "randomization" : "paired t",
         rs__adjust_name(ccfg.adjust), alpha, n_perm, n_boot, seed);
  if (!all_pairs) printf("baseline: %s\n", x.runs[base]);
  printf("queries: %s (%s)\n", policy,
         rag              ? "the samples with a value for every configuration in the per_sample.csv"
         : pq_path        ? "the queries with a value for every run in the per_query.csv"
         : so.all_queries ? "every judged query; a query a run does not rank scores 0"
                          : "the judged queries every run ranks");
  size_t *order = calloc(n_runs, sizeof *order);
  if (!order) goto nomem;
  for (size_t k = 0; k < n_meas; k++) {
    const measure_result *m = &mr[k];
    /* Runs by mean, best first (ties: run order). */
    for (size_t r = 0; r < n_runs; r++) order[r] = r;
    for (size_t i = 1; i < n_runs; i++)
      for (size_t j = i; j > 0; j--) {
        const double a = res[order[j]].value[k], b = res[order[j - 1]].value[k];
        if (!(a > b)) break;
        size_t t = order[j];
        order[j] = order[j - 1], order[j - 1] = t;
      }
    printf("\n%s (%zu queries): best %s %.4f\n", x.measures[k], m->n, x.runs[m->best], res[m->best].value[k]);
    size_t n_tied = 0;
    for (size_t i = 0; i < n_runs && !rc; i++) {
      const size_t r = order[i];
      const rs__comparison *vb = &m->vs_best[r];
      const int is_best = r == m->best, tied = !is_best && !(vb->diff < 0.0 && p_adj(vb, test) < alpha);
      if (tied) {
        printf("  not significantly worse: %s %.4f (p_adj %.3g)\n", x.runs[r], res[r].value[k], p_adj(vb, test));
        n_tied++;
      }
      rs__csv_str(sum_csv, x.measures[k]);
      rs__csv_str(sum_csv, x.runs[r]);
      rs__csv_num(sum_csv, res[r].value[k]);
      rs__csv_uint(sum_csv, i + 1);
      rs__csv_str(sum_csv, is_best ? "best" : tied ? "not_significantly_worse" : "significantly_worse");
      rs__csv_str(sum_csv, x.runs[m->best]);
      rs__csv_num(sum_csv, is_best ? 0.0 : vb->diff);
      if (is_best) rs__csv_str(sum_csv, "");
      else csv_num_or_empty(sum_csv, p_adj(vb, test));
      rs__csv_str(sum_csv, policy);
      rc = rs__csv_end_row(sum_csv, &err);
    }
    if (!n_tied) printf("  every other run is significantly worse\n");
    if (!all_pairs) {
      size_t better = 0, worse = 0;
      for (size_t i = 0; i < m->n_cmp; i++)
        if (p_adj(&m->cmp[i], test) < alpha) better += m->cmp[i].diff > 0.0, worse += m->cmp[i].diff < 0.0;
      printf("  vs baseline: %zu significantly better, %zu significantly worse, %zu not significant\n", better, worse,
             m->n_cmp - better - worse);
    }
  }
  free(order);
  if (rc) goto fail;
  if ((rc = rs__csv_create(out_dir, "aggregate.csv", &agg, &err)) ||
      (rc = write_aggregate(agg, inp, run_names, n_runs, (const char *const *)x.measures, n_meas, res, !pq_path,
                            policy, &err)))
    goto fail;
  char paths[3][4096];
  snprintf(paths[0], sizeof paths[0], "%s", rs__csv_path(cmp_csv));
  snprintf(paths[1], sizeof paths[1], "%s", rs__csv_path(sum_csv));
  snprintf(paths[2], sizeof paths[2], "%s", rs__csv_path(agg));
  rc = rs__csv_commit(cmp_csv, &err);
  cmp_csv = NULL;
  if (!rc) rc = rs__csv_commit(sum_csv, &err);
  sum_csv = NULL;
  if (!rc) rc = rs__csv_commit(agg, &err);
  agg = NULL;
  const int wrote_texts = worst_has_texts(worst);
  if (!rc && worst) rc = worst_commit(worst, &err);
  worst = NULL;
  if (rc) goto fail;
  {
    /* A re-run replaces compare's whole output set: files this run does not
     * write go.  gates.csv always goes here and is written anew below, and
     * report.html with --report (an older one would show older results). */
    const char *const stale[] = {n_worst ? NULL : "worst.csv", wrote_texts ? NULL : "query_texts.csv", "report.html",
                                 "gates.csv"};
    remove_outputs(out_dir, stale, sizeof stale / sizeof *stale);
  }
  printf("\nwrote %s\n      %s\n      %s\n", paths[0], paths[1], paths[2]);
  if (n_worst) printf("      %s/worst.csv\n", out_dir);
  if (wrote_texts) printf("      %s/query_texts.csv\n", out_dir);
  exit_code = RS_EXIT_OK;
  if (so.timing)
    fprintf(stderr, "timing (s): per-query values %.3f, tests %.3f (%zu runs x %zu measures, %d threads), total %.3f\n",
            t_values - t_start, t_tests, n_runs, n_meas, rs__threads((int)threads), rs__seconds() - t_start);

  /* 4. Gates. */
  if (n_gates || worse_than) {
    int width = 0, check_width = gates_width(gates, n_gates);
    for (size_t r = 0; r < n_runs; r++)
      if ((int)strlen(x.runs[r]) > width) width = (int)strlen(x.runs[r]);
    char check[512];
    for (size_t k = 0; worse_than && k < n_meas; k++) {
      int l = snprintf(check, sizeof check, "%s not worse than %s", x.measures[k], worse_than);
      if (l > check_width) check_width = l;
    }
    printf("\ngates:\n");
    if ((rc = gate_report_open(&gr, out_dir, width, check_width, &err))) goto fail;
    rc = gates_check(&gr, gates, n_gates, (const char *const *)x.measures, n_meas, run_names, n_runs, res, &err);
    for (size_t k = 0; worse_than && k < n_meas && !rc; k++) {
      int gated = n_gates == 0;
      for (size_t i = 0; i < n_gates && !gated; i++) gated = strcmp(gates[i].measure, x.measures[k]) == 0;
      if (!gated) continue;
      snprintf(check, sizeof check, "%s not worse than %s", x.measures[k], worse_than);
      char alpha_text[32];
      snprintf(alpha_text, sizeof alpha_text, "%g", alpha);
      for (size_t i = 0; i < mr[k].n_cmp && !rc; i++) {
        const rs__comparison *q = &mr[k].cmp[i];
        const int worse = q->diff < 0.0 && p_adj(q, test) < alpha;
        rc = gate_report_line(&gr, x.runs[q->run], check, x.measures[k],
                              test == TEST_PERM ? "p_perm_adj" : "p_ttest_adj", alpha_text, p_adj(q, test),
                              !worse, &err);
      }
    }
    if (rc || (rc = gate_report_commit(&gr, &err))) goto fail;
    printf("wrote %s/gates.csv\n", out_dir);
    if (gr.n_failed) exit_code = RS_EXIT_GATE;
  }
  {
    const publish_run pr = {.cmd = "compare", .out_dir = out_dir, .argc = argc, .argv = argv, .inputs = argv + optind,
                            .n_inputs = (size_t)(argc - optind), .extra_input = pq_path ? pq_path : so.qrels_path,
                            .exit_status = exit_code};
    exit_code = publish_outputs(&po, &pr, stdout);
  }
  goto done;

nomem:
  rc = rs__fail(&err, RS_NOMEM, "out of memory");
fail:
  fprintf(stderr, "ragsweep %s: %s\n", merge ? "merge" : "compare", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  rs__csv_abort(cmp_csv);
  rs__csv_abort(sum_csv);
  rs__csv_abort(agg);
  worst_abort(worst);
  gate_report_abort(&gr);
  if (made_out_dir) rmdir(out_dir); /* only if still empty: nothing of this run is left */
done:
  for (size_t k = 0; mr && k < n_meas; k++) measure_result_free(&mr[k]);
  free(mr);
  for (size_t r = 0; res && r < x.n_runs; r++) free(res[r].value);
  free(res);
  free(run_names);
  free(cols);
  free(buf);
  values_free(&x);
  rs__spec_free(spec);
  if (inp) {
    rs__mpi_wait_all(); /* the ranks wait here (asleep) while rank 0 tests and writes */
    sweep_input_close(inp);
  }
  for (size_t i = 0; i < n_parsed; i++) gate_free(&gates[i]);
  free(gates);
  sweep_opts_free(&so);
  rs__shard_plan_free(&plan);
  free(common);
  free(inputs);
  return exit_code;

bad_value:
  fprintf(stderr, "ragsweep compare: invalid value '%s' for --%s (see 'ragsweep compare --help')\n", optarg,
          li >= 0 ? longs[li].name : "?");
  sweep_opts_free(&so);
  return RS_EXIT_USAGE;
}

static int compare_words(int argc, char **argv, const shard_set *merge)
{
  word_track wt = {.orig = calloc((size_t)argc + 1, sizeof *wt.orig), .drop = calloc((size_t)argc + 1, 1),
                   .words = calloc((size_t)argc + 1, sizeof *wt.words)};
  int status = RS_EXIT_INPUT;
  if (wt.orig && wt.drop && wt.words) {
    memcpy(wt.orig, argv, (size_t)argc * sizeof *argv);
    status = compare_main(argc, argv, merge, &wt);
  }
  free(wt.orig), free(wt.drop), free(wt.words);
  return status;
}

int rs_cli_compare(int argc, char **argv) { return compare_words(argc, argv, NULL); }

int compare_merge(const shard_set *s, const char *out_dir)
{
  /* The shards' command line, with the merge's output folder. */
  int argc = 0;
  char **argv = shard_merge_argv(s, "compare", out_dir, 0, &argc);
  if (!argv) return RS_EXIT_INPUT;
  const int status = compare_words(argc, argv, s);
  free(argv);
  return status;
}
