/* html.c: the HTML report: the page (head, styles, script, the attribute
 * filter, the table of contents), table cells, escaping, the history's
 * time series, and the atomic write (see html.h).  The sections of each
 * folder are in sections.c, the charts in svg.c. */
#define _GNU_SOURCE
#include "report/html.h"
#include "util/tmpfiles.h"
#include "report/history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/numparse.h"
#include "internal.h"
#include "report/doc.h"

void rs__html_esc(rs__sb *b, const char *s)
{
  const char *run = s;
  for (; *s; s++) {
    const char *ent = NULL;
    switch (*s) {
    case '&': ent = "&amp;"; break;
    case '<': ent = "&lt;"; break;
    case '>': ent = "&gt;"; break;
    case '"': ent = "&quot;"; break;
    case '\'': ent = "&#39;"; break;
    default: continue;
    }
    rs__sb_add(b, run, (size_t)(s - run));
    rs__sb_str(b, ent);
    run = s + 1;
  }
  rs__sb_add(b, run, (size_t)(s - run));
}

/* --- the doc ------------------------------------------------------------------------ */

size_t rs__doc_style(rs__doc *d, const char *name)
{
  const long known = rs__strdict_find(&d->styles, name);
  if (known >= 0) return d->style_of[known];
  uint32_t id = 0;
  if (rs__strdict_add(&d->styles, name, &id, NULL)) {
    d->failed = 1;
    return 0;
  }
  if (id >= d->cap_styles) {
    const size_t cap = d->cap_styles ? 2 * d->cap_styles : 64;
    size_t *p = rs__realloc(d->style_of, rs__mul(cap, sizeof *p));
    if (!p) {
      d->failed = 1;
      return 0;
    }
    d->style_of = p, d->cap_styles = cap;
  }
  return d->style_of[id] = d->next_style++;
}

void rs__doc_attr(rs__doc *d, const char *name, const char *value)
{
  uint32_t id;
  if (rs__strdict_add(&d->attr_names, name, &id, NULL)) {
    d->failed = 1;
    return;
  }
  if (id >= d->cap_attrs) {
    const size_t cap = d->cap_attrs ? 2 * d->cap_attrs : 8;
    rs__strdict *v = rs__realloc(d->attr_vals, rs__mul(cap, sizeof *v));
    if (!v) {
      d->failed = 1;
      return;
    }
    memset(v + d->cap_attrs, 0, (cap - d->cap_attrs) * sizeof *v);
    d->attr_vals = v, d->cap_attrs = cap;
  }
  uint32_t vid;
  if (rs__strdict_add(&d->attr_vals[id], value, &vid, NULL)) d->failed = 1;
}

const char *rs__doc_id(rs__doc *d, const char *words)
{
  char base[128];
  size_t n = 0;
  int dash = 0;
  for (const char *p = words; *p && n + 2 < sizeof base; p++) {
    const char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) base[n++] = c, dash = 0;
    else if (c >= 'A' && c <= 'Z') base[n++] = (char)(c - 'A' + 'a'), dash = 0;
    else if (!dash && n) base[n++] = '-', dash = 1;
  }
  while (n && base[n - 1] == '-') n--;
  base[n] = '\0';
  snprintf(d->id_buf, sizeof d->id_buf, "chart-%s", base);
  for (int k = 2; rs__strdict_find(&d->ids, d->id_buf) >= 0; k++)
    snprintf(d->id_buf, sizeof d->id_buf, "chart-%s-%d", base, k);
  uint32_t id;
  if (rs__strdict_add(&d->ids, d->id_buf, &id, NULL)) d->failed = 1;
  return d->id_buf;
}

void rs__doc_td_num(rs__sb *b, double v, int decimals)
{
  if (isnan(v)) {
    rs__sb_str(b, "<td class=\"num\"></td>");
    return;
  }
  char exact[32];
  rs__format_double(v, exact);
  rs__sb_printf(b, "<td class=\"num\" data-value=\"%s\">", exact);
  if (decimals < 0) rs__sb_printf(b, "%.3g", v);
  else rs__sb_printf(b, "%.*f", decimals, v);
  rs__sb_str(b, "</td>");
}

void rs__doc_td(rs__sb *b, const char *s)
{
  rs__sb_str(b, "<td>");
  rs__html_esc(b, s);
  rs__sb_str(b, "</td>");
}

void rs__doc_th(rs__sb *b, const char *s, int numeric)
{
  rs__sb_str(b, numeric ? "<th class=\"num\">" : "<th>");
  rs__html_esc(b, s);
  rs__sb_str(b, "</th>");
}

void rs__doc_swatch(rs__sb *b, size_t style)
{
  const rs__style st = rs__series_style(style);
  static const char *const border[4] = {"solid", "dashed", "dotted", "double"};
  rs__sb_printf(b, "<span class=\"sw\" style=\"border-top-color:%s;border-top-style:%s\"></span>"
                   "<span style=\"color:%s\">%s</span> ",
                st.colour, border[st.marker & 3], st.colour, st.glyph);
}

void rs__doc_h3(rs__doc *d, const char *id, const char *title)
{
  rs__sb_str(&d->body, "<h3 id=\"");
  rs__html_esc(&d->body, id);
  rs__sb_str(&d->body, "\">");
  rs__html_esc(&d->body, title);
  rs__sb_str(&d->body, "</h3>\n");
  rs__sb_str(&d->toc, "<li><a href=\"#");
  rs__html_esc(&d->toc, id);
  rs__sb_str(&d->toc, "\">");
  rs__html_esc(&d->toc, title);
  rs__sb_str(&d->toc, "</a></li>");
}

/* --- history ---------------------------------------------------------------------------- */

static const rs__report_point *sort_pts;
static int by_time(const void *a, const void *b)
{
  const size_t x = *(const size_t *)a, y = *(const size_t *)b;
  const double tx = sort_pts[x].time, ty = sort_pts[y].time;
  if (tx != ty) return tx < ty ? -1 : 1;
  return (x > y) - (x < y);
}

void rs__report_timeseries(rs__sb *b, const rs__report_point *pts, size_t n)
{
  rs__strdict meas = {0}, runs = {0};
  size_t *ord = rs__malloc(rs__mul(n + 1, sizeof *ord));
  double *x = rs__malloc(rs__mul(n + 1, sizeof *x)), *y = rs__malloc(rs__mul(n + 1, sizeof *y));
  rs__series *s = NULL;
  uint32_t id;
  int ok = ord && x && y;
  for (size_t i = 0; i < n && ok; i++) ok = rs__strdict_add(&meas, pts[i].measure, &id, NULL) == RS_OK;
  for (size_t i = 0; i < n && ok; i++) ok = rs__strdict_add(&runs, pts[i].run, &id, NULL) == RS_OK;
  if (ok && !(s = rs__calloc(runs.n + 1, sizeof *s))) ok = 0;
  if (!ok) {
    rs__sb_str(b, "<p class=\"note\">The history could not be drawn: out of memory.</p>\n");
    goto done;
  }
  for (size_t i = 0; i < n; i++) ord[i] = i;
  sort_pts = pts;
  qsort(ord, n, sizeof *ord, by_time);
  rs__sb_str(b, "<div class=\"charts\">\n");
  for (size_t m = 0; m < meas.n; m++) {
    /* Points of measure m, grouped by run, each group in time order. */
    size_t k = 0;
    for (size_t r = 0; r < runs.n; r++) {
      const size_t start = k;
      for (size_t i = 0; i < n; i++) {
        const rs__report_point *p = &pts[ord[i]];
        if (strcmp(p->measure, meas.str[m]) != 0 || strcmp(p->run, runs.str[r]) != 0) continue;
        x[k] = p->time, y[k] = p->value, k++;
      }
      s[r] = (rs__series){.name = runs.str[r], .style = r, .x = x + start, .y = y + start, .n = k - start};
    }
    char id_text[64], caption[600];
    snprintf(id_text, sizeof id_text, "chart-history-%zu", m + 1);
    snprintf(caption, sizeof caption, "History of %.500s: one line per configuration, by the time of each evaluation",
             meas.str[m]);
    const rs__plot p = {.id = id_text, .caption = caption, .x_label = "evaluated (UTC)", .y_label = meas.str[m],
                        .x_axis = RS__AXIS_TIME, .x_min = NAN, .x_max = NAN, .y_min = NAN, .y_max = NAN,
                        .y_from_data = 1, .lines = 1, .markers = 1, .legend = runs.n <= 12};
    rs__svg_lines(b, &p, s, runs.n);
  }
  rs__sb_str(b, "</div>\n");
done:
  free(s);
  free(ord);
  free(x);
  free(y);
  rs__strdict_free(&meas);
  rs__strdict_free(&runs);
}

/* --- the page ------------------------------------------------------------------------------ */

static const char css[] =
    ":root{color-scheme:light}\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0 auto;"
    "max-width:1340px;padding:0 16px 32px;color:#222;background:#fff}\n"
    "h1{font-size:22px;margin:16px 0 4px}\n"
    "h2{font-size:18px;margin:32px 0 8px;border-bottom:2px solid #ddd;padding-bottom:4px}\n"
    "h3{font-size:15px;margin:22px 0 6px}\n"
    ".meta,.note{color:#555;font-size:12px}\n"
    "nav.toc{font-size:13px}nav.toc ul{margin:4px 0;padding-left:20px}nav.toc li{margin:1px 0}\n"
    "nav.toc ul ul{display:flex;flex-wrap:wrap;gap:2px 14px;padding-left:12px;list-style:none}\n"
    "a{color:#0072B2}\n"
    ".wrap{overflow-x:auto}\n"
    "table{border-collapse:collapse;font-size:12px;margin:6px 0 12px}\n"
    "th,td{padding:3px 8px;border-bottom:1px solid #e6e6e6;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.sortable th{cursor:pointer;user-select:none}\n"
    "table.sortable th:hover{background:#e8e8e8}\n"
    "table.sortable th[aria-sort=ascending]::after{content:' \\25B2';font-size:9px}\n"
    "table.sortable th[aria-sort=descending]::after{content:' \\25BC';font-size:9px}\n"
    "td.lead{font-weight:600}\n"
    ".pass{color:#007a5a;font-weight:600}.fail{color:#b84a00;font-weight:600}\n"
    ".better{color:#007a5a}.worse{color:#b84a00}\n"
    ".qtext{max-width:560px}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}\n"
    "figure.chart{margin:0;flex:0 1 auto;max-width:100%}\n"
    "figure.chart svg{max-width:100%;height:auto;display:block;font-family:inherit}\n"
    "figure.chart figcaption{max-width:640px}\n"
    "td.cfg{white-space:nowrap}\n"
    "figcaption{font-size:12px;color:#444;margin-top:2px}\n"
    ".legend{display:block;margin-top:2px}.key{white-space:nowrap;margin-right:8px}\n"
    ".sw{display:inline-block;width:20px;height:0;border-top-width:3px;vertical-align:middle;margin-right:3px}\n"
    ".controls{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #ddd;z-index:2;"
    "font-size:13px}\n"
    ".controls label{margin-right:14px;white-space:nowrap}\n"
    ".controls select{font:inherit}\n"
    "@media print{.controls,nav.toc{display:none}body{max-width:none;font-size:10pt;padding:0}"
    "figure.chart{break-inside:avoid;flex-basis:47%}h2,h3{break-after:avoid}thead{display:table-header-group}"
    "tr{break-inside:avoid}.wrap{overflow:visible}a{color:inherit;text-decoration:none}}\n";

/* The script: sortable tables and the attribute filter.  The charts do
 * not need it; without it the page is complete, only static. */
static const char js[] =
    "(function(){\n"
    "'use strict';\n"
    "function key(td){var v=td.getAttribute('data-value');return v===null?td.textContent.trim():v;}\n"
    "function sortBy(th){\n"
    " var table=th.closest('table');if(!table||!table.tBodies.length)return;\n"
    " var tb=table.tBodies[0],col=th.cellIndex;\n"
    " var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;\n"
    " var rows=Array.prototype.slice.call(tb.rows).map(function(r,i){\n"
    "  var c=r.cells[col];return {r:r,i:i,k:c?key(c):''};});\n"
    " var numeric=rows.every(function(o){return o.k===''||isFinite(Number(o.k));});\n"
    " rows.sort(function(a,b){\n"
    "  if(a.k===''||b.k===''){if(a.k===b.k)return a.i-b.i;return a.k===''?1:-1;}\n"
    "  var c=numeric?Number(a.k)-Number(b.k):(a.k<b.k?-1:a.k>b.k?1:0);\n"
    "  return c!==0?c*dir:a.i-b.i;});\n"
    " rows.forEach(function(o){tb.appendChild(o.r);});\n"
    " Array.prototype.forEach.call(th.parentNode.cells,function(h){h.removeAttribute('aria-sort');});\n"
    " th.setAttribute('aria-sort',dir===1?'ascending':'descending');\n"
    "}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable thead th'),function(th){\n"
    " th.addEventListener('click',function(){sortBy(th);});});\n"
    "var selects=Array.prototype.slice.call(document.querySelectorAll('select[data-attr]'));\n"
    "var items=Array.prototype.slice.call(document.querySelectorAll('[data-attrs]')).map(function(el){\n"
    " var a={};try{a=JSON.parse(el.getAttribute('data-attrs'))||{};}catch(e){a={};}return {el:el,a:a};});\n"
    "function apply(){\n"
    " var want=[];selects.forEach(function(s){if(s.value!=='')want.push([s.getAttribute('data-attr'),s.value]);});\n"
    " var shown=0,rows=0;\n"
    " items.forEach(function(it){\n"
    "  var ok=want.every(function(w){return it.a[w[0]]===w[1];});\n"
    "  it.el.style.display=ok?'':'none';if(it.el.tagName==='TR'){rows++;if(ok)shown++;}});\n"
    " var out=document.getElementById('filter-count');\n"
    " if(out)out.textContent=want.length?shown+' of '+rows+' table rows shown':'';\n"
    "}\n"
    "selects.forEach(function(s){s.addEventListener('change',apply);});\n"
    "var reset=document.getElementById('filter-reset');\n"
    "if(reset)reset.addEventListener('click',function(){selects.forEach(function(s){s.value='';});apply();});\n"
    "})();\n";

static void page(rs__sb *out, rs__doc *d, const char *const *dirs, size_t n_dirs, const rs__folder *f)
{
  const char *title = d->o && d->o->title ? d->o->title : "ragsweep report";
  rs__sb_str(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"generator\" content=\"ragsweep report\">\n"
                  /* no favicon request, even from a server */
                  "<link rel=\"icon\" href=\"data:,\">\n<title>");
  rs__html_esc(out, title);
  rs__sb_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
  rs__html_esc(out, title);
  rs__sb_str(out, "</h1>\n<p class=\"meta\">");
  for (size_t i = 0; i < n_dirs; i++) {
    if (i) rs__sb_str(out, "; ");
    rs__sb_printf(out, "%s <code>", rs__results_kind_name(f[i].kind));
    rs__html_esc(out, dirs[i]);
    rs__sb_str(out, "</code>");
    if (f[i].kind != RS__RESULTS_JUDGE) rs__sb_printf(out, " (%zu configurations)", f[i].n_entries);
  }
  if (d->o && d->o->n_history) {
    rs__sb_printf(out, "%shistory", n_dirs ? "; " : "");
    if (d->o->history_source) {
      rs__sb_str(out, " <code>");
      rs__html_esc(out, d->o->history_source);
      rs__sb_str(out, "</code>");
    }
  }
  rs__sb_str(out, "</p>\n</header>\n<nav class=\"toc\"><ul>");
  rs__sb_str(out, rs__sb_view(&d->toc));
  rs__sb_str(out, "</ul></nav>\n");
  /* The filter: one select per attribute with more than one value. */
  int any = 0;
  for (size_t a = 0; a < d->attr_names.n; a++) any |= d->attr_vals[a].n > 1;
  if (any) {
    rs__sb_str(out, "<form class=\"controls\" id=\"filter\" onsubmit=\"return false\"><strong>Filter</strong> ");
    for (size_t a = 0; a < d->attr_names.n; a++) {
      if (d->attr_vals[a].n < 2) continue;
      rs__sb_str(out, "<label>");
      rs__html_esc(out, d->attr_names.str[a]);
      rs__sb_str(out, " <select data-attr=\"");
      rs__html_esc(out, d->attr_names.str[a]);
      rs__sb_str(out, "\"><option value=\"\">(all)</option>");
      for (size_t v = 0; v < d->attr_vals[a].n; v++) {
        rs__sb_str(out, "<option value=\"");
        rs__html_esc(out, d->attr_vals[a].str[v]);
        rs__sb_str(out, "\">");
        rs__html_esc(out, *d->attr_vals[a].str[v] ? d->attr_vals[a].str[v] : "(empty)");
        rs__sb_str(out, "</option>");
      }
      rs__sb_str(out, "</select></label>");
    }
    rs__sb_str(out, "<button type=\"button\" id=\"filter-reset\">show all</button> "
                    "<span id=\"filter-count\" class=\"note\"></span></form>\n");
  }
  rs__sb_str(out, "<main>\n");
  rs__sb_str(out, rs__sb_view(&d->body));
  rs__sb_str(out, "</main>\n<footer class=\"note\"><p>Written by <code>ragsweep report</code>: one file, no "
                  "network access; charts are SVG, drawn without the script, which only sorts the tables (click a "
                  "column's header) and filters configurations by attribute. Colours are the Okabe&ndash;Ito "
                  "palette, readable with the common colour-vision deficiencies; past 8 configurations the dash "
                  "pattern and the marker change too (&#9679; &#9632; &#9650; &#9670;), and heatmaps use viridis. "
                  "&#9650;/&#9660; in a table: significantly better/worse than the baseline.</p></footer>\n");
  rs__sb_printf(out, "<script>\n%s</script>\n</body>\n</html>\n", js);
}

static void doc_free(rs__doc *d)
{
  rs__sb_free(&d->body);
  rs__sb_free(&d->toc);
  rs__strdict_free(&d->styles);
  free(d->style_of);
  for (size_t a = 0; a < d->attr_names.n && a < d->cap_attrs; a++) rs__strdict_free(&d->attr_vals[a]);
  free(d->attr_vals);
  rs__strdict_free(&d->attr_names);
  rs__strdict_free(&d->ids);
}

/* The history database's series as the time-series section's points:
 * o's own points first, then the database's (views into the series kept
 * here until history_free). */
typedef struct {
  rs__history_series s;
  rs__report_point *points;
  size_t n_points;
  rs__report_opts opts; /* a copy of the caller's options with the points */
} report_history;

static void history_free(report_history *h)
{
  rs__history_series_free(&h->s);
  free(h->points);
  *h = (report_history){0};
}

static rs_code load_history(const rs__report_opts *o, report_history *h, rs_error *err)
{
  const rs__history_filter filter = {.measures = o->history_measures, .n_measures = o->n_history_measures};
  rs_code rc = rs__history_series_load(o->history_path, &filter, &h->s, err);
  if (rc) return rc;
  h->points = rs__calloc(o->n_history + h->s.n_points + 1, sizeof *h->points);
  if (!h->points) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < o->n_history; i++) h->points[h->n_points++] = o->history[i];
  for (size_t i = 0; i < h->s.n_points; i++) {
    const rs__history_point *p = &h->s.points[i];
    if (isnan(p->value)) continue; /* an evaluation without this value: a gap, not a point */
    const rs__history_eval *e = &h->s.evals[p->eval];
    h->points[h->n_points++] = (rs__report_point){.run = h->s.runs.str[p->run],
                                                  .measure = h->s.measures.str[p->measure],
                                                  .label = e->label,
                                                  .time = (double)e->unix_time,
                                                  .value = p->value};
  }
  h->opts = *o;
  h->opts.history = h->points;
  h->opts.n_history = h->n_points;
  if (!h->opts.history_source) h->opts.history_source = o->history_path;
  return RS_OK;
}

rs_code rs__report_write(const char *const *dirs, size_t n_dirs, const rs__report_opts *o, const char *out_path,
                         rs_error *err)
{
  static const rs__report_opts defaults = {0};
  if (!o) o = &defaults;
  rs__folder *f = rs__calloc(n_dirs + 1, sizeof *f);
  rs__doc d = {.o = o};
  rs__sb out = {0};
  report_history hist = {0};
  rs_code rc = f ? RS_OK : rs__fail(err, RS_NOMEM, "out of memory");
  int lead_found = 0;
  for (size_t i = 0; i < n_dirs && !rc; i++) rc = rs__folder_load(dirs[i], o->lead, &lead_found, &f[i], err);
  if (!rc && o->lead && !lead_found && n_dirs) {
    rs__sb list = {0};
    for (size_t i = 0; i < n_dirs; i++)
      for (size_t m = 0; m < f[i].n_meas && list.n < 300; m++)
        rs__sb_printf(&list, "%s%s", list.n ? ", " : "", rs__folder_measure(&f[i], m));
    rc = rs__fail(err, RS_USAGE, "--lead %s: no folder has this measure; expected one of: %s", o->lead,
                  list.n ? rs__sb_view(&list) : "(none)");
    rs__sb_free(&list);
  }
  if (!rc && o->baseline) {
    int seen = 0;
    for (size_t i = 0; i < n_dirs && !seen; i++)
      for (size_t k = 0; k < f[i].n_cmp && !seen; k++) seen = strcmp(f[i].cmp[k].baseline, o->baseline) == 0;
    if (!seen)
      rc = rs__fail(err, RS_USAGE, "--baseline %s: no compare.csv among the folders compares with this run (the "
                                   "baseline is what 'ragsweep compare --baseline' was given)", o->baseline);
  }
  if (!rc && o->history_path) rc = load_history(o, &hist, err);
  if (rc) goto done;
  if (hist.n_points) o = &hist.opts;
  for (size_t i = 0; i < n_dirs; i++) rs__doc_folder(&d, &f[i], i + 1);
  if (o->n_history) {
    rs__sb_str(&d.toc, "<li><a href=\"#history\">History</a></li>");
    rs__sb_str(&d.body, "<section id=\"history\">\n<h2>History</h2>\n<p class=\"note\">");
    if (o->history_source) {
      rs__sb_str(&d.body, "From <code>");
      rs__html_esc(&d.body, o->history_source);
      rs__sb_str(&d.body, "</code>: ");
    }
    rs__sb_printf(&d.body, "%zu values; each chart is one measure over time, one line per configuration.</p>\n",
                  o->n_history);
    rs__report_timeseries(&d.body, o->history, o->n_history);
    rs__sb_str(&d.body, "</section>\n");
  }
  page(&out, &d, dirs, n_dirs, f);
  if (d.failed || d.body.failed || d.toc.failed || out.failed) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory while writing the report", out_path);
    goto done;
  }
  {
    const char *slash = strrchr(out_path, '/');
    if (!*(slash ? slash + 1 : out_path)) {
      rc = rs__fail(err, RS_USAGE, "-o %s: expected a file name such as report.html, found a folder path", out_path);
      goto done;
    }
    rc = rs__write_file_atomic(out_path, out.s, out.n, "report.html", err);
  }
done:
  rs__sb_free(&out);
  history_free(&hist);
  doc_free(&d);
  for (size_t i = 0; f && i < n_dirs; i++) rs__folder_free(&f[i]);
  free(f);
  return rc;
}
