/* metrics/fused.h: one pass for the plans sweeps nearly always run
 * (internal).
 *
 * The default measures (P, R and Success at a few cutoffs, AP@k, nDCG@k,
 * RR, RR@k) are one plan at relevance level 1.  The general kernel
 * (rs__eval_topic_judged, then rs_eval_rag) serves them family by family:
 * each family's function, and each cutoff in it, counts the relevant docs
 * above its cutoff again (13 counts a row for the default set), and the
 * dispatch, prologues and copies are most of what a row costs beside the
 * counts.  A fused plan lists the distinct cutoffs once, counts the
 * relevant docs above each one with a single walk of the relevant ranks,
 * and writes every value from those counts and the sparse sums, with the
 * same formulas, terms and order as the general kernel, so the same bits
 * (tests/test_fused.c holds it to that).  Plans with any other measure,
 * level, -J, or more cutoffs than fit on the stack keep the general
 * kernel. */
#ifndef RAGSWEEP_METRICS_FUSED_H
#define RAGSWEEP_METRICS_FUSED_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/measures.h"

/* At most this many distinct cutoffs: their counts live on the stack. */
enum { RS_FUSED_MAX_CUTS = 64 };

/* One value of P, R, Success or AP@k: where it goes (see rs__fused_place),
 * which distinct cutoff's count it reads, and its cutoff (P's divisor). */
typedef struct rs__fused_val {
  uint32_t slot, kix;
  double cut;
} rs__fused_val;

/* An nDCG@k measure: its values are divided by the ideal DCG at each of
 * its cutoffs, which rs__ideal_dcg_at_cutoffs writes for all of them. */
typedef struct rs__fused_ndcg {
  size_t n;
  const long *cut; /* the measure's cutoffs (the plan's), n of them */
  uint8_t kix[RS_FUSED_MAX_CUTS];
  uint32_t slot[RS_FUSED_MAX_CUTS];
} rs__fused_ndcg;

/* A measure with one value and no cutoff (AP, R-prec, RR, the counts). */
typedef struct rs__fused_one {
  rs_measure_id id;
  size_t slot;
} rs__fused_one;

/* The plan's values by family, each family one loop of fixed length over
 * its values, each value with its own place (rs__fused_place can then
 * send it anywhere).  val[0, p_end) are P's values, [p_end, r_end) R's,
 * [r_end, s_end) Success's, [s_end, ap_end) AP@k's. */
typedef struct rs__fused {
  long kcut[RS_FUSED_MAX_CUTS]; /* the distinct cutoffs of the plan's measures, ascending */
  size_t n_kcut;
  rs__fused_val *val;
  size_t p_end, r_end, s_end, ap_end;
  rs__fused_ndcg *ndcg;
  size_t n_ndcg;
  rs__fused_one *one;
  size_t n_one;
  int needs_aps, needs_dcg;
  /* the plan's RR@k values (rs_eval_rag's RS_RAG_RR_CUT), after its own */
  const rs_rag_measure *rag;
  uint32_t *rag_slot;
  size_t n_rag;
} rs__fused;

/* A fused program for `plan` and its rag measures, or NULL when the plan
 * needs the general kernel (or memory runs out: the general kernel then
 * serves it, as correctly). */
rs__fused *rs__fused_build(const rs_plan *plan, const rs_rag_measure *rag, size_t n_rag);
void rs__fused_free(rs__fused *f);

/* Each value's place in out[] for rs__fused_eval: at first its place in
 * the plan's vector (plan->n_values values, then the rag values); after
 * this call place[that]. */
void rs__fused_place(rs__fused *f, const size_t *place);

/* The plan's values, then its rag values, into out[] at their places
 * (rs__fused_place; at first out[0, plan->n_values + n_rag)): the bits rs__eval_topic_judged and rs_eval_rag write for the
 * same ranking.  judged[0, n_judged) as rs__eval_topic_judged's (not
 * NULL); s: the plan's scratch.  Never allocates. */
void rs__fused_eval(const rs__fused *f, const rs_plan *plan, const int32_t *rel, size_t n, const int32_t *judged,
                    size_t n_judged, const rs_levels *lv, rs_scratch *s, double *out);

#endif
