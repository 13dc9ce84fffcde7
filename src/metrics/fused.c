/* metrics/fused.c: the default plans' values from one walk of the relevant
 * ranks (see fused.h).  Every formula below is the general kernel's for the
 * same measure (cutoffs.c, ranked.c, counts.c, rag.c), read at counts
 * taken once per distinct cutoff instead of once per value. */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "fused.h"
#include "kernel.h"

static int is_cutoff_measure(rs_measure_id id)
{
  return id == RS_M_P || id == RS_M_RECALL || id == RS_M_SUCCESS || id == RS_M_MAP_CUT || id == RS_M_NDCG_CUT;
}

static int is_fused_measure(rs_measure_id id)
{
  return is_cutoff_measure(id) || id == RS_M_MAP || id == RS_M_RPREC || id == RS_M_RECIP_RANK ||
         id == RS_M_NUM_RET || id == RS_M_NUM_REL || id == RS_M_NUM_REL_RET;
}

rs__fused *rs__fused_build(const rs_plan *plan, const rs_rag_measure *rag, size_t n_rag)
{
  /* Level 1 only: there the docs of positive grade (DCG's) are the
   * relevant ones, so one list of ranks serves every measure. */
  if (plan->relevance_level != 1 || plan->judged_only || plan->n_sel == 0) return NULL;
  for (size_t j = 0; j < n_rag; j++)
    if (rag[j].kind != RS_RAG_RR_CUT || rag[j].level != 1) return NULL;
  long kcut[RS_FUSED_MAX_CUTS]; /* the distinct cutoffs, kept ascending as they are met */
  size_t n_kcut = 0;
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    if (!is_fused_measure(m->id)) return NULL;
    if (!is_cutoff_measure(m->id)) continue;
    for (size_t c = 0; c < m->n_values; c++) {
      const long k = m->cut[c];
      size_t d = 0;
      while (d < n_kcut && kcut[d] < k) d++;
      if (d < n_kcut && kcut[d] == k) continue;
      if (n_kcut == RS_FUSED_MAX_CUTS) return NULL;
      memmove(kcut + d + 1, kcut + d, (n_kcut - d) * sizeof *kcut);
      kcut[d] = k, n_kcut++;
    }
  }
  rs__fused *f = rs__calloc(1, sizeof *f);
  if (!f || !(f->sel = rs__calloc(plan->n_sel, sizeof *f->sel))) {
    free(f);
    return NULL;
  }
  memcpy(f->kcut, kcut, n_kcut * sizeof *kcut);
  f->n_kcut = n_kcut;
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    rs__fused_sel *fs = &f->sel[i];
    fs->id = m->id, fs->slot = m->slot, fs->n = m->n_values, fs->cut = m->cut;
    if (is_cutoff_measure(m->id))
      for (size_t c = 0; c < m->n_values; c++) {
        size_t d = 0;
        while (f->kcut[d] != m->cut[c]) d++; /* it is there: kcut holds every cut */
        fs->kix[c] = (uint8_t)d;
      }
    f->needs_aps |= m->id == RS_M_MAP || m->id == RS_M_MAP_CUT;
    f->needs_dcg |= m->id == RS_M_NDCG_CUT;
  }
  f->n_sel = plan->n_sel;
  f->rag = rag, f->n_rag = n_rag;
  return f;
}

void rs__fused_free(rs__fused *f)
{
  if (!f) return;
  free(f->sel);
  free(f);
}

void rs__fused_eval(const rs__fused *f, const rs_plan *plan, const int32_t *restrict rel, size_t n,
                    const int32_t *restrict judged, size_t n_judged, const rs_levels *lv, rs_scratch *s, double *out)
{
  long R = 0; /* num_rel: judged docs of grade >= 1 */
  for (size_t k = 0; k < lv->n; k++) R += lv->grade[k] >= 1 ? (long)lv->count[k] : 0;

  /* The relevant ranks, ascending: every relevant doc is judged. */
  int32_t *restrict relpos = s->relpos;
  size_t rel_ret = 0;
  for (size_t j = 0; j < n_judged; j++) relpos[rel_ret] = judged[j], rel_ret += rel[judged[j]] >= 1;

  /* Relevant docs above each distinct cutoff: one walk (relpos < n, so a
   * cutoff past the ranking counts them all, as the kernel's at(k, n)). */
  size_t crel[RS_FUSED_MAX_CUTS];
  for (size_t d = 0, i = 0; d < f->n_kcut; d++) {
    while (i < rel_ret && (long)relpos[i] < f->kcut[d]) i++;
    crel[d] = i;
  }

  /* The sparse sums of topic.c's build_prefixes (at level 1 the docs of
   * positive grade are the relevant ones). */
  const double *aps = s->aps, *dcg = s->dcg;
  if (f->needs_aps) rs__sum_precisions(relpos, rel_ret, s->aps);
  if (f->needs_dcg) rs__sum_dcg(plan, rel, relpos, rel_ret, s->dcg);

  const double Rd = (double)R;
  for (size_t i = 0; i < f->n_sel; i++) {
    const rs__fused_sel *m = &f->sel[i];
    double *o = out + m->slot;
    const uint8_t *kix = m->kix;
    switch (m->id) {
    case RS_M_P:
      for (size_t c = 0; c < m->n; c++) o[c] = (double)(long)crel[kix[c]] / (double)m->cut[c];
      break;
    case RS_M_RECALL:
      for (size_t c = 0; c < m->n; c++) o[c] = R ? (double)(long)crel[kix[c]] / Rd : 0.0;
      break;
    case RS_M_SUCCESS:
      for (size_t c = 0; c < m->n; c++) o[c] = crel[kix[c]] > 0 ? 1.0 : 0.0;
      break;
    case RS_M_MAP_CUT:
      for (size_t c = 0; c < m->n; c++) o[c] = R ? aps[crel[kix[c]]] / Rd : 0.0;
      break;
    case RS_M_NDCG_CUT:
      rs__ideal_dcg_at_cutoffs(plan, lv, m->cut, m->n, o);
      for (size_t c = 0; c < m->n; c++) {
        const double d = dcg[crel[kix[c]]], ideal = o[c];
        o[c] = ideal > 0.0 ? d / ideal : d;
      }
      break;
    case RS_M_MAP: o[0] = rel_ret ? aps[rel_ret] / Rd : 0.0; break;
    case RS_M_RPREC: {
      const size_t look = n < (size_t)R ? n : (size_t)R;
      o[0] = look ? (double)(long)rs__count_below(relpos, rel_ret, look) / Rd : 0.0;
      break;
    }
    case RS_M_RECIP_RANK: o[0] = rel_ret ? 1.0 / (double)(relpos[0] + 1) : 0.0; break;
    case RS_M_NUM_RET: o[0] = (double)(long)n; break;
    case RS_M_NUM_REL: o[0] = Rd; break;
    case RS_M_NUM_REL_RET: o[0] = (double)(long)rel_ret; break;
    default: break; /* rs__fused_build admits no other */
    }
  }
  /* RR@k: the first relevant rank is relpos[0] (rag.c walks rel[] to it). */
  double *rr = out + plan->n_values;
  for (size_t j = 0; j < f->n_rag; j++)
    rr[j] = rel_ret && (long)relpos[0] < f->rag[j].cutoff ? 1.0 / (double)(relpos[0] + 1) : 0.0;
}
