/* test_fused.c: the one-pass program for level-1 plans of cutoff measures
 * (metrics/fused.h) writes the same bits as the general kernel
 * (rs__eval_topic_judged, then rs_eval_rag) through rs__spec_eval, on
 * random rankings and on a ranking worked by hand; and plans it cannot
 * serve keep the general kernel. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/spec.h"
#include "metrics/topic.h"
#include "rankings.h"

enum { MAX_RANK = 120, N_TOPICS = 4000, MAX_GRADE = 3 };

typedef struct {
  rs__spec *spec;
  rs__spec_scratch ss;
  double *fused, *general;
} evaluator;

static void open_eval(evaluator *ev, const char *const *names, size_t n_names)
{
  rs_error err = {RS_OK, ""};
  cr_assert(rs__spec_build(names, n_names, MAX_RANK, &ev->spec, &err) == RS_OK, "%s", err.msg);
  cr_assert(rs__spec_scratch_init(ev->spec, MAX_RANK, MAX_GRADE + 1, &ev->ss, &err) == RS_OK, "%s", err.msg);
  ev->fused = malloc(ev->spec->n_req * sizeof *ev->fused);
  ev->general = malloc(ev->spec->n_req * sizeof *ev->general);
  cr_assert(ev->fused && ev->general);
}

static void close_eval(evaluator *ev)
{
  free(ev->fused);
  free(ev->general);
  rs__spec_scratch_free(&ev->ss);
  rs__spec_free(ev->spec);
}

/* Junk in the scratch, so that one call cannot lean on what the other left. */
static void junk(evaluator *ev)
{
  for (size_t p = 0; p < ev->ss.n_plans; p++) {
    rs_scratch *s = &ev->ss.ms[p];
    for (size_t i = 0; i <= s->cap; i++) {
      s->relpos[i] = 1000000 + (int32_t)i, s->pospos[i] = 3000000 + (int32_t)i;
      s->aps[i] = -1e300, s->dcg[i] = -1e300;
    }
  }
  for (size_t i = 0; i < ev->spec->n_work; i++) ev->ss.work[i] = NAN;
}

/* Both kernels on one ranking; how many plans took the fused one. */
static size_t eval_both(evaluator *ev, const int32_t *rel, size_t n, const int32_t *judged, size_t n_judged,
                        const rs_levels *lv)
{
  size_t fused_plans = 0;
  junk(ev);
  memset(ev->fused, 0xa5, ev->spec->n_req * sizeof *ev->fused);
  rs__spec_eval(ev->spec, &ev->ss, rel, n, judged, n_judged, lv, 0, ev->fused);
  rs__fused *keep[8] = {0};
  cr_assert_leq(ev->spec->n_plans, 8);
  for (size_t p = 0; p < ev->spec->n_plans; p++) {
    keep[p] = ev->spec->plans[p].fused;
    fused_plans += keep[p] != NULL;
    ev->spec->plans[p].fused = NULL;
  }
  junk(ev);
  memset(ev->general, 0x5a, ev->spec->n_req * sizeof *ev->general);
  rs__spec_eval(ev->spec, &ev->ss, rel, n, judged, n_judged, lv, 0, ev->general);
  for (size_t p = 0; p < ev->spec->n_plans; p++) ev->spec->plans[p].fused = keep[p];
  return fused_plans;
}

/* want_direct: whether the plan should write its values straight to
 * their places (rs__spec's direct; F1 keeps the work vector's copy). */
static void same_bits_on_random_topics(const char *const *names, size_t n_names, unsigned seed, int want_direct)
{
  evaluator ev;
  open_eval(&ev, names, n_names);
  cr_assert_eq(ev.spec->direct, want_direct, "%s: direct %d", names[0], ev.spec->direct);
  size_t fused_topics = 0, relevant = 0;
  for (size_t topic = 0; topic < N_TOPICS; topic++) {
    int32_t rel[MAX_RANK], judged[MAX_RANK], grade[MAX_GRADE + 1];
    uint32_t count[MAX_GRADE + 1];
    size_t n_lv, n = tr_random_topic(&seed, MAX_RANK, MAX_GRADE, rel, grade, count, &n_lv), n_judged = 0;
    const rs_levels lv = {grade, count, n_lv};
    for (size_t i = 0; i < n; i++)
      if (rel[i] >= 0) judged[n_judged++] = (int32_t)i, relevant += rel[i] >= 1;
    if (topic % 3 == 0 && n) { /* cut at a depth, as eval --depths does */
      n = 1 + (size_t)(rand_r(&seed) % n);
      n_judged = rs__count_below(judged, n_judged, n);
    }
    fused_topics += eval_both(&ev, rel, n, judged, n_judged, &lv) > 0;
    for (size_t v = 0; v < ev.spec->n_req; v++)
      cr_assert(memcmp(&ev.fused[v], &ev.general[v], sizeof ev.fused[v]) == 0,
                "%s: topic %zu (%zu docs, %zu judged): %s is %.17g fused, %.17g general", names[0], topic, n,
                n_judged, ev.spec->req[v].name, ev.fused[v], ev.general[v]);
  }
  cr_assert_eq(fused_topics, N_TOPICS, "%s: the plan should be fused", names[0]);
  cr_assert_gt(relevant, 10 * N_TOPICS); /* the rankings hold relevant docs, not only misses */
  close_eval(&ev);
}

Test(fused, default_measures_same_bits_as_the_general_kernel)
{
  const char *const names[] = {RS_DEFAULT_MEASURES};
  same_bits_on_random_topics(names, sizeof names / sizeof *names, 11, 1);
}

/* Cutoffs shared between families and past the ranking's end, every
 * fused measure, several RR@k, F1 and the named aliases; and the same
 * without F1, so that the plan writes straight to the values. */
Test(fused, every_fused_measure_same_bits_as_the_general_kernel)
{
  const char *const names[] = {"P@{1,2,3,5,10,200}", "R@{2,7,10,1000}", "Success@{1,3,7}", "AP",
                               "AP@{3,10,150}",      "nDCG@{1,2,3,10,30,500}", "RR",      "RR@{1,3,200}",
                               "Rprec",              "NumRet",                 "NumRel", "NumRelRet",
                               "F1@{3,10}",          "AnswerPresence@5",       "Accuracy@3"};
  same_bits_on_random_topics(names, sizeof names / sizeof *names, 12, 0);
  const char *const no_f1[] = {"P@{1,2,3,5,10,200}", "R@{2,7,10,1000}", "Success@{1,3,7}", "AP",
                               "AP@{3,10,150}",      "nDCG@{1,2,3,10,30,500}", "RR",      "RR@{1,3,200}",
                               "Rprec",              "NumRet",                 "NumRel", "NumRelRet",
                               "AnswerPresence@5",   "Accuracy@3"};
  same_bits_on_random_topics(no_f1, sizeof no_f1 / sizeof *no_f1, 14, 1);
}

/* 64 distinct cutoffs: the most the program takes. */
Test(fused, sixty_four_cutoffs_same_bits_as_the_general_kernel)
{
  const char *const names[] = {"R@1..60", "P@{61,62,63,64}", "nDCG@10"};
  same_bits_on_random_topics(names, sizeof names / sizeof *names, 13, 1);
}

/* Each plan of these needs the general kernel: a measure the program does
 * not have, another relevance level, or more cutoffs than it holds. */
Test(fused, plans_it_cannot_serve_keep_the_general_kernel)
{
  const char *const bpref[] = {"P@5", "bpref"}, *const level2[] = {"P(rel=2)@5", "R(rel=2)@10"},
                    *const many[] = {"R@1..65"}, *const dcg[] = {"P@5", "DCG@10"},
                    *const plain[] = {"P@5", "nDCG"};
  const struct { const char *const *names; size_t n; } cases[] = {
      {bpref, 2}, {level2, 2}, {many, 1}, {dcg, 2}, {plain, 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    rs__spec *spec;
    rs_error err = {RS_OK, ""};
    cr_assert(rs__spec_build(cases[c].names, cases[c].n, 100, &spec, &err) == RS_OK, "%s", err.msg);
    /* level 2's plan is the visible one; level 1's holds the hidden values */
    for (size_t p = 0; p < spec->n_plans; p++)
      if (spec->plans[p].plan.relevance_level != 1 || c != 1)
        cr_expect_null(spec->plans[p].fused, "case %zu (%s), plan %zu: fused", c, cases[c].names[0], p);
    rs__spec_free(spec);
  }
}

/* A ranking of 6 worked by hand: grades 2 at rank 2 and 1 at rank 5, a
 * nonrelevant doc at rank 3, unpooled docs elsewhere and an unjudged one
 * at rank 6; the topic holds 3 relevant docs (grades 2, 1, 1) and 2
 * nonrelevant ones. */
Test(fused, a_ranking_worked_by_hand)
{
  const char *const names[] = {"P@{1,5}", "R@5", "Success@{1,2}", "RR", "RR@1", "AP@100", "AP", "nDCG@5", "Rprec",
                               "NumRel",  "NumRelRet"};
  evaluator ev;
  open_eval(&ev, names, sizeof names / sizeof *names);
  cr_assert_not_null(ev.spec->plans[0].fused);
  cr_assert(ev.spec->direct && ev.spec->n_dup > 0); /* NumRelRet is asked for, and hidden for num_q_no_rel_ret */
  const int32_t rel[] = {RS_REL_UNPOOLED, 2, 0, RS_REL_UNPOOLED, 1, RS_REL_UNJUDGED};
  const int32_t judged[] = {1, 2, 4};
  int32_t grade[] = {0, 1, 2};
  uint32_t count[] = {2, 2, 1};
  const rs_levels lv = {grade, count, 3};
  cr_assert_eq(eval_both(&ev, rel, 6, judged, 3, &lv), 1);
  const double idcg5 = 2.0 / 1.0 + 1.0 / log2(3.0) + 1.0 / log2(4.0);
  const struct { const char *name; double want; } want[] = {
      {"P@1", 0.0},
      {"P@5", 2.0 / 5.0},
      {"R@5", 2.0 / 3.0},
      {"Success@1", 0.0},
      {"Success@2", 1.0},
      {"RR", 1.0 / 2.0},
      {"RR@1", 0.0},
      {"AP@100", (1.0 / 2.0 + 2.0 / 5.0) / 3.0},
      {"AP", (1.0 / 2.0 + 2.0 / 5.0) / 3.0},
      {"nDCG@5", (2.0 / log2(3.0) + 1.0 / log2(6.0)) / idcg5},
      {"Rprec", 1.0 / 3.0}, /* one relevant doc in the top R = 3 */
      {"NumRel", 3.0},
      {"NumRelRet", 2.0},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const size_t v = rs__spec_find_value(ev.spec, want[i].name);
    cr_assert_neq(v, SIZE_MAX, "%s", want[i].name);
    cr_expect_float_eq(ev.fused[v], want[i].want, 1e-15, "%s: %.17g, want %.17g", want[i].name, ev.fused[v],
                       want[i].want);
    cr_expect(memcmp(&ev.fused[v], &ev.general[v], sizeof ev.fused[v]) == 0, "%s: fused %.17g, general %.17g",
              want[i].name, ev.fused[v], ev.general[v]);
  }
  close_eval(&ev);
}
