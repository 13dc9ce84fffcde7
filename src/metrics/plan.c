/* plan.c: the trec_eval measure catalogue, "-m" parsing and output names. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "metrics/kernel.h"
#include "ragsweep/measures.h"

typedef enum {
  PK_NONE,        /* no parameters */
  PK_CUT_LONG,    /* "5,10,15": positive, unique, sorted; names P_5 */
  PK_CUT_DOUBLE,  /* "0.0,.5": sorted; names iprec_at_recall_0.50 */
  PK_LIST_SORTED, /* "0.2,0.5,0.8": sorted doubles; name 11pt_avg_<as given> */
  PK_LIST,        /* "2,-1,0,0": doubles in order; name utility_<as given> */
  PK_PAIRS        /* "1=3,2=9" or "p=0.8"; name ndcg_<as given> */
} param_kind;

typedef struct {
  const char *name;
  param_kind kind;
  rs_summary_kind summary;
  unsigned char integer;   /* printed with %ld */
  unsigned char per_topic; /* printed on -q lines */
  unsigned char official;  /* in the "official" nickname */
  const char *defaults;
  size_t n_list; /* exact count a PK_LIST needs (0: any) */
} measure_info;

static const measure_info catalogue[RS_N_MEASURES] = {
    [RS_M_RUNID] = {"runid", PK_NONE, RS_SUM_RUNID, 0, 0, 1, NULL, 0},
    [RS_M_NUM_Q] = {"num_q", PK_NONE, RS_SUM_NUM_Q, 1, 0, 1, NULL, 0},
    [RS_M_NUM_RET] = {"num_ret", PK_NONE, RS_SUM_TOTAL, 1, 1, 1, NULL, 0},
    [RS_M_NUM_REL] = {"num_rel", PK_NONE, RS_SUM_TOTAL, 1, 1, 1, NULL, 0},
    [RS_M_NUM_REL_RET] = {"num_rel_ret", PK_NONE, RS_SUM_TOTAL, 1, 1, 1, NULL, 0},
    [RS_M_MAP] = {"map", PK_NONE, RS_SUM_MEAN, 0, 1, 1, NULL, 0},
    [RS_M_GM_MAP] = {"gm_map", PK_NONE, RS_SUM_GEOM, 0, 0, 1, NULL, 0},
    [RS_M_RPREC] = {"Rprec", PK_NONE, RS_SUM_MEAN, 0, 1, 1, NULL, 0},
    [RS_M_BPREF] = {"bpref", PK_NONE, RS_SUM_MEAN, 0, 1, 1, NULL, 0},
    [RS_M_RECIP_RANK] = {"recip_rank", PK_NONE, RS_SUM_MEAN, 0, 1, 1, NULL, 0},
    [RS_M_IPREC_AT_RECALL] = {"iprec_at_recall", PK_CUT_DOUBLE, RS_SUM_MEAN, 0, 1, 1,
                              "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0", 0},
    [RS_M_P] = {"P", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 1, "5,10,15,20,30,100,200,500,1000", 0},
    [RS_M_RELSTRING] = {"relstring", PK_LIST, RS_SUM_NONE, 0, 1, 0, "10", 1},
    [RS_M_RECALL] = {"recall", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0, "5,10,15,20,30,100,200,500,1000", 0},
    [RS_M_INFAP] = {"infAP", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_GM_BPREF] = {"gm_bpref", PK_NONE, RS_SUM_GEOM, 0, 0, 0, NULL, 0},
    [RS_M_RPREC_MULT] = {"Rprec_mult", PK_CUT_DOUBLE, RS_SUM_MEAN, 0, 1, 0,
                         "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", 0},
    [RS_M_UTILITY] = {"utility", PK_LIST, RS_SUM_MEAN, 0, 1, 0, "1,-1,0,0", 4},
    [RS_M_PT11_AVG] = {"11pt_avg", PK_LIST_SORTED, RS_SUM_MEAN, 0, 1, 0,
                       "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0", 0},
    [RS_M_BING] = {"binG", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_G] = {"G", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_NDCG] = {"ndcg", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_NDCG_REL] = {"ndcg_rel", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_RNDCG] = {"Rndcg", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_NDCG_CUT] = {"ndcg_cut", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0, "5,10,15,20,30,100,200,500,1000", 0},
    [RS_M_MAP_CUT] = {"map_cut", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0, "5,10,15,20,30,100,200,500,1000", 0},
    [RS_M_RELATIVE_P] = {"relative_P", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0,
                         "5,10,15,20,30,100,200,500,1000", 0},
    [RS_M_SUCCESS] = {"success", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0, "1,5,10", 0},
    [RS_M_SET_P] = {"set_P", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_SET_RELATIVE_P] = {"set_relative_P", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_SET_RECALL] = {"set_recall", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_SET_MAP] = {"set_map", PK_NONE, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_SET_F] = {"set_F", PK_LIST, RS_SUM_MEAN, 0, 1, 0, "1.0", 1},
    [RS_M_NUM_NONREL_JUDGED_RET] = {"num_nonrel_judged_ret", PK_NONE, RS_SUM_TOTAL, 1, 1, 0, NULL, 0},
    [RS_M_RBP] = {"rbp", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_RBP_RESID] = {"rbp_resid", PK_PAIRS, RS_SUM_MEAN, 0, 1, 0, NULL, 0},
    [RS_M_UNJ] = {"unj", PK_CUT_LONG, RS_SUM_MEAN, 0, 1, 0, "5,10,20", 0},
};

const char *rs_measure_name(rs_measure_id id) { return catalogue[id].name; }
rs_summary_kind rs_measure_summary(rs_measure_id id) { return catalogue[id].summary; }
int rs_measure_is_integer(rs_measure_id id) { return catalogue[id].integer; }
int rs_measure_per_topic(rs_measure_id id) { return catalogue[id].per_topic; }

void rs_plan_init(rs_plan *plan)
{
  memset(plan, 0, sizeof *plan);
  plan->relevance_level = 1;
  plan->max_docs = LONG_MAX;
}

static void sel_free(rs_measure_sel *s)
{
  free(s->cut);
  free(s->dcut);
  free(s->dparam);
  free(s->gains);
  free(s->param_str);
  if (s->names)
    for (size_t i = 0; i < s->n_values; i++) free(s->names[i]);
  free(s->names);
  memset(s, 0, sizeof *s);
}

void rs_plan_free(rs_plan *plan)
{
  if (!plan) return;
  for (size_t i = 0; i < plan->n_sel; i++) sel_free(&plan->sel[i]);
  free(plan->lg);
  plan->lg = NULL;
  plan->n_sel = 0;
}

static int cmp_long(const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Splits a comma list; returns the count, or -1 on allocation failure.
 * Items point into the (modified) copy *buf. */
static long split_commas(const char *params, char **buf, char ***items)
{
  *buf = strdup(params);
  if (!*buf) return -1;
  size_t n = 1;
  for (const char *c = params; *c; c++) n += *c == ',';
  *items = rs__malloc(n * sizeof **items);
  if (!*items) return -1;
  size_t k = 0;
  char *s = *buf;
  for (;;) {
    (*items)[k++] = s;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = '\0';
    s = c + 1;
  }
  return (long)k;
}

static int valid_int(const char *s)
{
  if (*s == '-' || *s == '+') s++;
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* Parses params for measure id into s (which is zeroed by the caller). */
static rs_code parse_params(rs_measure_id id, const char *params, rs_measure_sel *s, rs_error *err)
{
  const measure_info *mi = &catalogue[id];
  char *buf = NULL, **items = NULL;
  rs_code rc = RS_OK;
  long n = split_commas(params, &buf, &items);
  if (n < 0) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  switch (mi->kind) {
  case PK_NONE: break;
  case PK_CUT_LONG:
    s->cut = rs__malloc((size_t)n * sizeof *s->cut);
    if (!s->cut) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (long i = 0; i < n; i++) {
      char *e;
      s->cut[i] = strtol(items[i], &e, 10);
      if (e == items[i] || s->cut[i] <= 0) {
        rc = rs__fail(err, RS_USAGE, "measure %s: cutoff '%s' is not a positive integer", mi->name, items[i]);
        goto done;
      }
    }
    qsort(s->cut, (size_t)n, sizeof *s->cut, cmp_long);
    for (long i = 1; i < n; i++)
      if (s->cut[i] == s->cut[i - 1]) {
        rc = rs__fail(err, RS_USAGE, "measure %s: cutoff %ld is given twice", mi->name, s->cut[i]);
        goto done;
      }
    s->n_values = (size_t)n;
    break;
  case PK_CUT_DOUBLE:
  case PK_LIST_SORTED:
  case PK_LIST: {
    double *v = rs__malloc((size_t)n * sizeof *v);
    if (!v) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (long i = 0; i < n; i++) {
      char *e;
      v[i] = strtod(items[i], &e);
      if (e == items[i] || *e) {
        free(v);
        rc = rs__fail(err, RS_USAGE, "measure %s: parameter '%s' is not a number", mi->name, items[i]);
        goto done;
      }
    }
    if (mi->kind != PK_LIST) qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (mi->n_list && (size_t)n != mi->n_list) {
      free(v);
      rc = rs__fail(err, RS_USAGE, "measure %s: expected %zu parameter%s, found %ld", mi->name, mi->n_list,
                    mi->n_list == 1 ? "" : "s", n);
      goto done;
    }
    if (mi->kind == PK_CUT_DOUBLE) {
      s->dcut = v;
      s->n_values = (size_t)n;
    } else {
      s->dparam = v;
      s->n_dparam = (size_t)n;
      s->n_values = 1;
    }
    break;
  }
  case PK_PAIRS:
    s->p = 0.9;
    s->gains = rs__malloc((size_t)n * sizeof *s->gains);
    if (!s->gains) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
    for (long i = 0; i < n; i++) {
      if (!*items[i]) continue; /* the empty default list */
      char *eq = strchr(items[i], '=');
      if (!eq) {
        rc = rs__fail(err, RS_USAGE, "measure %s: parameter '%s' is not of the form name=value", mi->name,
                      items[i]);
        goto done;
      }
      *eq = '\0';
      char *e;
      double val = strtod(eq + 1, &e);
      if (e == eq + 1) {
        rc = rs__fail(err, RS_USAGE, "measure %s: value of '%s' is not a number", mi->name, items[i]);
        goto done;
      }
      if (strcmp(items[i], "p") == 0) s->p = val;
      else if (valid_int(items[i])) s->gains[s->n_gains++] = (rs_gain_pair){strtol(items[i], NULL, 10), val};
    }
    break;
  }
  if (mi->kind == PK_NONE || mi->kind == PK_PAIRS) s->n_values = 1;
done:
  free(buf);
  free(items);
  return rc;
}

static rs_code add_measure(rs_plan *plan, rs_measure_id id, const char *params, rs_error *err)
{
  const measure_info *mi = &catalogue[id];
  if (params && mi->kind == PK_NONE)
    return rs__fail(err, RS_USAGE, "measure %s takes no parameters (found '%s')", mi->name, params);
  rs_measure_sel *s;
  if (plan->chosen[id]) {
    s = &plan->sel[plan->chosen[id] - 1];
    if (!params || s->param_str) return RS_OK; /* the first parameter string wins */
    rs_measure_sel fresh = {.id = id};
    rs_code rc = parse_params(id, params, &fresh, err);
    if (rc) { sel_free(&fresh); return rc; }
    fresh.param_str = strdup(params);
    if (!fresh.param_str) { sel_free(&fresh); return rs__fail(err, RS_NOMEM, "out of memory"); }
    sel_free(s);
    *s = fresh;
    return RS_OK;
  }
  rs_measure_sel fresh = {.id = id};
  rs_code rc = parse_params(id, params ? params : (mi->defaults ? mi->defaults : ""), &fresh, err);
  if (!rc && params && !(fresh.param_str = strdup(params))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (rc) { sel_free(&fresh); return rc; }
  plan->sel[plan->n_sel++] = fresh;
  plan->chosen[id] = (int)plan->n_sel;
  return RS_OK;
}

rs_code rs_plan_add(rs_plan *plan, const char *arg, rs_error *err)
{
  char name[64];
  const char *dot = strchr(arg, '.');
  size_t len = dot ? (size_t)(dot - arg) : strlen(arg);
  if (len >= sizeof name) return rs__fail(err, RS_USAGE, "unknown measure '%s'", arg);
  memcpy(name, arg, len);
  name[len] = '\0';
  const char *params = dot ? dot + 1 : NULL;
  if (strcmp(name, "all_trec") == 0 || strcmp(name, "official") == 0) {
    if (params) return rs__fail(err, RS_USAGE, "nickname '%s' takes no parameters", name);
    int official = name[0] == 'o';
    for (int id = 0; id < RS_N_MEASURES; id++) {
      if (official && !catalogue[id].official) continue;
      rs_code rc = add_measure(plan, (rs_measure_id)id, NULL, err);
      if (rc) return rc;
    }
    return RS_OK;
  }
  for (int id = 0; id < RS_N_MEASURES; id++)
    if (strcmp(name, catalogue[id].name) == 0) return add_measure(plan, (rs_measure_id)id, params, err);
  return rs__fail(err, RS_USAGE, "unknown measure '%s' (see 'ragsweep trec_eval -h' for the list)", name);
}

static int cmp_sel(const void *a, const void *b)
{
  const rs_measure_sel *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static char *fmt_name(const char *fmt, ...) RS_PRINTF(1, 2);
static char *fmt_name(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  return strdup(tmp);
}

rs_code rs_plan_finish(rs_plan *plan, size_t max_ranking, rs_error *err)
{
  qsort(plan->sel, plan->n_sel, sizeof plan->sel[0], cmp_sel);
  memset(plan->chosen, 0, sizeof plan->chosen);
  plan->n_values = 0;
  plan->relstring_len = 0;
  for (size_t i = 0; i < plan->n_sel; i++) {
    rs_measure_sel *s = &plan->sel[i];
    const measure_info *mi = &catalogue[s->id];
    plan->chosen[s->id] = (int)i + 1;
    s->slot = plan->n_values;
    plan->n_values += s->n_values;
    s->names = rs__calloc(s->n_values, sizeof *s->names);
    if (!s->names) return rs__fail(err, RS_NOMEM, "out of memory");
    for (size_t k = 0; k < s->n_values; k++) {
      if (mi->kind == PK_CUT_LONG) s->names[k] = fmt_name("%s_%ld", mi->name, s->cut[k]);
      else if (mi->kind == PK_CUT_DOUBLE) s->names[k] = fmt_name("%s_%3.2f", mi->name, s->dcut[k]);
      else if (s->param_str) s->names[k] = fmt_name("%s_%s", mi->name, s->param_str);
      else s->names[k] = strdup(mi->name);
      if (!s->names[k]) return rs__fail(err, RS_NOMEM, "out of memory");
    }
    if (s->id == RS_M_RELSTRING) {
      double len = s->dparam[0];
      plan->relstring_len = len > 0 ? (size_t)(long)len : 0;
    }
  }
  plan->needs = rs__kernel_needs(plan);
  size_t n_lg = max_ranking + 1;
  if (n_lg < 4096) n_lg = 4096;
  free(plan->lg);
  plan->lg = rs__malloc(n_lg * sizeof *plan->lg);
  if (!plan->lg) return rs__fail(err, RS_NOMEM, "out of memory");
  for (size_t i = 0; i < n_lg; i++) plan->lg[i] = log2((double)(i + 2));
  plan->n_lg = n_lg;
  return RS_OK;
}
