/* cmd_table.c: "ragsweep table": a Markdown or CSV pivot of an aggregate.csv
 * (measures across configurations), with significance marks from the
 * compare.csv that `ragsweep compare` writes beside it. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "formats/csvio.h"
#include "metrics/spec.h"
#include "util/strbuf.h"
#include "util/strdict.h"

static void help(FILE *f)
{
  fprintf(f,
          "usage: ragsweep table PATH [options]\n"
          "\n"
          "Prints a pivot of the measures in PATH (an aggregate.csv written by 'ragsweep eval'\n"
          "or 'ragsweep compare', or a folder holding one) as a Markdown table (default) or CSV.\n"
          "A KEY is 'run', 'measure' or an attribute column of the file (model, chunk, ...);\n"
          "KEYS is one KEY or several joined by commas (--rows model,reranker).  Rows and\n"
          "columns follow the order in which their values first appear in the file (measures:\n"
          "the order of -m when given).\n"
          "\n"
          "options:\n"
          "  -m, --measure NAME   measure to show (repeatable); lists and other spellings\n"
          "                       as in 'ragsweep eval': 'Success@{1,3,5,10}', ndcg_cut.10;\n"
          "                       default: every measure of the file except the num_q counts\n"
          "      --rows KEYS      what the rows are (default: run; measure when --cols\n"
          "                       lacks measure)\n"
          "      --cols KEYS      what the columns are (default: measure; run when --rows\n"
          "                       has measure)\n"
          "      --where KEY=VALUE  keep only rows with this value (repeatable; several values\n"
          "                       of one KEY: any of them; different KEYs: all of them)\n"
          "      --format md|csv  output format (default md)\n"
          "      --decimals N     digits after the point (default 4)\n"
          "      --bold-best      Markdown: bold the highest value of each column (of each\n"
          "                       row when the measures are the rows)\n"
          "  -o, --out FILE       write the table to FILE (through a temporary file and a\n"
          "                       rename) instead of stdout\n"
          "\n"
          "significance (needs compare.csv from 'ragsweep compare'):\n"
          "      --sig FILE       compare.csv to read (default: the one beside the aggregate.csv,\n"
          "                       if any)\n"
          "      --no-sig         no marks\n"
          "      --baseline RUN   the baseline whose comparisons to show (default: the only\n"
          "                       baseline in the file)\n"
          "      --test perm|ttest  which adjusted p-value to use: p_perm_adj (default) or\n"
          "                       p_ttest_adj\n"
          "      --alpha A        significance level (default 0.05)\n"
          "  -h, --help           this help\n"
          "\n"
          "A cell is marked † when its run differs from the baseline on its measure with an\n"
          "adjusted p-value below alpha; the baseline's row or column label says\n"
          "\"(baseline)\" (when runs are not a row or column key, its cells are marked °).\n"
          "The Markdown table ends with a footnote explaining the marks; CSV keeps the marks\n"
          "in the cells and has no footnote (--no-sig gives plain numbers).  A cell no row\n"
          "matches is empty (– in Markdown); a cell that several rows match is an error that\n"
          "names what differs among them: narrow it with --where or -m, or add a key.\n"
          "\n"
          "example: Success@k of every model and chunk size, with and without the reranker:\n"
          "  ragsweep table out/ --rows model,chunk --cols reranker,measure -m 'Success@{1,5}'\n"
          "\n"
          "exit status: 0 ok; 1 usage (unknown option, key, measure or value; an ambiguous\n"
          "cell); 2 unreadable or malformed input.\n");
}

/* --- strings -------------------------------------------------------------------- */

/* Columns a string takes in a terminal: its UTF-8 code points. */
static size_t text_width(const char *s)
{
  size_t w = 0;
  for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

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

/* --- aggregate.csv ------------------------------------------------------------------ */

/* Keys: 0 is run, 1 .. n_keys-2 the attributes, n_keys-1 the measure. */
typedef struct {
  const char *path;
  int have_header;
  size_t n_cols, col_value;
  char **key;  /* [n_keys] names */
  size_t *col; /* [n_keys] the column each key reads */
  size_t n_keys;
  rs__strdict *val;    /* [n_keys] the values of each key */
  uint32_t *id; /* [n_rows * n_keys] */
  double *value;
  size_t *line;
  size_t n_rows, cap;
} table_data;

#define K_RUN 0
#define K_MEASURE(t) ((t)->n_keys - 1)

static void table_free(table_data *t)
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
}

static void header_text(rs__sb *b, char **fields, size_t n)
{
  for (size_t i = 0; i < n && i < 30; i++) {
    rs__sb_str(b, i ? "," : "");
    rs__sb_str(b, fields[i]);
  }
  if (n > 30) rs__sb_str(b, ",...");
}

static rs_code table_header(table_data *t, char **fields, size_t n, size_t line, rs_error *err)
{
  size_t c_run = SIZE_MAX, c_measure = SIZE_MAX, c_value = SIZE_MAX;
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
  t->n_keys = c_measure - c_run + 1;
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
  table_data *t = ctx;
  if (!t->have_header) return table_header(t, fields, n, line, err);
  if (n != t->n_cols)
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected %zu fields, as in the header, found %zu", t->path, line,
                    t->n_cols, n);
  double v;
  if (!parse_number(fields[t->col_value], &v))
    return rs__fail(err, RS_FORMAT, "%s:%zu: expected a number in column 'value', found '%s'", t->path, line,
                    fields[t->col_value]);
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
    rs_code rc = rs__strdict_add(&t->val[k], fields[t->col[k]], &t->id[t->n_rows * t->n_keys + k], err);
    if (rc) return rc;
  }
  t->value[t->n_rows] = v;
  t->line[t->n_rows] = line;
  t->n_rows++;
  return RS_OK;
}

static rs_code table_load(const char *path, table_data *t, rs_error *err)
{
  t->path = path;
  rs_code rc = rs__csv_read(path, table_row, t, err);
  if (!rc && !t->have_header)
    rc = rs__fail(err, RS_FORMAT, "%s: empty file (expected a header run,<attributes...>,measure,value)", path);
  if (!rc && t->n_rows == 0) rc = rs__fail(err, RS_FORMAT, "%s: no rows after the header", path);
  return rc;
}

static const char *key_value(const table_data *t, size_t row, size_t k)
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
  const table_data *t;
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
  long run = rs__strdict_find(&c->t->val[K_RUN], fields[c->c_run]);
  long measure = rs__strdict_find(&c->t->val[K_MEASURE(c->t)], fields[c->c_measure]);
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

/* --- options ------------------------------------------------------------------------------ */

typedef struct {
  const char *path, *rows, *cols, *sig, *baseline, *out;
  const char **measures, **where;
  size_t n_measures, n_where;
  int csv, no_sig, ttest, bold_best, decimals;
  double alpha;
  const char *sig_option; /* the first of --baseline, --test, --alpha given (they need compare.csv) */
} options;

/* Keys of a --rows/--cols value, resolved against the table's. */
static rs_code parse_keys(const table_data *t, const char *opt, const char *arg, size_t **out, size_t *n_out,
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

static int has_key(const size_t *keys, size_t n, size_t k)
{
  for (size_t i = 0; i < n; i++)
    if (keys[i] == k) return 1;
  return 0;
}

/* The measures -m selects, as ranks per measure id (SIZE_MAX: not shown).
 * A name the file has verbatim is taken as it is (num_q, or a name from
 * another tool); any other goes through the measure parser of `eval`, which
 * expands lists and gives the canonical spelling. */
static rs_code select_measures(const table_data *t, const options *o, size_t *rank, rs_error *err)
{
  const rs__strdict *m = &t->val[K_MEASURE(t)];
  size_t next = 0;
  if (o->n_measures == 0) {
    for (size_t i = 0; i < m->n; i++)
      rank[i] = strncmp(m->str[i], "num_q", 5) == 0 ? SIZE_MAX : next++;
    if (next == 0) return rs__fail(err, RS_FORMAT, "%s: no measures (only num_q counts)", t->path);
    return RS_OK;
  }
  for (size_t i = 0; i < m->n; i++) rank[i] = SIZE_MAX;
  for (size_t a = 0; a < o->n_measures; a++) {
    long id = rs__strdict_find(m, o->measures[a]);
    if (id >= 0) {
      if (rank[id] == SIZE_MAX) rank[id] = next++;
      continue;
    }
    rs__spec *spec = NULL;
    rs_error perr = {0};
    const char *name = NULL;
    if (rs__spec_build(&o->measures[a], 1, 1000, &spec, &perr) == RS_OK) {
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
        rc = rs__fail(err, RS_USAGE, "-m %s: %s has no measure '%s' (its measures: %s)", o->measures[a], t->path,
                      name, list ? list : "");
      else
        rc = rs__fail(err, RS_USAGE, "-m %s: unknown measure: not in %s, and not a name that 'ragsweep eval' "
                      "knows (the measures of %s: %s)", o->measures[a], t->path, t->path, list ? list : "");
      free(list);
      rs__spec_free(spec);
      return rc;
    }
    rs__spec_free(spec);
  }
  return RS_OK;
}

/* allow[k] is NULL (any value) or a flag per value id. */
static rs_code parse_where(const table_data *t, const options *o, unsigned char **allow, rs_error *err)
{
  for (size_t w = 0; w < o->n_where; w++) {
    const char *arg = o->where[w], *eq = strchr(arg, '=');
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

typedef struct {
  const table_data *t;
  const size_t *mrank; /* measure ranks */
  size_t *rows, *cols; /* the keys of each axis */
  size_t n_rkeys, n_ckeys;
  size_t *sel; /* selected table rows */
  size_t n_sel;
  size_t *r_of, *c_of; /* axis positions of sel[i] */
  size_t *r_first, *c_first; /* a table row of each axis position (its labels) */
  size_t n_r, n_c;
  size_t *cell; /* [n_r * n_c] table row, or SIZE_MAX */
} pivot;

static void pivot_free(pivot *p)
{
  free(p->rows);
  free(p->cols);
  free(p->sel);
  free(p->r_of);
  free(p->c_of);
  free(p->r_first);
  free(p->c_first);
  free(p->cell);
}

static size_t key_rank(const pivot *p, size_t row, size_t k)
{
  uint32_t id = p->t->id[row * p->t->n_keys + k];
  return k == K_MEASURE(p->t) ? p->mrank[id] : id;
}

/* qsort has no context argument; the command is single-threaded. */
static const pivot *sort_pivot;
static const size_t *sort_keys;
static size_t sort_n_keys;

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
static rs_code axis_positions(pivot *p, const size_t *keys, size_t n_keys, size_t *pos_of, size_t **first,
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

/* The axis label of one key's value ("model=bge-small" in column headers). */
static void key_label(rs__sb *b, const table_data *t, size_t row, size_t k, int in_header, long base_run, int md)
{
  const char *v = key_value(t, row, k);
  if (in_header && k != K_RUN && k != K_MEASURE(t)) {
    rs__sb_str(b, t->key[k]);
    rs__sb_str(b, "=");
  }
  rs__sb_str(b, md && !*v ? "–" : v);
  if (k == K_RUN && base_run >= 0 && t->id[row * t->n_keys + K_RUN] == (uint32_t)base_run) rs__sb_str(b, " (baseline)");
}

static void cell_name(rs__sb *b, const pivot *p, size_t row)
{
  const table_data *t = p->t;
  for (size_t i = 0; i < p->n_rkeys + p->n_ckeys; i++) {
    size_t k = i < p->n_rkeys ? p->rows[i] : p->cols[i - p->n_rkeys];
    rs__sb_printf(b, "%s%s=%s", i ? ", " : "", t->key[k], key_value(t, row, k));
  }
}

/* A cell that several rows match: say which rows and what differs among them. */
static rs_code ambiguous(const pivot *p, size_t r, size_t c, rs_error *err)
{
  const table_data *t = p->t;
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
      int kind = k == K_RUN ? 2 : k == K_MEASURE(t) ? 1 : 0;
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
  else if (hint == K_MEASURE(t))
    rc = rs__fail(err, RS_USAGE,
                  "the cell %s matches %zu rows of %s (lines %s) that differ in %s; choose one with -m (e.g. -m %s) "
                  "or add measure to --rows or --cols",
                  b.s ? b.s : "", n, t->path, lines.s ? lines.s : "", diff.s ? diff.s : "", key_value(t, first, hint));
  else
    rc = rs__fail(err, RS_USAGE,
                  "the cell %s matches %zu rows of %s (lines %s) that differ in %s; choose one with --where (e.g. "
                  "--where %s=%s) or add %s to --rows or --cols",
                  b.s ? b.s : "", n, t->path, lines.s ? lines.s : "", diff.s ? diff.s : "", t->key[hint],
                  key_value(t, first, hint), t->key[hint]);
  free(b.s);
  free(lines.s);
  free(diff.s);
  return rc;
}

static rs_code pivot_build(pivot *p, unsigned char *const *allow, rs_error *err)
{
  const table_data *t = p->t;
  rs_code rc;
  if (!(p->sel = malloc((t->n_rows ? t->n_rows : 1) * sizeof *p->sel))) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < t->n_rows; i++) {
    if (p->mrank[t->id[i * t->n_keys + K_MEASURE(t)]] == SIZE_MAX) continue;
    int keep = 1;
    for (size_t k = 0; k < t->n_keys && keep; k++) keep = !allow[k] || allow[k][t->id[i * t->n_keys + k]];
    if (keep) p->sel[p->n_sel++] = i;
  }
  if (p->n_sel == 0) return rs__fail(err, RS_USAGE, "no row of %s matches the --where filters and measures", t->path);
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

/* --- significance ------------------------------------------------------------------------- */

typedef struct {
  int on;           /* compare.csv was read and a baseline chosen */
  char *baseline;   /* its name */
  long base_run;    /* its id in the table, or -1 */
  unsigned char *mark; /* [n_rows] 1: significant */
  char **untested;  /* measures shown without a comparison in compare.csv */
  size_t n_untested;
} significance;

static void sig_free(significance *s)
{
  free(s->baseline);
  free(s->mark);
  free(s->untested);
}

static rs_code sig_load(const table_data *t, const pivot *p, const options *o, const char *path, significance *s,
                        rs_error *err)
{
  cmp_data c = {.path = path, .p_name = o->ttest ? "p_ttest_adj" : "p_perm_adj", .t = t};
  unsigned char *tested = NULL, *measure_tested = NULL;
  rs_code rc = rs__csv_read(path, cmp_read_row, &c, err);
  if (rc) goto done;
  if (!c.have_header) {
    rc = rs__fail(err, RS_FORMAT, "%s: empty file (expected a header with run, baseline, measure, %s)", path, c.p_name);
    goto done;
  }
  long base = -1;
  if (o->baseline) {
    if ((base = rs__strdict_find(&c.bases, o->baseline)) < 0) {
      rs__sb b = {0};
      rs__sb_list(&b, c.bases.str, c.bases.n, 300);
      char *list = rs__sb_take(&b);
      rc = rs__fail(err, RS_USAGE, "--baseline %s: %s has no comparisons with baseline '%s' (its baselines: %s)",
                    o->baseline, path, o->baseline, c.bases.n && list ? list : "none");
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
  const size_t n_runs = t->val[K_RUN].n, n_measures = t->val[K_MEASURE(t)].n;
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
                    r->line, t->val[K_RUN].str[r->run], s->baseline, t->val[K_MEASURE(t)].str[r->measure], line[at]);
      break;
    }
    tested[at] = 1;
    pval[at] = r->p;
    line[at] = r->line;
  }
  s->base_run = rs__strdict_find(&t->val[K_RUN], s->baseline);
  for (size_t i = 0; !rc && i < t->n_rows; i++) {
    size_t run = t->id[i * t->n_keys + K_RUN], m = t->id[i * t->n_keys + K_MEASURE(t)], at = run * n_measures + m;
    if (tested[at]) measure_tested[m] = 1;
    s->mark[i] = tested[at] && pval[at] < o->alpha; /* NaN (not available) is never below */
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
    size_t m = t->id[p->sel[i] * t->n_keys + K_MEASURE(t)];
    if (!shown[m]) by_rank[p->mrank[m]] = m, n_shown++;
    shown[m] = 1;
  }
  for (size_t r = 0, i = 0; i < n_shown; r++) {
    if (by_rank[r] == SIZE_MAX) continue; /* a measure that --where left out */
    if (!measure_tested[by_rank[r]]) s->untested[s->n_untested++] = t->val[K_MEASURE(t)].str[by_rank[r]];
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

/* --- output ------------------------------------------------------------------------------- */

static void format_value(rs__sb *b, double v, int decimals)
{
  if (isnan(v)) rs__sb_str(b, "NaN");
  else if (isinf(v)) rs__sb_str(b, v > 0 ? "inf" : "-inf");
  else rs__sb_printf(b, "%.*f", decimals, v);
}

/* The text of every cell: number, then marks (kept apart, to align them). */
typedef struct {
  char **num, **mark; /* [n_r * n_c]; NULL num: empty cell */
  int any_baseline_cell;
} cell_text;

static rs_code cells_format(const pivot *p, const options *o, const significance *s, cell_text *ct, rs_error *err)
{
  const table_data *t = p->t;
  const size_t n = p->n_r * p->n_c;
  const int run_is_key = has_key(p->rows, p->n_rkeys, K_RUN) || has_key(p->cols, p->n_ckeys, K_RUN);
  if (!(ct->num = calloc(n ? n : 1, sizeof *ct->num)) || !(ct->mark = calloc(n ? n : 1, sizeof *ct->mark)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    size_t row = p->cell[i];
    if (row == SIZE_MAX) continue;
    rs__sb b = {0}, m = {0};
    format_value(&b, t->value[row], o->decimals);
    rs__sb_str(&m, "");
    if (s->on && s->mark[row]) rs__sb_str(&m, "†");
    if (s->on && !run_is_key && s->base_run >= 0 && t->id[row * t->n_keys + K_RUN] == (uint32_t)s->base_run) {
      rs__sb_str(&m, "°");
      ct->any_baseline_cell = 1;
    }
    if (!(ct->num[i] = rs__sb_take(&b)) || !(ct->mark[i] = rs__sb_take(&m))) {
      free(m.s);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
  }
  if (!o->bold_best || o->csv) return RS_OK;
  /* Bold every cell whose shown number equals the best shown along the axis
   * that does not run over measures. */
  const int per_row = has_key(p->rows, p->n_rkeys, K_MEASURE(t)) && !has_key(p->cols, p->n_ckeys, K_MEASURE(t));
  const size_t n_lines = per_row ? p->n_r : p->n_c, len = per_row ? p->n_c : p->n_r;
  for (size_t a = 0; a < n_lines; a++) {
    size_t best = SIZE_MAX;
    for (size_t j = 0; j < len; j++) {
      size_t i = per_row ? a * p->n_c + j : j * p->n_c + a, row = p->cell[i];
      if (row != SIZE_MAX && !isnan(t->value[row]) && (best == SIZE_MAX || t->value[row] > t->value[p->cell[best]]))
        best = i;
    }
    if (best == SIZE_MAX) continue;
    char *best_text = strdup(ct->num[best]);
    if (!best_text) return rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t j = 0; j < len; j++) {
      size_t i = per_row ? a * p->n_c + j : j * p->n_c + a;
      if (!ct->num[i] || strcmp(ct->num[i], best_text) != 0) continue;
      rs__sb b = {0};
      rs__sb_printf(&b, "**%s**", ct->num[i]);
      char *bold = rs__sb_take(&b);
      if (!bold) {
        free(best_text);
        return rs__fail(err, RS_NOMEM, "out of memory");
      }
      free(ct->num[i]);
      ct->num[i] = bold;
    }
    free(best_text);
  }
  return RS_OK;
}

static void cells_free(cell_text *ct, size_t n)
{
  for (size_t i = 0; ct->num && i < n; i++) free(ct->num[i]);
  for (size_t i = 0; ct->mark && i < n; i++) free(ct->mark[i]);
  free(ct->num);
  free(ct->mark);
}

/* The labels: one column per row key, then one per column position. */
static char *column_label(const pivot *p, size_t c, long base_run, int md)
{
  rs__sb b = {0};
  for (size_t j = 0; j < p->n_ckeys; j++) {
    if (j) rs__sb_str(&b, " / ");
    key_label(&b, p->t, p->c_first[c], p->cols[j], 1, base_run, md);
  }
  return rs__sb_take(&b);
}

static char *row_label(const pivot *p, size_t r, size_t j, long base_run, int md)
{
  rs__sb b = {0};
  key_label(&b, p->t, p->r_first[r], p->rows[j], 0, base_run, md);
  return rs__sb_take(&b);
}

static void md_cell(FILE *f, const char *s, size_t width, int right)
{
  size_t pad = width - text_width(s);
  fputs("| ", f);
  for (size_t i = 0; right && i < pad; i++) fputc(' ', f);
  fputs(s, f);
  for (size_t i = 0; !right && i < pad; i++) fputc(' ', f);
  fputc(' ', f);
}

/* '|' would end a Markdown cell. */
static char *md_escape(char *s)
{
  if (!s || !strchr(s, '|')) return s;
  rs__sb b = {0};
  for (const char *q = s; *q; q++) rs__sb_str(&b, *q == '|' ? "\\|" : (char[2]){*q, 0});
  free(s);
  return rs__sb_take(&b);
}

static rs_code write_md(FILE *f, const pivot *p, const options *o, const significance *s, const cell_text *ct,
                        const char *caption, rs_error *err)
{
  const table_data *t = p->t;
  const size_t n_lab = p->n_rkeys, n_cols = n_lab + p->n_c, n_lines = p->n_r + 1;
  const long base = s->on ? s->base_run : -1;
  char **text = calloc(rs__mul(n_cols, n_lines), sizeof *text);
  size_t *width = calloc(n_cols, sizeof *width), *mark_w = calloc(n_cols, sizeof *mark_w);
  rs_code rc = RS_OK;
  if (!text || !width || !mark_w) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  for (size_t j = 0; j < n_lab; j++) text[j] = md_escape(strdup(t->key[p->rows[j]]));
  for (size_t c = 0; c < p->n_c; c++) text[n_lab + c] = md_escape(column_label(p, c, base, 1));
  for (size_t c = 0; c < p->n_c; c++)
    for (size_t r = 0; r < p->n_r; r++) {
      const char *m = ct->mark[r * p->n_c + c];
      if (m && text_width(m) > mark_w[n_lab + c]) mark_w[n_lab + c] = text_width(m);
    }
  for (size_t r = 0; r < p->n_r; r++) {
    char **line = &text[(r + 1) * n_cols];
    for (size_t j = 0; j < n_lab; j++) line[j] = md_escape(row_label(p, r, j, base, 1));
    for (size_t c = 0; c < p->n_c; c++) {
      size_t i = r * p->n_c + c;
      rs__sb b = {0};
      if (!ct->num[i]) {
        rs__sb_str(&b, "–");
      } else {
        rs__sb_str(&b, ct->num[i]);
        rs__sb_str(&b, ct->mark[i]);
      }
      /* pad the marks, so the digits of a column line up */
      for (size_t k = ct->num[i] ? text_width(ct->mark[i]) : 0; k < mark_w[n_lab + c]; k++) rs__sb_str(&b, " ");
      line[n_lab + c] = rs__sb_take(&b);
    }
  }
  for (size_t i = 0; i < n_cols * n_lines; i++) {
    if (!text[i]) {
      rc = rs__fail(err, RS_NOMEM, "out of memory");
      goto done;
    }
    size_t w = text_width(text[i]);
    if (w > width[i % n_cols]) width[i % n_cols] = w;
  }
  for (size_t j = 0; j < n_cols; j++)
    if (width[j] < 3) width[j] = 3;
  if (caption) fprintf(f, "%s\n\n", caption);
  for (size_t l = 0; l < n_lines; l++) {
    for (size_t j = 0; j < n_cols; j++) md_cell(f, text[l * n_cols + j], width[j], j >= n_lab && l > 0);
    fputs("|\n", f);
    if (l > 0) continue;
    for (size_t j = 0; j < n_cols; j++) {
      /* ":---" left-aligns the labels, "---:" right-aligns the numbers */
      fputs(j < n_lab ? "| :" : "| ", f);
      for (size_t k = 1; k < width[j]; k++) fputc('-', f);
      fputs(j < n_lab ? " " : ": ", f);
    }
    fputs("|\n", f);
  }
  if (s->on) {
    fprintf(f, "\n† p < %g vs baseline %s (%s, adjusted p-values from compare.csv)", o->alpha, s->baseline,
            o->ttest ? "t-test" : "permutation test");
    if (s->n_untested) {
      fputs("; no comparisons for ", f);
      for (size_t i = 0; i < s->n_untested; i++) fprintf(f, "%s%s", i ? ", " : "", s->untested[i]);
    }
    fputc('\n', f);
    if (ct->any_baseline_cell) fprintf(f, "° the baseline run, %s\n", s->baseline);
  }
done:
  for (size_t i = 0; text && i < n_cols * n_lines; i++) free(text[i]);
  free(text);
  free(width);
  free(mark_w);
  return rc;
}

static rs_code write_csv(rs__csv *w, const pivot *p, const significance *s, const cell_text *ct, rs_error *err)
{
  const table_data *t = p->t;
  const long base = s->on ? s->base_run : -1;
  rs_code rc;
  for (size_t j = 0; j < p->n_rkeys; j++) rs__csv_str(w, t->key[p->rows[j]]);
  for (size_t c = 0; c < p->n_c; c++) {
    char *l = column_label(p, c, base, 0);
    if (!l) return rs__fail(err, RS_NOMEM, "out of memory");
    rs__csv_str(w, l);
    free(l);
  }
  if ((rc = rs__csv_end_row(w, err))) return rc;
  for (size_t r = 0; r < p->n_r; r++) {
    for (size_t j = 0; j < p->n_rkeys; j++) {
      char *l = row_label(p, r, j, base, 0);
      if (!l) return rs__fail(err, RS_NOMEM, "out of memory");
      rs__csv_str(w, l);
      free(l);
    }
    for (size_t c = 0; c < p->n_c; c++) {
      size_t i = r * p->n_c + c;
      rs__sb b = {0};
      if (ct->num[i]) {
        rs__sb_str(&b, ct->num[i]);
        rs__sb_str(&b, ct->mark[i]);
      }
      char *v = rs__sb_take(&b);
      if (!v) return rs__fail(err, RS_NOMEM, "out of memory");
      rs__csv_str(w, v);
      free(v);
    }
    if ((rc = rs__csv_end_row(w, err))) return rc;
  }
  return RS_OK;
}

/* Markdown: a line above the table naming what all its cells share (the
 * measure, when it is not a row or column key; the --where filters on keys
 * that are not either). */
static char *make_caption(const pivot *p, const options *o)
{
  const table_data *t = p->t;
  rs__sb b = {0};
  const size_t km = K_MEASURE(t);
  if (!has_key(p->rows, p->n_rkeys, km) && !has_key(p->cols, p->n_ckeys, km))
    rs__sb_printf(&b, "**%s**", key_value(t, p->sel[0], km));
  int open = 0;
  for (size_t w = 0; w < o->n_where; w++) {
    const char *eq = strchr(o->where[w], '=');
    const size_t klen = (size_t)(eq - o->where[w]);
    size_t k = 0;
    while (strlen(t->key[k]) != klen || strncmp(t->key[k], o->where[w], klen)) k++;
    if (has_key(p->rows, p->n_rkeys, k) || has_key(p->cols, p->n_ckeys, k) || k == km) continue;
    int again = 0; /* a later value of a key given before */
    for (size_t v = 0; v < w && !again; v++) again = strncmp(o->where[v], o->where[w], klen + 1) == 0;
    if (again) {
      rs__sb_printf(&b, " or %s", eq + 1);
      continue;
    }
    rs__sb_str(&b, open ? ", " : b.n ? " (" : "(");
    rs__sb_str(&b, o->where[w]);
    open = 1;
  }
  if (open) rs__sb_str(&b, ")");
  if (!b.n) {
    free(b.s);
    return NULL;
  }
  return rs__sb_take(&b);
}

/* --- the command ---------------------------------------------------------------------------- */

enum { OPT_ROWS = 256, OPT_COLS, OPT_WHERE, OPT_FORMAT, OPT_DECIMALS, OPT_SIG, OPT_NO_SIG, OPT_BASELINE, OPT_TEST,
       OPT_ALPHA, OPT_BOLD };

/* PATH is aggregate.csv or a folder holding one; compare.csv is looked for
 * beside it. */
static rs_code resolve_paths(const options *o, char **agg, char **cmp, rs_error *err)
{
  struct stat st;
  if (stat(o->path, &st) != 0) return rs__fail(err, RS_IO, "%s: cannot open: %s", o->path, strerror(errno));
  size_t len = strlen(o->path) + 32;
  char *a = malloc(len), *c = malloc(len);
  if (!a || !c) {
    free(a);
    free(c);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(a, len, "%s/aggregate.csv", o->path);
    snprintf(c, len, "%s/compare.csv", o->path);
    if (stat(a, &st) != 0) {
      free(a);
      free(c);
      return rs__fail(err, RS_IO, "%s: no aggregate.csv in this folder (write one with 'ragsweep eval')", o->path);
    }
  } else {
    snprintf(a, len, "%s", o->path);
    const char *slash = strrchr(o->path, '/');
    if (slash) snprintf(c, len, "%.*s/compare.csv", (int)(slash - o->path), o->path);
    else snprintf(c, len, "compare.csv");
  }
  if (o->no_sig || (!o->sig && stat(c, &st) != 0)) {
    free(c);
    c = NULL;
  } else if (o->sig) {
    free(c);
    if (!(c = strdup(o->sig))) {
      free(a);
      return rs__fail(err, RS_NOMEM, "out of memory");
    }
  }
  *agg = a;
  *cmp = c;
  return RS_OK;
}

static int usage_error(const char *fmt, ...) RS_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ragsweep table: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see 'ragsweep table --help')\n");
  va_end(ap);
  return RS_EXIT_USAGE;
}

int rs_cli_table(int argc, char **argv)
{
  static const struct option longs[] = {
      {"measure", required_argument, 0, 'm'},      {"rows", required_argument, 0, OPT_ROWS},
      {"cols", required_argument, 0, OPT_COLS},    {"where", required_argument, 0, OPT_WHERE},
      {"format", required_argument, 0, OPT_FORMAT}, {"decimals", required_argument, 0, OPT_DECIMALS},
      {"sig", required_argument, 0, OPT_SIG},      {"no-sig", no_argument, 0, OPT_NO_SIG},
      {"baseline", required_argument, 0, OPT_BASELINE}, {"test", required_argument, 0, OPT_TEST},
      {"alpha", required_argument, 0, OPT_ALPHA},  {"bold-best", no_argument, 0, OPT_BOLD},
      {"out", required_argument, 0, 'o'},          {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  options o = {.decimals = 4, .alpha = 0.05};
  int exit_code = RS_EXIT_INPUT;
  const char **lists = calloc(2 * (size_t)argc + 2, sizeof *lists);
  if (!lists) return RS_EXIT_INPUT;
  o.measures = lists;
  o.where = lists + argc + 1;
  int c, li = -1;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "m:o:h", longs, &li)) != -1) {
    char *end;
    switch (c) {
    case 'm': o.measures[o.n_measures++] = optarg; break;
    case 'o': o.out = optarg; break;
    case OPT_ROWS: o.rows = optarg; break;
    case OPT_COLS: o.cols = optarg; break;
    case OPT_WHERE:
      if (!strchr(optarg, '=')) {
        free(lists);
        return usage_error("--where %s: expected KEY=VALUE", optarg);
      }
      o.where[o.n_where++] = optarg;
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "md") == 0 || strcmp(optarg, "markdown") == 0) o.csv = 0;
      else if (strcmp(optarg, "csv") == 0) o.csv = 1;
      else goto bad_value;
      break;
    case OPT_DECIMALS: {
      errno = 0;
      long v = strtol(optarg, &end, 10);
      if (end == optarg || *end || errno || v < 0 || v > 17) goto bad_value;
      o.decimals = (int)v;
      break;
    }
    case OPT_SIG: o.sig = optarg; break;
    case OPT_NO_SIG: o.no_sig = 1; break;
    case OPT_BASELINE:
      o.baseline = optarg;
      if (!o.sig_option) o.sig_option = "--baseline";
      break;
    case OPT_TEST:
      if (strcmp(optarg, "perm") == 0) o.ttest = 0;
      else if (strcmp(optarg, "ttest") == 0 || strcmp(optarg, "t") == 0) o.ttest = 1;
      else goto bad_value;
      if (!o.sig_option) o.sig_option = "--test";
      break;
    case OPT_ALPHA:
      errno = 0;
      o.alpha = strtod(optarg, &end);
      if (end == optarg || *end || errno || !(o.alpha > 0 && o.alpha <= 1)) goto bad_value;
      if (!o.sig_option) o.sig_option = "--alpha";
      break;
    case OPT_BOLD: o.bold_best = 1; break;
    case 'h':
      help(stdout);
      free(lists);
      return RS_EXIT_OK;
    default:
      free(lists);
      return usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) {
    free(lists);
    if (optind >= argc) return usage_error("expected PATH (an aggregate.csv or a folder holding one)");
    return usage_error("expected one PATH, found '%s' after '%s'", argv[optind + 1], argv[optind]);
  }
  if (o.sig && o.no_sig) {
    free(lists);
    return usage_error("--sig and --no-sig exclude each other");
  }
  o.path = argv[optind];

  rs_error err = {0};
  rs_code rc;
  table_data t = {0};
  pivot p = {0};
  significance s = {.base_run = -1};
  cell_text ct = {0};
  char *agg_path = NULL, *cmp_path = NULL, *caption = NULL;
  size_t *mrank = NULL;
  unsigned char **allow = NULL;
  rs__csv *w = NULL;

  if ((rc = resolve_paths(&o, &agg_path, &cmp_path, &err)) || (rc = table_load(agg_path, &t, &err))) goto fail;
  if (!cmp_path && o.sig_option && !o.no_sig) {
    rc = rs__fail(&err, RS_IO, "%s needs compare.csv, and there is none beside %s (write one with 'ragsweep compare', "
                  "or give it with --sig FILE)", o.sig_option, agg_path);
    goto fail;
  }
  /* the axes: rows = run and cols = measure unless told otherwise */
  const size_t km = K_MEASURE(&t);
  p.t = &t;
  if (o.rows && (rc = parse_keys(&t, "--rows", o.rows, &p.rows, &p.n_rkeys, &err))) goto fail;
  if (o.cols && (rc = parse_keys(&t, "--cols", o.cols, &p.cols, &p.n_ckeys, &err))) goto fail;
  if (!o.rows) {
    const int measure_in_cols = !o.cols || has_key(p.cols, p.n_ckeys, km);
    if (!(p.rows = malloc(sizeof *p.rows))) goto nomem;
    p.rows[0] = measure_in_cols ? K_RUN : km;
    p.n_rkeys = 1;
  }
  if (!o.cols) {
    const int measure_in_rows = has_key(p.rows, p.n_rkeys, km);
    if (!(p.cols = malloc(sizeof *p.cols))) goto nomem;
    p.cols[0] = measure_in_rows ? K_RUN : km;
    p.n_ckeys = 1;
  }
  for (size_t i = 0; i < p.n_rkeys + p.n_ckeys; i++) {
    size_t k = i < p.n_rkeys ? p.rows[i] : p.cols[i - p.n_rkeys];
    int twice = 0;
    for (size_t j = 0; j < i; j++) twice |= (j < p.n_rkeys ? p.rows[j] : p.cols[j - p.n_rkeys]) == k;
    if (twice) {
      rc = rs__fail(&err, RS_USAGE, "key '%s' is given twice in --rows and --cols", t.key[k]);
      goto fail;
    }
  }
  if (!(mrank = malloc((t.val[km].n ? t.val[km].n : 1) * sizeof *mrank)) || !(allow = calloc(t.n_keys, sizeof *allow)))
    goto nomem;
  if ((rc = select_measures(&t, &o, mrank, &err)) || (rc = parse_where(&t, &o, allow, &err))) goto fail;
  p.mrank = mrank;
  if ((rc = pivot_build(&p, allow, &err))) goto fail;
  if (cmp_path && (rc = sig_load(&t, &p, &o, cmp_path, &s, &err))) goto fail;
  if ((rc = cells_format(&p, &o, &s, &ct, &err))) goto fail;

  if (o.out) {
    /* -o DIR/NAME: written as DIR/.NAME.tmp.PID, renamed when complete */
    const char *slash = strrchr(o.out, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == o.out) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - o.out), o.out);
    rc = rs__csv_create(dir, slash ? slash + 1 : o.out, &w, &err);
  } else {
    rc = rs__csv_open_stream(stdout, "stdout", &w, &err);
  }
  if (rc) goto fail;
  if (o.csv) {
    rc = write_csv(w, &p, &s, &ct, &err);
  } else {
    caption = make_caption(&p, &o);
    rc = write_md(rs__csv_file(w), &p, &o, &s, &ct, caption, &err);
  }
  if (!rc) rc = rs__csv_commit(w, &err);
  else rs__csv_abort(w);
  w = NULL;
  if (rc) goto fail;
  exit_code = RS_EXIT_OK;
  goto done;

nomem:
  rc = rs__fail(&err, RS_NOMEM, "out of memory");
fail:
  fprintf(stderr, "ragsweep table: %s\n", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
done:
  rs__csv_abort(w);
  cells_free(&ct, p.n_r * p.n_c);
  sig_free(&s);
  for (size_t k = 0; allow && k < t.n_keys; k++) free(allow[k]);
  free(allow);
  free(mrank);
  pivot_free(&p);
  table_free(&t);
  free(agg_path);
  free(cmp_path);
  free(caption);
  free(lists);
  return exit_code;

bad_value:
  fprintf(stderr, "ragsweep table: invalid value '%s' for --%s (see 'ragsweep table --help')\n", optarg,
          li >= 0 ? longs[li].name : "?");
  free(lists);
  return RS_EXIT_USAGE;
}
