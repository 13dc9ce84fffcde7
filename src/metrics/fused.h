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

typedef struct rs__fused_sel {
  rs_measure_id id;
  size_t slot, n;  /* first value slot in the plan's vector; values */
  const long *cut; /* the measure's cutoffs (the plan's), n of them */
  uint8_t kix[RS_FUSED_MAX_CUTS]; /* each cutoff's index among the distinct ones */
} rs__fused_sel;

typedef struct rs__fused {
  long kcut[RS_FUSED_MAX_CUTS]; /* the distinct cutoffs of the plan's measures, ascending */
  size_t n_kcut;
  rs__fused_sel *sel; /* [n_sel] the plan's measures, in its order */
  size_t n_sel;
  int needs_aps, needs_dcg;
  /* the plan's RR@k values (rs_eval_rag's RS_RAG_RR_CUT), after its own */
  const rs_rag_measure *rag;
  size_t n_rag;
} rs__fused;

/* A fused program for `plan` and its rag measures, or NULL when the plan
 * needs the general kernel (or memory runs out: the general kernel then
 * serves it, as correctly). */
rs__fused *rs__fused_build(const rs_plan *plan, const rs_rag_measure *rag, size_t n_rag);
void rs__fused_free(rs__fused *f);

/* The plan's values, then its rag values, into out[plan->n_values +
 * n_rag]: the bits rs__eval_topic_judged and rs_eval_rag write for the
 * same ranking.  judged[0, n_judged) as rs__eval_topic_judged's (not
 * NULL); s: the plan's scratch.  Never allocates. */
void rs__fused_eval(const rs__fused *f, const rs_plan *plan, const int32_t *rel, size_t n, const int32_t *judged,
                    size_t n_judged, const rs_levels *lv, rs_scratch *s, double *out);

#endif
