/* test_topic_judged.c: the per-topic kernel given the ranks of the judged
 * docs (rs__eval_topic_judged, metrics/topic.h, which the HDF5 sweep and
 * the trec_eval engine call) gives the same bits as rs_eval_topic, which
 * finds them by scanning the ranking, for every all_trec measure and the
 * relstring.  Rankings are random (seeded): unpooled, unjudged and graded
 * docs in any mix, empty ones, ones with no judged doc; relevance levels
 * -1 (the scan is used), 0, 1, 2 and 3; with a judged list cut short, as
 * the sweep cuts it at a run's depth. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/topic.h"
#include "rankings.h"
#include "ragsweep/measures.h"

enum { MAX_RANK = 64, N_TOPICS = 3000, MAX_GRADE = 3 };

typedef struct {
  rs_plan plan;
  rs_scratch s;
  double *want, *got;
  char *rs_want, *rs_got;
} kernel;

static void kernel_open(kernel *k, long level)
{
  rs_error err = {RS_OK, ""};
  rs_plan_init(&k->plan);
  cr_assert(rs_plan_add(&k->plan, "all_trec", &err) == RS_OK, "%s", err.msg);
  k->plan.relevance_level = level;
  cr_assert(rs_plan_finish(&k->plan, MAX_RANK, &err) == RS_OK, "%s", err.msg);
  cr_assert(rs_scratch_init(&k->s, &k->plan, MAX_RANK, MAX_GRADE + 1, &err) == RS_OK, "%s", err.msg);
  k->want = malloc(k->plan.n_values * sizeof *k->want);
  k->got = malloc(k->plan.n_values * sizeof *k->got);
  k->rs_want = malloc(k->plan.relstring_len + 1);
  k->rs_got = malloc(k->plan.relstring_len + 1);
  cr_assert(k->want && k->got && k->rs_want && k->rs_got);
}

static void kernel_close(kernel *k)
{
  free(k->want);
  free(k->got);
  free(k->rs_want);
  free(k->rs_got);
  rs_scratch_free(&k->s);
  rs_plan_free(&k->plan);
}

/* Junk in the scratch before each call, so the second call cannot read
 * what the first one left there. */
static void junk_scratch(rs_scratch *s)
{
  for (size_t i = 0; i <= s->cap; i++) {
    s->relpos[i] = 1000000 + (int32_t)i;
    s->pospos[i] = 3000000 + (int32_t)i;
    s->cunj[i] = 2000000 + (int32_t)i;
    s->aps[i] = -1e300;
    s->dcg[i] = -1e300;
  }
  memset(s->gl, 0xa5, s->cap_levels * sizeof *s->gl);
}

Test(topic_judged, same_bits_as_the_scan)
{
  const long levels[] = {-1, 0, 1, 2, 3};
  size_t fast_topics = 0, judged_docs = 0;
  for (size_t li = 0; li < sizeof levels / sizeof *levels; li++) {
    kernel k;
    kernel_open(&k, levels[li]);
    unsigned seed = 1234u + (unsigned)li;
    for (size_t topic = 0; topic < N_TOPICS; topic++) {
      int32_t rel[MAX_RANK], judged[MAX_RANK], grade[MAX_GRADE + 1];
      uint32_t count[MAX_GRADE + 1];
      size_t n_lv;
      size_t n = tr_random_topic(&seed, MAX_RANK, MAX_GRADE, rel, grade, count, &n_lv);
      const rs_levels lv = {grade, count, n_lv};
      size_t n_judged = 0;
      for (size_t i = 0; i < n; i++)
        if (rel[i] >= 0) judged[n_judged++] = (int32_t)i;
      /* every other topic: cut at a depth, as a run of eval --depths is */
      if (topic % 2 && n) {
        const size_t depth = 1 + (size_t)(rand_r(&seed) % n);
        n_judged = rs__count_below(judged, n_judged, depth);
        n = depth;
      }
      memset(k.want, 0x5a, k.plan.n_values * sizeof *k.want);
      memset(k.got, 0xa5, k.plan.n_values * sizeof *k.got);
      junk_scratch(&k.s);
      rs_eval_topic(&k.plan, rel, n, &lv, &k.s, k.want, k.rs_want);
      junk_scratch(&k.s);
      rs__eval_topic_judged(&k.plan, rel, n, judged, n_judged, &lv, &k.s, k.got, k.rs_got);
      for (size_t v = 0; v < k.plan.n_values; v++)
        cr_assert(memcmp(&k.want[v], &k.got[v], sizeof k.want[v]) == 0,
                  "level %ld, topic %zu (%zu docs, %zu judged): value %zu is %.17g from the judged ranks, %.17g "
                  "from the scan",
                  levels[li], topic, n, n_judged, v, k.got[v], k.want[v]);
      cr_assert_str_eq(k.rs_got, k.rs_want, "level %ld, topic %zu: relstring", levels[li], topic);
      fast_topics += levels[li] >= 0;
      judged_docs += n_judged;
    }
    kernel_close(&k);
  }
  /* the cases cover the judged path, not only the scan */
  cr_assert_geq(fast_topics, 4 * N_TOPICS);
  cr_assert_gt(judged_docs, 10 * N_TOPICS);
}

Test(topic_judged, cut_at_depth)
{
  const int32_t judged[] = {0, 3, 4, 9};
  cr_expect_eq(rs__count_below(judged, 4, 0), 0);
  cr_expect_eq(rs__count_below(judged, 4, 1), 1);
  cr_expect_eq(rs__count_below(judged, 4, 4), 2);
  cr_expect_eq(rs__count_below(judged, 4, 5), 3);
  cr_expect_eq(rs__count_below(judged, 4, 9), 3);
  cr_expect_eq(rs__count_below(judged, 4, 10), 4);
  cr_expect_eq(rs__count_below(judged, 0, 10), 0);
}

/* rs__count_below against a plain count: every ascending list of 0 to 12
 * distinct ranks from 0..13 (all 2^14 subsets, the lengths either side of
 * each halving of the search), at every k from 0 to 15. */
Test(topic_judged, count_below_every_short_list)
{
  int32_t pos[14];
  size_t checked = 0;
  for (uint32_t set = 0; set < (1u << 14); set++) {
    size_t n = 0;
    for (int32_t r = 0; r < 14; r++)
      if (set >> r & 1) pos[n++] = r;
    if (n > 12) continue;
    for (size_t k = 0; k <= 15; k++) {
      size_t want = 0;
      for (size_t j = 0; j < n; j++) want += (size_t)pos[j] < k;
      cr_assert_eq(rs__count_below(pos, n, k), want, "set %#x n %zu k %zu", set, n, k);
      checked++;
    }
  }
  cr_assert_gt(checked, 200000);
}

/* rs__levels_of against a count of its own: random grade lists of 0 to 40
 * judgments (up to 15: the packed counts'; more: the table's) whose grades
 * span -3..3, 0..15 (the table's), 0..16 and -3..40 (the search's), and
 * the table's edges (15 alone, 16 alone, 15 and 16 together).  The level arrays are as long as the judgments and
 * guarded after: nothing is written past the levels found. */
Test(topic_judged, grade_levels_in_the_table_and_by_search)
{
  static const int32_t lo[] = {-3, 0, 0, -3}, hi[] = {3, 15, 16, 40};
  unsigned seed = 17;
  size_t packed = 0, tabled = 0, searched = 0;
  for (size_t round = 0; round < 4000; round++) {
    const size_t span = round % 4, m = (size_t)(rand_r(&seed) % 41);
    int32_t grade[44], level_grade[44 + 4];
    uint32_t level_count[44 + 4];
    for (size_t j = 0; j < m; j++) grade[j] = lo[span] + rand_r(&seed) % (hi[span] - lo[span] + 1);
    if (round % 97 == 0 && m) grade[0] = 15, grade[m - 1] = round % 2 ? 16 : 15;
    for (size_t j = 0; j < 48; j++) level_grade[j] = -77, level_count[j] = 77;
    /* by hand: each grade >= 0 counted, the distinct ones ascending */
    int32_t want_grade[44];
    uint32_t want_count[44];
    size_t want_n = 0;
    for (int32_t g = 0; g <= 40; g++) {
      uint32_t c = 0;
      for (size_t j = 0; j < m; j++) c += grade[j] == g;
      if (c) want_grade[want_n] = g, want_count[want_n] = c, want_n++;
    }
    const rs_levels lv = rs__levels_of(grade, m, level_grade, level_count);
    cr_assert_eq(lv.n, want_n, "round %zu (%zu grades): %zu levels, want %zu", round, m, lv.n, want_n);
    cr_assert(lv.grade == level_grade && lv.count == level_count);
    for (size_t k = 0; k < want_n; k++) {
      cr_assert_eq(level_grade[k], want_grade[k], "round %zu: level %zu is grade %d, want %d", round, k, level_grade[k],
                   want_grade[k]);
      cr_assert_eq(level_count[k], want_count[k], "round %zu: grade %d counted %u times, want %u", round, want_grade[k],
                   level_count[k], want_count[k]);
    }
    for (size_t k = want_n; k < 48; k++)
      cr_assert(level_grade[k] == -77 && level_count[k] == 77, "round %zu: written past the levels, at %zu", round, k);
    int any_big = 0;
    for (size_t j = 0; j < m; j++) any_big |= grade[j] > 15;
    packed += !any_big && m <= 15, tabled += !any_big && m > 15, searched += any_big;
  }
  cr_assert_gt(packed, 500);
  cr_assert_gt(tabled, 800);
  /* the packed counts' edges: a grade 15 times (the most a field holds),
   * at the lowest and the highest field, and 16 times (the table's) */
  static const struct { int32_t g0, g1; size_t n0, n1; } edge[] = {{7, 7, 15, 0}, {0, 15, 8, 7}, {15, 15, 15, 0},
                                                                     {0, 0, 15, 0}, {1, 1, 16, 0}, {3, -1, 9, 6}};
  for (size_t e = 0; e < sizeof edge / sizeof *edge; e++) {
    int32_t grade[16], level_grade[16];
    uint32_t level_count[16];
    const size_t m = edge[e].n0 + edge[e].n1;
    for (size_t j = 0; j < m; j++) grade[j] = j % 2 && j / 2 < edge[e].n1 ? edge[e].g1 : edge[e].g0;
    size_t c0 = 0;
    for (size_t j = 0; j < m; j++) c0 += grade[j] == edge[e].g0;
    cr_assert_eq(c0, edge[e].g0 == edge[e].g1 ? m : edge[e].n0, "edge %zu: the list itself", e);
    const rs_levels lv = rs__levels_of(grade, m, level_grade, level_count);
    const int two = edge[e].g0 != edge[e].g1 && edge[e].g1 >= 0;
    cr_assert_eq(lv.n, two ? 2u : 1u, "edge %zu: %zu levels", e, lv.n);
    const size_t low = two && edge[e].g1 < edge[e].g0 ? 1 : 0; /* the level of g0 */
    cr_assert_eq(level_grade[low], edge[e].g0, "edge %zu", e);
    cr_assert_eq(level_count[low], (uint32_t)c0, "edge %zu: grade %d counted %u times, want %zu", e, edge[e].g0,
                 level_count[low], c0);
    if (two) cr_assert_eq(level_count[1 - low], (uint32_t)edge[e].n1, "edge %zu: grade %d", e, edge[e].g1);
  }
  cr_assert_gt(searched, 1500);
}
