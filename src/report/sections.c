/* sections.c: the sections of one folder in the HTML report: leaderboard,
 * heatmaps, measure-vs-k curves, precision-recall, latency, comparisons,
 * gates, worst queries (eval, compare); generation metrics (rag);
 * agreement (judge).  Each is described in README.md, "The morning-after
 * view". */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/numparse.h"
#include "internal.h"
#include "report/doc.h"

/* Significance as compare decides it by default: the randomization test's
 * adjusted p-value (the t-test's when there was no randomization test),
 * against 0.05. */
#define ALPHA 0.05

static double p_adj(const rs__cmp_row *c) { return isnan(c->p_perm_adj) ? c->p_ttest_adj : c->p_perm_adj; }

static int significant(const rs__cmp_row *c) { return p_adj(c) < ALPHA; }

/* The baseline of f's compare.csv rows the report shows: --baseline when
 * this folder has it, else the first row's. */
static const char *chosen_baseline(const rs__doc *d, const rs__folder *f)
{
  if (!f->n_cmp) return NULL;
  if (d->o->baseline)
    for (size_t i = 0; i < f->n_cmp; i++)
      if (strcmp(f->cmp[i].baseline, d->o->baseline) == 0) return d->o->baseline;
  return f->cmp[0].baseline;
}

static const rs__cmp_row *cmp_of(const rs__folder *f, const char *run, const char *measure, const char *baseline)
{
  for (size_t i = 0; i < f->n_cmp; i++)
    if (strcmp(f->cmp[i].run, run) == 0 && strcmp(f->cmp[i].measure, measure) == 0 &&
        strcmp(f->cmp[i].baseline, baseline) == 0)
      return &f->cmp[i];
  return NULL;
}

static const char *entry_run(const rs__folder *f, size_t e) { return rs__results_run(&f->res, f->entry[e].first_row); }

static size_t n_labels(const rs__folder *f) { return rs__results_n_labels(&f->res); }

static const char *label_value(const rs__folder *f, size_t e, size_t l)
{
  return rs__results_label_value(&f->res, f->entry[e].first_row, l);
}

static const rs__results_latency *latency_of(const rs__folder *f, size_t e)
{
  const size_t run = f->entry[e].run;
  return f->res.has_latency && f->res.has_latency[run] ? &f->res.latency[run] : NULL;
}

static void tr_open(rs__sb *b, const char *attrs_json)
{
  if (!attrs_json) {
    rs__sb_str(b, "<tr>");
    return;
  }
  rs__sb_str(b, "<tr data-attrs=\"");
  rs__html_esc(b, attrs_json);
  rs__sb_str(b, "\">");
}

/* The configuration's cell: its swatch, then its name, which is also the
 * sort key (data-value), so the swatch's marker does not sort. */
static void td_entry(rs__doc *d, rs__sb *b, const char *name)
{
  rs__sb_str(b, "<td class=\"cfg\" data-value=\"");
  rs__html_esc(b, name);
  rs__sb_str(b, "\">");
  rs__doc_swatch(b, rs__doc_style(d, name));
  rs__html_esc(b, name);
  rs__sb_str(b, "</td>");
}

static void td_interval(rs__sb *b, double lo, double hi)
{
  if (isnan(lo) || isnan(hi)) {
    rs__sb_str(b, "<td class=\"num\"></td>");
    return;
  }
  char exact[32];
  rs__format_double(lo, exact);
  rs__sb_printf(b, "<td class=\"num\" data-value=\"%s\">[%.4f, %.4f]</td>", exact, lo, hi);
}

static void p_note(rs__sb *b, const char *html)
{
  rs__sb_str(b, "<p class=\"note\">");
  rs__sb_str(b, html);
  rs__sb_str(b, "</p>\n");
}

/* Entries by the lead measure, best first (ties and NaN: file order). */
static const rs__folder *sort_f;
static int by_lead(const void *a, const void *b)
{
  const size_t x = *(const size_t *)a, y = *(const size_t *)b;
  const double vx = rs__folder_value(sort_f, x, sort_f->lead), vy = rs__folder_value(sort_f, y, sort_f->lead);
  if (isnan(vx) != isnan(vy)) return isnan(vx) ? 1 : -1;
  if (!isnan(vx) && vx != vy) return vx > vy ? -1 : 1;
  return (x > y) - (x < y);
}

/* --- leaderboard ---------------------------------------------------------------------------- */

static void leaderboard(rs__doc *d, const rs__folder *f, const char *fid)
{
  rs__sb *b = &d->body;
  char id[160];
  snprintf(id, sizeof id, "%s-leaderboard", fid);
  rs__doc_h3(d, id, f->kind == RS__RESULTS_RAG ? "Configurations" : "Leaderboard");
  if (f->lead == SIZE_MAX || !f->n_entries) {
    p_note(b, "No measure to rank by.");
    return;
  }
  const char *lead = rs__folder_measure(f, f->lead), *base = chosen_baseline(d, f);
  int has_delta = 0, has_lat = 0, has_rag_lat = 0, has_q = 0;
  for (size_t e = 0; e < f->n_entries; e++) {
    if (base && cmp_of(f, entry_run(f, e), lead, base)) has_delta = 1;
    const rs__results_latency *l = latency_of(f, e);
    if (l && !isnan(l->p95_ms)) has_lat = 1;
    if (l && isnan(l->p95_ms)) has_rag_lat = 1;
    if (f->num_q[e] != SIZE_MAX) has_q = 1;
  }
  rs__sb_str(b, "<p class=\"note\">Ranked by <strong>");
  rs__html_esc(b, lead);
  rs__sb_str(b, "</strong>");
  if (f->has_ci)
    rs__sb_str(b, "; 95% CI: Student's t-interval of the mean over the queries of per_query.csv");
  if (has_delta) {
    rs__sb_str(b, "; &Delta;: difference with the baseline <code>");
    rs__html_esc(b, base);
    rs__sb_str(b, "</code> and its bootstrap interval (compare.csv, at compare's --ci level); &#9650;/&#9660;: "
                  "significantly better/worse (adjusted p &lt; 0.05, randomization test; t-test when it was not "
                  "run), &middot;: not significant");
  }
  rs__sb_str(b, ". Click a column's header to sort.</p>\n<div class=\"wrap\"><table class=\"sortable\" id=\"");
  rs__html_esc(b, fid);
  rs__sb_str(b, "-lb\"><thead><tr>");
  rs__doc_th(b, "#", 1);
  rs__doc_th(b, f->kind == RS__RESULTS_RAG ? "configuration" : "run", 0);
  for (size_t l = 0; l < n_labels(f); l++) rs__doc_th(b, rs__results_label_name(&f->res, l), 0);
  rs__doc_th(b, lead, 1);
  if (f->has_ci) rs__doc_th(b, "95% CI", 1);
  if (has_delta) {
    char h[300];
    snprintf(h, sizeof h, "\xce\x94 vs %.200s", base);
    rs__doc_th(b, h, 1);
    rs__doc_th(b, "CI of \xce\x94", 1);
    rs__doc_th(b, "p adj.", 1);
    rs__doc_th(b, "sig.", 0);
  }
  for (size_t m = 0; m < f->n_meas; m++)
    if (m != f->lead) rs__doc_th(b, rs__folder_measure(f, m), 1);
  if (has_lat) rs__doc_th(b, "p95 ms", 1);
  if (has_rag_lat) {
    rs__doc_th(b, "p50 ms", 1);
    rs__doc_th(b, "p99 ms", 1);
  }
  if (has_q) rs__doc_th(b, "queries", 1);
  if (f->has_worst) rs__doc_th(b, "no rel. retrieved", 1);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  size_t *ord = rs__malloc(rs__mul(f->n_entries, sizeof *ord));
  if (!ord) {
    d->failed = 1;
    return;
  }
  for (size_t e = 0; e < f->n_entries; e++) ord[e] = e;
  sort_f = f;
  qsort(ord, f->n_entries, sizeof *ord, by_lead);
  for (size_t i = 0; i < f->n_entries; i++) {
    const size_t e = ord[i];
    tr_open(b, f->entry[e].attrs_json);
    rs__doc_td_num(b, (double)(i + 1), 0);
    td_entry(d, b, f->entry[e].name);
    for (size_t l = 0; l < n_labels(f); l++) rs__doc_td(b, label_value(f, e, l));
    {
      const double v = rs__folder_value(f, e, f->lead);
      if (isnan(v)) {
        rs__sb_str(b, "<td class=\"num lead\"></td>");
      } else {
        char exact[32];
        rs__format_double(v, exact);
        rs__sb_printf(b, "<td class=\"num lead\" data-value=\"%s\">%.4f</td>", exact, v);
      }
    }
    if (f->has_ci) td_interval(b, f->ci_lo[e], f->ci_hi[e]);
    if (has_delta) {
      const rs__cmp_row *c = cmp_of(f, entry_run(f, e), lead, base);
      if (c) {
        char exact[32];
        rs__format_double(c->diff, exact);
        if (isnan(c->diff)) rs__sb_str(b, "<td class=\"num\"></td>");
        else rs__sb_printf(b, "<td class=\"num\" data-value=\"%s\">%+.4f</td>", exact, c->diff);
        td_interval(b, c->ci_low, c->ci_high);
        rs__doc_td_num(b, p_adj(c), -1);
        if (significant(c) && c->diff > 0) rs__sb_str(b, "<td class=\"better\" data-value=\"1\">&#9650;</td>");
        else if (significant(c) && c->diff < 0) rs__sb_str(b, "<td class=\"worse\" data-value=\"-1\">&#9660;</td>");
        else rs__sb_str(b, "<td data-value=\"0\">&middot;</td>");
      } else if (strcmp(entry_run(f, e), base) == 0) {
        rs__sb_str(b, "<td class=\"num\"></td><td class=\"num\"></td><td class=\"num\"></td><td>baseline</td>");
      } else {
        rs__sb_str(b, "<td class=\"num\"></td><td class=\"num\"></td><td class=\"num\"></td><td></td>");
      }
    }
    for (size_t m = 0; m < f->n_meas; m++)
      if (m != f->lead) rs__doc_td_num(b, rs__folder_value(f, e, m), 4);
    const rs__results_latency *l = latency_of(f, e);
    if (has_lat) rs__doc_td_num(b, l ? l->p95_ms : NAN, 2);
    if (has_rag_lat) {
      rs__doc_td_num(b, l ? l->p50_ms : NAN, 2);
      rs__doc_td_num(b, l ? l->p99_ms : NAN, 2);
    }
    if (has_q) rs__doc_td_num(b, f->num_q[e] == SIZE_MAX ? NAN : (double)f->num_q[e], 0);
    if (f->has_worst) rs__doc_td_num(b, (double)f->no_hit[e], 0);
    rs__sb_str(b, "</tr>\n");
  }
  free(ord);
  rs__sb_str(b, "</tbody></table></div>\n");
}

/* --- heatmaps -------------------------------------------------------------------------------- */

/* The distinct values of label l over the entries: numeric order when all
 * are numbers (chunk 256 < 1024), else first appearance. */
typedef struct {
  const char **v;
  double *num;
  size_t n;
} axis_vals;

static int all_numeric(const axis_vals *a)
{
  for (size_t i = 0; i < a->n; i++)
    if (isnan(a->num[i])) return 0;
  return 1;
}

static int axis_collect(const rs__folder *f, size_t l, axis_vals *a)
{
  a->v = rs__calloc(f->n_entries + 1, sizeof *a->v);
  a->num = rs__calloc(f->n_entries + 1, sizeof *a->num);
  a->n = 0;
  if (!a->v || !a->num) return -1;
  for (size_t e = 0; e < f->n_entries; e++) {
    const char *v = label_value(f, e, l);
    size_t i = 0;
    while (i < a->n && strcmp(a->v[i], v) != 0) i++;
    if (i < a->n) continue;
    char *end;
    const double x = strtod(v, &end);
    a->v[a->n] = v;
    a->num[a->n++] = *v && !*end ? x : NAN;
  }
  if (all_numeric(a)) /* insertion sort: a handful of values */
    for (size_t i = 1; i < a->n; i++)
      for (size_t j = i; j > 0 && a->num[j - 1] > a->num[j]; j--) {
        const char *tv = a->v[j];
        const double tn = a->num[j];
        a->v[j] = a->v[j - 1], a->num[j] = a->num[j - 1];
        a->v[j - 1] = tv, a->num[j - 1] = tn;
      }
  return 0;
}

static size_t axis_index(const axis_vals *a, const char *v)
{
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->v[i], v) == 0) return i;
  return SIZE_MAX;
}

static void heatmaps(rs__doc *d, const rs__folder *f, const char *fid)
{
  if (f->lead == SIZE_MAX) return;
  const size_t nl = n_labels(f);
  axis_vals *ax = rs__calloc(nl + 1, sizeof *ax);
  if (!ax) {
    d->failed = 1;
    return;
  }
  size_t n_axes = 0, n_maps = 0;
  for (size_t l = 0; l < nl; l++) {
    if (axis_collect(f, l, &ax[l]) != 0) d->failed = 1;
    n_axes += ax[l].n >= 2;
  }
  const char *lead = rs__folder_measure(f, f->lead);
  if (n_axes >= 2 && !d->failed) {
    char id[160];
    snprintf(id, sizeof id, "%s-heatmaps", fid);
    rs__doc_h3(d, id, "Attribute heatmaps");
    rs__sb_str(&d->body, "<p class=\"note\">The lead measure <strong>");
    rs__html_esc(&d->body, lead);
    rs__sb_str(&d->body, "</strong> for each pair of attributes: a cell is the mean over the configurations with "
                         "those two values (over every value of the other attributes).</p>\n<div class=\"charts\">\n");
    for (size_t a = 0; a < nl && n_maps < 6; a++)
      for (size_t c = a + 1; c < nl && n_maps < 6; c++) {
        if (ax[a].n < 2 || ax[c].n < 2) continue;
        const size_t nr = ax[a].n, nc = ax[c].n;
        double *sum = rs__calloc(nr * nc + 1, sizeof *sum), *cnt = rs__calloc(nr * nc + 1, sizeof *cnt);
        if (!sum || !cnt) {
          free(sum);
          free(cnt);
          d->failed = 1;
          break;
        }
        for (size_t e = 0; e < f->n_entries; e++) {
          const double v = rs__folder_value(f, e, f->lead);
          if (isnan(v)) continue;
          const size_t i = axis_index(&ax[a], label_value(f, e, a)), j = axis_index(&ax[c], label_value(f, e, c));
          sum[i * nc + j] += v, cnt[i * nc + j] += 1.0;
        }
        for (size_t k = 0; k < nr * nc; k++) sum[k] = cnt[k] > 0 ? sum[k] / cnt[k] : NAN;
        const char *an = rs__results_label_name(&f->res, a), *cn = rs__results_label_name(&f->res, c);
        char words[400], caption[900];
        snprintf(words, sizeof words, "%s heatmap %s %s", fid, an, cn);
        snprintf(caption, sizeof caption, "%.300s: mean over the other attributes, %.200s (rows) \xc3\x97 %.200s (columns)",
                 lead, an, cn);
        const rs__plot p = {.id = rs__doc_id(d, words), .caption = caption, .x_label = cn, .y_label = an};
        char series[500];
        snprintf(series, sizeof series, "%.200s \xc3\x97 %.200s", an, cn);
        rs__svg_heatmap(&d->body, &p, ax[a].v, nr, ax[c].v, nc, sum, 4, series);
        free(sum);
        free(cnt);
        n_maps++;
      }
    rs__sb_str(&d->body, "</div>\n");
  }
  for (size_t l = 0; l < nl; l++) {
    free(ax[l].v);
    free(ax[l].num);
  }
  free(ax);
}

/* --- curves ------------------------------------------------------------------------------------ */

static const char *family_text(const char *fam)
{
  if (strcmp(fam, "Success") == 0 || strcmp(fam, "AnswerPresence") == 0)
    return "the share of queries with at least one relevant doc in the top k";
  if (strcmp(fam, "R") == 0) return "recall: the share of a query's relevant docs found in the top k";
  if (strcmp(fam, "P") == 0) return "precision: the share of the top k that is relevant";
  if (strcmp(fam, "nDCG") == 0) return "normalised discounted cumulative gain of the top k";
  return "the measure at each cutoff k";
}

/* Rank of a family on the page: the curves the issue names first. */
static int family_rank(const char *fam)
{
  static const char *const order[] = {"Success", "AnswerPresence", "R", "P", "nDCG"};
  for (int i = 0; i < 5; i++)
    if (strcmp(fam, order[i]) == 0) return i;
  return 5;
}

static void curves(rs__doc *d, const rs__folder *f, const char *fid)
{
  const size_t nf = f->fam.n;
  if (!nf) return;
  size_t *fam_order = rs__calloc(nf, sizeof *fam_order), n_charts = 0;
  double *x = rs__malloc(rs__mul(f->n_curve + 1, sizeof *x)), *y = rs__malloc(rs__mul(f->n_curve + 1, sizeof *y));
  rs__series *s = rs__calloc(f->n_entries + 1, sizeof *s);
  if (!fam_order || !x || !y || !s) {
    d->failed = 1;
    goto done;
  }
  for (size_t i = 0; i < nf; i++) fam_order[i] = i;
  for (size_t i = 1; i < nf; i++)
    for (size_t j = i; j > 0 && family_rank(f->fam.str[fam_order[j - 1]]) > family_rank(f->fam.str[fam_order[j]]); j--) {
      const size_t t = fam_order[j];
      fam_order[j] = fam_order[j - 1], fam_order[j - 1] = t;
    }
  for (size_t fi = 0; fi < nf; fi++) {
    const size_t fam = fam_order[fi];
    /* The cutoffs of this family; a curve needs two.  The points are sorted
     * by entry, family and cutoff, so one pass finds each entry's. */
    double kmin = INFINITY, kmax = -INFINITY;
    size_t n = 0, i = 0;
    for (size_t e = 0; e < f->n_entries; e++) {
      const size_t start = n;
      for (; i < f->n_curve && f->curve[i].entry <= e; i++) {
        const rs__curve_pt *c = &f->curve[i];
        if (c->entry != e || c->family != fam) continue;
        x[n] = c->cutoff, y[n] = c->value, n++;
        if (c->cutoff < kmin) kmin = c->cutoff;
        if (c->cutoff > kmax) kmax = c->cutoff;
      }
      s[e] = (rs__series){.name = f->entry[e].name, .attrs_json = f->entry[e].attrs_json,
                          .style = rs__doc_style(d, f->entry[e].name), .x = x + start, .y = y + start, .n = n - start};
    }
    if (!(kmax > kmin)) continue;
    if (!n_charts++) {
      char id[160];
      snprintf(id, sizeof id, "%s-curves", fid);
      rs__doc_h3(d, id, "Measures by cutoff k");
      p_note(&d->body, f->curves_file
                           ? "One chart per measure family, one line per configuration, at every cutoff of curves.csv "
                             "(eval --report) and aggregate.csv."
                           : "One chart per measure family, one line per configuration, at the cutoffs aggregate.csv "
                             "has (eval --report adds Success, R, P and nDCG at 1..10, 15, 20, 30, 50, 100).");
      rs__sb_str(&d->body, "<div class=\"charts\">\n");
    }
    const char *fname = f->fam.str[fam];
    char words[400], caption[600], ylab[300];
    snprintf(words, sizeof words, "%s curve %s", fid, fname);
    snprintf(caption, sizeof caption, "%.200s@k: %s, for k from %.0f to %.0f.", fname, family_text(fname), kmin, kmax);
    snprintf(ylab, sizeof ylab, "%.200s@k", fname);
    const rs__plot p = {.id = rs__doc_id(d, words), .caption = caption, .x_label = "cutoff k", .y_label = ylab,
                        .x_axis = kmax / kmin >= 10.0 ? RS__AXIS_LOG : RS__AXIS_LINEAR,
                        .x_min = kmax / kmin >= 10.0 ? kmin : NAN, .x_max = kmax / kmin >= 10.0 ? kmax : NAN,
                        .y_min = NAN, .y_max = NAN, .lines = 1, .markers = 1, .legend = f->n_entries <= 12};
    rs__svg_lines(&d->body, &p, s, f->n_entries);
  }
  if (n_charts) rs__sb_str(&d->body, "</div>\n");
  if (f->has_pr) {
    static const double recall[11] = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    for (size_t e = 0; e < f->n_entries; e++)
      s[e] = (rs__series){.name = f->entry[e].name, .attrs_json = f->entry[e].attrs_json,
                          .style = rs__doc_style(d, f->entry[e].name), .x = recall, .y = f->pr + e * 11, .n = 11};
    char id[160], words[200];
    snprintf(id, sizeof id, "%s-pr", fid);
    rs__doc_h3(d, id, "Precision-recall");
    snprintf(words, sizeof words, "%s pr", fid);
    const rs__plot p = {.id = rs__doc_id(d, words),
                        .caption = "Interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval's iprec_at_recall: "
                                   "the best precision at that recall or beyond), averaged over the queries; one line "
                                   "per configuration.",
                        .x_label = "recall", .y_label = "interpolated precision", .x_min = 0, .x_max = 1, .y_min = 0,
                        .y_max = 1, .lines = 1, .markers = 1, .legend = f->n_entries <= 12};
    rs__sb_str(&d->body, "<div class=\"charts\">\n");
    rs__svg_lines(&d->body, &p, s, f->n_entries);
    rs__sb_str(&d->body, "</div>\n");
  }
done:
  free(fam_order);
  free(x);
  free(y);
  free(s);
}

/* --- latency --------------------------------------------------------------------------------- */

static void latency(rs__doc *d, const rs__folder *f, const char *fid)
{
  size_t n_lat = 0;
  for (size_t e = 0; e < f->n_entries; e++) n_lat += latency_of(f, e) != NULL;
  if (!n_lat) return;
  rs__sb *b = &d->body;
  const int rag = f->kind == RS__RESULTS_RAG;
  char id[160], words[200];
  snprintf(id, sizeof id, "%s-latency", fid);
  rs__doc_h3(d, id, "Latency");
  p_note(b, rag ? "Per configuration, numpy's linear percentiles of the samples' latency_ms (rag's aggregate.csv "
                  "has p50 and p99)."
                : "Per configuration, over all its queries: exact percentiles with numpy's linear definition "
                  "(latency.csv), in milliseconds.");
  rs__sb_str(b, "<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
  rs__doc_th(b, rag ? "configuration" : "run", 0);
  static const char *const head[] = {"n", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"};
  for (size_t i = rag ? 2 : 0; i < 8; i++)
    if (!rag || i == 2 || i == 5) rs__doc_th(b, head[i], 1);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  for (size_t e = 0; e < f->n_entries; e++) {
    const rs__results_latency *l = latency_of(f, e);
    if (!l) continue;
    tr_open(b, f->entry[e].attrs_json);
    td_entry(d, b, f->entry[e].name);
    if (rag) {
      rs__doc_td_num(b, l->p50_ms, 2);
      rs__doc_td_num(b, l->p99_ms, 2);
    } else {
      rs__doc_td_num(b, (double)l->n, 0);
      const double v[] = {l->mean_ms, l->p50_ms, l->p90_ms, l->p95_ms, l->p99_ms, l->p999_ms, l->max_ms};
      for (size_t i = 0; i < 7; i++) rs__doc_td_num(b, v[i], 2);
    }
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table></div>\n<div class=\"charts\">\n");
  rs__series *s = rs__calloc(f->n_entries + 1, sizeof *s);
  double *px = rs__calloc(f->n_entries + 1, sizeof *px), *py = rs__calloc(f->n_entries + 1, sizeof *py);
  if (!s || !px || !py) {
    d->failed = 1;
    goto done;
  }
  if (!rag) {
    for (size_t e = 0; e < f->n_entries; e++)
      s[e] = (rs__series){.name = f->entry[e].name, .attrs_json = f->entry[e].attrs_json,
                          .style = rs__doc_style(d, f->entry[e].name), .x = f->cdf[e].ms, .y = f->cdf[e].q,
                          .n = f->cdf[e].n};
    snprintf(words, sizeof words, "%s latency cdf", fid);
    const rs__plot p = {.id = rs__doc_id(d, words),
                        .caption = f->cdf_file ? "Latency CDF per configuration: the share of queries answered within "
                                                 "x ms, from the quantiles 0, 0.01, ..., 0.99, 0.999, 1 of "
                                                 "latency_cdf.csv (eval --report)."
                                               : "Latency CDF per configuration, from latency.csv's percentiles only "
                                                 "(p50, p90, p95, p99, p99.9, max); eval --report writes the full "
                                                 "curve.",
                        .x_label = "latency (ms)", .y_label = "share of queries", .x_min = NAN, .x_max = NAN,
                        .y_min = 0, .y_max = 1, .lines = 1, .markers = !f->cdf_file,
                        .legend = f->n_entries <= 12};
    rs__svg_lines(b, &p, s, f->n_entries);
  }
  if (f->lead != SIZE_MAX) {
    const char *lead = rs__folder_measure(f, f->lead);
    for (size_t e = 0; e < f->n_entries; e++) {
      const rs__results_latency *l = latency_of(f, e);
      px[e] = l ? (rag ? l->p99_ms : l->p95_ms) : NAN;
      py[e] = rs__folder_value(f, e, f->lead);
      s[e] = (rs__series){.name = f->entry[e].name, .attrs_json = f->entry[e].attrs_json,
                          .style = rs__doc_style(d, f->entry[e].name), .x = px + e, .y = py + e, .n = 1};
    }
    char caption[500], xlab[64];
    snprintf(caption, sizeof caption, "Quality against tail latency: %.300s (up is better) against %s latency (left "
             "is faster), one point per configuration; the upper-left ones are the trade-offs worth a look.",
             lead, rag ? "p99" : "p95");
    snprintf(xlab, sizeof xlab, "%s latency (ms)", rag ? "p99" : "p95");
    snprintf(words, sizeof words, "%s quality latency", fid);
    const rs__plot p = {.id = rs__doc_id(d, words), .caption = caption, .x_label = xlab, .y_label = lead,
                        .x_min = NAN, .x_max = NAN, .y_min = NAN, .y_max = NAN, .y_from_data = 1, .lines = 0,
                        .markers = 1, .legend = f->n_entries <= 12};
    rs__svg_lines(b, &p, s, f->n_entries);
  }
  rs__sb_str(b, "</div>\n");
done:
  free(s);
  free(px);
  free(py);
}

/* --- compare ------------------------------------------------------------------------------------ */

static void comparisons(rs__doc *d, const rs__folder *f, const char *fid)
{
  if (!f->n_cmp) return;
  rs__sb *b = &d->body;
  const char *base = chosen_baseline(d, f);
  char id[160], words[400], caption[900];
  snprintf(id, sizeof id, "%s-compare", fid);
  rs__doc_h3(d, id, "Differences with the baseline");
  rs__sb_str(b, "<p class=\"note\">compare.csv: for each measure, every configuration's mean minus the baseline "
                "<code>");
  rs__html_esc(b, base);
  rs__sb_str(b, "</code>'s, on the same queries, with the bootstrap interval of the difference; a filled marker is "
                "significant after the correction for multiple comparisons (adjusted p &lt; 0.05: the randomization "
                "test's, or the t-test's when it was not run), a hollow one is not.</p>\n<div class=\"charts\">\n");
  rs__strdict meas = {0};
  rs__forest_row *rows = rs__calloc(f->n_cmp + 1, sizeof *rows);
  uint32_t mid;
  for (size_t i = 0; i < f->n_cmp && rows; i++)
    if (strcmp(f->cmp[i].baseline, base) == 0 && rs__strdict_add(&meas, f->cmp[i].measure, &mid, NULL)) d->failed = 1;
  for (size_t m = 0; m < meas.n && m < 12 && rows; m++) {
    size_t n = 0;
    for (size_t i = 0; i < f->n_cmp; i++) {
      const rs__cmp_row *c = &f->cmp[i];
      if (strcmp(c->baseline, base) != 0 || strcmp(c->measure, meas.str[m]) != 0) continue;
      rows[n++] = (rs__forest_row){.name = c->run,
                                   .attrs_json = c->entry != SIZE_MAX ? f->entry[c->entry].attrs_json : NULL,
                                   .style = rs__doc_style(d, c->run), .est = c->diff, .lo = c->ci_low,
                                   .hi = c->ci_high, .significant = significant(c)};
    }
    /* Largest difference on top (ties: file order), as forest plots are read. */
    for (size_t i = 1; i < n; i++)
      for (size_t j = i; j > 0 && (rows[j - 1].est < rows[j].est || (isnan(rows[j - 1].est) && !isnan(rows[j].est)));
           j--) {
        const rs__forest_row t = rows[j];
        rows[j] = rows[j - 1], rows[j - 1] = t;
      }
    snprintf(words, sizeof words, "%s forest %s", fid, meas.str[m]);
    snprintf(caption, sizeof caption, "%.300s: difference with %.300s (mean \xe2\x88\x92 baseline mean) and its "
             "bootstrap interval; filled: significant.", meas.str[m], base);
    char xlab[400];
    snprintf(xlab, sizeof xlab, "\xce\x94 %.300s", meas.str[m]);
    const rs__plot p = {.id = rs__doc_id(d, words), .caption = caption, .x_label = xlab};
    rs__svg_forest(b, &p, rows, n);
  }
  free(rows);
  rs__strdict_free(&meas);
  rs__sb_str(b, "</div>\n<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
  static const char *const head[] = {"run", "baseline", "measure", "n", "mean", "baseline mean", "\xce\x94",
                                     "CI low", "CI high", "p t-test", "p perm.", "p t-test adj.", "p perm. adj.",
                                     "sig."};
  for (size_t i = 0; i < sizeof head / sizeof *head; i++) rs__doc_th(b, head[i], i >= 3 && i < 13);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < f->n_cmp; i++) {
    const rs__cmp_row *c = &f->cmp[i];
    tr_open(b, c->entry != SIZE_MAX ? f->entry[c->entry].attrs_json : NULL);
    td_entry(d, b, c->run);
    rs__doc_td(b, c->baseline);
    rs__doc_td(b, c->measure);
    rs__doc_td_num(b, c->n, 0);
    const double v[] = {c->mean, c->base_mean, c->diff, c->ci_low, c->ci_high};
    for (size_t k = 0; k < 5; k++) rs__doc_td_num(b, v[k], 4);
    const double p[] = {c->p_ttest, c->p_perm, c->p_ttest_adj, c->p_perm_adj};
    for (size_t k = 0; k < 4; k++) rs__doc_td_num(b, p[k], -1);
    if (significant(c) && c->diff > 0) rs__sb_str(b, "<td class=\"better\" data-value=\"1\">&#9650; better</td>");
    else if (significant(c) && c->diff < 0) rs__sb_str(b, "<td class=\"worse\" data-value=\"-1\">&#9660; worse</td>");
    else rs__sb_str(b, "<td data-value=\"0\">&middot;</td>");
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table></div>\n");
}

static void gates(rs__doc *d, const rs__folder *f, const char *fid)
{
  if (!f->has_gates) return;
  rs__sb *b = &d->body;
  char id[160];
  snprintf(id, sizeof id, "%s-gates", fid);
  rs__doc_h3(d, id, "Gates");
  size_t failed = 0;
  for (size_t i = 0; i < f->n_gate; i++) failed += !f->gate[i].pass;
  rs__sb_printf(b, "<p class=\"note\">gates.csv: %zu of %zu checks failed.</p>\n", failed, f->n_gate);
  rs__sb_str(b, "<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
  rs__doc_th(b, "", 0);
  rs__doc_th(b, "run", 0);
  rs__doc_th(b, "check", 0);
  rs__doc_th(b, "value", 1);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < f->n_gate; i++) {
    const rs__gate_row *g = &f->gate[i];
    const size_t e = rs__folder_entry(f, g->run);
    tr_open(b, e != SIZE_MAX ? f->entry[e].attrs_json : NULL);
    rs__sb_str(b, g->pass ? "<td class=\"pass\" data-value=\"1\">&#10003;</td>"
                          : "<td class=\"fail\" data-value=\"0\">&#10007;</td>");
    td_entry(d, b, g->run);
    rs__doc_td(b, g->check);
    rs__doc_td_num(b, g->value, -1);
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table></div>\n");
}

/* --- worst queries -------------------------------------------------------------------------------- */

enum { MAX_WORST_ROWS = 2000 };

static void worst(rs__doc *d, const rs__folder *f, const char *fid)
{
  if (!f->has_worst || !f->n_worst) return;
  rs__sb *b = &d->body;
  /* The lead measure's lists, or the first measure worst.csv has. */
  const char *m = f->worst[0].measure;
  if (f->lead != SIZE_MAX)
    for (size_t i = 0; i < f->n_worst; i++)
      if (strcmp(f->worst[i].measure, rs__folder_measure(f, f->lead)) == 0) m = f->worst[i].measure;
  char id[160];
  snprintf(id, sizeof id, "%s-worst", fid);
  rs__doc_h3(d, id, "Worst queries");
  rs__sb_str(b, "<p class=\"note\">worst.csv on <strong>");
  rs__html_esc(b, m);
  rs__sb_str(b, "</strong>: first the queries that are among the worst of the most configurations, then each "
                "configuration's list.");
  if (!f->text_ids.n)
    rs__sb_str(b, " No query texts: the corpus has no /queries/text (query_texts.csv is written when it has).");
  rs__sb_str(b, "</p>\n");
  /* Across configurations: per query, how many lists name it. */
  rs__strdict q = {0};
  size_t *cnt = rs__calloc(f->n_worst + 1, sizeof *cnt);
  double *sum = rs__calloc(f->n_worst + 1, sizeof *sum), *rank = rs__calloc(f->n_worst + 1, sizeof *rank);
  size_t *num_rel = rs__calloc(f->n_worst + 1, sizeof *num_rel), *ord = NULL;
  if (!cnt || !sum || !rank || !num_rel) {
    d->failed = 1;
    goto done;
  }
  for (size_t i = 0; i < f->n_worst; i++) {
    const rs__worst_row *w = &f->worst[i];
    if (strcmp(w->measure, m) != 0) continue;
    uint32_t id_q;
    if (rs__strdict_add(&q, w->query, &id_q, NULL)) {
      d->failed = 1;
      goto done;
    }
    if (!cnt[id_q]) rank[id_q] = NAN;
    cnt[id_q]++;
    sum[id_q] += w->value;
    if (!isnan(w->first_rank) && !(rank[id_q] <= w->first_rank)) rank[id_q] = w->first_rank;
    num_rel[id_q] = isnan(w->num_rel) ? 0 : (size_t)w->num_rel;
  }
  if (!(ord = rs__calloc(q.n + 1, sizeof *ord))) {
    d->failed = 1;
    goto done;
  }
  for (size_t i = 0; i < q.n; i++) ord[i] = i;
  for (size_t i = 1; i < q.n; i++) /* most lists first, then file order (a stable insertion sort) */
    for (size_t j = i; j > 0 && cnt[ord[j - 1]] < cnt[ord[j]]; j--) {
      const size_t t = ord[j];
      ord[j] = ord[j - 1], ord[j - 1] = t;
    }
  rs__sb_str(b, "<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
  rs__doc_th(b, "query", 0);
  rs__doc_th(b, "text", 0);
  rs__doc_th(b, "configurations", 1);
  rs__doc_th(b, "mean value", 1);
  rs__doc_th(b, "best first relevant rank", 1);
  rs__doc_th(b, "relevant docs", 1);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < q.n && i < MAX_WORST_ROWS; i++) {
    const size_t k = ord[i];
    const char *text = rs__folder_text(f, q.str[k]);
    rs__sb_str(b, "<tr>");
    rs__doc_td(b, q.str[k]);
    rs__sb_str(b, "<td class=\"qtext\">");
    rs__html_esc(b, text ? text : "");
    rs__sb_str(b, "</td>");
    rs__doc_td_num(b, (double)cnt[k], 0);
    rs__doc_td_num(b, sum[k] / (double)cnt[k], 4);
    rs__doc_td_num(b, rank[k], 0);
    rs__doc_td_num(b, (double)num_rel[k], 0);
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table></div>\n<details><summary>Each configuration's worst queries</summary>\n"
                "<div class=\"wrap\"><table class=\"sortable\"><thead><tr>");
  static const char *const head[] = {"run", "position", "query", "text", "value", "first relevant rank",
                                     "relevant docs"};
  for (size_t i = 0; i < 7; i++) rs__doc_th(b, head[i], i == 1 || i >= 4);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  size_t shown = 0;
  for (size_t i = 0; i < f->n_worst && shown < MAX_WORST_ROWS; i++) {
    const rs__worst_row *w = &f->worst[i];
    if (strcmp(w->measure, m) != 0) continue;
    shown++;
    const char *text = rs__folder_text(f, w->query);
    tr_open(b, w->entry != SIZE_MAX ? f->entry[w->entry].attrs_json : NULL);
    td_entry(d, b, w->run);
    rs__doc_td_num(b, (double)w->position, 0);
    rs__doc_td(b, w->query);
    rs__sb_str(b, "<td class=\"qtext\">");
    rs__html_esc(b, text ? text : "");
    rs__sb_str(b, "</td>");
    rs__doc_td_num(b, w->value, 4);
    rs__doc_td_num(b, w->first_rank, 0);
    rs__doc_td_num(b, w->num_rel, 0);
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table></div></details>\n");
done:
  free(cnt);
  free(sum);
  free(rank);
  free(num_rel);
  free(ord);
  rs__strdict_free(&q);
}

/* --- rag ---------------------------------------------------------------------------------------- */

static void rag_bars(rs__doc *d, const rs__folder *f, const char *fid)
{
  if (!f->n_meas || !f->n_entries) return;
  /* Metrics in [0, 1] share a chart; the others (a criterion's 1..5) get one each. */
  const char **groups = rs__calloc(f->n_meas + 1, sizeof *groups);
  size_t *gm = rs__calloc(f->n_meas + 1, sizeof *gm);
  unsigned char *unit = rs__calloc(f->n_meas + 1, 1);
  double *y = rs__malloc(rs__mul(rs__mul(f->n_entries, f->n_meas) + 1, sizeof *y));
  rs__series *s = rs__calloc(f->n_entries + 1, sizeof *s);
  if (!groups || !gm || !unit || !y || !s) {
    d->failed = 1;
    goto done;
  }
  for (size_t m = 0; m < f->n_meas; m++) {
    unit[m] = 1;
    for (size_t e = 0; e < f->n_entries; e++) {
      const double v = rs__folder_value(f, e, m);
      if (!isnan(v) && (v < 0.0 || v > 1.0)) unit[m] = 0;
    }
  }
  char id[160], words[400], caption[600];
  snprintf(id, sizeof id, "%s-metrics", fid);
  rs__doc_h3(d, id, "Generation metrics");
  p_note(&d->body, "Each configuration's mean per metric (rag's aggregate.csv): one bar per configuration, grouped "
                   "by metric; metrics on another scale than 0..1 get a chart of their own.");
  rs__sb_str(&d->body, "<div class=\"charts\">\n");
  /* Chart 0: the metrics in [0, 1]; then one chart per other metric. */
  for (size_t chart = 0; chart <= f->n_meas; chart++) {
    size_t ng = 0;
    if (chart == 0) {
      for (size_t m = 0; m < f->n_meas; m++)
        if (unit[m]) gm[ng] = m, groups[ng++] = rs__folder_measure(f, m);
    } else if (!unit[chart - 1]) {
      gm[0] = chart - 1, groups[0] = rs__folder_measure(f, chart - 1), ng = 1;
    }
    if (!ng) continue;
    for (size_t e = 0; e < f->n_entries; e++) {
      for (size_t g = 0; g < ng; g++) y[e * ng + g] = rs__folder_value(f, e, gm[g]);
      s[e] = (rs__series){.name = f->entry[e].name, .attrs_json = f->entry[e].attrs_json,
                          .style = rs__doc_style(d, f->entry[e].name), .y = y + e * ng, .n = ng};
    }
    snprintf(words, sizeof words, "%s metrics %s", fid, chart == 0 ? "unit" : groups[0]);
    if (chart == 0) snprintf(caption, sizeof caption, "Mean of each metric in 0..1, per configuration.");
    else snprintf(caption, sizeof caption, "Mean of %.300s per configuration.", groups[0]);
    const rs__plot p = {.id = rs__doc_id(d, words), .caption = caption, .y_label = chart == 0 ? "mean" : groups[0],
                        .y_min = chart == 0 ? 0.0 : NAN, .y_max = chart == 0 ? 1.0 : NAN,
                        .legend = f->n_entries <= 12};
    rs__svg_bars(&d->body, &p, groups, ng, s, f->n_entries);
  }
  rs__sb_str(&d->body, "</div>\n");
done:
  free(groups);
  free(gm);
  free(unit);
  free(y);
  free(s);
}

static void agreement_table(rs__doc *d, const rs__folder *f, int skip_confusion)
{
  rs__sb *b = &d->body;
  rs__sb_str(b, "<table><thead><tr>");
  rs__doc_th(b, "statistic", 0);
  rs__doc_th(b, "value", 1);
  rs__sb_str(b, "</tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < f->n_agree; i++) {
    if (skip_confusion && strncmp(f->agree[i].name, "confusion_", 10) == 0) continue;
    rs__sb_str(b, "<tr>");
    rs__doc_td(b, f->agree[i].name);
    rs__doc_td_num(b, f->agree[i].value, -1);
    rs__sb_str(b, "</tr>\n");
  }
  rs__sb_str(b, "</tbody></table>\n");
}

/* --- judge ------------------------------------------------------------------------------------------ */

static void judge(rs__doc *d, const rs__folder *f, const char *fid)
{
  rs__sb *b = &d->body;
  char id[160], words[200];
  if (f->has_agree) {
    snprintf(id, sizeof id, "%s-agreement", fid);
    rs__doc_h3(d, id, "Agreement with the human labels");
    p_note(b, "agreement.csv: over the pairs the corpus's /qrels judge, the share whose binary relevance agrees, "
              "Cohen's kappa (binary), the linearly weighted kappa (grades), and Kendall's tau between the runs' "
              "orders under the human and the LLM qrels.");
    rs__sb_str(b, "<div class=\"charts\" style=\"align-items:flex-start\">\n<div>");
    agreement_table(d, f, 1);
    rs__sb_str(b, "</div>\n");
    /* The confusion matrix: confusion_h{H}_l{L}. */
    long hmax = -1, lmax = -1;
    for (size_t i = 0; i < f->n_agree; i++) {
      long h, l;
      if (sscanf(f->agree[i].name, "confusion_h%ld_l%ld", &h, &l) == 2 && h >= 0 && l >= 0 && h < 64 && l < 64) {
        if (h > hmax) hmax = h;
        if (l > lmax) lmax = l;
      }
    }
    if (hmax >= 0 && lmax >= 0) {
      const size_t nr = (size_t)hmax + 1, nc = (size_t)lmax + 1;
      double *v = rs__malloc((nr * nc + 1) * sizeof *v);
      char **rl = rs__calloc(nr + 1, sizeof *rl), **cl = rs__calloc(nc + 1, sizeof *cl);
      int ok = v && rl && cl;
      for (size_t i = 0; ok && i < nr * nc; i++) v[i] = NAN;
      for (size_t i = 0; ok && i < nr; i++) ok = asprintf(&rl[i], "human %zu", i) >= 0 || (rl[i] = NULL, 0);
      for (size_t i = 0; ok && i < nc; i++) ok = asprintf(&cl[i], "LLM %zu", i) >= 0 || (cl[i] = NULL, 0);
      for (size_t i = 0; ok && i < f->n_agree; i++) {
        long h, l;
        if (sscanf(f->agree[i].name, "confusion_h%ld_l%ld", &h, &l) == 2 && h >= 0 && l >= 0 && h <= hmax &&
            l <= lmax)
          v[(size_t)h * nc + (size_t)l] = f->agree[i].value;
      }
      if (ok) {
        snprintf(words, sizeof words, "%s confusion", fid);
        const rs__plot p = {.id = rs__doc_id(d, words),
                            .caption = "Confusion matrix: pairs by human grade (rows) and LLM label (columns).",
                            .x_label = "LLM label", .y_label = "human grade"};
        rs__svg_heatmap(b, &p, (const char *const *)rl, nr, (const char *const *)cl, nc, v, 0, "confusion");
      } else {
        d->failed = 1;
      }
      for (size_t i = 0; rl && i < nr; i++) free(rl[i]);
      for (size_t i = 0; cl && i < nc; i++) free(cl[i]);
      free(rl);
      free(cl);
      free(v);
    }
    rs__sb_str(b, "</div>\n");
  }
  if (f->has_qrels || f->has_judgments) {
    snprintf(id, sizeof id, "%s-labels", fid);
    rs__doc_h3(d, id, "LLM labels");
    rs__sb_str(b, "<p class=\"note\">");
    if (f->has_qrels) rs__sb_printf(b, "qrels.txt: %zu labelled pairs. ", f->n_labels);
    if (f->has_judgments) rs__sb_printf(b, "judgments.jsonl: %zu pairs asked (failures have no label). ", f->n_judgments);
    rs__sb_str(b, "</p>\n");
    size_t top = 0;
    for (size_t l = 0; l < 16; l++)
      if (f->label_count[l]) top = l + 1;
    if (f->has_qrels && top) {
      const char *groups[16];
      char names[16][24];
      double y[16];
      for (size_t l = 0; l < top; l++) {
        snprintf(names[l], sizeof names[l], l == 15 ? "other" : "label %zu", l);
        groups[l] = names[l];
        y[l] = (double)f->label_count[l];
      }
      const rs__series s = {.name = "pairs", .style = 4, .y = y, .n = top};
      snprintf(words, sizeof words, "%s labels", fid);
      const rs__plot p = {.id = rs__doc_id(d, words), .caption = "Pairs per LLM label (qrels.txt).",
                          .y_label = "pairs", .y_min = NAN, .y_max = NAN};
      rs__sb_str(b, "<div class=\"charts\">\n");
      rs__svg_bars(b, &p, groups, top, &s, 1);
      rs__sb_str(b, "</div>\n");
    }
  }
}

/* --- a folder ----------------------------------------------------------------------------------- */

void rs__doc_folder(rs__doc *d, const rs__folder *f, size_t i)
{
  char fid[32];
  snprintf(fid, sizeof fid, "f%zu", i);
  rs__sb_printf(&d->toc, "<li><a href=\"#%s\">", fid);
  rs__sb_printf(&d->body, "<section id=\"%s\">\n<h2>%s: <code>", fid, rs__results_kind_name(f->kind));
  rs__html_esc(&d->body, f->dir);
  rs__sb_str(&d->body, "</code></h2>\n");
  rs__sb_printf(&d->toc, "%s ", rs__results_kind_name(f->kind));
  rs__html_esc(&d->toc, f->dir);
  rs__sb_str(&d->toc, "</a><ul>");
  /* Styles: a folder of the configurations already shown keeps their
   * looks; a folder of other configurations starts at the first style. */
  int known = 0;
  for (size_t e = 0; e < f->n_entries && !known; e++) known = rs__strdict_find(&d->styles, f->entry[e].name) >= 0;
  if (!known) d->next_style = 0;
  /* The configurations' attributes, for the filter. */
  for (size_t e = 0; e < f->n_entries; e++) {
    rs__doc_style(d, f->entry[e].name);
    for (size_t l = 0; l < n_labels(f); l++) rs__doc_attr(d, rs__results_label_name(&f->res, l), label_value(f, e, l));
  }
  if (f->kind == RS__RESULTS_JUDGE) {
    judge(d, f, fid);
  } else {
    leaderboard(d, f, fid);
    if (f->kind == RS__RESULTS_RAG) rag_bars(d, f, fid);
    heatmaps(d, f, fid);
    if (f->kind != RS__RESULTS_RAG) curves(d, f, fid);
    latency(d, f, fid);
    comparisons(d, f, fid);
    gates(d, f, fid);
    worst(d, f, fid);
    if (f->kind == RS__RESULTS_RAG && f->has_agree) {
      char id[160];
      snprintf(id, sizeof id, "%s-agreement", fid);
      rs__doc_h3(d, id, "Agreement between judges");
      p_note(&d->body, "rag's agreement.csv.");
      agreement_table(d, f, 0);
    }
  }
  rs__sb_str(&d->toc, "</ul></li>");
  rs__sb_str(&d->body, "</section>\n");
}
