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

/* The family of a cutoff measure's values in val[] (see rs__fused). */
static int family_of(rs_measure_id id)
{
  switch (id) {
  case RS_M_P: return 0;
  case RS_M_RECALL: return 1;
  case RS_M_SUCCESS: return 2;
  case RS_M_MAP_CUT: return 3;
  default: return -1;
  }
}

/* Where cutoff k is among the distinct ones (it is there: kcut holds every cut). */
static size_t cut_index(const rs__fused *f, long k)
{
  size_t d = 0;
  while (f->kcut[d] != k) d++;
  return d;
}

rs__fused *rs__fused_build(const rs_plan *plan, const rs_rag_measure *rag, size_t n_rag)
{
  /* Level 1 only: there the docs of positive grade (DCG's) are the
   * relevant ones, so one list of ranks serves every measure. */
  if (plan->relevance_level != 1 || plan->judged_only || plan->n_sel == 0) return NULL;
  for (size_t j = 0; j < n_rag; j++)
    if (rag[j].kind != RS_RAG_RR_CUT || rag[j].level != 1) return NULL;
  long kcut[RS_FUSED_MAX_CUTS]; /* the distinct cutoffs, kept ascending as they are met */
  size_t n_kcut = 0, n_val = 0, n_ndcg = 0, n_one = 0;
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    if (!is_fused_measure(m->id)) return NULL;
    if (!is_cutoff_measure(m->id)) {
      n_one++;
      continue;
    }
    if (m->id == RS_M_NDCG_CUT) n_ndcg++;
    else n_val += m->n_values;
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
  if (!f || !(f->val = rs__calloc(n_val ? n_val : 1, sizeof *f->val)) ||
      !(f->ndcg = rs__calloc(n_ndcg ? n_ndcg : 1, sizeof *f->ndcg)) ||
      !(f->one = rs__calloc(n_one ? n_one : 1, sizeof *f->one)) ||
      !(f->rag_slot = rs__calloc(n_rag ? n_rag : 1, sizeof *f->rag_slot))) {
    rs__fused_free(f);
    return NULL;
  }
  memcpy(f->kcut, kcut, n_kcut * sizeof *kcut);
  f->n_kcut = n_kcut;
  /* P's values first, then R's, Success's and AP@k's, each in plan order */
  size_t at = 0, end[4];
  for (int fam = 0; fam < 4; fam++) {
    for (size_t i = 0; i < plan->n_sel; i++) {
      const rs_measure_sel *m = &plan->sel[i];
      if (family_of(m->id) != fam) continue;
      for (size_t c = 0; c < m->n_values; c++)
        f->val[at++] = (rs__fused_val){(uint32_t)(m->slot + c), (uint32_t)cut_index(f, m->cut[c]), (double)m->cut[c]};
    }
    end[fam] = at;
  }
  f->p_end = end[0], f->r_end = end[1], f->s_end = end[2], f->ap_end = end[3];
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    if (m->id == RS_M_NDCG_CUT) {
      rs__fused_ndcg *g = &f->ndcg[f->n_ndcg++];
      g->n = m->n_values, g->cut = m->cut;
      for (size_t c = 0; c < m->n_values; c++) {
        g->kix[c] = (uint8_t)cut_index(f, m->cut[c]);
        g->slot[c] = (uint32_t)(m->slot + c);
      }
    } else if (!is_cutoff_measure(m->id)) {
      f->one[f->n_one++] = (rs__fused_one){m->id, m->slot};
    }
    f->needs_aps |= m->id == RS_M_MAP || m->id == RS_M_MAP_CUT;
    f->needs_dcg |= m->id == RS_M_NDCG_CUT;
  }
  f->rag = rag, f->n_rag = n_rag;
  for (size_t j = 0; j < n_rag; j++) f->rag_slot[j] = (uint32_t)(plan->n_values + j);
  return f;
}

void rs__fused_place(rs__fused *f, const size_t *place)
{
  for (size_t i = 0; i < f->ap_end; i++) f->val[i].slot = (uint32_t)place[f->val[i].slot];
  for (size_t g = 0; g < f->n_ndcg; g++)
    for (size_t c = 0; c < f->ndcg[g].n; c++) f->ndcg[g].slot[c] = (uint32_t)place[f->ndcg[g].slot[c]];
  for (size_t j = 0; j < f->n_one; j++) f->one[j].slot = place[f->one[j].slot];
  for (size_t j = 0; j < f->n_rag; j++) f->rag_slot[j] = (uint32_t)place[f->rag_slot[j]];
}

void rs__fused_free(rs__fused *f)
{
  if (!f) return;
  free(f->val);
  free(f->ndcg);
  free(f->one);
  free(f->rag_slot);
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

  /* Relevant docs above each distinct cutoff (relpos < n, so a cutoff past
   * the ranking counts them all, as the kernel's at(k, n)). */
  size_t crel[RS_FUSED_MAX_CUTS];
  double crel_d[RS_FUSED_MAX_CUTS];
  for (size_t d = 0, i = 0; d < f->n_kcut; d++) {
    while (i < rel_ret && (long)relpos[i] < f->kcut[d]) i++;
    crel[d] = i, crel_d[d] = (double)(long)i;
  }

  /* The sparse sums of topic.c's build_prefixes (at level 1 the docs of
   * positive grade are the relevant ones). */
  const double *aps = s->aps, *dcg = s->dcg;
  if (f->needs_aps) rs__sum_precisions(relpos, rel_ret, s->aps);
  if (f->needs_dcg) rs__sum_dcg(plan, rel, relpos, rel_ret, s->dcg);

  const double Rd = (double)R;
  const rs__fused_val *restrict v = f->val;
  size_t i = 0;
  for (; i < f->p_end; i++) out[v[i].slot] = crel_d[v[i].kix] / v[i].cut;
  if (R) {
    for (; i < f->r_end; i++) out[v[i].slot] = crel_d[v[i].kix] / Rd;
  } else {
    for (; i < f->r_end; i++) out[v[i].slot] = 0.0;
  }
  for (; i < f->s_end; i++) out[v[i].slot] = crel[v[i].kix] > 0 ? 1.0 : 0.0;
  if (R) {
    for (; i < f->ap_end; i++) out[v[i].slot] = aps[crel[v[i].kix]] / Rd;
  } else {
    for (; i < f->ap_end; i++) out[v[i].slot] = 0.0;
  }
  for (size_t g = 0; g < f->n_ndcg; g++) {
    const rs__fused_ndcg *m = &f->ndcg[g];
    double ideal[RS_FUSED_MAX_CUTS];
    rs__ideal_dcg_at_cutoffs(plan, lv, m->cut, m->n, ideal);
    for (size_t c = 0; c < m->n; c++) {
      const double d = dcg[crel[m->kix[c]]];
      out[m->slot[c]] = ideal[c] > 0.0 ? d / ideal[c] : d;
    }
  }
  for (size_t j = 0; j < f->n_one; j++) {
    double *o = out + f->one[j].slot;
    switch (f->one[j].id) {
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
  for (size_t j = 0; j < f->n_rag; j++)
    out[f->rag_slot[j]] = rel_ret && (long)relpos[0] < f->rag[j].cutoff ? 1.0 / (double)(relpos[0] + 1) : 0.0;
}
