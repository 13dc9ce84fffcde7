/* svg.h: the report's charts, written as inline SVG (internal).
 *
 * Every chart is one <figure class="chart" id=ID data-series=N> holding
 * one <svg> (a viewBox, width and height, so it has a size before any
 * style applies) and a <figcaption>.  Each plotted series is one
 * <g class="series" data-name=NAME [data-attrs=JSON]> with at least one
 * drawn element (a path with a d, a circle, a rect); N counts them, and a
 * series with nothing to draw (no finite point) is left out and not
 * counted.  Texts are escaped here (rs__html_esc); the caller passes plain
 * text.
 *
 * Series look: style i takes colour i mod 8 of the Okabe-Ito palette
 * (colour-blind safe) and, for each further block of 8, another dash
 * pattern and marker shape (solid and circle, dashed and square, dotted
 * and triangle, dash-dot and diamond), so 32 series stay apart.
 *
 * Scales map a data domain to a pixel range, linearly or on log10; ticks
 * are "nice" numbers (1, 2, 5 times a power of ten).  Coordinates are
 * written with rs__svg_fmt (one decimal), so a test can predict the text
 * of a point.  Nothing here allocates except through the rs__sb. */
#ifndef RAGSWEEP_REPORT_SVG_H
#define RAGSWEEP_REPORT_SVG_H

#include <stddef.h>

#include "util/strbuf.h"

/* The drawing of every x/y chart: RS__SVG_W x RS__SVG_H user units, the
 * plot area inside the margins. */
enum {
  RS__SVG_W = 640,
  RS__SVG_H = 360,
  RS__SVG_LEFT = 64,
  RS__SVG_RIGHT = 16,
  RS__SVG_TOP = 16,
  RS__SVG_BOTTOM = 48
};

typedef struct rs__scale {
  double d0, d1; /* domain */
  double r0, r1; /* range (pixels) */
  int log;       /* log10 scale (d0 > 0) */
} rs__scale;

rs__scale rs__scale_linear(double d0, double d1, double r0, double r1);
rs__scale rs__scale_log(double d0, double d1, double r0, double r1);
/* v mapped to the range; a degenerate domain maps to the range's middle. */
double rs__scale_map(const rs__scale *s, double v);
/* Up to cap tick values inside the domain, ascending; their count.  Linear:
 * about 5 multiples of a nice step; log: 1, 2, 5 times powers of ten. */
size_t rs__scale_ticks(const rs__scale *s, double *out, size_t cap);
/* The smallest nice number >= v for a 0-based axis (1 when v <= 0). */
double rs__nice_ceil(double v);
/* The largest nice number <= v (0 when v >= 0 and below the first step). */
double rs__nice_floor(double v);

/* A coordinate as written in the SVG: one decimal ("56.0", "-3.5"). */
void rs__svg_fmt(double v, char buf[32]);

/* The look of series style i. */
typedef struct rs__style {
  const char *colour; /* "#E69F00" */
  const char *dash;   /* stroke-dasharray, "" for solid */
  const char *glyph;  /* the marker as a character, for HTML legends */
  int marker;         /* 0 circle, 1 square, 2 triangle, 3 diamond */
} rs__style;
rs__style rs__series_style(size_t i);

/* One series of an x/y chart. */
typedef struct rs__series {
  const char *name;       /* data-name and tooltip */
  const char *attrs_json; /* data-attrs (a JSON object of the configuration's attributes), or NULL */
  size_t style;           /* rs__series_style index */
  const double *x, *y;    /* [n]; points with a non-finite coordinate are skipped */
  size_t n;
} rs__series;

typedef enum { RS__AXIS_LINEAR, RS__AXIS_LOG, RS__AXIS_TIME } rs__axis_kind;

/* What an x/y chart shows. */
typedef struct rs__plot {
  const char *id;      /* element id, "chart-..." (made of [a-z0-9-]) */
  const char *caption; /* figcaption text */
  const char *x_label, *y_label;
  rs__axis_kind x_axis; /* LOG needs x > 0; TIME: x in Unix seconds, ticks as UTC dates */
  double x_min, x_max, y_min, y_max; /* NaN: from the data (0-based for y unless y_from_data) */
  int y_from_data;     /* y domain from the data's range, not from 0 */
  int lines;           /* join each series' points (in the order given) */
  int markers;         /* draw a marker at every point */
  int legend;          /* a legend of the series in the caption */
} rs__plot;

/* The domains an x/y chart uses for these series (what rs__svg_lines
 * draws with); exposed for tests. */
void rs__plot_scales(const rs__plot *p, const rs__series *s, size_t n, rs__scale *x, rs__scale *y);

/* Lines and/or markers (a scatter is lines = 0, markers = 1). */
void rs__svg_lines(rs__sb *b, const rs__plot *p, const rs__series *s, size_t n);
/* Grouped bars: group g holds bar s[i].y[g] of every series (NaN: no bar);
 * s[i].x is unused.  One series per s[i]. */
void rs__svg_bars(rs__sb *b, const rs__plot *p, const char *const *groups, size_t n_groups, const rs__series *s,
                  size_t n);
/* A heatmap of v[r * n_cols + c] (NaN: an empty cell), one series named
 * series_name; cells coloured on viridis from the smallest to the largest
 * value and labelled with `decimals` digits. */
void rs__svg_heatmap(rs__sb *b, const rs__plot *p, const char *const *rows, size_t n_rows, const char *const *cols,
                     size_t n_cols, const double *v, int decimals, const char *series_name);

/* One row of a forest plot: an estimate with its interval. */
typedef struct rs__forest_row {
  const char *name, *attrs_json;
  size_t style;
  double est, lo, hi; /* lo/hi NaN: no interval drawn */
  int significant;    /* drawn filled; otherwise hollow */
} rs__forest_row;
/* A forest plot: one series per row, a line at 0. */
void rs__svg_forest(rs__sb *b, const rs__plot *p, const rs__forest_row *rows, size_t n);

#endif
