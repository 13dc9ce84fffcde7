/* metrics/ranked.c: measures of the whole ranking: map (and gm_map's term),
 * Rprec, recip_rank, binG, and the interpolated-precision family
 * (iprec_at_recall, 11pt_avg, Rprec_mult), which trec_eval computes in one
 * backwards walk from the last retrieved doc. */
#include <math.h>

#include "kernel.h"

static double average_precision(const rs__topic *t)
{
  return t->rel_ret ? rs__aps_at(t, t->n) / (double)t->R : 0.0;
}

/* Interpolated precision at relevant-doc counts cut[0..nc) (ascending):
 * the best precision at or below the rank of the cut[c]-th relevant doc.
 * Cuts above num_rel_ret are left untouched (the caller zeroed them).
 * With nothing retrieved this yields 0/0 = NaN, as trec_eval prints. */
static void interpolated_precision(const rs__topic *t, const long *cut, size_t nc, double *val)
{
  const int32_t *rel = t->rel;
  const long L = t->L;
  long cc = (long)nc - 1;
  while (cc >= 0 && cut[cc] > t->rel_ret) cc--;
  double precis = (double)t->rel_ret / (double)t->n, best = precis;
  long rel_so_far = t->rel_ret;
  for (size_t i = t->n; i > 0 && rel_so_far > 0; i--) {
    precis = (double)rel_so_far / (double)i;
    if (best < precis) best = precis;
    if (rel[i - 1] >= L) {
      while (cc >= 0 && rel_so_far == cut[cc]) val[cc--] = best;
      rel_so_far--;
    }
  }
  while (cc >= 0) val[cc--] = best;
}

enum { MAX_STACK_CUTS = 64 };

void rs__eval_ranked(const rs__topic *t, const rs_measure_sel *m, double *out)
{
  const int32_t *rel = t->rel;
  const size_t n = t->n;
  const long L = t->L, R = t->R;
  switch (m->id) {
  case RS_M_MAP: out[0] = average_precision(t); break;
  case RS_M_GM_MAP: {
    double ap = average_precision(t);
    out[0] = log(ap > RS_MIN_GEO_MEAN ? ap : RS_MIN_GEO_MEAN);
    break;
  }
  case RS_M_RPREC: {
    size_t look = n < (size_t)R ? n : (size_t)R;
    out[0] = look ? (double)rs__crel_at(t, look) / (double)R : 0.0;
    break;
  }
  case RS_M_RECIP_RANK: /* the first relevant doc's rank: relpos[0] (RS_NEED_CREL) */
    out[0] = t->rel_ret ? 1.0 / (double)(t->s->relpos[0] + 1) : 0.0;
    break;
  case RS_M_BING: {
    double sum = 0.0;
    long rel_so_far = 0;
    for (size_t i = 0; i < n; i++)
      if (rel[i] >= L) {
        rel_so_far++;
        sum += 1.0 / log2((double)(3 + (long)i - rel_so_far));
      }
    out[0] = rel_so_far ? sum / (double)R : 0.0;
    break;
  }
  case RS_M_IPREC_AT_RECALL:
  case RS_M_PT11_AVG: {
    /* Cut = lround(x * R) relevant docs (10.0; 9.0.x truncated x*R + 0.9). */
    const double *x = m->id == RS_M_PT11_AVG ? m->dparam : m->dcut;
    const size_t nc = m->id == RS_M_PT11_AVG ? m->n_dparam : m->n_values;
    long cut[MAX_STACK_CUTS];
    double val[MAX_STACK_CUTS];
    double sum = 0.0;
    /* More than 64 recall points is unheard of; past that, walk in slices,
     * the highest slice first, because trec_eval adds the highest cut
     * first. */
    for (size_t hi = nc; hi > 0;) {
      size_t lo = hi > MAX_STACK_CUTS ? hi - MAX_STACK_CUTS : 0, k = hi - lo;
      for (size_t c = 0; c < k; c++) {
        cut[c] = lround(x[lo + c] * (double)R);
        val[c] = 0.0;
      }
      interpolated_precision(t, cut, k, val);
      if (m->id == RS_M_IPREC_AT_RECALL)
        for (size_t c = 0; c < k; c++) out[lo + c] = val[c];
      else
        for (size_t c = k; c-- > 0;) sum += val[c];
      hi = lo;
    }
    if (m->id == RS_M_PT11_AVG) out[0] = sum / (double)nc;
    break;
  }
  case RS_M_RPREC_MULT: {
    /* P at (long)(x * R + 0.9) docs: 10.0 kept the old rounding here. */
    const size_t nc = m->n_values;
    long cc = (long)nc - 1;
    for (size_t c = 0; c < nc; c++) out[c] = 0.0;
#define CUT(c) ((long)(m->dcut[c] * (double)R + 0.9))
    while (cc >= 0 && CUT(cc) > (long)n) {
      out[cc] = (double)t->rel_ret / (double)CUT(cc);
      cc--;
    }
    long rel_so_far = t->rel_ret;
    for (size_t i = n; i > 0 && rel_so_far > 0; i--) {
      double precis = (double)rel_so_far / (double)i;
      while (cc >= 0 && (long)i == CUT(cc)) out[cc--] = precis;
      if (rel[i - 1] >= L) rel_so_far--;
    }
#undef CUT
    break;
  }
  default: break;
  }
}
