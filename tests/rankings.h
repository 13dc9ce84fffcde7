/* rankings.h: random rankings with their topic's grade levels, for the
 * tests that hold two kernels to the same bits (test_topic_judged.c,
 * test_fused.c). */
#ifndef RAGSWEEP_TEST_RANKINGS_H
#define RAGSWEEP_TEST_RANKINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ragsweep/measures.h"

enum { TR_MAX_GRADE = 15 };

/* A random ranking of up to max_rank docs into rel[]: unpooled, unjudged
 * (a negative grade in the qrels) and graded 0..max_grade (at most
 * TR_MAX_GRADE) docs in any mix, from all judged to none judged; its
 * topic's levels (grade[], count[], *n_lv of them: room for max_grade + 1)
 * count the retrieved judged docs plus a few judged docs not retrieved.
 * Returns the ranking's length. */
static inline size_t tr_random_topic(unsigned *seed, size_t max_rank, int max_grade, int32_t *rel, int32_t *grade,
                                     uint32_t *count, size_t *n_lv)
{
  const size_t n = (size_t)rand_r(seed) % (max_rank + 1);
  const int unpooled_pct = rand_r(seed) % 101;
  uint32_t per_grade[TR_MAX_GRADE + 1] = {0};
  for (size_t i = 0; i < n; i++) {
    const int u = rand_r(seed) % 100;
    if (u < unpooled_pct) rel[i] = RS_REL_UNPOOLED;
    else if (u % 7 == 0) rel[i] = RS_REL_UNJUDGED;
    else rel[i] = rand_r(seed) % (max_grade + 1);
    if (rel[i] >= 0) per_grade[rel[i]]++;
  }
  for (int g = 0; g <= max_grade; g++) per_grade[g] += (uint32_t)(rand_r(seed) % 3);
  *n_lv = 0;
  for (int g = 0; g <= max_grade; g++)
    if (per_grade[g]) grade[*n_lv] = g, count[(*n_lv)++] = per_grade[g];
  return n;
}

#endif
