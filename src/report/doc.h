/* doc.h: the report page being written (internal to html.c and
 * sections.c): the body text, one series style per configuration name
 * across all folders (so a configuration has one colour everywhere), the
 * attributes the filter offers, and unique chart ids. */
#ifndef RAGSWEEP_REPORT_DOC_H
#define RAGSWEEP_REPORT_DOC_H

#include <stddef.h>

#include "report/folder.h"
#include "report/html.h"
#include "report/svg.h"
#include "util/strbuf.h"
#include "util/strdict.h"

typedef struct rs__doc {
  rs__sb body;             /* the sections */
  rs__sb toc;              /* the table of contents' items */
  const rs__report_opts *o;
  rs__strdict styles;      /* configuration names met so far */
  size_t *style_of;        /* [styles.n] their styles */
  size_t cap_styles, next_style;
  rs__strdict attr_names;  /* the filter's attributes, in order met */
  rs__strdict *attr_vals;  /* [attr_names.n] their values (grown with attr_names) */
  size_t cap_attrs;
  rs__strdict ids;         /* chart ids used */
  int failed;              /* out of memory somewhere: the take fails */
  char id_buf[160];        /* the last id made by rs__doc_id */
} rs__doc;

/* The style of configuration `name` (a new one gets next_style, which
 * rs__doc_folder resets to 0 for a folder of configurations not met yet). */
size_t rs__doc_style(rs__doc *d, const char *name);
/* Notes attribute `name` = `value` for the filter. */
void rs__doc_attr(rs__doc *d, const char *name, const char *value);
/* A unique chart id "chart-" + the words, made of [a-z0-9-] (a view valid
 * until the next call). */
const char *rs__doc_id(rs__doc *d, const char *words);

/* Table cells: a number shown with `decimals` digits (or %.3g when
 * decimals < 0) and its exact value in data-value; NaN: an empty cell. */
void rs__doc_td_num(rs__sb *b, double v, int decimals);
/* A text cell. */
void rs__doc_td(rs__sb *b, const char *s);
/* A header cell (numeric columns right-aligned). */
void rs__doc_th(rs__sb *b, const char *s, int numeric);
/* The swatch of style i (colour, dash, marker) before a name. */
void rs__doc_swatch(rs__sb *b, size_t style);
/* A section heading h3 with an anchor, also listed in the table of
 * contents under the folder's heading. */
void rs__doc_h3(rs__doc *d, const char *id, const char *title);

/* The sections of one folder (sections.c); i is its 1-based position. */
void rs__doc_folder(rs__doc *d, const rs__folder *f, size_t i);

#endif
