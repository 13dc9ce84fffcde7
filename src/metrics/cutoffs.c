/* metrics/cutoffs.c: measures read off the prefix arrays at each cutoff k:
 * P, recall, relative_P, success, map_cut, ndcg_cut, unj.  A cutoff past
 * the end of the ranking sees the whole ranking (missing ranks count as
 * non-relevant; the denominators that use k keep k). */
#include "kernel.h"

static inline size_t at(long k, size_t n) { return (size_t)k < n ? (size_t)k : n; }

/* Ideal DCG of the topic truncated at each cutoff: the judged grades > 0 in
 * descending order, discounted by log2(rank + 1) and summed in rank order. */
void rs__ideal_dcg_at_cutoffs(const rs_plan *plan, const rs_levels *lv, const long *cut, size_t n_cut, double *idcg)
{
  if (n_cut == 0) return;
  double sum = 0.0;
  size_t pos = 0, c = 0, next = (size_t)cut[0]; /* the next cutoff to write */
  for (size_t k = lv->n; k-- > 0 && lv->grade[k] > 0;) {
    const double g = (double)lv->grade[k];
    for (const size_t end = pos + lv->count[k]; pos < end; pos++) {
      if (pos == next) { /* one compare a term: the cutoffs' own loop runs only at one */
        while (c < n_cut && (size_t)cut[c] == pos) idcg[c++] = sum;
        if (c == n_cut) return;
        next = (size_t)cut[c];
      }
      sum += g / rs__lg(plan, pos);
    }
  }
  while (c < n_cut) idcg[c++] = sum;
}

void rs__eval_cutoffs(const rs__topic *t, const rs_measure_sel *m, double *out)
{
  const size_t n = t->n, nc = m->n_values;
  const long *cut = m->cut;
  const double R = (double)t->R;
  switch (m->id) {
  case RS_M_P:
    for (size_t c = 0; c < nc; c++) out[c] = (double)rs__crel_at(t, at(cut[c], n)) / (double)cut[c];
    break;
  case RS_M_RECALL:
    for (size_t c = 0; c < nc; c++) out[c] = t->R ? (double)rs__crel_at(t, at(cut[c], n)) / R : 0.0;
    break;
  case RS_M_RELATIVE_P:
    for (size_t c = 0; c < nc; c++) {
      long d = cut[c] < t->R ? cut[c] : t->R;
      out[c] = t->R ? (double)rs__crel_at(t, at(cut[c], n)) / (double)d : 0.0;
    }
    break;
  case RS_M_SUCCESS:
    for (size_t c = 0; c < nc; c++) out[c] = rs__crel_at(t, at(cut[c], n)) > 0 ? 1.0 : 0.0;
    break;
  case RS_M_MAP_CUT:
    for (size_t c = 0; c < nc; c++) out[c] = t->R ? rs__aps_at(t, at(cut[c], n)) / R : 0.0;
    break;
  case RS_M_UNJ:
    for (size_t c = 0; c < nc; c++) out[c] = (double)t->s->cunj[at(cut[c], n)] / (double)cut[c];
    break;
  case RS_M_NDCG_CUT:
    /* out[] first holds IDCG@k, then DCG@k / IDCG@k (or DCG@k when the
     * ideal is 0, as trec_eval leaves it). */
    rs__ideal_dcg_at_cutoffs(t->plan, t->lv, cut, nc, out);
    for (size_t c = 0; c < nc; c++) {
      double dcg = rs__dcg_at(t, at(cut[c], n)), idcg = out[c];
      out[c] = idcg > 0.0 ? dcg / idcg : dcg;
    }
    break;
  default: break;
  }
}
