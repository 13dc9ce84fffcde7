/* metrics/gain.c: the graded-gain family that follows trec_eval's gain
 * tables: ndcg, G, ndcg_rel, Rndcg (gains overridable as level=gain), rbp
 * and rbp_resid.  The gain table lists the topic's grade levels with their
 * gains and counts, sorted by increasing gain; the ideal ranking walks it
 * from the top, spending `count` docs on each level. */
#include <math.h>

#include "kernel.h"

/* glibc's qsort (a top-down merge sort, taking from the left on ties) with
 * trec_eval's comparator, the integer-truncated gain difference.  That
 * comparator is not a total order (0 ~ 0.5 ~ 1.2 but 0 < 1.2), so only the
 * same algorithm gives the same table for custom fractional gains. */
static inline int cmp_gain(const rs_gain_level *a, const rs_gain_level *b) { return (int)(a->gain - b->gain); }

static void merge_sort_gains(rs_gain_level *b, size_t n, rs_gain_level *tmp)
{
  if (n <= 1) return;
  size_t n1 = n / 2, n2 = n - n1;
  rs_gain_level *b1 = b, *b2 = b + n1, *out = tmp;
  merge_sort_gains(b1, n1, tmp);
  merge_sort_gains(b2, n2, tmp);
  while (n1 > 0 && n2 > 0) {
    if (cmp_gain(b1, b2) <= 0) *out++ = *b1++, n1--;
    else *out++ = *b2++, n2--;
  }
  while (n1 > 0) *out++ = *b1++, n1--;
  for (size_t i = 0; i < (size_t)(out - tmp); i++) b[i] = tmp[i];
}

/* Builds the gain table in trec_eval's order: parameter levels first (in
 * the order given), then levels 0 .. highest grade not named there, with
 * gain = level and their doc counts (0 for a grade nobody has), sorted by
 * increasing gain.  With default gains the empty levels cannot change the
 * ideal ranking (distinct integer gains sort exactly), so they are left
 * out; so they are when the grades are too sparse for the scratch. */
static size_t gain_table(const rs__topic *t, const rs_measure_sel *m, rs_gain_level *gl, rs_gain_level *tmp)
{
  const rs_levels *lv = t->lv;
  size_t ng = 0;
  for (size_t i = 0; i < m->n_gains; i++) gl[ng++] = (rs_gain_level){m->gains[i].level, m->gains[i].gain, 0};
  const int all_levels = m->n_gains > 0 && (size_t)t->n_levels + m->n_gains <= t->s->cap_levels;
  size_t k = 0;
  for (long level = 0; level < t->n_levels; level++) {
    uint32_t count = 0;
    if (k < lv->n && lv->grade[k] == level) count = lv->count[k++];
    else if (!all_levels) {
      level = k < lv->n ? lv->grade[k] - 1 : t->n_levels; /* skip to the next present grade */
      continue;
    }
    size_t j = 0;
    while (j < m->n_gains && gl[j].level != level) j++;
    if (j < m->n_gains) gl[j].count = count;
    else gl[ng++] = (rs_gain_level){level, (double)level, count};
  }
  merge_sort_gains(gl, ng, tmp);
  return ng;
}

static inline double get_gain(const rs_gain_level *gl, size_t ng, long level)
{
  for (size_t i = 0; i < ng; i++)
    if (gl[i].level == level) return gl[i].gain;
  return 0.0;
}

/* The ideal ranking: `gain` is the ideal doc's gain at the current rank. */
typedef struct {
  const rs_gain_level *gl;
  long cur;
  uint32_t num_at;
  double gain;
} ideal_walk;

static inline void walk_init(ideal_walk *w, const rs_gain_level *gl, size_t ng)
{
  w->gl = gl;
  w->cur = (long)ng - 1;
  w->gain = w->cur >= 0 ? gl[w->cur].gain : 0.0;
  w->num_at = 0;
}

static inline void walk_step(ideal_walk *w)
{
  w->num_at++;
  while (w->cur >= 0 && w->num_at > w->gl[w->cur].count) {
    w->num_at = 1;
    w->cur--;
    w->gain = w->cur >= 0 ? w->gl[w->cur].gain : 0.0;
  }
}

static double ndcg(const rs__topic *t, const rs_gain_level *gl, size_t ng)
{
  const rs_plan *plan = t->plan;
  double dcg = 0.0, idcg = 0.0;
  ideal_walk w;
  walk_init(&w, gl, ng);
  size_t i = 0;
  for (; i < t->n && w.gain > 0.0; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    if (g != 0) dcg += g / rs__lg(plan, i);
    walk_step(&w);
    if (w.gain > 0.0) idcg += w.gain / rs__lg(plan, i);
  }
  for (; i < t->n; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    if (g != 0) dcg += g / rs__lg(plan, i);
  }
  for (; w.gain > 0.0; i++) {
    walk_step(&w);
    if (w.gain > 0.0) idcg += w.gain / rs__lg(plan, i);
  }
  return idcg > 0.0 ? dcg / idcg : 0.0;
}

static double gain_g(const rs__topic *t, const rs_gain_level *gl, size_t ng)
{
  const double min_cost = 1.0;
  double sum_results = 0.0, sum_ideal = 0.0, sum_cost = 0.0, results_g = 0.0;
  ideal_walk w;
  walk_init(&w, gl, ng);
  size_t i = 0;
  for (; i < t->n && w.gain > 0.0; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    sum_results += g;
    walk_step(&w);
    if (w.gain > 0.0) sum_ideal += w.gain;
    sum_cost += w.gain >= min_cost ? w.gain : min_cost;
    if (g != 0) results_g += g / log2(2 + sum_cost - sum_results);
  }
  for (; i < t->n; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    sum_results += g;
    sum_cost += min_cost;
    if (g != 0) results_g += g / log2(2 + sum_cost - sum_results);
  }
  while (w.gain > 0.0) {
    walk_step(&w);
    if (w.gain > 0.0) sum_ideal += w.gain;
  }
  return sum_ideal > 0.0 ? results_g / sum_ideal : 0.0;
}

static double ndcg_rel(const rs__topic *t, const rs_gain_level *gl, size_t ng)
{
  const rs_plan *plan = t->plan;
  double dcg = 0.0, idcg = 0.0, sum = 0.0;
  long num_rel = 0, num_rel_ret = 0;
  ideal_walk w;
  walk_init(&w, gl, ng);
  size_t i = 0;
  for (; i < t->n && w.gain > 0.0; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    if (g != 0) dcg += g / rs__lg(plan, i);
    walk_step(&w);
    if (w.gain > 0.0) {
      num_rel++;
      idcg += w.gain / rs__lg(plan, i);
    }
    if (g > 0) {
      sum += dcg / idcg;
      num_rel_ret++;
    }
  }
  for (; i < t->n; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    if (g != 0) dcg += g / rs__lg(plan, i);
    if (g > 0) {
      sum += dcg / idcg;
      num_rel_ret++;
    }
  }
  for (; w.gain > 0.0; i++) {
    walk_step(&w);
    if (w.gain > 0.0) {
      num_rel++;
      idcg += w.gain / rs__lg(plan, i);
    }
  }
  /* Relevant docs never retrieved each score the final DCG / IDCG. */
  sum += (double)(num_rel - num_rel_ret) * dcg / idcg;
  return sum > 0.0 ? sum / (double)num_rel : 0.0;
}

static double rndcg(const rs__topic *t, const rs_gain_level *gl, size_t ng)
{
  if (t->R == 0) return 0.0;
  const rs_plan *plan = t->plan;
  double dcg = 0.0, idcg = 0.0, sum = 0.0;
  long n_changes = 0;
  ideal_walk w;
  walk_init(&w, gl, ng);
  double old_gain = w.gain;
  size_t i = 0;
  for (; i < t->n && w.gain > 0.0; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    walk_step(&w);
    if (old_gain != w.gain) { /* an R-level boundary: sample ndcg here */
      if (idcg > 0.0) {
        sum += dcg / idcg;
        n_changes++;
      }
      old_gain = w.gain;
    }
    if (g != 0) dcg += g / rs__lg(plan, i);
    if (w.gain > 0.0) idcg += w.gain / rs__lg(plan, i);
  }
  if (i < t->n) {
    for (; i < t->n; i++) {
      double g = get_gain(gl, ng, t->rel[i]);
      if (g != 0) dcg += g / rs__lg(plan, i);
    }
    if (idcg > 0.0) {
      sum += dcg / idcg;
      n_changes++;
    }
  }
  for (; w.gain > 0.0; i++) {
    walk_step(&w);
    if (old_gain != w.gain) {
      if (idcg > 0.0) {
        sum += dcg / idcg;
        n_changes++;
      }
      old_gain = w.gain;
    }
    if (w.gain > 0.0) idcg += w.gain / rs__lg(plan, i);
  }
  return sum / (double)n_changes;
}

static int is_param_level(const rs_measure_sel *m, long level)
{
  for (size_t k = 0; k < m->n_gains; k++)
    if (m->gains[k].level == level) return 1;
  return 0;
}

/* rbp's gains lie in [0, 1]: when any gain of the table trec_eval builds
 * (the parameters, plus levels 0 .. highest grade) falls outside, all are
 * min-max normalised over that table, per topic. */
static double rbp(const rs__topic *t, const rs_measure_sel *m, rs_gain_level *gl, size_t ng)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < m->n_gains; i++) {
    if (m->gains[i].gain < lo) lo = m->gains[i].gain;
    if (m->gains[i].gain > hi) hi = m->gains[i].gain;
  }
  long a = 0, b = t->n_levels - 1;
  while (a < t->n_levels && is_param_level(m, a)) a++;
  while (b >= 0 && is_param_level(m, b)) b--;
  if (a < t->n_levels) {
    if ((double)a < lo) lo = (double)a;
    if ((double)b > hi) hi = (double)b;
  }
  if (lo <= hi && (lo < 0 || hi > 1))
    for (size_t i = 0; i < ng; i++) gl[i].gain = (gl[i].gain - lo) / (hi - lo);

  const double p = m->p;
  double sum = 0.0, cur_p = 1.0;
  for (size_t i = 0; i < t->n; i++) {
    double g = get_gain(gl, ng, t->rel[i]);
    if (g != 0) sum += g * cur_p;
    cur_p = cur_p * p;
  }
  return (1.0 - p) * sum;
}

static double rbp_resid(const rs__topic *t, double p)
{
  double sum = 0.0, cur_p = 1.0;
  long unjudged = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (t->rel[i] < 0) {
      unjudged++;
      sum += cur_p;
    }
    cur_p = cur_p * p;
  }
  return unjudged ? cur_p + (1 - p) * sum : 0.0;
}

void rs__eval_gain(const rs__topic *t, const rs_measure_sel *m, double *out)
{
  rs_gain_level *gl = t->s->gl;
  if (m->id == RS_M_RBP_RESID) {
    out[0] = rbp_resid(t, m->p);
    return;
  }
  size_t ng = gain_table(t, m, gl, t->s->gl_tmp);
  switch (m->id) {
  case RS_M_NDCG: out[0] = ndcg(t, gl, ng); break;
  case RS_M_G: out[0] = gain_g(t, gl, ng); break;
  case RS_M_NDCG_REL: out[0] = ndcg_rel(t, gl, ng); break;
  case RS_M_RNDCG: out[0] = rndcg(t, gl, ng); break;
  case RS_M_RBP: out[0] = rbp(t, m, gl, ng); break;
  default: break;
  }
}
