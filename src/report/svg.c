/* svg.c: scales, ticks and the report's charts as inline SVG (see svg.h). */
#define _GNU_SOURCE
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/html.h"

/* --- scales ------------------------------------------------------------------------ */

rs__scale rs__scale_linear(double d0, double d1, double r0, double r1)
{
  return (rs__scale){.d0 = d0, .d1 = d1, .r0 = r0, .r1 = r1, .log = 0};
}

rs__scale rs__scale_log(double d0, double d1, double r0, double r1)
{
  return (rs__scale){.d0 = d0, .d1 = d1, .r0 = r0, .r1 = r1, .log = 1};
}

double rs__scale_map(const rs__scale *s, double v)
{
  double a = s->d0, b = s->d1;
  if (s->log) a = log10(a), b = log10(b), v = log10(v);
  if (!(b != a)) return (s->r0 + s->r1) / 2.0;
  return s->r0 + (v - a) / (b - a) * (s->r1 - s->r0);
}

/* A nice step for about `want` intervals over span: 1, 2 or 5 times a
 * power of ten. */
static double nice_step(double span, double want)
{
  if (!(span > 0.0)) return 1.0;
  const double raw = span / want, mag = pow(10.0, floor(log10(raw))), norm = raw / mag;
  return (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
}

double rs__nice_ceil(double v)
{
  if (!(v > 0.0)) return 1.0;
  const double step = nice_step(v, 5.0);
  return ceil(v / step - 1e-9) * step;
}

double rs__nice_floor(double v)
{
  if (v >= 0.0) {
    const double step = nice_step(v, 5.0);
    return v > 0.0 ? floor(v / step + 1e-9) * step : 0.0;
  }
  return -rs__nice_ceil(-v);
}

size_t rs__scale_ticks(const rs__scale *s, double *out, size_t cap)
{
  size_t n = 0;
  const double lo = s->d0 < s->d1 ? s->d0 : s->d1, hi = s->d0 < s->d1 ? s->d1 : s->d0;
  if (!isfinite(lo) || !isfinite(hi)) return 0;
  if (s->log) {
    if (!(lo > 0.0)) return 0;
    static const double mant[] = {1.0, 2.0, 5.0};
    for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)) && n < cap; e++)
      for (size_t m = 0; m < 3 && n < cap; m++) {
        const double t = mant[m] * pow(10.0, e);
        if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) out[n++] = t;
      }
    return n;
  }
  if (!(hi > lo)) {
    if (cap) out[n++] = lo;
    return n;
  }
  const double step = nice_step(hi - lo, 5.0);
  /* Multiples k·step, computed from k (no accumulated error). */
  for (double k = ceil(lo / step - 1e-9); n < cap; k++) {
    const double t = k * step;
    if (t > hi + step * 1e-9) break;
    out[n++] = fabs(t) < step * 1e-9 ? 0.0 : t;
  }
  return n;
}

void rs__svg_fmt(double v, char buf[32])
{
  snprintf(buf, 32, "%.1f", v);
  if (strcmp(buf, "-0.0") == 0) strcpy(buf, "0.0");
}

/* --- looks --------------------------------------------------------------------------- */

/* Okabe & Ito (2008), "Color Universal Design": distinguishable under the
 * common colour-vision deficiencies; black last, as the eighth. */
static const char *const palette[8] = {"#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                       "#0072B2", "#D55E00", "#CC79A7", "#000000"};
static const char *const dashes[4] = {"", "6 3", "2 2", "8 3 2 3"};
static const char *const glyphs[4] = {"\xe2\x97\x8f", "\xe2\x96\xa0", "\xe2\x96\xb2", "\xe2\x97\x86"}; /* ● ■ ▲ ◆ */

rs__style rs__series_style(size_t i)
{
  const size_t g = (i / 8) % 4;
  return (rs__style){.colour = palette[i % 8], .dash = dashes[g], .glyph = glyphs[g], .marker = (int)g};
}

/* --- writing helpers ---------------------------------------------------------------- */

static void num(rs__sb *b, double v)
{
  char buf[32];
  rs__svg_fmt(v, buf);
  rs__sb_str(b, buf);
}

static void pt(rs__sb *b, double x, double y)
{
  num(b, x);
  rs__sb_str(b, ",");
  num(b, y);
}

/* A tick label: as many decimals as the step needs. */
static void tick_text(char *buf, size_t cap, double v, double step)
{
  int dec = 0;
  if (step > 0.0 && step < 1.0) dec = (int)ceil(-log10(step) - 1e-9);
  if (dec > 6) dec = 6;
  if (fabs(v) >= 1e6 || (v != 0.0 && fabs(v) < 1e-4)) snprintf(buf, cap, "%.3g", v);
  else snprintf(buf, cap, "%.*f", dec, v);
}

static void time_text(char *buf, size_t cap, double t, double step)
{
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(buf, cap, step < 86400.0 ? "%m-%d %H:%M" : "%Y-%m-%d", &tm);
}

static void text(rs__sb *b, double x, double y, const char *anchor, const char *extra, const char *s)
{
  rs__sb_str(b, "<text x=\"");
  num(b, x);
  rs__sb_str(b, "\" y=\"");
  num(b, y);
  rs__sb_printf(b, "\" text-anchor=\"%s\"%s%s>", anchor, extra && *extra ? " " : "", extra ? extra : "");
  rs__html_esc(b, s);
  rs__sb_str(b, "</text>");
}

static void figure_open(rs__sb *b, const rs__plot *p, size_t n_series, double w, double h)
{
  rs__sb_str(b, "<figure class=\"chart\" id=\"");
  rs__html_esc(b, p->id);
  rs__sb_printf(b, "\" data-series=\"%zu\">\n<svg viewBox=\"0 0 ", n_series);
  num(b, w);
  rs__sb_str(b, " ");
  num(b, h);
  rs__sb_str(b, "\" width=\"");
  num(b, w);
  rs__sb_str(b, "\" height=\"");
  num(b, h);
  rs__sb_str(b, "\" role=\"img\" aria-label=\"");
  rs__html_esc(b, p->caption ? p->caption : "");
  rs__sb_str(b, "\">\n");
}

/* The legend (when asked for) and the caption close the figure. */
static void figure_close(rs__sb *b, const rs__plot *p, const rs__series *s, size_t n, const unsigned char *drawn)
{
  rs__sb_str(b, "</svg>\n<figcaption>");
  rs__html_esc(b, p->caption ? p->caption : "");
  if (p->legend && n) {
    rs__sb_str(b, "<span class=\"legend\">");
    for (size_t i = 0; i < n; i++) {
      if (drawn && !drawn[i]) continue;
      const rs__style st = rs__series_style(s[i].style);
      rs__sb_printf(b, " <span class=\"key\"><span style=\"color:%s\">%s</span> ", st.colour, st.glyph);
      rs__html_esc(b, s[i].name);
      rs__sb_str(b, "</span>");
    }
    rs__sb_str(b, "</span>");
  }
  rs__sb_str(b, "</figcaption>\n</figure>\n");
}

static void series_open(rs__sb *b, const char *name, const char *attrs, const rs__style *st, int stroke)
{
  rs__sb_str(b, "<g class=\"series\" data-name=\"");
  rs__html_esc(b, name);
  rs__sb_str(b, "\"");
  if (attrs) {
    rs__sb_str(b, " data-attrs=\"");
    rs__html_esc(b, attrs);
    rs__sb_str(b, "\"");
  }
  if (stroke) {
    rs__sb_printf(b, " stroke=\"%s\" fill=\"%s\"", st->colour, st->colour);
    if (*st->dash) rs__sb_printf(b, " stroke-dasharray=\"%s\"", st->dash);
  }
  rs__sb_str(b, "><title>");
  rs__html_esc(b, name);
  rs__sb_str(b, "</title>");
}

/* A marker at (x, y); hollow markers are white inside. */
static void marker(rs__sb *b, int shape, double x, double y, double r, int hollow)
{
  const char *fill = hollow ? " fill=\"#fff\"" : "";
  switch (shape) {
  case 1:
    rs__sb_str(b, "<rect x=\"");
    num(b, x - r);
    rs__sb_str(b, "\" y=\"");
    num(b, y - r);
    rs__sb_str(b, "\" width=\"");
    num(b, 2 * r);
    rs__sb_str(b, "\" height=\"");
    num(b, 2 * r);
    rs__sb_printf(b, "\" stroke-dasharray=\"none\"%s/>", fill);
    break;
  case 2:
    rs__sb_str(b, "<path d=\"M");
    pt(b, x, y - 1.2 * r);
    rs__sb_str(b, "L");
    pt(b, x + 1.1 * r, y + 0.8 * r);
    rs__sb_str(b, "L");
    pt(b, x - 1.1 * r, y + 0.8 * r);
    rs__sb_printf(b, "Z\" stroke-dasharray=\"none\"%s/>", fill);
    break;
  case 3:
    rs__sb_str(b, "<path d=\"M");
    pt(b, x, y - 1.3 * r);
    rs__sb_str(b, "L");
    pt(b, x + 1.3 * r, y);
    rs__sb_str(b, "L");
    pt(b, x, y + 1.3 * r);
    rs__sb_str(b, "L");
    pt(b, x - 1.3 * r, y);
    rs__sb_printf(b, "Z\" stroke-dasharray=\"none\"%s/>", fill);
    break;
  default:
    rs__sb_str(b, "<circle cx=\"");
    num(b, x);
    rs__sb_str(b, "\" cy=\"");
    num(b, y);
    rs__sb_str(b, "\" r=\"");
    num(b, r);
    rs__sb_printf(b, "\" stroke-dasharray=\"none\"%s/>", fill);
  }
}

static int finite_pt(const rs__series *s, size_t i) { return isfinite(s->x[i]) && isfinite(s->y[i]); }

/* --- axes -------------------------------------------------------------------------- */

static double time_step(double span)
{
  static const double steps[] = {3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400};
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (span / steps[i] <= 6.0) return steps[i];
  return nice_step(span, 5.0);
}

static size_t time_ticks(const rs__scale *s, double *out, size_t cap, double *step_out)
{
  const double step = time_step(s->d1 - s->d0);
  size_t n = 0;
  for (double k = ceil(s->d0 / step); n < cap && k * step <= s->d1; k++) out[n++] = k * step;
  *step_out = step;
  return n;
}

/* Grid lines, ticks and labels of the plot area [x0,x1] x [y1,y0]. */
static void axes(rs__sb *b, const rs__plot *p, const rs__scale *xs, const rs__scale *ys, int x_ticks)
{
  double t[64];
  char buf[64];
  const double x0 = xs->r0, x1 = xs->r1, y0 = ys->r0, y1 = ys->r1;
  rs__sb_str(b, "<g class=\"axes\" font-size=\"11\" fill=\"#333\" stroke=\"none\">");
  size_t n = rs__scale_ticks(ys, t, 64);
  const double ystep = n > 1 ? t[1] - t[0] : 1.0;
  for (size_t i = 0; i < n; i++) {
    const double y = rs__scale_map(ys, t[i]);
    rs__sb_str(b, "<path stroke=\"#ddd\" d=\"M");
    pt(b, x0, y);
    rs__sb_str(b, "H");
    num(b, x1);
    rs__sb_str(b, "\"/>");
    tick_text(buf, sizeof buf, t[i], ystep);
    text(b, x0 - 6, y + 4, "end", NULL, buf);
  }
  if (x_ticks) {
    double xstep = 1.0;
    if (p->x_axis == RS__AXIS_TIME) n = time_ticks(xs, t, 64, &xstep);
    else {
      n = rs__scale_ticks(xs, t, 64);
      xstep = n > 1 ? t[1] - t[0] : 1.0;
    }
    for (size_t i = 0; i < n; i++) {
      const double x = rs__scale_map(xs, t[i]);
      rs__sb_str(b, "<path stroke=\"#ddd\" d=\"M");
      pt(b, x, y1);
      rs__sb_str(b, "V");
      num(b, y0);
      rs__sb_str(b, "\"/>");
      if (p->x_axis == RS__AXIS_TIME) time_text(buf, sizeof buf, t[i], xstep);
      else tick_text(buf, sizeof buf, t[i], p->x_axis == RS__AXIS_LOG ? 1.0 : xstep);
      text(b, x, y0 + 16, "middle", NULL, buf);
    }
  }
  rs__sb_str(b, "<path stroke=\"#555\" fill=\"none\" d=\"M");
  pt(b, x0, y1);
  rs__sb_str(b, "V");
  num(b, y0);
  rs__sb_str(b, "H");
  num(b, x1);
  rs__sb_str(b, "\"/>");
  if (p->x_label) text(b, (x0 + x1) / 2, y0 + 36, "middle", NULL, p->x_label);
  if (p->y_label) {
    char tr[96];
    snprintf(tr, sizeof tr, "transform=\"rotate(-90 14 %.1f)\"", (y0 + y1) / 2);
    text(b, 14, (y0 + y1) / 2, "middle", tr, p->y_label);
  }
  rs__sb_str(b, "</g>\n");
}

/* --- x/y charts --------------------------------------------------------------------- */

void rs__plot_scales(const rs__plot *p, const rs__series *s, size_t n, rs__scale *xs, rs__scale *ys)
{
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < s[i].n; j++) {
      if (!finite_pt(&s[i], j) || (p->x_axis == RS__AXIS_LOG && !(s[i].x[j] > 0.0))) continue;
      if (s[i].x[j] < xmin) xmin = s[i].x[j];
      if (s[i].x[j] > xmax) xmax = s[i].x[j];
      if (s[i].y[j] < ymin) ymin = s[i].y[j];
      if (s[i].y[j] > ymax) ymax = s[i].y[j];
    }
  if (!(xmin <= xmax)) xmin = p->x_axis == RS__AXIS_LOG ? 1.0 : 0.0, xmax = xmin + 1.0;
  if (!(ymin <= ymax)) ymin = 0.0, ymax = 1.0;
  double x0 = isnan(p->x_min) ? xmin : p->x_min, x1 = isnan(p->x_max) ? xmax : p->x_max;
  if (p->x_axis == RS__AXIS_LINEAR && isnan(p->x_min)) x0 = xmin >= 0.0 ? 0.0 : rs__nice_floor(xmin);
  if (p->x_axis == RS__AXIS_LINEAR && isnan(p->x_max)) x1 = rs__nice_ceil(xmax);
  if (!(x1 > x0)) x1 = x0 + (p->x_axis == RS__AXIS_TIME ? 86400.0 : 1.0);
  if (p->x_axis == RS__AXIS_TIME && x1 - x0 < 3600.0) x0 -= 1800.0, x1 += 1800.0;
  double y0, y1;
  if (p->y_from_data) {
    const double pad = ymax > ymin ? (ymax - ymin) * 0.1 : fabs(ymax) * 0.1 + 0.01;
    y0 = isnan(p->y_min) ? ymin - pad : p->y_min;
    y1 = isnan(p->y_max) ? ymax + pad : p->y_max;
    if (isnan(p->y_min) && ymin >= 0.0 && y0 < 0.0) y0 = 0.0;
  } else {
    y0 = isnan(p->y_min) ? (ymin < 0.0 ? rs__nice_floor(ymin) : 0.0) : p->y_min;
    y1 = isnan(p->y_max) ? rs__nice_ceil(ymax) : p->y_max;
  }
  if (!(y1 > y0)) y1 = y0 + 1.0;
  const double px0 = RS__SVG_LEFT, px1 = RS__SVG_W - RS__SVG_RIGHT, py0 = RS__SVG_H - RS__SVG_BOTTOM,
               py1 = RS__SVG_TOP;
  *xs = p->x_axis == RS__AXIS_LOG ? rs__scale_log(x0, x1, px0, px1) : rs__scale_linear(x0, x1, px0, px1);
  *ys = rs__scale_linear(y0, y1, py0, py1);
}

static size_t n_finite(const rs__series *s)
{
  size_t k = 0;
  for (size_t j = 0; j < s->n; j++) k += finite_pt(s, j);
  return k;
}

void rs__svg_lines(rs__sb *b, const rs__plot *p, const rs__series *s, size_t n)
{
  rs__scale xs, ys;
  rs__plot_scales(p, s, n, &xs, &ys);
  unsigned char drawn[4096];
  size_t n_drawn = 0;
  for (size_t i = 0; i < n; i++) {
    const int d = n_finite(&s[i]) > 0;
    if (i < sizeof drawn) drawn[i] = (unsigned char)d;
    n_drawn += d;
  }
  figure_open(b, p, n_drawn, RS__SVG_W, RS__SVG_H);
  axes(b, p, &xs, &ys, 1);
  for (size_t i = 0; i < n; i++) {
    if (!n_finite(&s[i])) continue;
    const rs__style st = rs__series_style(s[i].style);
    series_open(b, s[i].name, s[i].attrs_json, &st, 1);
    if (p->lines && n_finite(&s[i]) > 1) {
      rs__sb_str(b, "<path fill=\"none\" stroke-width=\"1.8\" d=\"");
      int first = 1;
      for (size_t j = 0; j < s[i].n; j++) {
        if (!finite_pt(&s[i], j)) continue;
        rs__sb_str(b, first ? "M" : "L");
        pt(b, rs__scale_map(&xs, s[i].x[j]), rs__scale_map(&ys, s[i].y[j]));
        first = 0;
      }
      rs__sb_str(b, "\"/>");
    }
    if (p->markers || !p->lines || n_finite(&s[i]) == 1)
      for (size_t j = 0; j < s[i].n; j++)
        if (finite_pt(&s[i], j))
          marker(b, st.marker, rs__scale_map(&xs, s[i].x[j]), rs__scale_map(&ys, s[i].y[j]), p->lines ? 2.5 : 4.0, 0);
    rs__sb_str(b, "</g>\n");
  }
  figure_close(b, p, s, n < sizeof drawn ? n : sizeof drawn, drawn);
}

void rs__svg_bars(rs__sb *b, const rs__plot *p, const char *const *groups, size_t n_groups, const rs__series *s,
                  size_t n)
{
  double ymax = 0.0, ymin = 0.0;
  unsigned char drawn[4096];
  size_t n_drawn = 0;
  for (size_t i = 0; i < n; i++) {
    int d = 0;
    for (size_t g = 0; g < n_groups && g < s[i].n; g++)
      if (isfinite(s[i].y[g])) {
        d = 1;
        if (s[i].y[g] > ymax) ymax = s[i].y[g];
        if (s[i].y[g] < ymin) ymin = s[i].y[g];
      }
    if (i < sizeof drawn) drawn[i] = (unsigned char)d;
    n_drawn += d;
  }
  const double y0 = isnan(p->y_min) ? (ymin < 0.0 ? rs__nice_floor(ymin) : 0.0) : p->y_min;
  const double y1 = isnan(p->y_max) ? rs__nice_ceil(ymax) : p->y_max;
  /* Many groups: slanted labels, which need room below the axis. */
  const int slant = n_groups > 4;
  const double h = RS__SVG_H + (slant ? 56 : 0);
  const rs__scale ys = rs__scale_linear(y0, y1 > y0 ? y1 : y0 + 1.0, h - RS__SVG_BOTTOM - (slant ? 56 : 0), RS__SVG_TOP);
  const rs__scale xs = rs__scale_linear(0, 1, RS__SVG_LEFT + (slant ? 40 : 0), RS__SVG_W - RS__SVG_RIGHT);
  figure_open(b, p, n_drawn, RS__SVG_W, h);
  axes(b, p, &xs, &ys, 0);
  const double gw = (xs.r1 - xs.r0) / (double)(n_groups ? n_groups : 1), bw = gw * 0.8 / (double)(n ? n : 1);
  rs__sb_str(b, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">");
  for (size_t g = 0; g < n_groups; g++) {
    char lbl[40];
    snprintf(lbl, sizeof lbl, "%.36s%s", groups[g], strlen(groups[g]) > 36 ? "\xe2\x80\xa6" : "");
    if (slant) {
      char tr[96];
      const double x = xs.r0 + gw * ((double)g + 0.5);
      snprintf(tr, sizeof tr, "transform=\"rotate(-20 %.1f %.1f)\"", x, ys.r0 + 14);
      text(b, x, ys.r0 + 14, "end", tr, lbl);
    } else {
      text(b, xs.r0 + gw * ((double)g + 0.5), ys.r0 + 16, "middle", NULL, lbl);
    }
  }
  rs__sb_str(b, "</g>\n");
  const double zero = rs__scale_map(&ys, y0 > 0.0 ? y0 : 0.0);
  for (size_t i = 0; i < n; i++) {
    if (i < sizeof drawn && !drawn[i]) continue;
    const rs__style st = rs__series_style(s[i].style);
    series_open(b, s[i].name, s[i].attrs_json, &st, 0);
    for (size_t g = 0; g < n_groups && g < s[i].n; g++) {
      if (!isfinite(s[i].y[g])) continue;
      const double x = xs.r0 + gw * (double)g + gw * 0.1 + bw * (double)i, y = rs__scale_map(&ys, s[i].y[g]);
      rs__sb_printf(b, "<rect fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\" x=\"", st.colour);
      num(b, x);
      rs__sb_str(b, "\" y=\"");
      num(b, y < zero ? y : zero);
      rs__sb_str(b, "\" width=\"");
      num(b, bw > 1.0 ? bw : 1.0);
      rs__sb_str(b, "\" height=\"");
      num(b, fabs(zero - y) > 0.5 ? fabs(zero - y) : 0.5);
      rs__sb_str(b, "\"><title>");
      rs__html_esc(b, s[i].name);
      rs__sb_str(b, " \xc2\xb7 ");
      rs__html_esc(b, groups[g]);
      rs__sb_printf(b, ": %.4g</title></rect>", s[i].y[g]);
    }
    rs__sb_str(b, "</g>\n");
  }
  figure_close(b, p, s, n < sizeof drawn ? n : sizeof drawn, drawn);
}

/* --- heatmap ------------------------------------------------------------------------- */

/* viridis at 0, 1/4, 1/2, 3/4, 1 (perceptually uniform, colour-blind safe). */
static void viridis(double t, char out[8])
{
  static const unsigned char stop[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  if (!(t >= 0.0)) t = 0.0;
  if (t > 1.0) t = 1.0;
  const double u = t * 4.0;
  int i = (int)floor(u);
  if (i > 3) i = 3;
  const double f = u - i;
  unsigned c[3];
  for (int k = 0; k < 3; k++) c[k] = (unsigned)lround(stop[i][k] + (stop[i + 1][k] - stop[i][k]) * f);
  snprintf(out, 8, "#%02x%02x%02x", c[0] & 255u, c[1] & 255u, c[2] & 255u);
}

void rs__svg_heatmap(rs__sb *b, const rs__plot *p, const char *const *rows, size_t n_rows, const char *const *cols,
                     size_t n_cols, const double *v, int decimals, const char *series_name)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n_rows * n_cols; i++)
    if (isfinite(v[i])) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  const double left = 150, top = 16, right = 16, bottom = 56;
  double cw = (RS__SVG_W - left - right) / (double)(n_cols ? n_cols : 1);
  if (cw > 110) cw = 110;
  double ch = cw * 0.55;
  if (ch < 20) ch = 20;
  if (ch > 44) ch = 44;
  const double w = left + cw * (double)n_cols + right, h = top + ch * (double)n_rows + bottom;
  figure_open(b, p, 1, w > 320 ? w : 320, h);
  rs__sb_str(b, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">");
  for (size_t r = 0; r < n_rows; r++) {
    char lbl[40];
    snprintf(lbl, sizeof lbl, "%.30s%s", rows[r], strlen(rows[r]) > 30 ? "\xe2\x80\xa6" : "");
    text(b, left - 6, top + ch * ((double)r + 0.5) + 4, "end", NULL, lbl);
  }
  for (size_t c = 0; c < n_cols; c++) {
    char lbl[40];
    snprintf(lbl, sizeof lbl, "%.16s%s", cols[c], strlen(cols[c]) > 16 ? "\xe2\x80\xa6" : "");
    text(b, left + cw * ((double)c + 0.5), top + ch * (double)n_rows + 16, "middle", NULL, lbl);
  }
  if (p->x_label) text(b, left + cw * (double)n_cols / 2, top + ch * (double)n_rows + 36, "middle", NULL, p->x_label);
  if (p->y_label) text(b, 8, top - 4 > 10 ? top - 4 : 11, "start", NULL, p->y_label);
  rs__sb_str(b, "</g>\n");
  const rs__style st = rs__series_style(0);
  series_open(b, series_name, NULL, &st, 0);
  for (size_t r = 0; r < n_rows; r++)
    for (size_t c = 0; c < n_cols; c++) {
      const double x = v[r * n_cols + c];
      const double t = hi > lo ? (x - lo) / (hi - lo) : 0.5;
      char fill[8] = "#dddddd", label[48] = "\xe2\x80\x93";
      if (isfinite(x)) {
        viridis(t, fill);
        snprintf(label, sizeof label, "%.*f", decimals, x);
      }
      rs__sb_printf(b, "<rect fill=\"%s\" stroke=\"#fff\" x=\"", fill);
      num(b, left + cw * (double)c);
      rs__sb_str(b, "\" y=\"");
      num(b, top + ch * (double)r);
      rs__sb_str(b, "\" width=\"");
      num(b, cw);
      rs__sb_str(b, "\" height=\"");
      num(b, ch);
      rs__sb_str(b, "\"><title>");
      rs__html_esc(b, rows[r]);
      rs__sb_str(b, " \xc3\x97 ");
      rs__html_esc(b, cols[c]);
      rs__sb_printf(b, ": %s</title></rect>", label);
      text(b, left + cw * ((double)c + 0.5), top + ch * ((double)r + 0.5) + 4, "middle",
           isfinite(x) && t < 0.6 ? "fill=\"#fff\" font-size=\"11\"" : "fill=\"#000\" font-size=\"11\"", label);
    }
  rs__sb_str(b, "</g>\n");
  figure_close(b, p, NULL, 0, NULL);
}

/* --- forest ---------------------------------------------------------------------------- */

void rs__svg_forest(rs__sb *b, const rs__plot *p, const rs__forest_row *rows, size_t n)
{
  double lo = 0.0, hi = 0.0;
  size_t n_drawn = 0;
  for (size_t i = 0; i < n; i++) {
    const rs__forest_row *r = &rows[i];
    if (!isfinite(r->est)) continue;
    n_drawn++;
    const double a = isfinite(r->lo) ? r->lo : r->est, z = isfinite(r->hi) ? r->hi : r->est;
    if (a < lo) lo = a;
    if (r->est < lo) lo = r->est;
    if (z > hi) hi = z;
    if (r->est > hi) hi = r->est;
  }
  const double left = 230, right = 24, top = 12, row_h = 18, bottom = 44;
  const double h = top + row_h * (double)(n_drawn ? n_drawn : 1) + bottom;
  const double span = hi - lo > 0.0 ? hi - lo : 1.0;
  const rs__scale xs = rs__scale_linear(lo - span * 0.05, hi + span * 0.05, left, RS__SVG_W - right);
  const rs__scale ys = rs__scale_linear(0, 1, h - bottom, top);
  figure_open(b, p, n_drawn, RS__SVG_W, h);
  rs__plot q = *p;
  q.y_label = NULL;
  /* x ticks only: the y "axis" is the rows' labels. */
  double t[64];
  char buf[64];
  const size_t nt = rs__scale_ticks(&xs, t, 64);
  rs__sb_str(b, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">");
  for (size_t i = 0; i < nt; i++) {
    const double x = rs__scale_map(&xs, t[i]);
    rs__sb_str(b, "<path stroke=\"#ddd\" d=\"M");
    pt(b, x, ys.r1);
    rs__sb_str(b, "V");
    num(b, ys.r0);
    rs__sb_str(b, "\"/>");
    tick_text(buf, sizeof buf, t[i], nt > 1 ? t[1] - t[0] : 1.0);
    text(b, x, ys.r0 + 16, "middle", NULL, buf);
  }
  rs__sb_str(b, "<path stroke=\"#555\" d=\"M");
  const double x0 = rs__scale_map(&xs, 0.0);
  pt(b, x0, ys.r1);
  rs__sb_str(b, "V");
  num(b, ys.r0);
  rs__sb_str(b, "\"/>");
  if (q.x_label) text(b, (xs.r0 + xs.r1) / 2, ys.r0 + 36, "middle", NULL, q.x_label);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(rows[i].est)) continue;
    char lbl[48];
    snprintf(lbl, sizeof lbl, "%.34s%s", rows[i].name, strlen(rows[i].name) > 34 ? "\xe2\x80\xa6" : "");
    text(b, left - 8, top + row_h * ((double)k + 0.5) + 4, "end", NULL, lbl);
    k++;
  }
  rs__sb_str(b, "</g>\n");
  k = 0;
  for (size_t i = 0; i < n; i++) {
    const rs__forest_row *r = &rows[i];
    if (!isfinite(r->est)) continue;
    const rs__style st = rs__series_style(r->style);
    const double y = top + row_h * ((double)k++ + 0.5);
    series_open(b, r->name, r->attrs_json, &st, 1);
    if (isfinite(r->lo) && isfinite(r->hi)) {
      rs__sb_str(b, "<path stroke-width=\"2\" stroke-dasharray=\"none\" d=\"M");
      pt(b, rs__scale_map(&xs, r->lo), y);
      rs__sb_str(b, "H");
      num(b, rs__scale_map(&xs, r->hi));
      rs__sb_str(b, "\"/>");
    }
    marker(b, st.marker, rs__scale_map(&xs, r->est), y, 4.0, !r->significant);
    rs__sb_str(b, "</g>\n");
  }
  figure_close(b, p, NULL, 0, NULL);
}
