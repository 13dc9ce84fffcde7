/* annb_eval.c: `eval` and `import` of ann-benchmarks files (annb_cli.h). */
#define _GNU_SOURCE
#include "annb_cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "engine/latency.h"
#include "engine/sched.h"
#include "engine/sweep.h"
#include "formats/annb.h"
#include "formats/csvio.h"
#include "gate.h"
#include "metrics/knn.h"
#include "metrics/spec.h"
#include "sweep_io.h"
#include "util/tmpfiles.h"

int annb_is_dataset(const char *path) { return rs__annb_kind_of(path) == RS_ANNB_DATASET; }

/* --- ann-benchmarks' figures ------------------------------------------------
 *
 * The entries of all_metrics in ann_benchmarks/plotting/metrics.py (commit
 * f402b2cc17b980d7cd45241ab5a7a4cc0f965e55), under the same names; build
 * and indexsize also answer to the attribute names. */

typedef enum { AM_KNN, AM_EPSILON, AM_LARGEEPSILON, AM_QPS, AM_BUILD, AM_INDEXSIZE, AM_CANDIDATES, AM_DISTCOMPS, AM_N } am_id;

static const struct {
  const char *name, *alias;
  int per_query;    /* a value per query (the recalls), else one per run */
  rs__knn_rule rule;
  double epsilon;
} am[AM_N] = {
    [AM_KNN] = {"k-nn", NULL, 1, RS_KNN_ADD, 1e-3},
    [AM_EPSILON] = {"epsilon", NULL, 1, RS_KNN_MUL, 0.01},
    [AM_LARGEEPSILON] = {"largeepsilon", NULL, 1, RS_KNN_MUL, 0.1},
    [AM_QPS] = {"qps", NULL, 0, RS_KNN_ADD, 0},
    [AM_BUILD] = {"build", "build_time", 0, RS_KNN_ADD, 0},
    [AM_INDEXSIZE] = {"indexsize", "index_size", 0, RS_KNN_ADD, 0},
    [AM_CANDIDATES] = {"candidates", NULL, 0, RS_KNN_ADD, 0},
    [AM_DISTCOMPS] = {"distcomps", "dist_comps", 0, RS_KNN_ADD, 0},
};

static int am_lookup(const char *s)
{
  for (int i = 0; i < AM_N; i++)
    if (strcasecmp(s, am[i].name) == 0 || (am[i].alias && strcasecmp(s, am[i].alias) == 0)) return i;
  return -1;
}

/* A numeric attribute of r, as the Python dict lookup reads it: missing is
 * fallback when have_fallback (attrs.get(key, 0)), else an error. */
static rs_code attr_num(const rs__annb_result *r, const char *key, const char *measure, int have_fallback,
                        double fallback, double *out, rs_error *err)
{
  const rs__attr *a = rs__annb_attr(r, key);
  if (!a) {
    if (have_fallback) {
      *out = fallback;
      return RS_OK;
    }
    return rs__fail(err, RS_FORMAT, "%s: missing root attribute %s, which %s needs", r->path, key, measure);
  }
  if (a->kind == RS_ATTR_STRING)
    return rs__fail(err, RS_FORMAT, "%s: attribute %s: expected a number (for %s), found the string '%s'", r->path, key,
                    measure, a->text);
  *out = a->num;
  return RS_OK;
}

/* The per-run figures, as metrics.py computes them. */
static rs_code run_figure(const rs__annb_result *r, am_id m, size_t nq, double *out, rs_error *err)
{
  double v = 0, w = 0;
  rs_code rc;
  switch (m) {
  case AM_QPS: /* queries_per_second: 1.0 / attrs["best_search_time"] */
    if ((rc = attr_num(r, "best_search_time", "qps", 0, 0, &v, err))) return rc;
    *out = 1.0 / v;
    return RS_OK;
  case AM_BUILD: /* build_time: attrs["build_time"] */
    return attr_num(r, "build_time", "build", 0, 0, out, err);
  case AM_INDEXSIZE: /* index_size: attrs.get("index_size", 0) */
    return attr_num(r, "index_size", "indexsize", 1, 0, out, err);
  case AM_CANDIDATES: /* candidates: attrs["candidates"] */
    return attr_num(r, "candidates", "candidates", 0, 0, out, err);
  case AM_DISTCOMPS: /* dist_computations: attrs.get("dist_comps", 0) / (attrs["run_count"] * len(queries)) */
    if ((rc = attr_num(r, "dist_comps", "distcomps", 1, 0, &v, err)) ||
        (rc = attr_num(r, "run_count", "distcomps", 0, 0, &w, err)))
      return rc;
    *out = v / (w * (double)nq); /* Python's int product is exact; so is this one below 2^53 */
    return RS_OK;
  default: return rs__fail(err, RS_USAGE, "internal: %s is not a per-run figure", am[m].name);
  }
}

/* --- the state of one evaluation --------------------------------------------- */

typedef struct {
  int annb;     /* 1: am_id idx; 0: the spec's visible value idx */
  size_t idx;
  const char *name;
} out_measure;

typedef struct {
  rs__annb_dataset *ds;
  rs__annb_result **res; /* sorted by name */
  size_t n_res;
  size_t *res_of_run;    /* in.runs[i] is res[res_of_run[i]] */
  out_measure *out;
  size_t n_out;
  uint32_t *hits[AM_N];  /* per-query measures: [n_res * nq], by res index */
  rs__csv *pq;
  sweep_input *in;
  double *figures;       /* [n_res * AM_N] per-run figures */
  const rs__spec *spec;
} annb_state;

static int add_out(annb_state *s, int annb, size_t idx, const char *name)
{
  for (size_t i = 0; i < s->n_out; i++)
    if (strcmp(s->out[i].name, name) == 0) return 0;
  s->out[s->n_out++] = (out_measure){annb, idx, name};
  return 1;
}

static rs_code emit_query(annb_state *s, size_t run, size_t q, const double *v, rs_error *err)
{
  const size_t r = s->res_of_run[run], nq = s->ds->nq;
  for (size_t k = 0; k < s->n_out; k++) {
    const out_measure *o = &s->out[k];
    double value;
    if (o->annb) {
      if (!am[o->idx].per_query) continue;
      value = (double)s->hits[o->idx][r * nq + q] / (double)s->res[r]->count;
    } else {
      value = v[o->idx];
    }
    rs__csv_str(s->pq, s->in->runs[run]->name);
    rs__csv_str(s->pq, s->in->corpus->query_id[q]);
    measure_cols_put_name(s->pq, o->name);
    rs__csv_num(s->pq, value);
    rs_code rc = rs__csv_end_row(s->pq, err);
    if (rc) return rc;
  }
  return RS_OK;
}

static rs_code per_query_cb(void *ctx, size_t run, size_t query, const double *v, rs_error *err)
{
  return emit_query(ctx, run, query, v, err);
}

static int cmp_result(const void *a, const void *b)
{
  return strcmp((*(rs__annb_result *const *)a)->name, (*(rs__annb_result *const *)b)->name);
}

/* Opens the dataset and the results (sorted by name, names unique). */
static rs_code open_inputs(const char *dataset, char **args, size_t n, annb_state *s, rs_error *err)
{
  rs_code rc = rs__annb_dataset_open(dataset, &s->ds, err);
  if (rc) return rc;
  if (!(s->res = rs__calloc(n, sizeof *s->res))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    char *arg = args[i], *eq = strchr(arg, '='), *name = NULL;
    const char *path = arg;
    if (eq && eq != arg && access(arg, F_OK) != 0) { /* NAME=PATH (a file named a=b is taken as it is) */
      if (!(name = strndup(arg, (size_t)(eq - arg)))) return rs__fail(err, RS_NOMEM, "out of memory");
      path = eq + 1;
    }
    if (rs__annb_kind_of(path) == RS_ANNB_DATASET) {
      free(name);
      return rs__fail(err, RS_USAGE, "%s: an ann-benchmarks dataset where a result file was expected; give the "
                      "dataset first, then its results", path);
    }
    rc = rs__annb_result_open(path, name, s->ds, &s->res[i], err);
    free(name);
    if (rc) return rc;
    s->n_res++;
  }
  qsort(s->res, n, sizeof *s->res, cmp_result);
  for (size_t i = 1; i < n; i++)
    if (strcmp(s->res[i - 1]->name, s->res[i]->name) == 0)
      return rs__fail(err, RS_FORMAT, "run '%s' is in both %s and %s; run names must be unique (name one with "
                      "NAME=%s)", s->res[i]->name, s->res[i - 1]->path, s->res[i]->path, s->res[i]->path);
  return RS_OK;
}

static void close_inputs(annb_state *s)
{
  for (size_t i = 0; i < s->n_res; i++) rs__annb_result_close(s->res[i]);
  free(s->res);
  rs__annb_dataset_close(s->ds);
}

/* The one count of all results, or 0 when they differ (*a, *b: two that differ). */
static size_t common_count(const annb_state *s, size_t *a, size_t *b)
{
  for (size_t i = 1; i < s->n_res; i++)
    if (s->res[i]->count != s->res[0]->count) {
      *a = 0, *b = i;
      return 0;
    }
  return s->n_res ? s->res[0]->count : 0;
}

static rs_code counts_differ(const annb_state *s, size_t a, size_t b, const char *why, rs_error *err)
{
  return rs__fail(err, RS_FORMAT, "%s needs one count for every result, found count %zu in %s and %zu in %s; %s",
                  why, s->res[a]->count, s->res[a]->path, s->res[b]->count, s->res[b]->path,
                  "give the results of each count separately");
}

/* latency.csv, in eval's layout: every run has one. */
static const rs__latency *latency_of_array(const void *ctx, size_t run) { return (const rs__latency *)ctx + run; }

static const rs__run_result *sort_res;
static int by_first(const void *a, const void *b)
{
  const size_t x = *(const size_t *)a, y = *(const size_t *)b;
  const double vx = sort_res[x].value[0], vy = sort_res[y].value[0];
  if (vx != vy) return vx > vy ? -1 : 1;
  return (x > y) - (x < y);
}

static void print_leaderboard(const sweep_input *in, const annb_state *s, const rs__run_result *res, size_t top)
{
  if (top == 0 || in->n_runs == 0 || s->n_out == 0) return;
  size_t *ord = malloc(in->n_runs * sizeof *ord);
  if (!ord) return;
  for (size_t i = 0; i < in->n_runs; i++) ord[i] = i;
  sort_res = res;
  qsort(ord, in->n_runs, sizeof *ord, by_first);
  const size_t n_show = s->n_out < 4 ? s->n_out : 4, n = top < in->n_runs ? top : in->n_runs;
  int width = 3;
  for (size_t i = 0; i < n; i++) {
    const int l = (int)strlen(in->runs[ord[i]]->name);
    if (l > width) width = l;
  }
  if (width > 40) width = 40;
  printf("%zu run%s, ranked by %s:\n\n  #  %-*s", in->n_runs, in->n_runs == 1 ? "" : "s", s->out[0].name, width, "run");
  for (size_t k = 0; k < n_show; k++) printf("  %12s", s->out[k].name);
  printf("\n");
  for (size_t i = 0; i < n; i++) {
    printf("%3zu  %-*.*s", i + 1, width, width, in->runs[ord[i]]->name);
    for (size_t k = 0; k < n_show; k++) printf("  %12.6g", res[ord[i]].value[k]);
    printf("\n");
  }
  free(ord);
}

/* A gate's measure under its canonical name: an ann-benchmarks figure's
 * own, else the one measure the spec makes of it. */
static rs_code canonical_gate(gate *g, size_t max_k, rs_error *err)
{
  const int m = am_lookup(g->measure);
  const char *canon = m >= 0 ? am[m].name : NULL;
  rs__spec *one = NULL;
  rs_code rc = RS_OK;
  if (!canon) {
    const char *names[1] = {g->measure};
    if ((rc = rs__spec_build(names, 1, max_k, &one, err))) return rc;
    if (one->n_out != 1) {
      rc = rs__fail(err, RS_USAGE, "gate on '%s': it names %zu measures; a gate checks one", g->measure, one->n_out);
      goto done;
    }
    canon = one->req[0].name;
  }
  char *c = strdup(canon);
  if (!c) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  free(g->measure);
  g->measure = c;
done:
  rs__spec_free(one);
  return rc;
}

int annb_eval(const annb_eval_args *a)
{
  const sweep_opts *so = a->so;
  annb_state s = {0};
  sweep_input in = {0};
  rs_error err = {0};
  rs_code rc = RS_OK;
  gate *gates = NULL;
  rs__spec *spec = NULL;
  const char **id_names = NULL;
  size_t n_id = 0;
  rs__run_result *sres = NULL, *res = NULL;
  rs__latency *lat = NULL;
  rs__csv *agg = NULL, *latw = NULL;
  gate_report gr = {0};
  const char **run_names = NULL, **measure_names = NULL;
  char tmp_corpus[4200] = "";
  int tmp_h = -1, made_out_dir = 0, exit_code = RS_EXIT_INPUT;
  const char *const out_dir = so->out_dir;

  if (so->qrels_path || so->n_worst) {
    fprintf(stderr, "ragsweep eval: %s does not apply to ann-benchmarks files (the ground truth is the dataset's "
                    "neighbours)\n", so->qrels_path ? "--qrels" : "--worst");
    return RS_EXIT_USAGE;
  }
  if (a->n_results == 0) {
    fprintf(stderr, "ragsweep eval: %s is an ann-benchmarks dataset: expected its result files after it "
                    "(ragsweep eval DATASET.hdf5 RESULT.hdf5 [...] -o OUTDIR)\n", a->dataset);
    return RS_EXIT_USAGE;
  }
  if ((rc = sweep_opts_gates(so, 1, &gates, &err))) {
    fprintf(stderr, "ragsweep eval: %s\n", err.msg);
    return rc == RS_NOMEM ? RS_EXIT_INPUT : RS_EXIT_USAGE;
  }
  if ((rc = open_inputs(a->dataset, a->results, a->n_results, &s, &err))) goto fail;
  const size_t nq = s.ds->nq;
  size_t max_k = 1;
  for (size_t i = 0; i < s.n_res; i++)
    if (s.res[i]->cols > max_k) max_k = s.res[i]->cols;
  for (size_t i = 0; i < so->n_gates; i++)
    if ((rc = canonical_gate(&gates[i], max_k, &err))) goto fail;

  /* The measures: asked for, else ann-benchmarks' k-nn and qps (and build
   * and indexsize when every result records them); then gated ones. */
  const size_t n_names = so->n_measures;
  const char *defaults[AM_N];
  size_t n_defaults = 0;
  defaults[n_defaults++] = am[AM_KNN].name;
  defaults[n_defaults++] = am[AM_QPS].name;
  {
    int all_build = 1, all_size = 1;
    for (size_t i = 0; i < s.n_res; i++) {
      all_build &= rs__annb_attr(s.res[i], "build_time") != NULL;
      all_size &= rs__annb_attr(s.res[i], "index_size") != NULL;
    }
    if (all_build) defaults[n_defaults++] = am[AM_BUILD].name;
    if (all_size) defaults[n_defaults++] = am[AM_INDEXSIZE].name;
  }
  const char *const *names = n_names ? so->measures : defaults;
  const size_t n_asked = n_names ? n_names : n_defaults;
  if (!(id_names = rs__calloc(n_asked + so->n_gates, sizeof *id_names))) goto nomem;
  for (size_t i = 0; i < n_asked; i++)
    if (am_lookup(names[i]) < 0) id_names[n_id++] = names[i];
  for (size_t i = 0; i < so->n_gates; i++)
    if (am_lookup(gates[i].measure) < 0) id_names[n_id++] = gates[i].measure;
  if (n_id) {
    if ((rc = rs__spec_build(id_names, n_id, max_k, &spec, &err))) goto fail;
    size_t c1 = 0, c2 = 0;
    if (!common_count(&s, &c1, &c2)) {
      char why[200];
      snprintf(why, sizeof why, "an id-based measure (%s)", spec->req[0].name);
      rc = counts_differ(&s, c1, c2, why, &err);
      goto fail;
    }
  }
  if (!(s.out = rs__calloc(AM_N + (spec ? spec->n_out : 0), sizeof *s.out))) goto nomem;
  for (size_t i = 0; i < n_asked + so->n_gates; i++) {
    const char *nm = i < n_asked ? names[i] : gates[i - n_asked].measure;
    const int m = am_lookup(nm);
    if (m >= 0) {
      add_out(&s, 1, (size_t)m, am[m].name);
      continue;
    }
    rs__spec *one = NULL; /* the values this name stands for, in the spec's order */
    if ((rc = rs__spec_build(&nm, 1, max_k, &one, &err))) goto fail;
    for (size_t k = 0; k < one->n_out; k++) {
      const size_t at = spec_find(spec, one->req[k].name);
      if (at != SIZE_MAX) add_out(&s, 0, at, spec->req[at].name);
    }
    rs__spec_free(one);
  }

  /* ann-benchmarks' figures, and every run's times summarised (a bad time
   * is reported against its result file). */
  if (!(s.figures = rs__calloc(s.n_res * AM_N, sizeof *s.figures)) || !(lat = rs__calloc(s.n_res, sizeof *lat)))
    goto nomem;
  const int threads = rs__threads((int)so->threads);
  for (size_t k = 0; k < s.n_out; k++) {
    if (!s.out[k].annb) continue;
    const am_id m = (am_id)s.out[k].idx;
    if (am[m].per_query && !(s.hits[m] = rs__malloc(rs__mul(s.n_res, rs__mul(nq, sizeof(uint32_t)))))) goto nomem;
    for (size_t r = 0; r < s.n_res; r++) {
      const rs__annb_result *rr = s.res[r];
      if (am[m].per_query) {
        const rs__knn_input ki = {.truth = s.ds->distances, .truth_cols = s.ds->k, .truth_f32 = s.ds->distances_f32,
                                  .found = rr->distances, .found_cols = rr->cols, .nq = nq, .count = rr->count,
                                  .rule = am[m].rule, .epsilon = am[m].epsilon};
        rs__knn_all(&ki, threads, s.hits[m] + r * nq);
        s.figures[r * AM_N + m] = rs__knn_mean(s.hits[m] + r * nq, nq, rr->count);
      } else if ((rc = run_figure(rr, m, nq, &s.figures[r * AM_N + m], &err))) {
        goto fail;
      }
    }
  }
  {
    double *t = rs__malloc(rs__mul(nq, sizeof *t));
    if (!t) goto nomem;
    for (size_t r = 0; r < s.n_res && !rc; r++) {
      char where[4200];
      snprintf(where, sizeof where, "%s:/times", s.res[r]->path);
      memcpy(t, s.res[r]->times, nq * sizeof *t);
      rc = rs__latency_summarize(t, nq, where, &lat[r], &err);
    }
    free(t);
    if (rc) goto fail;
  }

  /* The corpus import would write, in the output folder while it is used. */
  struct stat st;
  const int out_existed = stat(out_dir, &st) == 0;
  if (mkdir_p(out_dir) != 0) {
    if (errno == EEXIST || errno == ENOTDIR) rc = rs__fail(&err, RS_IO, "-o %s: is a file, expected a folder", out_dir);
    else rc = rs__fail(&err, RS_IO, "-o %s: cannot create the output folder: %s", out_dir, strerror(errno));
    goto fail;
  }
  made_out_dir = !out_existed;
  snprintf(tmp_corpus, sizeof tmp_corpus, "%s/.annb-corpus.tmp.%ld", out_dir, (long)getpid());
  size_t c1 = 0, c2 = 0;
  if ((rc = rs__annb_write_corpus(s.ds, (const rs__annb_result *const *)s.res, s.n_res, n_id ? common_count(&s, &c1, &c2) : 0,
                                  tmp_corpus, &err)))
    goto fail;
  tmp_h = rs__tmp_register(tmp_corpus);
  if ((rc = sweep_input_open(&in, tmp_corpus, NULL, 0, &err))) goto fail;
  s.in = &in;
  if (!(s.res_of_run = rs__calloc(in.n_runs, sizeof *s.res_of_run))) goto nomem;
  for (size_t i = 0; i < in.n_runs; i++) {
    const rs__annb_result key = {.name = (char *)in.runs[i]->name}, *kp = &key;
    rs__annb_result **hit = bsearch(&kp, s.res, s.n_res, sizeof *s.res, cmp_result);
    s.res_of_run[i] = (size_t)(hit - s.res);
  }
  if (a->per_query) {
    if ((rc = rs__corpus_load_queries(in.corpus, &err)) || (rc = rs__csv_create(out_dir, "per_query.csv", &s.pq, &err)))
      goto fail;
    rs__csv_str(s.pq, "run");
    rs__csv_str(s.pq, "query");
    measure_cols_header(s.pq);
    rs__csv_str(s.pq, "value");
    if ((rc = rs__csv_end_row(s.pq, &err))) goto fail;
  }

  /* Id-based measures: the ordinary engine, every query counted (as
   * ann-benchmarks averages over all of them). */
  if (!(res = rs__calloc(in.n_runs, sizeof *res))) goto nomem;
  if (spec) {
    if (!(sres = rs__calloc(in.n_runs, sizeof *sres))) goto nomem;
    rs__sweep_cfg cfg = {.spec = spec, .all_queries = 1, .threads = (int)so->threads,
                         .batch_docs = (size_t)a->batch_docs};
    if (a->per_query) {
      cfg.per_query = per_query_cb;
      cfg.per_query_ctx = &s;
    }
    if ((rc = rs__sweep(&cfg, in.corpus, in.runs, in.n_runs, sres, &err))) goto fail;
  } else if (a->per_query) {
    for (size_t run = 0; run < in.n_runs; run++)
      for (size_t q = 0; q < nq; q++)
        if ((rc = emit_query(&s, run, q, NULL, &err))) goto fail;
  }
  rs__latency *lat_run = rs__calloc(in.n_runs, sizeof *lat_run);
  if (!lat_run) goto nomem;
  for (size_t i = 0; i < in.n_runs; i++) {
    const size_t r = s.res_of_run[i];
    lat_run[i] = lat[r];
    if (!(res[i].value = rs__calloc(s.n_out, sizeof *res[i].value))) {
      free(lat_run);
      goto nomem;
    }
    for (size_t k = 0; k < s.n_out; k++)
      res[i].value[k] = s.out[k].annb ? s.figures[r * AM_N + s.out[k].idx] : sres[i].value[s.out[k].idx];
    res[i].num_q = sres ? sres[i].num_q : nq;
    res[i].no_rel_ret = sres ? sres[i].no_rel_ret : 0;
    res[i].perfect_p1 = sres ? sres[i].perfect_p1 : 0;
  }
  free(lat);
  lat = lat_run;

  if (!(run_names = rs__calloc(in.n_runs, sizeof *run_names)) || !(measure_names = rs__calloc(s.n_out, sizeof *measure_names)))
    goto nomem;
  for (size_t r = 0; r < in.n_runs; r++) run_names[r] = in.runs[r]->name;
  for (size_t k = 0; k < s.n_out; k++) measure_names[k] = s.out[k].name;
  if ((rc = rs__csv_create(out_dir, "aggregate.csv", &agg, &err)) ||
      (rc = write_aggregate(agg, &in, run_names, in.n_runs, measure_names, s.n_out, res, spec != NULL, POLICY_ALL, &err)) ||
      (rc = rs__csv_create(out_dir, "latency.csv", &latw, &err)) || (rc = write_latency_csv(latw, &in, latency_of_array, lat, &err)))
    goto fail;
  char agg_path[4096], lat_path[4096], pq_path[4096] = "";
  snprintf(agg_path, sizeof agg_path, "%s", rs__csv_path(agg));
  snprintf(lat_path, sizeof lat_path, "%s", rs__csv_path(latw));
  if (s.pq) snprintf(pq_path, sizeof pq_path, "%s", rs__csv_path(s.pq));
  rc = rs__csv_commit(agg, &err);
  agg = NULL;
  if (!rc) rc = rs__csv_commit(latw, &err);
  latw = NULL;
  if (!rc && s.pq) rc = rs__csv_commit(s.pq, &err);
  s.pq = NULL;
  if (rc) goto fail;
  {
    const char *const stale[] = {a->per_query ? NULL : "per_query.csv", "worst.csv", "gates.csv"};
    remove_outputs(out_dir, stale, sizeof stale / sizeof *stale);
  }
  print_leaderboard(&in, &s, res, (size_t)a->top);
  printf("%sann-benchmarks: %s, %zu queries; every query counts (queries: all)\n", a->top ? "\n" : "", s.ds->path, nq);
  printf("wrote %s\n      %s\n", agg_path, lat_path);
  if (*pq_path) printf("      %s\n", pq_path);
  exit_code = RS_EXIT_OK;
  if (so->n_gates) {
    printf("\ngates:\n");
    int width = 0;
    for (size_t r = 0; r < in.n_runs; r++)
      if ((int)strlen(run_names[r]) > width) width = (int)strlen(run_names[r]);
    if ((rc = gate_report_open(&gr, out_dir, width, gates_width(gates, so->n_gates), &err)) ||
        (rc = gates_check(&gr, gates, so->n_gates, measure_names, s.n_out, run_names, in.n_runs, res, &err)) ||
        (rc = gate_report_commit(&gr, &err)))
      goto fail;
    printf("wrote %s/gates.csv\n", out_dir);
    if (gr.n_failed) exit_code = RS_EXIT_GATE;
  }
  if (a->po && publish_any(a->po)) {
    char *inputs[] = {(char *)a->dataset};
    const publish_run pr = {.cmd = "eval", .out_dir = out_dir, .argc = a->argc, .argv = a->argv, .inputs = inputs,
                            .n_inputs = 1, .exit_status = exit_code};
    exit_code = publish_outputs(a->po, &pr, stdout);
  }
  goto done;

nomem:
  rc = rs__fail(&err, RS_NOMEM, "out of memory");
fail:
  fprintf(stderr, "ragsweep eval: %s\n", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
  rs__csv_abort(agg);
  rs__csv_abort(latw);
  rs__csv_abort(s.pq);
  gate_report_abort(&gr);
done:
  sweep_input_close(&in);
  if (*tmp_corpus) unlink(tmp_corpus);
  rs__tmp_forget(tmp_h);
  if (exit_code == RS_EXIT_INPUT && made_out_dir) rmdir(out_dir); /* only if still empty */
  for (size_t i = 0; sres && i < s.n_res; i++) rs__run_result_free(&sres[i]);
  for (size_t i = 0; res && i < s.n_res; i++) rs__run_result_free(&res[i]);
  free(sres);
  free(res);
  free(lat);
  free(run_names);
  free(measure_names);
  for (int m = 0; m < AM_N; m++) free(s.hits[m]);
  free(s.figures);
  free(s.out);
  free(s.res_of_run);
  rs__spec_free(spec);
  free(id_names);
  for (size_t i = 0; gates && i < so->n_gates; i++) gate_free(&gates[i]);
  free(gates);
  close_inputs(&s);
  return exit_code;
}

int annb_import(const char *out, char **args, size_t n)
{
  annb_state s = {0};
  rs_error err = {0};
  rs_code rc;
  int exit_code = RS_EXIT_INPUT;
  if (n < 2) {
    fprintf(stderr, "ragsweep import: %s is an ann-benchmarks dataset: expected its result files after it "
                    "(ragsweep import -o OUT.h5 DATASET.hdf5 RESULT.hdf5 [...])\n", args[0]);
    return RS_EXIT_USAGE;
  }
  size_t c1 = 0, c2 = 0, count = 0;
  if ((rc = open_inputs(args[0], args + 1, n - 1, &s, &err))) goto fail;
  if (!(count = common_count(&s, &c1, &c2))) {
    rc = counts_differ(&s, c1, c2, "import (the qrels are each query's first count true neighbours)", &err);
    goto fail;
  }
  for (size_t i = 0; i < s.n_res; i++) { /* as eval would refuse them */
    rs__run r = {.name = s.res[i]->name, .path = s.res[i]->path, .attrs = s.res[i]->attrs, .n_attrs = s.res[i]->n_attrs};
    if ((rc = check_run_attrs(&r, &err))) goto fail;
  }
  if ((rc = rs__annb_write_corpus(s.ds, (const rs__annb_result *const *)s.res, s.n_res, count, out, &err))) goto fail;
  printf("wrote %s (%zu run%s; qrels: the first %zu true neighbours of each of %zu queries, grade 1)\n", out, s.n_res,
         s.n_res == 1 ? "" : "s", count, s.ds->nq);
  exit_code = RS_EXIT_OK;
  goto done;
fail:
  fprintf(stderr, "ragsweep import: %s\n", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
done:
  close_inputs(&s);
  return exit_code;
}
