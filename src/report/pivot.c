/* pivot.c: pivot tables of an aggregate.csv, with significance marks from
 * compare.csv (see pivot.h). */
#define _GNU_SOURCE
#include "report/pivot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csvio.h"
#include "internal.h"
#include "metrics/spec.h"
#include "util/strbuf.h"

/* --- aggregate.csv ------------------------------------------------------------------ */

/* A number in full: plain decimal, or empty (not available).  Trailing
 * spaces are allowed, as pandas writes none but hand-edited files may. */
static int parse_number(const char *s, double *out)
{
  if (!*s) {
    *out = NAN;
    return 1;
  }
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s) return 0;
  while (*end == ' ' || *end == '\t') end++;
  if (*end) return 0;
  *out = v;
  return 1;
}

void rs__agg_free(rs__agg *t)
{
  for (size_t k = 0; k < t->n_keys; k++) {
    free(t->key[k]);
    if (t->val) rs__strdict_free(&t->val[k]);
  }
  free(t->key);
  free(t->col);
  free(t->val);
  free(t->id);
  free(t->value);
  free(t->line);
  *t = (rs__agg){0};
}

static void header_text(rs__sb *b, char **fields, size_t n)
{
  for (size_t i = 0; i < n && i < 30; i++) {
    rs__sb_str(b, i ? "," : "");
    rs__sb_str(b, fields[i]);
  }
  if (n > 30) rs__sb_str(b, ",...");
}

/* rag's aggregate.csv: configuration columns, [judge], metric, mean, n, ...
 * Its run is the configuration's values joined by '/' ("all" without
 * configuration columns), as `rag` and `compare --per-query` name it; key 0
 * is that made-up run, keys 1.. are the columns up to metric. */
static rs_code rag_header(rs__agg *t, char **fields, size_t n, size_t c_metric, size_t c_mean, rs_error *err)
{
  t->n_cols = n;
  t->col_value = c_mean;
  t->n_keys = c_metric + 2;
  t->k_measure = t->n_keys - 1;
  t->n_config_cols = c_metric;
  for (size_t i = 0; i < c_metric; i++)
    if (strcmp(fields[i], "judge") == 0) t->n_config_cols = i;
  if (!(t->key = calloc(t->n_keys, sizeof *t->key)) || !(t->col = calloc(t->n_keys, sizeof *t->col)) ||
      !(t->val = calloc(t->n_keys, sizeof *t->val)) || !(t->key[0] = strdup("run")))
    return rs__fail(err, RS_NOMEM, "out of memory");
  t->col[0] = SIZE_MAX;
  for (size_t k = 1; k < t->n_keys; k++) {
    t->col[k] = k - 1;
    if (!(t->key[k] = strdup(fields[k - 1]))) return rs__fail(err, RS_NOMEM, "out of memory");
  }
  t->have_header = 1;
  return RS_OK;
}

static rs_code table_header(rs__agg *t, char **fields, size_t n, size_t line, rs_error *err)
{
  size_t c_run = SIZE_MAX, c_measure = SIZE_MAX, c_value = SIZE_MAX, c_metric = SIZE_MAX, c_mean = SIZE_MAX;
  int has_run = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(fields[i], "metric") == 0 && c_metric == SIZE_MAX) c_metric = i;
    if (strcmp(fields[i], "mean") == 0 && c_mean == SIZE_MAX) c_mean = i;
    has_run |= strcmp(fields[i], "run") == 0;
  }
  if (!has_run && c_metric != SIZE_MAX && c_mean != SIZE_MAX && c_metric < c_mean)
    return rag_header(t, fields, n, c_metric, c_mean, err);
  for (size_t i = 0; i < n; i++) {
    size_t *c = strcmp(fields[i], "run") == 0       ? &c_run
                : strcmp(fields[i], "measure") == 0 ? &c_measure
                : strcmp(fields[i], "value") == 0   ? &c_value
                                                    : NULL;
    if (c && *c != SIZE_MAX)
      return rs__fail(err, RS_FORMAT, "%s:%zu: the header names column '%s' twice", t->path, line, fields[i]);
    if (c) *c = i;
  }
  const char *missing = c_run == SIZE_MAX       ? "run"
                        : c_measure == SIZE_MAX ? "measure"
                        : c_value == SIZE_MAX   ? "value"
                                                : NULL;
  if (missing || c_measure < c_run) {
    rs__sb b = {0};
    header_text(&b, fields, n);
    char *h = rs__sb_take(&b);
    rs_code rc = rs__fail(err, RS_FORMAT,
                          missing ? "%s:%zu: expected a header run,<attributes...>,measure,value (as 'ragsweep eval' "
                                    "writes aggregate.csv), found '%s': no column '%s'"
                                  : "%s:%zu: expected a header run,<attributes...>,measure,value (as 'ragsweep eval' "
                                    "writes aggregate.csv), found '%s': 'measure' comes before 'run'%s",
                          t->path, line, h ? h : "", missing ? missing : "");
    free(h);
    return rc;
  }
  t->n_cols = n;
  t->col_value = c_value;
  /* The keys: run, the attributes and measure, and the columns between
   * measure and value (eval's base and cutoff, so that --cols cutoff
   * works). */
  t->n_keys = (c_value > c_measure ? c_value : c_measure + 1) - c_run;
  t->k_measure = c_measure - c_run;
  if (!(t->key = calloc(t->n_keys, sizeof *t->key)) || !(t->col = calloc(t->n_keys, sizeof *t->col)) ||
      !(t->val = calloc(t->n_keys, sizeof *t->val)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t k = 0; k < t->n_keys; k++) {
    t->col[k] = c_run + k;
    if (!(t->key[k] = strdup(fields[c_run + k]))) return rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t j = 0; j < k; j++)
      if (strcmp(t->key[j], t->key[k]) == 0)
        return rs__fail(err, RS_FORMAT, "%s:%zu: the header names column '%s' twice", t->path, line, t->key[k]);
  }
  t->have_header = 1;
  return RS_OK;
}

static rs_code table_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  rs__agg *t = ctx;
  if (!t->have_header) return table_header(t, fields, n, line, err);
  if (n != t->n_cols)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", t->path, line,
                    t->n_cols, n);
  double v;
  if (!parse_number(fields[t->col_value], &v))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column '%s', found '%s'", t->path, line,
                    t->col[0] == SIZE_MAX ? "mean" : "value", fields[t->col_value]);
  if (fields[t->col_value][0] == '\0') return RS_OK; /* no value: as if the row were absent */
  if (t->n_rows == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    uint32_t *id = realloc(t->id, rs__mul(cap, t->n_keys * sizeof *id));
    if (id) t->id = id;
    double *value = id ? realloc(t->value, cap * sizeof *value) : NULL;
    if (value) t->value = value;
    size_t *lines = value ? realloc(t->line, cap * sizeof *lines) : NULL;
    if (!lines) return rs__fail(err, RS_NOMEM, "out of memory");
    t->line = lines;
    t->cap = cap;
  }
  for (size_t k = 0; k < t->n_keys; k++) {
    rs_code rc;
    if (t->col[k] == SIZE_MAX) { /* rag's run: the configuration's values */
      rs__sb b = {0};
      for (size_t c = 0; c < t->n_config_cols; c++) {
        if (c) rs__sb_str(&b, "/");
        rs__sb_str(&b, fields[c]);
      }
      char *run = t->n_config_cols ? rs__sb_take(&b) : strdup("all");
      if (!run) return rs__fail(err, RS_NOMEM, "out of memory");
      rc = rs__strdict_add(&t->val[k], run, &t->id[t->n_rows * t->n_keys + k], err);
      free(run);
    } else {
      rc = rs__strdict_add(&t->val[k], fields[t->col[k]], &t->id[t->n_rows * t->n_keys + k], err);
    }
    if (rc) return rc;
  }
  t->value[t->n_rows] = v;
  t->line[t->n_rows] = line;
  t->n_rows++;
  return RS_OK;
}

rs_code rs__agg_load(const char *path, rs__agg *t, rs_error *err)
{
  t->path = path;
  rs_code rc = rs__csv_read(path, table_row, t, err);
  if (!rc && !t->have_header)
    rc = rs__fail(err, RS_FORMAT, "%s: empty file (expected a header run,<attributes...>,measure,value)", path);
  if (!rc && t->n_rows == 0) rc = rs__fail(err, RS_FORMAT, "%s: no rows after the header", path);
  return rc;
}

const char *rs__agg_value(const rs__agg *t, size_t row, size_t k)
{
  return t->val[k].str[t->id[row * t->n_keys + k]];
}

/* --- compare.csv ---------------------------------------------------------------------- */

typedef struct {
  uint32_t run, measure, base; /* ids in the table (UINT32_MAX: not in it) and in bases */
  double p;
  size_t line;
} cmp_row;

typedef struct {
  const char *path, *p_name;
  const rs__agg *t;
  int have_header;
  size_t n_cols, c_run, c_base, c_measure, c_p;
  rs__strdict bases;
  cmp_row *row;
  size_t n, cap;
} cmp_data;

static rs_code cmp_header(cmp_data *c, char **fields, size_t n, size_t line, rs_error *err)
{
  const char *names[4] = {"run", "baseline", "measure", c->p_name};
  size_t *cols[4] = {&c->c_run, &c->c_base, &c->c_measure, &c->c_p};
  for (int j = 0; j < 4; j++) {
    *cols[j] = SIZE_MAX;
    for (size_t i = 0; i < n && *cols[j] == SIZE_MAX; i++)
      if (strcmp(fields[i], names[j]) == 0) *cols[j] = i;
    if (*cols[j] == SIZE_MAX) {
      rs__sb b = {0};
      header_text(&b, fields, n);
      char *h = rs__sb_take(&b);
      rs_code rc = rs__fail(err, RS_FORMAT,
                            "%s:%zu: expected a header with columns run, baseline, measure and %s (as 'ragsweep "
                            "compare' writes compare.csv), found '%s'",
                            c->path, line, c->p_name, h ? h : "");
      free(h);
      return rc;
    }
  }
  c->n_cols = n;
  c->have_header = 1;
  return RS_OK;
}

static rs_code cmp_read_row(void *ctx, char **fields, size_t n, size_t line, rs_error *err)
{
  cmp_data *c = ctx;
  if (!c->have_header) return cmp_header(c, fields, n, line, err);
  if (n != c->n_cols)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", c->path, line,
                    c->n_cols, n);
  double p;
  if (!parse_number(fields[c->c_p], &p))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number (or nothing) in column '%s', found '%s'", c->path,
                    line, c->p_name, fields[c->c_p]);
  uint32_t base;
  rs_code rc = rs__strdict_add(&c->bases, fields[c->c_base], &base, err);
  if (rc) return rc;
  long run = rs__strdict_find(&c->t->val[RS__AGG_RUN], fields[c->c_run]);
  long measure = rs__strdict_find(&c->t->val[RS__AGG_MEASURE(c->t)], fields[c->c_measure]);
  if (run < 0 || measure < 0) return RS_OK; /* not in the table: nothing to mark */
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    cmp_row *nr = realloc(c->row, cap * sizeof *nr);
    if (!nr) return rs__fail(err, RS_NOMEM, "out of memory");
    c->row = nr;
    c->cap = cap;
  }
  c->row[c->n++] = (cmp_row){(uint32_t)run, (uint32_t)measure, base, p, line};
  return RS_OK;
}

/* --- keys, measures and filters ----------------------------------------------------- */

/* Keys of a --rows/--cols value, resolved against the table's. */
static rs_code parse_keys(const rs__agg *t, const char *opt, const char *arg, size_t **out, size_t *n_out,
                          rs_error *err)
{
  size_t n = 1;
  for (const char *p = arg; *p; p++) n += *p == ',';
  size_t *keys = calloc(n, sizeof *keys);
  char *copy = strdup(arg);
  rs_code rc = RS_OK;
  if (!keys || !copy) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  n = 0;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    size_t k = 0;
    while (k < t->n_keys && strcmp(t->key[k], tok) != 0) k++;
    if (k == t->n_keys) {
      rs__sb b = {0};
      rs__sb_list(&b, t->key, t->n_keys, 300);
      char *list = rs__sb_take(&b);
      rc = rs__fail(err, RS_USAGE, "%s: unknown key '%s' (the keys of %s are: %s)", opt, tok, t->path,
                    list ? list : "");
      free(list);
      goto done;
    }
    keys[n++] = k;
  }
  if (n == 0) {
    rc = rs__fail(err, RS_USAGE, "%s: expected a key such as run, measure or an attribute name", opt);
    goto done;
  }
  *out = keys;
  *n_out = n;
  keys = NULL;
done:
  free(keys);
  free(copy);
  return rc;
}

int rs__pivot_has_key(const size_t *keys, size_t n, size_t k)
{
  for (size_t i = 0; i < n; i++)
    if (keys[i] == k) return 1;
  return 0;
}

/* The measures -m selects, as ranks per measure id (SIZE_MAX: not shown).
 * A name the file has verbatim is taken as it is (num_q, or a name from
 * another tool); any other goes through the measure parser of `eval`, which
 * expands lists and gives the canonical spelling. */
static rs_code select_measures(const rs__agg *t, const char *const *measures, size_t n_measures, size_t *rank,
                               rs_error *err)
{
  const rs__strdict *m = &t->val[RS__AGG_MEASURE(t)];
  size_t next = 0;
  if (n_measures == 0) {
    for (size_t i = 0; i < m->n; i++)
      rank[i] = strncmp(m->str[i], "num_q", 5) == 0 ? SIZE_MAX : next++;
    if (next == 0) return rs__fail(err, RS_FORMAT, "%s: no measures (only num_q counts)", t->path);
    return RS_OK;
  }
  for (size_t i = 0; i < m->n; i++) rank[i] = SIZE_MAX;
  for (size_t a = 0; a < n_measures; a++) {
    long id = rs__strdict_find(m, measures[a]);
    if (id >= 0) {
      if (rank[id] == SIZE_MAX) rank[id] = next++;
      continue;
    }
    rs__spec *spec = NULL;
    rs_error perr = {0};
    const char *name = NULL;
    if (rs__spec_build(&measures[a], 1, 1000, &spec, &perr) == RS_OK) {
      for (size_t i = 0; i < spec->n_out && !name; i++) {
        id = rs__strdict_find(m, spec->req[i].name);
        if (id < 0) name = spec->req[i].name;
        else if (rank[id] == SIZE_MAX) rank[id] = next++;
      }
    }
    if (!spec || name) {
      rs__sb b = {0};
      rs__sb_list(&b, m->str, m->n, 300);
      char *list = rs__sb_take(&b);
      rs_code rc;
      if (spec)
        rc = rs__fail(err, RS_USAGE, "-m %s: %s has no measure '%s' (its measures: %s)", measures[a], t->path,
                      name, list ? list : "");
      else
        rc = rs__fail(err, RS_USAGE, "-m %s: unknown measure: not in %s, and not a name that 'ragsweep eval' "
                      "knows (the measures of %s: %s)", measures[a], t->path, t->path, list ? list : "");
      free(list);
      rs__spec_free(spec);
      return rc;
    }
    rs__spec_free(spec);
  }
  return RS_OK;
}

/* allow[k] is NULL (any value) or a flag per value id. */
static rs_code parse_where(const rs__agg *t, const char *const *where, size_t n_where, unsigned char **allow,
                           rs_error *err)
{
  for (size_t w = 0; w < n_where; w++) {
    const char *arg = where[w], *eq = strchr(arg, '=');
    size_t k = 0;
    if (eq)
      while (k < t->n_keys && (strlen(t->key[k]) != (size_t)(eq - arg) || strncmp(t->key[k], arg, (size_t)(eq - arg))))
        k++;
    if (!eq || k == t->n_keys) {
      rs__sb b = {0};
      rs__sb_list(&b, t->key, t->n_keys, 300);
      char *list = rs__sb_take(&b);
      rs_code rc = !eq ? rs__fail(err, RS_USAGE, "--where %s: expected KEY=VALUE (keys: %s)", arg, list ? list : "")
                       : rs__fail(err, RS_USAGE, "--where %s: unknown key '%.*s' (the keys of %s are: %s)", arg,
                                  (int)(eq - arg), arg, t->path, list ? list : "");
      free(list);
      return rc;
    }
    long id = rs__strdict_find(&t->val[k], eq + 1);
    if (id < 0) {
      rs__sb b = {0};
      rs__sb_list(&b, t->val[k].str, t->val[k].n, 300);
      char *list = rs__sb_take(&b);
      rs_code rc = rs__fail(err, RS_USAGE, "--where %s: no row of %s has %s '%s' (its values: %s)", arg, t->path,
                            t->key[k], eq + 1, list ? list : "");
      free(list);
      return rc;
    }
    if (!allow[k] && !(allow[k] = calloc(t->val[k].n, 1))) return rs__fail(err, RS_NOMEM, "out of memory");
    allow[k][id] = 1;
  }
  return RS_OK;
}

/* --- the pivot ---------------------------------------------------------------------------- */

void rs__pivot_free(rs__pivot *p)
{
  for (size_t k = 0; p->allow && p->t && k < p->t->n_keys; k++) free(p->allow[k]);
  free(p->allow);
  free(p->mrank);
  free(p->rows);
  free(p->cols);
  free(p->sel);
  free(p->r_of);
  free(p->c_of);
  free(p->r_first);
  free(p->c_first);
  free(p->cell);
  *p = (rs__pivot){0};
}

static size_t key_rank(const rs__pivot *p, size_t row, size_t k)
{
  uint32_t id = p->t->id[row * p->t->n_keys + k];
  return k == RS__AGG_MEASURE(p->t) ? p->mrank[id] : id;
}

/* qsort has no context argument: the sort's context is per thread, so
 * pivots may be built on several threads at once. */
static _Thread_local const rs__pivot *sort_pivot;
static _Thread_local const size_t *sort_keys;
static _Thread_local size_t sort_n_keys;

static int cmp_tuple(size_t x, size_t y)
{
  for (size_t i = 0; i < sort_n_keys; i++) {
    size_t a = key_rank(sort_pivot, x, sort_keys[i]), b = key_rank(sort_pivot, y, sort_keys[i]);
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

/* Sorts positions in sel[] by the key tuples of their rows. */
static int cmp_sel(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = cmp_tuple(sort_pivot->sel[x], sort_pivot->sel[y]);
  return c ? c : (x > y) - (x < y);
}

/* Positions along one axis: the distinct key tuples of the selected rows,
 * in the order of their keys' ranks. */
static rs_code axis_positions(rs__pivot *p, const size_t *keys, size_t n_keys, size_t *pos_of, size_t **first,
                              size_t *n_pos, rs_error *err)
{
  size_t *ord = malloc(p->n_sel * sizeof *ord);
  if (!ord || !(*first = malloc(p->n_sel * sizeof **first))) {
    free(ord);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < p->n_sel; i++) ord[i] = i;
  sort_pivot = p;
  sort_keys = keys;
  sort_n_keys = n_keys;
  qsort(ord, p->n_sel, sizeof *ord, cmp_sel);
  size_t n = 0;
  for (size_t i = 0; i < p->n_sel; i++) {
    if (i == 0 || cmp_tuple(p->sel[ord[i - 1]], p->sel[ord[i]]) != 0) (*first)[n++] = p->sel[ord[i]];
    pos_of[ord[i]] = n - 1;
  }
  free(ord);
  *n_pos = n;
  return RS_OK;
}

static void cell_name(rs__sb *b, const rs__pivot *p, size_t row)
{
  const rs__agg *t = p->t;
  for (size_t i = 0; i < p->n_rkeys + p->n_ckeys; i++) {
    size_t k = i < p->n_rkeys ? p->rows[i] : p->cols[i - p->n_rkeys];
    rs__sb_printf(b, "%s%s=%s", i ? ", " : "", t->key[k], rs__agg_value(t, row, k));
  }
}

/* A cell that several rows match: say which rows and what differs among them. */
static rs_code ambiguous(const rs__pivot *p, size_t r, size_t c, rs_error *err)
{
  const rs__agg *t = p->t;
  size_t n = 0, first = SIZE_MAX;
  rs__sb b = {0}, lines = {0}, diff = {0};
  for (size_t i = 0; i < p->n_sel; i++) {
    if (p->r_of[i] != r || p->c_of[i] != c) continue;
    if (first == SIZE_MAX) first = p->sel[i];
    if (n < 5) rs__sb_printf(&lines, "%s%zu", n ? ", " : "", t->line[p->sel[i]]);
    n++;
  }
  if (n > 5) rs__sb_str(&lines, ", ...");
  cell_name(&b, p, first);
  /* Keys that differ among the matches, attributes first: they are what --where picks. */
  size_t n_diff = 0, hint = SIZE_MAX;
  for (size_t pass = 0; pass < 3; pass++) {
    for (size_t k = 0; k < t->n_keys; k++) {
      int kind = k == RS__AGG_RUN ? 2 : k == RS__AGG_MEASURE(t) ? 1 : 0;
      if ((size_t)kind != pass) continue;
      uint32_t seen[4];
      size_t n_seen = 0, n_distinct = 0;
      rs__sb vals = {0};
      uint32_t first_id = t->id[first * t->n_keys + k];
      for (size_t i = 0; i < p->n_sel; i++) {
        if (p->r_of[i] != r || p->c_of[i] != c) continue;
        uint32_t id = t->id[p->sel[i] * t->n_keys + k];
        int dup = id == first_id && n_distinct > 0;
        for (size_t j = 0; j < n_seen && !dup; j++) dup = seen[j] == id;
        if (dup) continue;
        if (n_distinct < 3) rs__sb_printf(&vals, "%s%s", n_distinct ? ", " : "", t->val[k].str[id]);
        if (n_seen < 4) seen[n_seen++] = id;
        n_distinct++;
      }
      if (n_distinct > 1) {
        if (n_distinct > 3) rs__sb_str(&vals, ", ...");
        rs__sb_printf(&diff, "%s%s (%s)", n_diff ? ", " : "", t->key[k], vals.s ? vals.s : "");
        if (hint == SIZE_MAX) hint = k;
        n_diff++;
      }
      free(vals.s);
    }
  }
  rs_code rc;
  if (hint == SIZE_MAX)
    rc = rs__fail(err, RS_FORMAT,
                  "%s: the cell %s is given twice (lines %s), with the same run, attributes and measure",
                  t->path, b.s ? b.s : "", lines.s ? lines.s : "");
  else if (hint == RS__AGG_MEASURE(t))
    rc = rs__fail(err, RS_USAGE,
                  "the cell %s matches %zu rows of %s (lines %s) that differ in %s; choose one with -m (e.g. -m %s) "
                  "or add measure to --rows or --cols",
                  b.s ? b.s : "", n, t->path, lines.s ? lines.s : "", diff.s ? diff.s : "", rs__agg_value(t, first, hint));
  else
    rc = rs__fail(err, RS_USAGE,
                  "the cell %s matches %zu rows of %s (lines %s) that differ in %s; choose one with --where (e.g. "
                  "--where %s=%s) or add %s to --rows or --cols",
                  b.s ? b.s : "", n, t->path, lines.s ? lines.s : "", diff.s ? diff.s : "", t->key[hint],
                  rs__agg_value(t, first, hint), t->key[hint]);
  free(b.s);
  free(lines.s);
  free(diff.s);
  return rc;
}

static rs_code pivot_build(rs__pivot *p, unsigned char *const *allow, rs_error *err)
{
  const rs__agg *t = p->t;
  rs_code rc;
  if (!(p->sel = malloc((t->n_rows ? t->n_rows : 1) * sizeof *p->sel))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < t->n_rows; i++) {
    if (p->mrank[t->id[i * t->n_keys + RS__AGG_MEASURE(t)]] == SIZE_MAX) continue;
    int keep = 1;
    for (size_t k = 0; k < t->n_keys && keep; k++) keep = !allow[k] || allow[k][t->id[i * t->n_keys + k]];
    if (keep) p->sel[p->n_sel++] = i;
  }
  if (p->n_sel == 0) return rs__fail(err, RS_USAGE, "no row of %s matches the --where filters and measures", t->path);
  /* Keys after the measure (base, cutoff) are parts of it: with cutoff an
   * axis and the measure not, one table would hold nDCG in one column and
   * Success in the next under the same caption.  Each such key must then
   * be an axis or the same in every cell. */
  const size_t km = RS__AGG_MEASURE(t);
  for (size_t k = km + 1; k < t->n_keys && !rs__pivot_has_key(p->rows, p->n_rkeys, km) &&
                          !rs__pivot_has_key(p->cols, p->n_ckeys, km); k++) {
    if (rs__pivot_has_key(p->rows, p->n_rkeys, k) || rs__pivot_has_key(p->cols, p->n_ckeys, k)) continue;
    const uint32_t first = t->id[p->sel[0] * t->n_keys + k];
    for (size_t i = 1; i < p->n_sel; i++) {
      const uint32_t other = t->id[p->sel[i] * t->n_keys + k];
      if (other != first)
        return rs__fail(err, RS_USAGE, "the table would mix measures: its cells have %s '%s' and '%s' (lines %zu and "
                        "%zu of %s); add %s to --rows or --cols, or keep one with -m or --where %s=...", t->key[k],
                        t->val[k].str[first], t->val[k].str[other], t->line[p->sel[0]], t->line[p->sel[i]], t->path,
                        t->key[k], t->key[k]);
    }
  }
  if (!(p->r_of = malloc(p->n_sel * sizeof *p->r_of)) || !(p->c_of = malloc(p->n_sel * sizeof *p->c_of)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  if ((rc = axis_positions(p, p->rows, p->n_rkeys, p->r_of, &p->r_first, &p->n_r, err)) ||
      (rc = axis_positions(p, p->cols, p->n_ckeys, p->c_of, &p->c_first, &p->n_c, err)))
    return rc;
  if (!(p->cell = malloc(rs__mul(p->n_r, p->n_c * sizeof *p->cell)))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < p->n_r * p->n_c; i++) p->cell[i] = SIZE_MAX;
  for (size_t i = 0; i < p->n_sel; i++) {
    size_t *cell = &p->cell[p->r_of[i] * p->n_c + p->c_of[i]];
    if (*cell != SIZE_MAX) return ambiguous(p, p->r_of[i], p->c_of[i], err);
    *cell = p->sel[i];
  }
  return RS_OK;
}

rs_code rs__pivot_make(rs__pivot *p, const rs__agg *t, const rs__pivot_spec *spec, rs_error *err)
{
  rs_code rc;
  /* the axes: rows = run and cols = measure unless told otherwise */
  const size_t km = RS__AGG_MEASURE(t);
  p->t = t;
  if (spec->rows && (rc = parse_keys(t, "--rows", spec->rows, &p->rows, &p->n_rkeys, err))) return rc;
  if (spec->cols && (rc = parse_keys(t, "--cols", spec->cols, &p->cols, &p->n_ckeys, err))) return rc;
  if (!spec->rows) {
    const int measure_in_cols = !spec->cols || rs__pivot_has_key(p->cols, p->n_ckeys, km);
    if (!(p->rows = malloc(sizeof *p->rows))) return rs__fail(err, RS_NOMEM, "out of memory");
    p->rows[0] = measure_in_cols ? RS__AGG_RUN : km;
    p->n_rkeys = 1;
  }
  if (!spec->cols) {
    const int measure_in_rows = rs__pivot_has_key(p->rows, p->n_rkeys, km);
    if (!(p->cols = malloc(sizeof *p->cols))) return rs__fail(err, RS_NOMEM, "out of memory");
    p->cols[0] = measure_in_rows ? RS__AGG_RUN : km;
    p->n_ckeys = 1;
  }
  for (size_t i = 0; i < p->n_rkeys + p->n_ckeys; i++) {
    size_t k = i < p->n_rkeys ? p->rows[i] : p->cols[i - p->n_rkeys];
    int twice = 0;
    for (size_t j = 0; j < i; j++) twice |= (j < p->n_rkeys ? p->rows[j] : p->cols[j - p->n_rkeys]) == k;
    if (twice) return rs__fail(err, RS_USAGE, "key '%s' is given twice in --rows and --cols", t->key[k]);
  }
  if (!(p->mrank = malloc((t->val[km].n ? t->val[km].n : 1) * sizeof *p->mrank)) ||
      !(p->allow = calloc(t->n_keys, sizeof *p->allow)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  if ((rc = select_measures(t, spec->measures, spec->n_measures, p->mrank, err)) ||
      (rc = parse_where(t, spec->where, spec->n_where, p->allow, err)))
    return rc;
  return pivot_build(p, p->allow, err);
}

/* --- significance ------------------------------------------------------------------------- */

void rs__pivot_sig_free(rs__pivot_sig *s)
{
  free(s->baseline);
  free(s->mark);
  free(s->untested);
  *s = (rs__pivot_sig){.base_run = -1};
}

rs_code rs__pivot_sig_load(const rs__pivot *p, const char *path, const char *baseline, int ttest, double alpha,
                           rs__pivot_sig *s, rs_error *err)
{
  const rs__agg *t = p->t;
  cmp_data c = {.path = path, .p_name = ttest ? "p_ttest_adj" : "p_perm_adj", .t = t};
  unsigned char *tested = NULL, *measure_tested = NULL;
  rs_code rc = rs__csv_read(path, cmp_read_row, &c, err);
  if (rc) goto done;
  if (!c.have_header) {
    rc = rs__fail(err, RS_FORMAT, "%s: empty file (expected a header with run, baseline, measure, %s)", path, c.p_name);
    goto done;
  }
  long base = -1;
  if (baseline) {
    if ((base = rs__strdict_find(&c.bases, baseline)) < 0) {
      rs__sb b = {0};
      rs__sb_list(&b, c.bases.str, c.bases.n, 300);
      char *list = rs__sb_take(&b);
      rc = rs__fail(err, RS_USAGE, "--baseline %s: %s has no comparisons with baseline '%s' (its baselines: %s)",
                    baseline, path, baseline, c.bases.n && list ? list : "none");
      free(list);
      goto done;
    }
  } else if (c.bases.n == 1) {
    base = 0;
  } else if (c.bases.n > 1) {
    rs__sb b = {0};
    rs__sb_list(&b, c.bases.str, c.bases.n, 300);
    char *list = rs__sb_take(&b);
    rc = rs__fail(err, RS_USAGE, "%s compares with several baselines (%s); choose one with --baseline", path,
                  list ? list : "");
    free(list);
    goto done;
  } else {
    goto done; /* no comparisons at all: no marks */
  }
  const size_t n_runs = t->val[RS__AGG_RUN].n, n_measures = t->val[RS__AGG_MEASURE(t)].n;
  double *pval = malloc(rs__mul(n_runs, n_measures * sizeof *pval));
  size_t *line = malloc(rs__mul(n_runs, n_measures * sizeof *line));
  if (!pval || !line || !(s->mark = calloc(t->n_rows ? t->n_rows : 1, 1)) ||
      !(tested = calloc(rs__mul(n_runs, n_measures), 1)) || !(measure_tested = calloc(n_measures, 1)) ||
      !(s->baseline = strdup(c.bases.str[base]))) {
    free(pval);
    free(line);
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < c.n; i++) {
    const cmp_row *r = &c.row[i];
    if (r->base != (uint32_t)base) continue;
    size_t at = (size_t)r->run * n_measures + r->measure;
    if (tested[at]) {
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: run '%s' is compared with baseline '%s' on %s twice (also line %zu)", path,
                    r->line, t->val[RS__AGG_RUN].str[r->run], s->baseline, t->val[RS__AGG_MEASURE(t)].str[r->measure], line[at]);
      break;
    }
    tested[at] = 1;
    pval[at] = r->p;
    line[at] = r->line;
  }
  s->base_run = rs__strdict_find(&t->val[RS__AGG_RUN], s->baseline);
  for (size_t i = 0; !rc && i < t->n_rows; i++) {
    size_t run = t->id[i * t->n_keys + RS__AGG_RUN], m = t->id[i * t->n_keys + RS__AGG_MEASURE(t)], at = run * n_measures + m;
    if (tested[at]) measure_tested[m] = 1;
    s->mark[i] = tested[at] && pval[at] < alpha; /* NaN (not available) is never below */
  }
  free(pval);
  free(line);
  if (rc) goto done;
  /* Measures on show that compare.csv does not test: the footnote says so (in -m order). */
  unsigned char *shown = calloc(n_measures ? n_measures : 1, 1);
  size_t *by_rank = malloc((n_measures ? n_measures : 1) * sizeof *by_rank);
  if (!shown || !by_rank || !(s->untested = calloc(n_measures ? n_measures : 1, sizeof *s->untested))) {
    free(shown);
    free(by_rank);
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  size_t n_shown = 0;
  for (size_t i = 0; i < n_measures; i++) by_rank[i] = SIZE_MAX;
  for (size_t i = 0; i < p->n_sel; i++) {
    size_t m = t->id[p->sel[i] * t->n_keys + RS__AGG_MEASURE(t)];
    if (!shown[m]) by_rank[p->mrank[m]] = m, n_shown++;
    shown[m] = 1;
  }
  for (size_t r = 0, i = 0; i < n_shown; r++) {
    if (by_rank[r] == SIZE_MAX) continue; /* a measure that --where left out */
    if (!measure_tested[by_rank[r]]) s->untested[s->n_untested++] = t->val[RS__AGG_MEASURE(t)].str[by_rank[r]];
    i++;
  }
  free(shown);
  free(by_rank);
  s->on = 1;
done:
  free(tested);
  free(measure_tested);
  rs__strdict_free(&c.bases);
  free(c.row);
  return rc;
}

