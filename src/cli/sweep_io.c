/* sweep_io.c: opening sweeps and writing aggregate.csv, for eval and compare. */
#define _GNU_SOURCE
#include "sweep_io.h"

#include "direct_input.h"
#include "formats/qrels_map.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir_p(const char *dir)
{
  char buf[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    buf[i] = c;
  }
  struct stat st;
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

void remove_outputs(const char *dir, const char *const *names, size_t n)
{
  char path[4200];
  for (size_t i = 0; i < n; i++)
    if (names[i] && snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path) unlink(path);
}

int parse_real(const char *s, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v)) return 0;
  *out = v;
  return 1;
}

int parse_count(const char *s, long min, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < min) return 0;
  *out = v;
  return 1;
}

void sweep_input_close(sweep_input *in)
{
  for (size_t i = 0; i < in->n_files; i++) rs__runset_close(&in->files[i]);
  free(in->files);
  free(in->runs);
  free(in->keys);
  for (size_t i = 0; i < in->n_cut; i++) {
    free(in->cut[i].name);
    free(in->cut[i].attrs);
  }
  free(in->cut);
  free(in->cut_text);
  rs__corpus_close(in->corpus);
  memset(in, 0, sizeof *in);
}

/* Every fixed column of the CSV files that carry run attributes
 * (aggregate.csv, latency.csv, compare.csv) and of the other outputs
 * (per_query.csv, worst.csv, gates.csv, summary.csv): an attribute of the
 * same name would give a header with a duplicate column. */
static const char *const reserved_columns[] = {
    "run", "query", "measure", "value", "n", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
    "baseline", "mean", "baseline_mean", "diff", "ci_low", "ci_high", "effect_size", "t", "p_ttest", "p_perm",
    "p_ttest_adj", "p_perm_adj", "list", "position", "check", "op", "threshold", "pass", "rank", "group", "best",
    "diff_to_best", "p_adj_vs_best", "queries", "base", "cutoff"};

rs_code check_run_attrs(const rs__run *r, rs_error *err)
{
  for (size_t a = 0; a < r->n_attrs; a++)
    for (size_t i = 0; i < sizeof reserved_columns / sizeof *reserved_columns; i++)
      if (strcmp(r->attrs[a].key, reserved_columns[i]) == 0)
        return rs__fail(err, RS_FORMAT,
                        "%s:/runs/%s: attribute '%s' is also the name of an output column, so the CSV files would "
                        "have two '%s' columns; rename the attribute (h5py: g.attrs['%s_attr'] = g.attrs.pop('%s'))",
                        r->path, r->name, r->attrs[a].key, r->attrs[a].key, r->attrs[a].key, r->attrs[a].key);
  return RS_OK;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* keys[]: the union of the runs' attribute keys (n_all of them in all),
 * bytewise order. */
static rs_code collect_keys(sweep_input *in, size_t n_all, rs_error *err)
{
  if (!(in->keys = calloc(n_all ? n_all : 1, sizeof *in->keys))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < in->n_runs; i++)
    for (size_t a = 0; a < in->runs[i]->n_attrs; a++) in->keys[in->n_keys++] = in->runs[i]->attrs[a].key;
  qsort(in->keys, in->n_keys, sizeof *in->keys, cmp_str);
  size_t k = 0;
  for (size_t i = 0; i < in->n_keys; i++)
    if (k == 0 || strcmp(in->keys[k - 1], in->keys[i]) != 0) in->keys[k++] = in->keys[i];
  in->n_keys = k;
  return RS_OK;
}

/* The run files beside in->corpus, the list of every run and its checks. */
static rs_code attach_runs(sweep_input *in, char **paths, size_t n_paths, rs_error *err)
{
  rs_code rc = RS_OK;
  if (!(in->files = calloc(n_paths ? n_paths : 1, sizeof *in->files)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  rc = rs__runsets_open(paths, n_paths, in->corpus->nq, in->files, &in->n_files, err);
  if (rc) return rc;
  size_t total = in->corpus->runs.n;
  for (size_t i = 0; i < in->n_files; i++) total += in->files[i].n;
  if (!(in->runs = calloc(total ? total : 1, sizeof *in->runs))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < in->corpus->runs.n; i++) in->runs[in->n_runs++] = &in->corpus->runs.run[i];
  for (size_t f = 0; f < in->n_files; f++)
    for (size_t i = 0; i < in->files[f].n; i++) in->runs[in->n_runs++] = &in->files[f].run[i];
  for (size_t i = 0; i < in->n_runs; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(in->runs[i]->name, in->runs[j]->name) == 0)
        return rs__fail(err, RS_FORMAT, "run '%s' is in both %s and %s; run names must be unique", in->runs[i]->name,
                        in->runs[j]->path, in->runs[i]->path);
  size_t n_all = 0;
  for (size_t i = 0; i < in->n_runs; i++) {
    if ((rc = check_run_attrs(in->runs[i], err))) return rc;
    n_all += in->runs[i]->n_attrs;
  }
  return collect_keys(in, n_all, err);
}

rs_code sweep_input_open(sweep_input *in, const char *corpus, char **paths, size_t n_paths, rs_error *err)
{
  rs_code rc = rs__corpus_open(corpus, &in->corpus, err);
  return rc ? rc : attach_runs(in, paths, n_paths, err);
}

rs_code sweep_input_adopt(sweep_input *in, rs__corpus *corpus, rs_error *err)
{
  in->corpus = corpus;
  return attach_runs(in, NULL, 0, err);
}

static const char TOP_K[] = "top_k";

rs_code sweep_input_add_depths(sweep_input *in, const size_t *depths, size_t n_depths, rs_error *err)
{
  const size_t n_real = in->n_runs, n_all = rs__mul(n_real, n_depths);
  for (size_t r = 0; r < n_real; r++)
    for (size_t a = 0; a < in->runs[r]->n_attrs; a++)
      if (strcmp(in->runs[r]->attrs[a].key, TOP_K) == 0)
        return rs__fail(err, RS_FORMAT,
                        "%s:/runs/%s: the run has an attribute top_k already, and --depths gives each virtual run its "
                        "own top_k; drop --depths, or rename the attribute (h5py: g.attrs['retrieved_k'] = "
                        "g.attrs.pop('top_k'))", in->runs[r]->path, in->runs[r]->name);
  /* "top_k" and each depth's digits, in one block. */
  char *text = rs__malloc(rs__mul(n_depths + 1, 24));
  rs__run *cut = rs__calloc(n_all ? n_all : 1, sizeof *cut);
  const rs__run **runs = rs__calloc(n_all ? n_all : 1, sizeof *runs);
  if (!text || !cut || !runs) {
    free(text), free(cut), free(runs);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  memcpy(text, TOP_K, sizeof TOP_K);
  for (size_t d = 0; d < n_depths; d++) snprintf(text + 24 * (d + 1), 24, "%zu", depths[d]);
  in->cut = cut, in->cut_text = text;
  size_t n_attrs_all = 0;
  for (size_t r = 0; r < n_real; r++) {
    const rs__run *src = in->runs[r];
    for (size_t d = 0; d < n_depths; d++) {
      rs__run *v = &cut[in->n_cut];
      *v = *src;
      v->name = NULL, v->attrs = NULL, v->n_attrs = 0;
      in->n_cut++;
      v->source = src, v->depth = depths[d];
      if (asprintf(&v->name, "%s/%s=%zu", src->name, TOP_K, depths[d]) < 0) v->name = NULL;
      v->attrs = rs__malloc(rs__mul(src->n_attrs + 1, sizeof *v->attrs));
      if (!v->name || !v->attrs) {
        free(runs);
        return rs__fail(err, RS_NOMEM, "out of memory");
      }
      /* attrs stay in bytewise key order: top_k goes in its place */
      size_t a = 0;
      while (a < src->n_attrs && strcmp(src->attrs[a].key, TOP_K) < 0) v->attrs[v->n_attrs++] = src->attrs[a++];
      v->attrs[v->n_attrs++] = (rs__attr){.key = text, .kind = RS_ATTR_INT, .text = text + 24 * (d + 1),
                                          .num = (double)depths[d]};
      while (a < src->n_attrs) v->attrs[v->n_attrs++] = src->attrs[a++];
      n_attrs_all += v->n_attrs;
      runs[r * n_depths + d] = v;
    }
  }
  free(in->runs);
  in->runs = runs, in->n_runs = n_all;
  for (size_t i = 0; i < n_all; i++)
    for (size_t j = 0; j < n_real; j++)
      if (strcmp(runs[i]->name, cut[j * n_depths].source->name) == 0)
        return rs__fail(err, RS_FORMAT, "--depths: the virtual run '%s' has the name of a run of %s; rename that run",
                        runs[i]->name, cut[j * n_depths].source->path);
  free(in->keys);
  in->keys = NULL, in->n_keys = 0;
  return collect_keys(in, n_attrs_all, err);
}

rs_code sweep_input_use_qrels(sweep_input *in, const char *path, rs_error *err)
{
  int64_t *qoff = NULL;
  int32_t *qdoc = NULL, *qgrade = NULL;
  rs_code rc = rs__qrels_map_file(in->corpus, path, &qoff, &qdoc, &qgrade, err);
  if (rc) return rc;
  rs__corpus_replace_qrels(in->corpus, qoff, qdoc, qgrade);
  return RS_OK;
}

size_t sweep_input_max_k(const sweep_input *in)
{
  size_t max_k = 0;
  for (size_t i = 0; i < in->n_runs; i++)
    if (!in->runs[i]->csr && in->runs[i]->k > max_k) max_k = in->runs[i]->k;
  return max_k;
}

size_t sweep_input_find(const sweep_input *in, const char *name)
{
  for (size_t i = 0; i < in->n_runs; i++)
    if (strcmp(in->runs[i]->name, name) == 0) return i;
  return SIZE_MAX;
}

static const char *attr_text(const rs__run *r, const char *key)
{
  for (size_t a = 0; a < r->n_attrs; a++)
    if (strcmp(r->attrs[a].key, key) == 0) return r->attrs[a].text;
  return "";
}

void csv_run_columns(rs__csv *w, const sweep_input *in, size_t run)
{
  const rs__run *r = in->runs[run];
  rs__csv_str(w, r->name);
  for (size_t k = 0; k < in->n_keys; k++) rs__csv_str(w, attr_text(r, in->keys[k]));
}

/* The length of name's base; its cutoff into cutoff[24] ("" when none).
 * The cutoff is the digits after the last '@', when nothing else follows
 * them: P(rel=2)@5 -> P(rel=2), 5. */
static size_t split_cutoff(const char *name, char *cutoff)
{
  const char *at = strrchr(name, '@');
  const size_t digits = at ? strlen(at + 1) : 0;
  cutoff[0] = '\0';
  if (!at || digits == 0 || digits >= 24 || strspn(at + 1, "0123456789") != digits) return strlen(name);
  memcpy(cutoff, at + 1, digits + 1);
  return (size_t)(at - name);
}

void measure_cols_put_name(rs__csv *w, const char *name)
{
  char cutoff[24], base[256];
  const size_t len = split_cutoff(name, cutoff);
  rs__csv_str(w, name);
  if (len < sizeof base) {
    memcpy(base, name, len), base[len] = '\0';
    rs__csv_str(w, base);
  } else {
    rs__csv_str(w, name); /* only a name without a cutoff is this long */
  }
  rs__csv_str(w, cutoff);
}

void measure_cols_free(measure_cols *mc)
{
  for (size_t k = 0; mc->base && k < mc->n; k++) free(mc->base[k]);
  free(mc->base);
  free(mc->cutoff);
  *mc = (measure_cols){0};
}

rs_code measure_cols_init(measure_cols *mc, const char *const *names, size_t n, rs_error *err)
{
  *mc = (measure_cols){.name = names, .n = n};
  mc->base = calloc(n ? n : 1, sizeof *mc->base);
  mc->cutoff = calloc(n ? n : 1, sizeof *mc->cutoff);
  if (!mc->base || !mc->cutoff) {
    measure_cols_free(mc);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t k = 0; k < n; k++) {
    const size_t len = split_cutoff(names[k], mc->cutoff[k]);
    if (!(mc->base[k] = strndup(names[k], len))) {
      measure_cols_free(mc);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
  }
  return RS_OK;
}

void measure_cols_header(rs__csv *w)
{
  rs__csv_str(w, "measure");
  rs__csv_str(w, "base");
  rs__csv_str(w, "cutoff");
}

void measure_cols_put(rs__csv *w, const measure_cols *mc, size_t k)
{
  rs__csv_str(w, mc->name[k]);
  rs__csv_str(w, mc->base[k]);
  rs__csv_str(w, mc->cutoff[k]);
}

rs_code write_aggregate(rs__csv *w, const sweep_input *in, const char *const *run_names, size_t n_runs,
                        const char *const *measures, size_t n_measures, const rs__run_result *res, int with_counts,
                        const char *policy, rs_error *err)
{
  static const char *const counts[] = {"num_q", "num_q_no_rel_ret", "num_q_perfect_P@1"};
  const size_t n_counts = with_counts ? 3 : 1, n_keys = in ? in->n_keys : 0;
  measure_cols mc;
  rs_code rc = measure_cols_init(&mc, measures, n_measures, err);
  if (rc) return rc;
  rs__csv_str(w, "run");
  for (size_t k = 0; k < n_keys; k++) rs__csv_str(w, in->keys[k]);
  measure_cols_header(w);
  rs__csv_str(w, "value");
  rs__csv_str(w, "queries");
  rc = rs__csv_end_row(w, err);
  for (size_t r = 0; r < n_runs && !rc; r++) {
    for (size_t k = 0; k < n_measures + n_counts && !rc; k++) {
      if (in) csv_run_columns(w, in, r);
      else rs__csv_str(w, run_names[r]);
      if (k < n_measures) {
        measure_cols_put(w, &mc, k);
        rs__csv_num(w, res[r].value[k]);
      } else { /* a count is a base of its own, without a cutoff */
        const size_t v[] = {res[r].num_q, res[r].no_rel_ret, res[r].perfect_p1};
        rs__csv_str(w, counts[k - n_measures]);
        rs__csv_str(w, counts[k - n_measures]);
        rs__csv_str(w, "");
        rs__csv_uint(w, v[k - n_measures]);
      }
      rs__csv_str(w, policy);
      rc = rs__csv_end_row(w, err);
    }
  }
  measure_cols_free(&mc);
  return rc;
}

rs_code write_latency_csv(rs__csv *w, const sweep_input *in, latency_of_fn of, const void *ctx, rs_error *err)
{
  static const char *const cols[] = {"n", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"};
  rs_code rc;
  rs__csv_str(w, "run");
  for (size_t k = 0; k < in->n_keys; k++) rs__csv_str(w, in->keys[k]);
  for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) rs__csv_str(w, cols[k]);
  if ((rc = rs__csv_end_row(w, err))) return rc;
  for (size_t r = 0; r < in->n_runs; r++) {
    const rs__latency *l = of(ctx, r);
    if (!l) continue;
    csv_run_columns(w, in, r);
    rs__csv_uint(w, l->n);
    const double ms[] = {l->mean, l->p50, l->p90, l->p95, l->p99, l->p999, l->max};
    for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) rs__csv_num(w, ms[k] * 1000.0);
    if ((rc = rs__csv_end_row(w, err))) return rc;
  }
  return RS_OK;
}
