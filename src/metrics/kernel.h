/* metrics/kernel.h: shared state of one topic's evaluation (internal).
 *
 * rs_eval_topic first derives the topic's counts and, in one pass over the
 * ranking, the prefix arrays the chosen measures need (relevant docs,
 * unjudged docs, sum of precisions, linear DCG in the top i).  Cutoff
 * measures then read those arrays at their cutoffs; the measures that walk
 * the ranking in their own way (bpref, infAP, the gain family) do so in
 * their family's file.  Nothing here allocates. */
#ifndef RAGSWEEP_METRICS_KERNEL_H
#define RAGSWEEP_METRICS_KERNEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ragsweep/measures.h"
#include "topic.h" /* rs__count_below */

enum {
  RS_NEED_CREL = 1u << 0, /* scratch->relpos: relevant docs in the top k */
  RS_NEED_CUNJ = 1u << 1, /* scratch->cunj */
  RS_NEED_APS = 1u << 2,  /* scratch->aps */
  RS_NEED_DCG = 1u << 3   /* scratch->dcg (and pospos) */
};

#define RS_MIN_GEO_MEAN 0.00001 /* trec_eval's floor for geometric means */

typedef struct rs__topic {
  const rs_plan *plan;
  const int32_t *restrict rel; /* per rank, after -M and -J */
  size_t n;                    /* num_ret */
  const int32_t *judged;       /* the ranks of the docs with rel >= 0, ascending, or NULL (see topic.h) */
  size_t n_judged;
  const rs_levels *lv;
  rs_scratch *s;
  long L;          /* relevance level */
  long R;          /* num_rel: judged docs with grade >= L */
  long n_nonrel;   /* judged docs with 0 <= grade < L */
  long rel_ret;    /* retrieved docs with grade >= L */
  long nonrel_ret; /* retrieved docs with 0 <= grade < L */
  long unj_ret;    /* retrieved docs not pooled or unjudged */
  long n_levels;   /* trec_eval's num_rel_levels: highest grade + 1 */
  const int32_t *pospos; /* the scratch's pospos, or relpos when they coincide */
  size_t n_pos;          /* its length: retrieved docs with grade > 0 */
} rs__topic;

/* log2(i + 2), the DCG discount of the doc at 0-based rank i. */
static inline double rs__lg(const rs_plan *plan, size_t i)
{
  return i < plan->n_lg ? plan->lg[i] : log2((double)(i + 2));
}

/* Relevant docs in the top k; the sum of precisions at them; the DCG of
 * the top k (the sparse sums read at the count of docs that fed them). */
static inline long rs__crel_at(const rs__topic *t, size_t k)
{
  return (long)rs__count_below(t->s->relpos, (size_t)t->rel_ret, k);
}
static inline double rs__aps_at(const rs__topic *t, size_t k) { return t->s->aps[rs__crel_at(t, k)]; }
static inline double rs__dcg_at(const rs__topic *t, size_t k)
{
  return t->s->dcg[rs__count_below(t->pospos, t->n_pos, k)];
}

unsigned rs__kernel_needs(const rs_plan *plan);

/* The sparse sums, added in rank order as trec_eval adds them, one term a
 * doc that carries one: aps[j] = the sum of precisions at the first j
 * relevant docs (relpos[0, n): their ranks); dcg[j] = the linear-gain DCG
 * of the first j docs of positive grade (pos[0, n): their ranks). */
static inline void rs__sum_precisions(const int32_t *restrict relpos, size_t n, double *restrict aps)
{
  aps[0] = 0.0;
  for (size_t j = 0; j < n; j++) aps[j + 1] = aps[j] + (double)(j + 1) / (double)(relpos[j] + 1);
}
static inline void rs__sum_dcg(const rs_plan *plan, const int32_t *restrict rel, const int32_t *restrict pos, size_t n,
                               double *restrict dcg)
{
  dcg[0] = 0.0;
  for (size_t j = 0; j < n; j++) {
    const size_t i = (size_t)pos[j];
    dcg[j + 1] = dcg[j] + (double)rel[i] / rs__lg(plan, i);
  }
}

/* Ideal DCG of a topic with grade levels lv, truncated at each cutoff
 * cut[0..n_cut) (ascending), into idcg[]: nDCG@k's denominators. */
void rs__ideal_dcg_at_cutoffs(const rs_plan *plan, const rs_levels *lv, const long *cut, size_t n_cut, double *idcg);

/* Families; each writes the values of the measures it owns. */
void rs__eval_counts(const rs__topic *t, const rs_measure_sel *m, double *out, char *relstring);
void rs__eval_cutoffs(const rs__topic *t, const rs_measure_sel *m, double *out);
void rs__eval_ranked(const rs__topic *t, const rs_measure_sel *m, double *out);
void rs__eval_judged(const rs__topic *t, const rs_measure_sel *m, double *out);
void rs__eval_gain(const rs__topic *t, const rs_measure_sel *m, double *out);

#endif
