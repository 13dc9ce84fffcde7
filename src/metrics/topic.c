/* metrics/topic.c: rs_eval_topic, the per-topic entry point: counts,
 * prefix arrays, then each chosen measure's family. */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "kernel.h"
#include "topic.h"

unsigned rs__kernel_needs(const rs_plan *plan)
{
  unsigned needs = 0;
  for (size_t i = 0; i < plan->n_sel; i++) {
    switch (plan->sel[i].id) {
    case RS_M_MAP:
    case RS_M_GM_MAP:
    case RS_M_MAP_CUT: needs |= RS_NEED_APS | RS_NEED_CREL; break;
    case RS_M_NDCG_CUT: needs |= RS_NEED_DCG; break;
    case RS_M_UNJ: needs |= RS_NEED_CUNJ; break;
    case RS_M_P:
    case RS_M_RECALL:
    case RS_M_RELATIVE_P:
    case RS_M_SUCCESS:
    case RS_M_RECIP_RANK:
    case RS_M_RPREC: needs |= RS_NEED_CREL; break;
    default: break;
    }
  }
  return needs;
}

rs_code rs_scratch_init(rs_scratch *s, const rs_plan *plan, size_t cap, size_t max_levels, rs_error *err)
{
  memset(s, 0, sizeof *s);
  s->cap = cap;
  size_t n_params = 0;
  for (size_t i = 0; i < plan->n_sel; i++)
    if (plan->sel[i].n_gains > n_params) n_params = plan->sel[i].n_gains;
  s->cap_levels = max_levels + n_params;
  s->gl = rs__malloc_lines(rs__mul(s->cap_levels, sizeof *s->gl));
  s->gl_tmp = rs__malloc_lines(rs__mul(s->cap_levels, sizeof *s->gl_tmp));
  s->relpos = rs__malloc_lines(rs__mul(cap + 1, sizeof *s->relpos));
  s->pospos = rs__malloc_lines(rs__mul(cap + 1, sizeof *s->pospos));
  s->cunj = rs__malloc_lines(rs__mul(cap + 1, sizeof *s->cunj));
  s->aps = rs__malloc_lines(rs__mul(cap + 1, sizeof *s->aps));
  s->dcg = rs__malloc_lines(rs__mul(cap + 1, sizeof *s->dcg));
  if (!s->relpos || !s->pospos || !s->cunj || !s->aps || !s->dcg || !s->gl || !s->gl_tmp) {
    rs_scratch_free(s);
    return rs__fail(err, RS_NOMEM, "out of memory for scratch of %zu ranks", cap);
  }
  return RS_OK;
}

void rs_scratch_free(rs_scratch *s)
{
  if (!s) return;
  free(s->relpos);
  free(s->pospos);
  free(s->cunj);
  free(s->aps);
  free(s->dcg);
  free(s->gl);
  free(s->gl_tmp);
  memset(s, 0, sizeof *s);
}

/* Builds what the plan's measures read: the counts, the ranks of the
 * relevant (and of the positive-grade) docs, and the sums over them.  The
 * double sums add a term only at the docs that carry one, in rank order,
 * exactly as trec_eval sums them; kept sparse (indexed by the running count
 * of such docs), each is a dependency chain of a few adds, not one per rank. */
static void build_prefixes(rs__topic *t)
{
  const unsigned needs = t->plan->needs;
  const int32_t *restrict rel = t->rel;
  const size_t n = t->n;
  const int32_t L = (int32_t)t->L;

  /* Two independent counts in 32-bit lanes, the width of rel, so the loop
   * vectorises without widening (a ranking is under 2^31 docs).  The
   * nonrelevant (0 <= grade < L) and unjudged (< 0) counts follow: for
   * L > 0 the relevant are among the judged; for L <= 0 (trec_eval -l 0)
   * no grade is nonrelevant. */
  /* With the judged ranks known and L >= 0, every doc that counts here
   * (grade >= L, grade > 0) is among them: the passes below walk them
   * instead of the ranking.  (With L < 0 unjudged docs are relevant too.) */
  const int32_t *restrict judged = L >= 0 ? t->judged : NULL;
  const size_t n_judged = t->n_judged;
  int32_t rel_ret = 0, judged_ret = 0;
  if (judged) {
    judged_ret = (int32_t)n_judged;
    for (size_t j = 0; j < n_judged; j++) rel_ret += rel[judged[j]] >= L;
  } else {
    for (size_t i = 0; i < n; i++) {
      rel_ret += rel[i] >= L;
      judged_ret += rel[i] >= 0;
    }
  }
  t->rel_ret = rel_ret;
  t->nonrel_ret = L > 0 ? judged_ret - rel_ret : 0;
  t->unj_ret = (long)n - judged_ret;

  int32_t *restrict relpos = t->s->relpos;
  if (needs & (RS_NEED_CREL | RS_NEED_APS) || (needs & RS_NEED_DCG && L == 1)) {
    if (judged) {
      size_t m = 0; /* every judged rank is written, relevant ones kept */
      for (size_t j = 0; j < n_judged; j++) relpos[m] = judged[j], m += rel[judged[j]] >= L;
    } else if ((size_t)rel_ret * 8 < n) {
      /* Few relevant docs (the usual ranking): a branch that is nearly
       * always not taken costs less than writing every rank. */
      for (size_t i = 0, m = 0; m < (size_t)rel_ret; i++)
        if (rel[i] >= L) relpos[m++] = (int32_t)i;
    } else {
      size_t m = 0; /* branch-free compaction: every rank is written, relevant ones kept */
      for (size_t i = 0; i < n; i++) relpos[m] = (int32_t)i, m += rel[i] >= L;
    }
  }
  if (needs & RS_NEED_APS) rs__sum_precisions(relpos, (size_t)rel_ret, t->s->aps);
  if (needs & RS_NEED_CUNJ) {
    int32_t *restrict cunj = t->s->cunj;
    cunj[0] = 0;
    for (size_t i = 0; i < n; i++) cunj[i + 1] = cunj[i] + (rel[i] < 0);
  }
  if (needs & RS_NEED_DCG) {
    if (L == 1) { /* grade > 0 is grade >= L: the same ranks */
      t->pospos = relpos;
      t->n_pos = (size_t)rel_ret;
    } else {
      int32_t *restrict pospos = t->s->pospos;
      size_t m = 0;
      if (judged)
        for (size_t j = 0; j < n_judged; j++) pospos[m] = judged[j], m += rel[judged[j]] > 0;
      else
        for (size_t i = 0; i < n; i++) pospos[m] = (int32_t)i, m += rel[i] > 0;
      t->pospos = pospos;
      t->n_pos = m;
    }
    rs__sum_dcg(t->plan, rel, t->pospos, t->n_pos, t->s->dcg);
  }
}

void rs_eval_topic(const rs_plan *plan, const int32_t *rel, size_t n, const rs_levels *lv,
                   rs_scratch *scratch, double *out, char *relstring_out)
{
  rs__eval_topic_judged(plan, rel, n, NULL, 0, lv, scratch, out, relstring_out);
}

void rs__eval_topic_judged(const rs_plan *plan, const int32_t *rel, size_t n, const int32_t *judged, size_t n_judged,
                           const rs_levels *lv, rs_scratch *scratch, double *out, char *relstring_out)
{
  rs__topic t = {.plan = plan, .rel = rel, .n = n, .judged = judged, .n_judged = n_judged, .lv = lv, .s = scratch,
                 .L = plan->relevance_level};
  for (size_t k = 0; k < lv->n; k++) {
    if (lv->grade[k] >= t.L) t.R += lv->count[k];
    else t.n_nonrel += lv->count[k];
  }
  t.n_levels = lv->n ? (long)lv->grade[lv->n - 1] + 1 : 0;
  build_prefixes(&t);

  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    double *o = out + m->slot;
    switch (m->id) {
    case RS_M_RUNID:
    case RS_M_NUM_Q: o[0] = 0.0; break;
    case RS_M_NUM_RET:
    case RS_M_NUM_REL:
    case RS_M_NUM_REL_RET:
    case RS_M_RELSTRING:
    case RS_M_UTILITY:
    case RS_M_SET_P:
    case RS_M_SET_RELATIVE_P:
    case RS_M_SET_RECALL:
    case RS_M_SET_MAP:
    case RS_M_SET_F:
    case RS_M_NUM_NONREL_JUDGED_RET: rs__eval_counts(&t, m, o, relstring_out); break;
    case RS_M_P:
    case RS_M_RECALL:
    case RS_M_MAP_CUT:
    case RS_M_NDCG_CUT:
    case RS_M_RELATIVE_P:
    case RS_M_SUCCESS:
    case RS_M_UNJ: rs__eval_cutoffs(&t, m, o); break;
    case RS_M_MAP:
    case RS_M_GM_MAP:
    case RS_M_RPREC:
    case RS_M_RECIP_RANK:
    case RS_M_IPREC_AT_RECALL:
    case RS_M_RPREC_MULT:
    case RS_M_PT11_AVG:
    case RS_M_BING: rs__eval_ranked(&t, m, o); break;
    case RS_M_BPREF:
    case RS_M_GM_BPREF:
    case RS_M_INFAP: rs__eval_judged(&t, m, o); break;
    case RS_M_G:
    case RS_M_NDCG:
    case RS_M_NDCG_REL:
    case RS_M_RNDCG:
    case RS_M_RBP:
    case RS_M_RBP_RESID: rs__eval_gain(&t, m, o); break;
    case RS_N_MEASURES: break;
    }
  }
}

void rs_eval_topic_missing(const rs_plan *plan, const rs_levels *lv, rs_scratch *scratch, double *out,
                           char *relstring_out)
{
  const int32_t dummy = RS_REL_UNPOOLED;
  /* -J drops the unjudged dummy as it drops every unjudged doc. */
  rs_eval_topic(plan, &dummy, plan->judged_only ? 0 : 1, lv, scratch, out, relstring_out);
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    if (m->id == RS_M_NUM_RET || m->id == RS_M_UTILITY || m->id == RS_M_UNJ || m->id == RS_M_RBP_RESID)
      for (size_t k = 0; k < m->n_values; k++) out[m->slot + k] = 0.0;
  }
  if (relstring_out) relstring_out[0] = '\0';
}

rs_levels rs__levels_of(const int32_t *restrict grade, size_t m, int32_t *restrict level_grade,
                        uint32_t *restrict level_count)
{
  /* The usual grades, 0..15: counted, and listed from the counts.  The
   * search below branches on every judgment; a sweep of 1M queries x 100
   * took 240 instructions a query in it.  Up to 15 judgments (a RAG
   * query's usual) are counted in the 4-bit fields of one word, in
   * registers; more in a table of 17 counters, whose clear and a load and
   * a store a judgment cost 156 instructions a query of 4 judgments. */
  const int packed = m <= 15;
  uint64_t field = 0;       /* packed: 4 bits a grade */
  uint32_t small[17];       /* else: [16] for negative grades (not a level) and grades above 15 */
  unsigned present = 0;     /* bit g: grade g seen */
  int32_t big = 0;
  if (!packed) memset(small, 0, sizeof small);
  for (size_t j = 0; j < m; j++) {
    const int32_t x = grade[j];
    const unsigned in = (uint32_t)x < 16;
    if (packed) field += (uint64_t)in << (4 * (x & 15));
    else small[in ? (uint32_t)x : 16]++;
    present |= in << (x & 15);
    big |= x >= 16;
  }
  if (!big) {
    size_t n = 0;
    for (; present; present &= present - 1, n++) {
      const unsigned k = (unsigned)__builtin_ctz(present);
      level_grade[n] = (int32_t)k, level_count[n] = packed ? (uint32_t)(field >> (4 * k)) & 15u : small[k];
    }
    return (rs_levels){level_grade, level_count, n};
  }
  size_t n = 0;
  for (size_t j = 0; j < m; j++) {
    const int32_t x = grade[j];
    if (x < 0) continue;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (level_grade[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo < n && level_grade[lo] == x) {
      level_count[lo]++;
      continue;
    }
    memmove(level_grade + lo + 1, level_grade + lo, (n - lo) * sizeof *level_grade);
    memmove(level_count + lo + 1, level_count + lo, (n - lo) * sizeof *level_count);
    level_grade[lo] = x, level_count[lo] = 1, n++;
  }
  return (rs_levels){level_grade, level_count, n};
}
