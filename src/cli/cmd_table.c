/* cmd_table.c: "ragsweep table": a Markdown or CSV pivot of an aggregate.csv
 * (measures across configurations), with rs__pivot_sig marks from the
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
#include "report/pivot.h"
#include "util/strbuf.h"

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
          "      --alpha A        rs__pivot_sig level (default 0.05)\n"
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

/* --- options ------------------------------------------------------------------------------ */

typedef struct {
  const char *path, *rows, *cols, *sig, *baseline, *out;
  const char **measures, **where;
  size_t n_measures, n_where;
  int csv, no_sig, ttest, bold_best, decimals;
  double alpha;
  const char *sig_option; /* the first of --baseline, --test, --alpha given (they need compare.csv) */
} options;

/* --- output ------------------------------------------------------------------------------- */

/* The axis label of one key's value ("model=bge-small" in column headers). */
static void key_label(rs__sb *b, const rs__agg *t, size_t row, size_t k, int in_header, long base_run, int md)
{
  const char *v = rs__agg_value(t, row, k);
  if (in_header && k != RS__AGG_RUN && k != RS__AGG_MEASURE(t)) {
    rs__sb_str(b, t->key[k]);
    rs__sb_str(b, "=");
  }
  rs__sb_str(b, md && !*v ? "–" : v);
  if (k == RS__AGG_RUN && base_run >= 0 && t->id[row * t->n_keys + RS__AGG_RUN] == (uint32_t)base_run) rs__sb_str(b, " (baseline)");
}

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

static rs_code cells_format(const rs__pivot *p, const options *o, const rs__pivot_sig *s, cell_text *ct, rs_error *err)
{
  const rs__agg *t = p->t;
  const size_t n = p->n_r * p->n_c;
  const int run_is_key = rs__pivot_has_key(p->rows, p->n_rkeys, RS__AGG_RUN) || rs__pivot_has_key(p->cols, p->n_ckeys, RS__AGG_RUN);
  if (!(ct->num = calloc(n ? n : 1, sizeof *ct->num)) || !(ct->mark = calloc(n ? n : 1, sizeof *ct->mark)))
    return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    size_t row = p->cell[i];
    if (row == SIZE_MAX) continue;
    rs__sb b = {0}, m = {0};
    format_value(&b, t->value[row], o->decimals);
    rs__sb_str(&m, "");
    if (s->on && s->mark[row]) rs__sb_str(&m, "†");
    if (s->on && !run_is_key && s->base_run >= 0 && t->id[row * t->n_keys + RS__AGG_RUN] == (uint32_t)s->base_run) {
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
  const int per_row = rs__pivot_has_key(p->rows, p->n_rkeys, RS__AGG_MEASURE(t)) && !rs__pivot_has_key(p->cols, p->n_ckeys, RS__AGG_MEASURE(t));
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
static char *column_label(const rs__pivot *p, size_t c, long base_run, int md)
{
  rs__sb b = {0};
  for (size_t j = 0; j < p->n_ckeys; j++) {
    if (j) rs__sb_str(&b, " / ");
    key_label(&b, p->t, p->c_first[c], p->cols[j], 1, base_run, md);
  }
  return rs__sb_take(&b);
}

static char *row_label(const rs__pivot *p, size_t r, size_t j, long base_run, int md)
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

static rs_code write_md(FILE *f, const rs__pivot *p, const options *o, const rs__pivot_sig *s, const cell_text *ct,
                        const char *caption, rs_error *err)
{
  const rs__agg *t = p->t;
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

static rs_code write_csv(rs__csv *w, const rs__pivot *p, const rs__pivot_sig *s, const cell_text *ct, rs_error *err)
{
  const rs__agg *t = p->t;
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
static char *make_caption(const rs__pivot *p, const options *o)
{
  const rs__agg *t = p->t;
  rs__sb b = {0};
  const size_t km = RS__AGG_MEASURE(t);
  /* The measure when every cell has it; else its base (nDCG, with the
   * cutoffs as the columns). */
  for (size_t k = km; k < t->n_keys && !rs__pivot_has_key(p->rows, p->n_rkeys, km) &&
                      !rs__pivot_has_key(p->cols, p->n_ckeys, km) && !b.n; k++) {
    if (rs__pivot_has_key(p->rows, p->n_rkeys, k) || rs__pivot_has_key(p->cols, p->n_ckeys, k)) continue;
    size_t i = 1;
    while (i < p->n_sel && t->id[p->sel[i] * t->n_keys + k] == t->id[p->sel[0] * t->n_keys + k]) i++;
    if (i == p->n_sel) rs__sb_printf(&b, "**%s**", rs__agg_value(t, p->sel[0], k));
  }
  int open = 0;
  for (size_t w = 0; w < o->n_where; w++) {
    const char *eq = strchr(o->where[w], '=');
    const size_t klen = (size_t)(eq - o->where[w]);
    size_t k = 0;
    while (strlen(t->key[k]) != klen || strncmp(t->key[k], o->where[w], klen)) k++;
    if (rs__pivot_has_key(p->rows, p->n_rkeys, k) || rs__pivot_has_key(p->cols, p->n_ckeys, k) || k == km) continue;
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
  rs__agg t = {0};
  rs__pivot p = {0};
  rs__pivot_sig s = {.base_run = -1};
  cell_text ct = {0};
  char *agg_path = NULL, *cmp_path = NULL, *caption = NULL;
  rs__csv *w = NULL;

  if ((rc = resolve_paths(&o, &agg_path, &cmp_path, &err)) || (rc = rs__agg_load(agg_path, &t, &err))) goto fail;
  if (!cmp_path && o.sig_option && !o.no_sig) {
    rc = rs__fail(&err, RS_IO, "%s needs compare.csv, and there is none beside %s (write one with 'ragsweep compare', "
                  "or give it with --sig FILE)", o.sig_option, agg_path);
    goto fail;
  }
  /* the axes: rows = run and cols = measure unless told otherwise */
  const rs__pivot_spec spec = {.rows = o.rows, .cols = o.cols, .measures = o.measures, .n_measures = o.n_measures,
                                .where = o.where, .n_where = o.n_where};
  if ((rc = rs__pivot_make(&p, &t, &spec, &err))) goto fail;
  if (cmp_path && (rc = rs__pivot_sig_load(&p, cmp_path, o.baseline, o.ttest, o.alpha, &s, &err))) goto fail;
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

fail:
  fprintf(stderr, "ragsweep table: %s\n", err.msg);
  exit_code = rc == RS_USAGE ? RS_EXIT_USAGE : RS_EXIT_INPUT;
done:
  rs__csv_abort(w);
  cells_free(&ct, p.n_r * p.n_c);
  rs__pivot_sig_free(&s);
  rs__pivot_free(&p);
  rs__agg_free(&t);
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
