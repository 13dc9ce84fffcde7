/* metrics/rag.c: the measures RAG users ask for that trec_eval lacks: RR
 * with a cutoff, DCG, nDCG with exponential gain and Judged@k, and the
 * variants of P, nDCG and Judged that RAG guides and ir_measures' code
 * compute.  Each is a short walk over the top k of the ranking; nothing
 * allocates. */
#include <math.h>
#include <stdint.h>

#include "kernel.h"

static inline size_t top(long k, size_t n) { return (size_t)k < n ? (size_t)k : n; }

static inline double gain_of(int32_t g, int exp_gain)
{
  if (g <= 0) return 0.0;
  return exp_gain ? exp2((double)g) - 1.0 : (double)g;
}

static double dcg_at(const rs_plan *plan, const int32_t *restrict rel, size_t n, long k, int exp_gain)
{
  double sum = 0.0;
  const size_t m = top(k, n);
  for (size_t i = 0; i < m; i++) { /* same terms and order as the kernel's dcg prefix */
    double term = rel[i] > 0 ? gain_of(rel[i], exp_gain) / rs__lg(plan, i) : 0.0;
    sum = sum + term;
  }
  return sum;
}

/* The ideal ranking: grades > 0, highest first, `count` docs per grade. */
static double ideal_dcg_at(const rs_plan *plan, const rs_levels *lv, long k, int exp_gain)
{
  double sum = 0.0;
  size_t pos = 0;
  for (size_t j = lv->n; j-- > 0 && lv->grade[j] > 0;) {
    const double g = gain_of(lv->grade[j], exp_gain);
    for (uint32_t c = 0; c < lv->count[j]; c++, pos++) {
      if (pos >= (size_t)k) return sum;
      sum += g / rs__lg(plan, pos);
    }
  }
  return sum;
}

/* The ideal of nDCG(ideal=retrieved)@k: the top k's own grades in
 * descending order.  Every judged grade is one of the topic's levels, so
 * counting each level's docs in the top k sorts them without a buffer. */
static double retrieved_ideal_dcg_at(const rs_plan *plan, const int32_t *restrict rel, size_t t, const rs_levels *lv,
                                     int exp_gain)
{
  double sum = 0.0;
  size_t pos = 0;
  for (size_t j = lv->n; j-- > 0 && lv->grade[j] > 0;) {
    size_t count = 0;
    for (size_t i = 0; i < t; i++) count += rel[i] == lv->grade[j];
    const double g = gain_of(lv->grade[j], exp_gain);
    for (size_t c = 0; c < count; c++, pos++) sum += g / rs__lg(plan, pos);
  }
  return sum;
}

void rs_eval_rag(const rs_plan *plan, const rs_rag_measure *m, size_t n_measures, const int32_t *rel, size_t n,
                 const rs_levels *lv, double *out)
{
  /* RR@k of every cutoff reads one walk per relevance level (lists share
   * their level): the rank of the first relevant doc, looked for in the
   * top k only, and further when a larger cutoff asks (RR@10 of a ranking
   * of 100 reads 10 ranks). */
  long first_level = 0;
  size_t first = SIZE_MAX, walked = 0; /* first < walked: found; first == walked: none in the top walked */
  for (size_t j = 0; j < n_measures; j++) {
    const long k = m[j].cutoff;
    const size_t t = top(k, n);
    switch (m[j].kind) {
    case RS_RAG_RR_CUT: {
      if (first == SIZE_MAX || first_level != m[j].level) {
        first_level = m[j].level;
        first = walked = 0;
      }
      if (first == walked) {
        while (first < t && rel[first] < first_level) first++;
        walked = first < t ? first + 1 : first;
      }
      out[j] = first < t ? 1.0 / (double)(first + 1) : 0.0;
      break;
    }
    case RS_RAG_DCG: out[j] = dcg_at(plan, rel, n, k, m[j].exp_gain); break;
    case RS_RAG_NDCG: {
      double ideal = ideal_dcg_at(plan, lv, k, m[j].exp_gain);
      out[j] = ideal > 0.0 ? dcg_at(plan, rel, n, k, m[j].exp_gain) / ideal : 0.0;
      break;
    }
    case RS_RAG_JUDGED: {
      long judged = 0;
      for (size_t i = 0; i < t; i++) judged += rel[i] != RS_REL_UNPOOLED;
      out[j] = (double)judged / (double)k;
      break;
    }
    case RS_RAG_P_RETRIEVED: {
      long relevant = 0;
      for (size_t i = 0; i < t; i++) relevant += rel[i] >= m[j].level;
      out[j] = t ? (double)relevant / (double)t : 0.0;
      break;
    }
    case RS_RAG_NDCG_IDEAL_RETRIEVED: {
      double ideal = retrieved_ideal_dcg_at(plan, rel, t, lv, m[j].exp_gain);
      out[j] = ideal > 0.0 ? dcg_at(plan, rel, n, k, m[j].exp_gain) / ideal : 0.0;
      break;
    }
    case RS_RAG_JUDGED_RETRIEVED: {
      long judged = 0;
      for (size_t i = 0; i < t; i++) judged += rel[i] != RS_REL_UNPOOLED;
      out[j] = t ? (double)judged / (double)t : 0.0;
      break;
    }
    }
  }
}
