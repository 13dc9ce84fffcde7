/* folder.c: an output folder read for the HTML report (see folder.h). */
#define _GNU_SOURCE
#include "report/folder.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/csvio.h"
#include "formats/textio.h"
#include "internal.h"
#include "stats/stats.h"
#include "util/strbuf.h"

/* --- a small CSV table, kept as text --------------------------------------------------- */

typedef struct tab {
  const char *path;
  const char *writer; /* "'ragsweep compare' writes compare.csv": for messages */
  char **col;
  size_t n_cols;
  char **cell; /* [n_rows * n_cols] */
  size_t *line;
  size_t n_rows, cap;
  /* Rows to keep (NULL: all); may count the others. */
  int (*keep)(void *ctx, char **fields, size_t n);
  void *keep_ctx;
} tab;

static void tab_free(tab *t)
{
  for (size_t i = 0; i < t->n_cols; i++) free(t->col[i]);
  for (size_t i = 0; i < t->n_rows * t->n_cols; i++) free(t->cell[i]);
  free(t->col);
  free(t->cell);
  free(t->line);
  t->col = t->cell = NULL;
  t->line = NULL;
  t->n_cols = t->n_rows = t->cap = 0;
}

static rs_code tab_row(void *ctx, char **f, size_t n, size_t line, rs_error *err)
{
  tab *t = ctx;
  if (!t->col) {
    if (!(t->col = rs__calloc(n, sizeof *t->col))) return rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
      if (!(t->col[i] = strdup(f[i]))) return rs__fail(err, RS_NOMEM, "out of memory");
      t->n_cols++;
    }
    return RS_OK;
  }
  if (n != t->n_cols)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", t->path, line,
                    t->n_cols, n);
  if (t->keep && !t->keep(t->keep_ctx, f, n)) return RS_OK;
  if (t->n_rows == t->cap) {
    const size_t cap = t->cap ? 2 * t->cap : 64;
    char **c = rs__realloc(t->cell, rs__mul(rs__mul(cap, t->n_cols), sizeof *c));
    if (c) t->cell = c;
    size_t *l = rs__realloc(t->line, rs__mul(cap, sizeof *l));
    if (l) t->line = l;
    if (!c || !l) return rs__fail(err, RS_NOMEM, "out of memory (%s)", t->path);
    t->cap = cap;
  }
  char **row = t->cell + t->n_rows * t->n_cols;
  for (size_t i = 0; i < n; i++)
    if (!(row[i] = strdup(f[i]))) {
      for (size_t j = 0; j < i; j++) free(row[j]);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
  t->line[t->n_rows++] = line;
  return RS_OK;
}

static size_t tab_col(const tab *t, const char *name)
{
  for (size_t i = 0; i < t->n_cols; i++)
    if (strcmp(t->col[i], name) == 0) return i;
  return SIZE_MAX;
}

static const char *tab_get(const tab *t, size_t row, size_t col)
{
  return col == SIZE_MAX ? "" : t->cell[row * t->n_cols + col];
}

/* Reads path into *t; every name of need[] must be a column. */
static rs_code tab_load(tab *t, const char *path, const char *writer, const char *const *need, size_t n_need,
                        rs_error *err)
{
  t->path = path;
  t->writer = writer;
  rs_code rc = rs__csv_read(path, tab_row, t, err);
  if (rc) return rc;
  if (!t->col) return rs__fail(err, RS_FORMAT, "%s: empty file, expected a header (%s)", path, writer);
  for (size_t i = 0; i < n_need; i++)
    if (tab_col(t, need[i]) == SIZE_MAX)
      return rs__fail(err, RS_FORMAT, "%s:1: expected a column '%s' (%s), found none", path, need[i], writer);
  return RS_OK;
}

/* A number of the table (NaN for an empty field, when empty_ok). */
static rs_code tab_num(const tab *t, size_t row, size_t col, int empty_ok, double *out, rs_error *err)
{
  const char *s = tab_get(t, row, col);
  if (!*s && empty_ok) {
    *out = NAN;
    return RS_OK;
  }
  char *end;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column '%s', found '%s'", t->path, t->line[row],
                    col == SIZE_MAX ? "?" : t->col[col], s);
  *out = v;
  return RS_OK;
}

/* --- paths ------------------------------------------------------------------------------ */

static char *path_in(const char *dir, const char *name)
{
  rs__sb b = {0};
  rs__sb_printf(&b, "%s/%s", dir, name);
  return rs__sb_take(&b);
}

static int has_file(const char *dir, const char *name)
{
  char *p = path_in(dir, name);
  struct stat st;
  const int ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
  free(p);
  return ok;
}

/* --- accessors ------------------------------------------------------------------------- */

const char *rs__folder_measure(const rs__folder *f, size_t m)
{
  return f->res.agg.val[RS__AGG_MEASURE(&f->res.agg)].str[f->meas[m]];
}

size_t rs__folder_find_measure(const rs__folder *f, const char *name)
{
  for (size_t m = 0; m < f->n_meas; m++)
    if (strcmp(rs__folder_measure(f, m), name) == 0) return m;
  return SIZE_MAX;
}

double rs__folder_value(const rs__folder *f, size_t e, size_t m) { return f->value[e * f->n_meas + m]; }

const char *rs__folder_text(const rs__folder *f, const char *query)
{
  const long id = rs__strdict_find(&f->text_ids, query);
  return id < 0 ? NULL : f->texts[id];
}

size_t rs__folder_entry(const rs__folder *f, const char *name)
{
  const long e = rs__strdict_find(&f->entry_ids, name);
  return e < 0 ? SIZE_MAX : (size_t)e;
}

double rs__t_quantile2(double p2, double df)
{
  if (!(p2 > 0.0 && p2 < 1.0) || !(df > 0.0)) return NAN;
  double lo = 0.0, hi = 1.0;
  while (rs__student_t_p2(hi, df) > p2 && hi < 1e12) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
    const double mid = 0.5 * (lo + hi);
    if (rs__student_t_p2(mid, df) > p2) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

void rs__folder_free(rs__folder *f)
{
  rs__results_free(&f->res);
  for (size_t e = 0; e < f->n_entries; e++) {
    free(f->entry[e].name);
    free(f->entry[e].attrs_json);
    if (f->cdf) {
      free(f->cdf[e].q);
      free(f->cdf[e].ms);
    }
  }
  free(f->entry);
  free(f->entry_of_row);
  free(f->meas);
  free(f->value);
  free(f->num_q);
  rs__strdict_free(&f->fam);
  rs__strdict_free(&f->entry_ids);
  free(f->curve);
  free(f->pr);
  free(f->cdf);
  free(f->ci_lo);
  free(f->ci_hi);
  for (size_t i = 0; i < f->n_cmp; i++) {
    free(f->cmp[i].run);
    free(f->cmp[i].baseline);
    free(f->cmp[i].measure);
  }
  free(f->cmp);
  for (size_t i = 0; i < f->n_gate; i++) {
    free(f->gate[i].run);
    free(f->gate[i].check);
    free(f->gate[i].measure);
    free(f->gate[i].op);
    free(f->gate[i].threshold);
  }
  free(f->gate);
  for (size_t i = 0; i < f->n_worst; i++) {
    free(f->worst[i].run);
    free(f->worst[i].measure);
    free(f->worst[i].query);
  }
  free(f->worst);
  free(f->no_hit);
  for (size_t i = 0; i < f->text_ids.n; i++) free(f->texts[i]);
  free(f->texts);
  rs__strdict_free(&f->text_ids);
  for (size_t i = 0; i < f->n_agree; i++) free(f->agree[i].name);
  free(f->agree);
  *f = (rs__folder){0};
}

/* --- entries, measures, values ------------------------------------------------------- */

static int is_count(const char *m)
{
  return strcmp(m, "num_q") == 0 || strcmp(m, "num_q_no_rel_ret") == 0 || strcmp(m, "num_q_perfect_P@1") == 0;
}

static rs_code load_entries(rs__folder *f, rs_error *err)
{
  const rs__agg *t = &f->res.agg;
  const size_t n_labels = rs__results_n_labels(&f->res), mkey = RS__AGG_MEASURE(t);
  size_t judge = SIZE_MAX;
  for (size_t l = 0; f->kind == RS__RESULTS_RAG && l < n_labels; l++)
    if (strcmp(rs__results_label_name(&f->res, l), "judge") == 0) judge = l;
  rs__strdict keys = {0};
  rs_code rc = RS_OK;
  if (!(f->entry_of_row = rs__calloc(t->n_rows, sizeof *f->entry_of_row)) ||
      !(f->entry = rs__calloc(t->n_rows ? t->n_rows : 1, sizeof *f->entry)) ||
      !(f->meas = rs__calloc(t->val[mkey].n + 1, sizeof *f->meas)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t m = 0; m < t->val[mkey].n; m++)
    if (!is_count(t->val[mkey].str[m])) f->meas[f->n_meas++] = m;
  rs__sb key = {0};
  for (size_t row = 0; row < t->n_rows && !rc; row++) {
    /* An entry is the row's keys but the measure, as ids (unambiguous). */
    rs__sb_free(&key);
    for (size_t k = 0; k < mkey; k++) rs__sb_printf(&key, "%u,", t->id[row * t->n_keys + k]);
    if (key.failed) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    uint32_t id;
    const size_t before = keys.n;
    if ((rc = rs__strdict_add(&keys, rs__sb_view(&key), &id, err))) break;
    f->entry_of_row[row] = id;
    if (keys.n == before) continue;
    rs__entry *e = &f->entry[f->n_entries++];
    e->run = rs__results_run_id(&f->res, row);
    e->first_row = row;
    rs__sb name = {0}, js = {0};
    rs__sb_str(&name, rs__results_run(&f->res, row));
    if (judge != SIZE_MAX && *rs__results_label_value(&f->res, row, judge))
      rs__sb_printf(&name, " [%s]", rs__results_label_value(&f->res, row, judge));
    rs__sb_str(&js, "{");
    for (size_t l = 0; l < n_labels; l++) {
      if (l) rs__sb_str(&js, ",");
      const char *ln = rs__results_label_name(&f->res, l), *lv = rs__results_label_value(&f->res, row, l);
      rs__sb_json_str(&js, ln, strlen(ln));
      rs__sb_str(&js, ":");
      rs__sb_json_str(&js, lv, strlen(lv));
    }
    rs__sb_str(&js, "}");
    e->name = rs__sb_take(&name);
    e->attrs_json = rs__sb_take(&js);
    if (!e->name || !e->attrs_json) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      break;
    }
    /* Names are unique (a run; a rag configuration and its judge); a
     * first one wins if a file repeats one. */
    uint32_t name_id;
    if ((rc = rs__strdict_add(&f->entry_ids, e->name, &name_id, err))) break;
  }
  rs__sb_free(&key);
  rs__strdict_free(&keys);
  if (rc) return rc;
  const size_t nv = rs__mul(f->n_entries, f->n_meas ? f->n_meas : 1);
  if (!(f->value = rs__malloc(rs__mul(nv, sizeof *f->value))) ||
      !(f->num_q = rs__malloc(rs__mul(f->n_entries + 1, sizeof *f->num_q))))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < nv; i++) f->value[i] = NAN;
  for (size_t e = 0; e < f->n_entries; e++) f->num_q[e] = SIZE_MAX;
  size_t *slot = rs__malloc(rs__mul(t->val[mkey].n + 1, sizeof *slot));
  if (!slot) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t m = 0; m < t->val[mkey].n; m++) slot[m] = SIZE_MAX;
  for (size_t m = 0; m < f->n_meas; m++) slot[f->meas[m]] = m;
  for (size_t row = 0; row < t->n_rows; row++) {
    const uint32_t mid = t->id[row * t->n_keys + mkey];
    const size_t e = f->entry_of_row[row];
    if (slot[mid] != SIZE_MAX) f->value[e * f->n_meas + slot[mid]] = t->value[row];
    else if (strcmp(t->val[mkey].str[mid], "num_q") == 0 && t->value[row] >= 0) f->num_q[e] = (size_t)t->value[row];
  }
  free(slot);
  return RS_OK;
}

/* --- curves ---------------------------------------------------------------------------- */

static rs_code add_curve(rs__folder *f, size_t *cap, size_t e, const char *base, double cutoff, double value,
                         rs_error *err)
{
  uint32_t fam;
  rs_code rc = rs__strdict_add(&f->fam, base, &fam, err);
  if (rc) return rc;
  if (f->n_curve == *cap) {
    const size_t c = *cap ? 2 * *cap : 256;
    rs__curve_pt *p = rs__realloc(f->curve, rs__mul(c, sizeof *p));
    if (!p) return rs__fail(err, RS_NOMEM, "out of memory");
    f->curve = p, *cap = c;
  }
  f->curve[f->n_curve++] = (rs__curve_pt){.entry = e, .family = fam, .cutoff = cutoff, .value = value};
  return RS_OK;
}

/* "iprec_at_recall_0.30" -> 3 (the index of the recall level), or -1. */
static int iprec_index(const char *name)
{
  static const char pre[] = "iprec_at_recall_";
  if (strncmp(name, pre, sizeof pre - 1) != 0) return -1;
  char *end;
  const double r = strtod(name + sizeof pre - 1, &end);
  if (*end || !(r >= 0.0 && r <= 1.0)) return -1;
  const double k = r * 10.0;
  return fabs(k - round(k)) < 1e-9 ? (int)round(k) : -1;
}

/* "nDCG@10" -> base "nDCG", cutoff 10; 0 when name has no @integer. */
static int split_cutoff(const char *name, char *base, size_t cap, double *cutoff)
{
  const char *at = strrchr(name, '@');
  if (!at || at == name || !at[1]) return 0;
  char *end;
  errno = 0;
  const long k = strtol(at + 1, &end, 10);
  if (*end || errno || k < 1 || (size_t)(at - name) >= cap) return 0;
  memcpy(base, name, (size_t)(at - name));
  base[at - name] = '\0';
  *cutoff = (double)k;
  return 1;
}

static int by_curve(const void *a, const void *b)
{
  const rs__curve_pt *x = a, *y = b;
  if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
  if (x->family != y->family) return x->family < y->family ? -1 : 1;
  return (x->cutoff > y->cutoff) - (x->cutoff < y->cutoff);
}

static rs_code load_curves(rs__folder *f, rs_error *err)
{
  size_t cap = 0;
  rs_code rc = RS_OK;
  if (!(f->pr = rs__malloc(rs__mul(rs__mul(f->n_entries, 11), sizeof *f->pr))))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < f->n_entries * 11; i++) f->pr[i] = NAN;
  /* aggregate.csv's own measures first: they win over curves.csv's copies
   * (the same doubles when eval wrote both). */
  for (size_t m = 0; m < f->n_meas && !rc; m++) {
    const char *name = rs__folder_measure(f, m);
    char base[256];
    double cut;
    const int ip = iprec_index(name);
    for (size_t e = 0; e < f->n_entries && !rc; e++) {
      const double v = rs__folder_value(f, e, m);
      if (isnan(v)) continue;
      if (ip >= 0) f->pr[e * 11 + (size_t)ip] = v, f->has_pr = 1;
      else if (split_cutoff(name, base, sizeof base, &cut)) rc = add_curve(f, &cap, e, base, cut, v, err);
    }
  }
  if (rc || !has_file(f->dir, "curves.csv")) goto sort;
  {
    char *path = path_in(f->dir, "curves.csv");
    tab t = {0};
    static const char *const need[] = {"run", "measure", "base", "cutoff", "value"};
    if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
    rc = tab_load(&t, path, "'ragsweep eval --report' writes curves.csv", need, 5, err);
    const size_t c_run = tab_col(&t, "run"), c_meas = tab_col(&t, "measure"), c_base = tab_col(&t, "base"),
                 c_cut = tab_col(&t, "cutoff"), c_val = tab_col(&t, "value");
    for (size_t r = 0; r < t.n_rows && !rc; r++) {
      const size_t e = rs__folder_entry(f, tab_get(&t, r, c_run));
      if (e == SIZE_MAX) continue; /* a run aggregate.csv does not have */
      double cut, v;
      if ((rc = tab_num(&t, r, c_cut, 0, &cut, err)) || (rc = tab_num(&t, r, c_val, 1, &v, err))) break;
      if (isnan(v)) continue;
      const int ip = iprec_index(tab_get(&t, r, c_meas));
      if (strcmp(tab_get(&t, r, c_base), "iprec_at_recall") == 0 && ip >= 0) {
        if (isnan(f->pr[e * 11 + (size_t)ip])) f->pr[e * 11 + (size_t)ip] = v;
        f->has_pr = 1;
      } else {
        rc = add_curve(f, &cap, e, tab_get(&t, r, c_base), cut, v, err);
      }
    }
    f->curves_file = !rc;
    tab_free(&t);
    free(path);
  }
sort:
  if (rc) return rc;
  /* One point per (entry, family, cutoff).  Where aggregate.csv has the
   * measure, its value is the one shown: eval writes the same double to
   * both files, and aggregate.csv is the source of truth otherwise. */
  if (f->n_curve) qsort(f->curve, f->n_curve, sizeof *f->curve, by_curve);
  size_t w = 0;
  for (size_t i = 0; i < f->n_curve; i++) {
    if (w && by_curve(&f->curve[w - 1], &f->curve[i]) == 0) continue;
    f->curve[w++] = f->curve[i];
  }
  f->n_curve = w;
  for (size_t i = 0; i < f->n_curve; i++) {
    rs__curve_pt *c = &f->curve[i];
    char name[320];
    snprintf(name, sizeof name, "%s@%.0f", f->fam.str[c->family], c->cutoff);
    const size_t m = rs__folder_find_measure(f, name);
    if (m != SIZE_MAX && !isnan(rs__folder_value(f, c->entry, m))) c->value = rs__folder_value(f, c->entry, m);
  }
  return RS_OK;
}

/* --- latency CDF ------------------------------------------------------------------------- */

static rs_code cdf_push(rs__cdf *c, double q, double ms, rs_error *err)
{
  if ((c->n & (c->n - 1)) == 0) { /* grow at powers of two */
    const size_t cap = c->n ? 2 * c->n : 8;
    double *a = rs__realloc(c->q, rs__mul(cap, sizeof *a));
    if (a) c->q = a;
    double *b = rs__realloc(c->ms, rs__mul(cap, sizeof *b));
    if (b) c->ms = b;
    if (!a || !b) return rs__fail(err, RS_NOMEM, "out of memory");
  }
  c->q[c->n] = q;
  c->ms[c->n++] = ms;
  return RS_OK;
}

static rs_code load_cdf(rs__folder *f, rs_error *err)
{
  if (!(f->cdf = rs__calloc(f->n_entries ? f->n_entries : 1, sizeof *f->cdf)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  rs_code rc = RS_OK;
  if (f->kind != RS__RESULTS_RAG && has_file(f->dir, "latency_cdf.csv")) {
    char *path = path_in(f->dir, "latency_cdf.csv");
    tab t = {0};
    static const char *const need[] = {"run", "quantile", "latency_ms"};
    if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
    rc = tab_load(&t, path, "'ragsweep eval --report' writes latency_cdf.csv", need, 3, err);
    const size_t c_run = tab_col(&t, "run"), c_q = tab_col(&t, "quantile"), c_ms = tab_col(&t, "latency_ms");
    for (size_t r = 0; r < t.n_rows && !rc; r++) {
      const size_t e = rs__folder_entry(f, tab_get(&t, r, c_run));
      double q, ms;
      if ((rc = tab_num(&t, r, c_q, 0, &q, err)) || (rc = tab_num(&t, r, c_ms, 0, &ms, err))) break;
      if (e != SIZE_MAX) rc = cdf_push(&f->cdf[e], q, ms, err);
    }
    f->cdf_file = !rc;
    tab_free(&t);
    free(path);
    return rc;
  }
  /* The percentiles the folder has, as points of the CDF. */
  for (size_t e = 0; e < f->n_entries && !rc; e++) {
    const size_t run = f->entry[e].run;
    if (!f->res.has_latency || !f->res.has_latency[run]) continue;
    const rs__results_latency *l = &f->res.latency[run];
    const double q[] = {0.5, 0.9, 0.95, 0.99, 0.999, 1.0};
    const double ms[] = {l->p50_ms, l->p90_ms, l->p95_ms, l->p99_ms, l->p999_ms, l->max_ms};
    for (size_t i = 0; i < 6 && !rc; i++)
      if (!isnan(ms[i])) rc = cdf_push(&f->cdf[e], q[i], ms[i], err);
  }
  return rc;
}

/* --- per_query.csv: the lead measure's t-interval ----------------------------------------- */

typedef struct {
  rs__folder *f;
  const char *path, *lead;
  size_t c_run, c_meas, c_val, n_fields;
  double **v; /* [n_entries] values in file order */
  size_t *n, *cap;
} pq_reader;

static rs_code pq_row(void *ctx, char **fl, size_t n, size_t line, rs_error *err)
{
  pq_reader *p = ctx;
  if (line == 1 || p->n_fields == 0) {
    p->n_fields = n;
    p->c_run = p->c_meas = p->c_val = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(fl[i], "run") == 0) p->c_run = i;
      else if (strcmp(fl[i], "measure") == 0) p->c_meas = i;
      else if (strcmp(fl[i], "value") == 0) p->c_val = i;
    }
    if (p->c_run == SIZE_MAX || p->c_meas == SIZE_MAX || p->c_val == SIZE_MAX)
      return rs__fail(err, RS_FORMAT, "%s:%zu: expected the header run,query,measure,value ('ragsweep eval "
                                      "--per-query' writes per_query.csv)", p->path, line);
    return RS_OK;
  }
  if (n != p->n_fields)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", p->path, line,
                    p->n_fields, n);
  if (strcmp(fl[p->c_meas], p->lead) != 0) return RS_OK;
  const size_t e = rs__folder_entry(p->f, fl[p->c_run]);
  if (e == SIZE_MAX) return RS_OK;
  char *end;
  errno = 0;
  const double v = strtod(fl[p->c_val], &end);
  if (end == fl[p->c_val] || *end || errno == ERANGE)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column 'value', found '%s'", p->path, line,
                    fl[p->c_val]);
  if (p->n[e] == p->cap[e]) {
    const size_t cap = p->cap[e] ? 2 * p->cap[e] : 1024;
    double *a = rs__realloc(p->v[e], rs__mul(cap, sizeof *a));
    if (!a) return rs__fail(err, RS_NOMEM, "out of memory (%s)", p->path);
    p->v[e] = a, p->cap[e] = cap;
  }
  p->v[e][p->n[e]++] = v;
  return RS_OK;
}

static rs_code load_ci(rs__folder *f, rs_error *err)
{
  if (!(f->ci_lo = rs__malloc(rs__mul(f->n_entries + 1, sizeof *f->ci_lo))) ||
      !(f->ci_hi = rs__malloc(rs__mul(f->n_entries + 1, sizeof *f->ci_hi))))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t e = 0; e < f->n_entries; e++) f->ci_lo[e] = f->ci_hi[e] = NAN;
  if (f->lead == SIZE_MAX || f->kind == RS__RESULTS_RAG || !has_file(f->dir, "per_query.csv")) return RS_OK;
  char *path = path_in(f->dir, "per_query.csv");
  pq_reader p = {.f = f, .path = path, .lead = rs__folder_measure(f, f->lead)};
  p.v = rs__calloc(f->n_entries + 1, sizeof *p.v);
  p.n = rs__calloc(f->n_entries + 1, sizeof *p.n);
  p.cap = rs__calloc(f->n_entries + 1, sizeof *p.cap);
  rs_code rc = path && p.v && p.n && p.cap ? rs__csv_read(path, pq_row, &p, err) : rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t e = 0; e < f->n_entries && !rc; e++) {
    const size_t n = p.n[e];
    if (n < 2) continue;
    /* Two passes in file order: the mean, then the squared deviations. */
    double s = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++) s += p.v[e][i];
    const double mean = s / (double)n;
    for (size_t i = 0; i < n; i++) ss += (p.v[e][i] - mean) * (p.v[e][i] - mean);
    const double sd = sqrt(ss / (double)(n - 1)), t = rs__t_quantile2(0.05, (double)(n - 1));
    const double half = t * sd / sqrt((double)n);
    f->ci_lo[e] = mean - half;
    f->ci_hi[e] = mean + half;
    f->has_ci = 1;
  }
  for (size_t e = 0; p.v && e < f->n_entries; e++) free(p.v[e]);
  free(p.v);
  free(p.n);
  free(p.cap);
  free(path);
  return rc;
}

/* --- compare.csv, gates.csv, worst.csv, texts ---------------------------------------------- */

static char *dup_or_fail(const char *s, rs_code *rc, rs_error *err)
{
  char *d = strdup(s);
  if (!d && !*rc) *rc = rs__fail(err, RS_NOMEM, "out of memory");
  return d;
}

static rs_code load_compare(rs__folder *f, rs_error *err)
{
  if (!has_file(f->dir, "compare.csv")) return RS_OK;
  char *path = path_in(f->dir, "compare.csv");
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  static const char *const need[] = {"run",    "baseline", "measure", "n",           "mean",    "baseline_mean",
                                     "diff",   "ci_low",   "ci_high", "p_ttest",     "p_perm",  "p_ttest_adj",
                                     "p_perm_adj"};
  enum { N_NEED = sizeof need / sizeof *need };
  tab t = {0};
  rs_code rc = tab_load(&t, path, "'ragsweep compare' writes compare.csv", need, N_NEED, err);
  if (!rc && !(f->cmp = rs__calloc(t.n_rows + 1, sizeof *f->cmp))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  size_t col[N_NEED];
  for (size_t i = 0; i < N_NEED; i++) col[i] = tab_col(&t, need[i]);
  for (size_t r = 0; r < t.n_rows && !rc; r++) {
    rs__cmp_row *c = &f->cmp[f->n_cmp++];
    c->run = dup_or_fail(tab_get(&t, r, col[0]), &rc, err);
    c->baseline = dup_or_fail(tab_get(&t, r, col[1]), &rc, err);
    c->measure = dup_or_fail(tab_get(&t, r, col[2]), &rc, err);
    c->entry = rs__folder_entry(f, tab_get(&t, r, col[0]));
    double *dst[] = {&c->n, &c->mean, &c->base_mean, &c->diff, &c->ci_low, &c->ci_high, &c->p_ttest, &c->p_perm,
                     &c->p_ttest_adj, &c->p_perm_adj};
    for (size_t i = 0; i < 10 && !rc; i++) rc = tab_num(&t, r, col[3 + i], 1, dst[i], err);
  }
  f->has_cmp = !rc;
  tab_free(&t);
  free(path);
  return rc;
}

static rs_code load_gates(rs__folder *f, rs_error *err)
{
  if (!has_file(f->dir, "gates.csv")) return RS_OK;
  char *path = path_in(f->dir, "gates.csv");
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  static const char *const need[] = {"run", "check", "measure", "op", "threshold", "value", "pass"};
  tab t = {0};
  rs_code rc = tab_load(&t, path, "'--gate' writes gates.csv", need, 7, err);
  if (!rc && !(f->gate = rs__calloc(t.n_rows + 1, sizeof *f->gate))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  size_t col[7];
  for (size_t i = 0; i < 7; i++) col[i] = tab_col(&t, need[i]);
  for (size_t r = 0; r < t.n_rows && !rc; r++) {
    rs__gate_row *g = &f->gate[f->n_gate++];
    g->run = dup_or_fail(tab_get(&t, r, col[0]), &rc, err);
    g->check = dup_or_fail(tab_get(&t, r, col[1]), &rc, err);
    g->measure = dup_or_fail(tab_get(&t, r, col[2]), &rc, err);
    g->op = dup_or_fail(tab_get(&t, r, col[3]), &rc, err);
    g->threshold = dup_or_fail(tab_get(&t, r, col[4]), &rc, err);
    if (!rc) rc = tab_num(&t, r, col[5], 1, &g->value, err);
    const char *pass = tab_get(&t, r, col[6]);
    if (!rc && strcmp(pass, "true") != 0 && strcmp(pass, "false") != 0)
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: expected true or false in column 'pass', found '%s'", path, t.line[r],
                    pass);
    g->pass = strcmp(pass, "true") == 0;
  }
  f->has_gates = !rc;
  tab_free(&t);
  free(path);
  return rc;
}

typedef struct {
  rs__folder *f;
  size_t c_list, c_run;
} worst_keep;

/* Keeps the "worst" lists; counts the no-relevant-retrieved rows per run. */
static int keep_worst(void *ctx, char **fl, size_t n)
{
  worst_keep *k = ctx;
  if (k->c_list == SIZE_MAX || k->c_list >= n || strcmp(fl[k->c_list], "worst") == 0) return 1;
  if (k->c_run < n) {
    const size_t e = rs__folder_entry(k->f, fl[k->c_run]);
    if (e != SIZE_MAX) k->f->no_hit[e]++;
  }
  return 0;
}

static rs_code read_header_cols(void *ctx, char **fl, size_t n, size_t line, rs_error *err)
{
  worst_keep *k = ctx;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(fl[i], "list") == 0) k->c_list = i;
    if (strcmp(fl[i], "run") == 0) k->c_run = i;
  }
  return RS_OK;
}

static rs_code load_worst(rs__folder *f, rs_error *err)
{
  if (!has_file(f->dir, "worst.csv")) return RS_OK;
  char *path = path_in(f->dir, "worst.csv");
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  static const char *const need[] = {"run", "list", "measure", "position", "query", "value", "first_relevant_rank",
                                     "num_rel"};
  worst_keep k = {.f = f, .c_list = SIZE_MAX, .c_run = SIZE_MAX};
  tab t = {.keep = keep_worst, .keep_ctx = &k};
  rs_code rc = (f->no_hit = rs__calloc(f->n_entries + 1, sizeof *f->no_hit)) ? RS_OK
                                                                                : rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc) rc = rs__csv_read_header(path, read_header_cols, &k, err);
  if (!rc) rc = tab_load(&t, path, "'ragsweep eval --worst N' writes worst.csv", need, 8, err);
  if (!rc && !(f->worst = rs__calloc(t.n_rows + 1, sizeof *f->worst))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  size_t col[8];
  for (size_t i = 0; i < 8; i++) col[i] = tab_col(&t, need[i]);
  for (size_t r = 0; r < t.n_rows && !rc; r++) {
    rs__worst_row *w = &f->worst[f->n_worst++];
    w->run = dup_or_fail(tab_get(&t, r, col[0]), &rc, err);
    w->measure = dup_or_fail(tab_get(&t, r, col[2]), &rc, err);
    w->query = dup_or_fail(tab_get(&t, r, col[4]), &rc, err);
    w->entry = rs__folder_entry(f, tab_get(&t, r, col[0]));
    double pos = 0;
    if (!rc) rc = tab_num(&t, r, col[3], 0, &pos, err);
    w->position = pos > 0 ? (size_t)pos : 0;
    if (!rc) rc = tab_num(&t, r, col[5], 1, &w->value, err);
    if (!rc) rc = tab_num(&t, r, col[6], 1, &w->first_rank, err);
    if (!rc) rc = tab_num(&t, r, col[7], 1, &w->num_rel, err);
  }
  f->has_worst = !rc;
  tab_free(&t);
  free(path);
  if (rc || !has_file(f->dir, "query_texts.csv")) return rc;
  if (!(path = path_in(f->dir, "query_texts.csv"))) return rs__fail(err, RS_NOMEM, "out of memory");
  static const char *const need_t[] = {"query", "text"};
  tab tt = {0};
  rc = tab_load(&tt, path, "'ragsweep eval --worst N' writes query_texts.csv", need_t, 2, err);
  if (!rc && !(f->texts = rs__calloc(tt.n_rows + 1, sizeof *f->texts))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  const size_t cq = tab_col(&tt, "query"), ct = tab_col(&tt, "text");
  for (size_t r = 0; r < tt.n_rows && !rc; r++) {
    uint32_t id;
    const size_t before = f->text_ids.n;
    if ((rc = rs__strdict_add(&f->text_ids, tab_get(&tt, r, cq), &id, err))) break;
    if (f->text_ids.n > before) f->texts[id] = dup_or_fail(tab_get(&tt, r, ct), &rc, err);
  }
  tab_free(&tt);
  free(path);
  return rc;
}

/* --- judge ----------------------------------------------------------------------------- */

static rs_code load_agreement(rs__folder *f, rs_error *err)
{
  if (!has_file(f->dir, "agreement.csv")) return RS_OK;
  char *path = path_in(f->dir, "agreement.csv");
  if (!path) return rs__fail(err, RS_NOMEM, "out of memory");
  tab t = {0};
  rs_code rc = tab_load(&t, path, "'ragsweep judge' and 'rag' write agreement.csv", NULL, 0, err);
  const size_t cs = tab_col(&t, "statistic"), cv = tab_col(&t, "value");
  if (!rc && f->kind == RS__RESULTS_JUDGE && (cs == SIZE_MAX || cv == SIZE_MAX))
    rc = rs__fail(err, RS_FORMAT, "%s:1: expected the header statistic,value ('ragsweep judge' writes agreement.csv)",
                  path);
  if (!rc && cs != SIZE_MAX && cv != SIZE_MAX) {
    if (!(f->agree = rs__calloc(t.n_rows + 1, sizeof *f->agree))) rc = rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t r = 0; r < t.n_rows && !rc; r++) {
      rs__stat_row *s = &f->agree[f->n_agree++];
      s->name = dup_or_fail(tab_get(&t, r, cs), &rc, err);
      if (!rc) rc = tab_num(&t, r, cv, 1, &s->value, err);
    }
    f->has_agree = !rc;
  }
  tab_free(&t);
  free(path);
  return rc;
}

typedef struct {
  rs__folder *f;
  const char *path;
} qrels_reader;

static rs_code qrels_line(void *ctx, size_t line, const char *s, size_t n, rs_error *err)
{
  qrels_reader *q = ctx;
  /* qid 0 docid label: the label is the last field. */
  size_t end = n;
  while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t')) end--;
  size_t start = end;
  while (start > 0 && s[start - 1] != ' ' && s[start - 1] != '\t') start--;
  char buf[32];
  const size_t len = end - start < sizeof buf - 1 ? end - start : sizeof buf - 1;
  memcpy(buf, s + start, len);
  buf[len] = '\0';
  char *stop;
  errno = 0;
  const long label = strtol(buf, &stop, 10);
  if (start == 0 || stop == buf || *stop || errno)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected 'qid 0 docid label' with an integer label, found '%.*s'",
                    q->path, line, (int)(n < 80 ? n : 80), s);
  q->f->label_count[label >= 0 && label < 15 ? label : 15]++;
  q->f->n_labels++;
  return RS_OK;
}

static rs_code count_line(void *ctx, size_t line, const char *s, size_t n, rs_error *err)
{
  (*(size_t *)ctx)++;
  return RS_OK;
}

static rs_code load_judge(rs__folder *f, rs_error *err)
{
  rs_code rc = RS_OK;
  if (has_file(f->dir, "qrels.txt")) {
    char *path = path_in(f->dir, "qrels.txt");
    qrels_reader q = {.f = f, .path = path};
    rc = path ? rs__input_lines(path, 1 << 20, "a qrels line is 'qid 0 docid label'", qrels_line, &q, err)
              : rs__fail(err, RS_NOMEM, "out of memory");
    f->has_qrels = !rc;
    free(path);
  }
  if (!rc && has_file(f->dir, "judgments.jsonl")) {
    char *path = path_in(f->dir, "judgments.jsonl");
    rc = path ? rs__input_lines(path, 0, "", count_line, &f->n_judgments, err)
              : rs__fail(err, RS_NOMEM, "out of memory");
    f->has_judgments = !rc;
    free(path);
  }
  return rc;
}

/* ------------------------------------------------------------------------------------ */

rs_code rs__folder_load(const char *dir, const char *lead, int *lead_found, rs__folder *f, rs_error *err)
{
  f->dir = dir;
  f->lead = SIZE_MAX;
  rs__results_kind kind;
  rs_code rc = rs__results_detect(dir, &kind, err);
  if (rc) return rc;
  if (kind == RS__RESULTS_JUDGE) {
    f->kind = kind;
    if ((rc = load_agreement(f, err)) || (rc = load_judge(f, err))) return rc;
    return RS_OK;
  }
  if ((rc = rs__results_load(dir, &f->res, err))) return rc;
  f->kind = f->res.kind;
  if ((rc = load_entries(f, err))) return rc;
  if (f->n_meas) f->lead = 0;
  if (lead) {
    const size_t m = rs__folder_find_measure(f, lead);
    if (m != SIZE_MAX) {
      f->lead = m;
      if (lead_found) *lead_found = 1;
    }
  }
  if ((rc = load_curves(f, err)) || (rc = load_cdf(f, err)) || (rc = load_ci(f, err)) ||
      (rc = load_compare(f, err)) || (rc = load_gates(f, err)) || (rc = load_worst(f, err)) ||
      (rc = load_agreement(f, err)))
    return rc;
  return RS_OK;
}
