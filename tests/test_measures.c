/* test_measures.c: hand-worked unit tests of every all_trec measure of the
 * per-topic kernel (rs_eval_topic), on small rankings.
 *
 * Every expected value below is derived by hand from the definitions in
 * ../shared/conformance/SEMANTICS.md (trec_eval 10.0), never copied from
 * the implementation's output.  The derivation is in the comment above
 * each case.  Notation: a ranking lists the relevance value of each rank
 * (grade >= 0 if judged, -1 = not pooled, -2 = pooled but unjudged); the
 * levels list the topic's judged grades with their counts ("{0:2, 1:3}" is
 * two judged docs of grade 0 and three of grade 1, retrieved or not);
 * L is the relevance level (-l), R the number of relevant judged docs,
 * "rel" means grade >= L and p^k is the rbp persistence to the power k.
 *
 * The expected values are constant expressions; logarithms are the
 * literal constants LG3, LG5, LG6 (= log2(3), log2(5), log2(6)), checked
 * against libm by constants_are_exact.  Values are compared within 1e-12
 * (they are sums of a few terms; operation order may differ from ours). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ragsweep/measures.h"

#define LG3 1.5849625007211561814537389439478165087598144076924810604555 /* log2(3) */
#define LG5 2.3219280948873623478703194294893901758648313930245806120548 /* log2(5) */
#define LG6 2.5849625007211561814537389439478165087598144076924810604555 /* log2(6) */
#define EPS 0.00001 /* infAP's epsilon */

enum { MAX_RANK = 16, MAX_LEVELS = 12, MAX_VALUES = 12 };

/* Expected values: WANT(a, b, ...) also sets how many there are. */
#define WANT(...) .want = {__VA_ARGS__}, .n_want = sizeof((double[]){__VA_ARGS__}) / sizeof(double)

/* ---------------------------------------------------------------------------
 * Topics used by the tables (designated-initializer fragments).
 * ------------------------------------------------------------------------- */

/* A: [N R R N R], R = 3 (all retrieved), 2 judged non-relevant. */
#define TOPIC_A .rel = {0, 1, 1, 0, 1}, .n = 5, .grade = {0, 1}, .count = {2, 3}, .n_lv = 2
/* AP of topic A: relevant at ranks 2, 3, 5 -> (1/2 + 2/3 + 3/5) / 3. */
#define AP_A ((1.0 / 2 + 2.0 / 3 + 3.0 / 5) / 3)
/* P3: [R N R], R = 2. */
#define TOPIC_P3 .rel = {1, 0, 1}, .n = 3, .grade = {0, 1}, .count = {1, 2}, .n_lv = 2
/* C: [R N R] but R = 4 (two relevant docs not retrieved), ret = 3 < R. */
#define TOPIC_C .rel = {1, 0, 1}, .n = 3, .grade = {0, 1}, .count = {1, 4}, .n_lv = 2
/* GR: grades [3 2 3] against the ideal [3 3 2]. */
#define TOPIC_GR .rel = {3, 2, 3}, .n = 3, .grade = {2, 3}, .count = {1, 2}, .n_lv = 2
/* U: [unpooled, R, unjudged, N, R], R = 3 (one relevant doc not retrieved). */
#define TOPIC_U .rel = {-1, 1, -2, 0, 1}, .n = 5, .grade = {0, 1}, .count = {1, 3}, .n_lv = 2
/* Z: no relevant doc at all: [N N unpooled], R = 0. */
#define TOPIC_Z .rel = {0, 0, -1}, .n = 3, .grade = {0}, .count = {2}, .n_lv = 1
/* E: empty ranking, R = 1. */
#define TOPIC_E .n = 0, .grade = {1}, .count = {1}, .n_lv = 1
/* E0: empty ranking, R = 0. */
#define TOPIC_E0 .n = 0, .grade = {0}, .count = {1}, .n_lv = 1
/* I: [R N N R R], R = 4 (one relevant doc not retrieved). */
#define TOPIC_I .rel = {1, 0, 0, 1, 1}, .n = 5, .grade = {0, 1}, .count = {2, 4}, .n_lv = 2
/* L2: grades [2 1 0 2 1]; with L = 2, R = 2 (ranks 1, 4); with L = 1, R = 5. */
#define TOPIC_L2 .rel = {2, 1, 0, 2, 1}, .n = 5, .grade = {0, 1, 2}, .count = {2, 3, 2}, .n_lv = 3
/* GD: graded [0 2 unpooled 1]; judged {0:3, 1:2, 2:1}: the ideal is [2 1 1]. */
#define TOPIC_GD .rel = {0, 2, -1, 1}, .n = 4, .grade = {0, 1, 2}, .count = {3, 2, 1}, .n_lv = 3
/* RN: graded [2 0 1 0 1]; judged {0:2, 1:2, 2:1}: the ideal is [2 1 1]. */
#define TOPIC_RN .rel = {2, 0, 1, 0, 1}, .n = 5, .grade = {0, 1, 2}, .count = {2, 2, 1}, .n_lv = 3
/* RB: [R unpooled N unjudged], judged {0:1, 1:1}. */
#define TOPIC_RB .rel = {1, -1, 0, -2}, .n = 4, .grade = {0, 1}, .count = {1, 1}, .n_lv = 2
/* FR: [1 0 2] with grades {0:1, 1:1, 2:1} (first doc relevant only at L = 1). */
#define TOPIC_FR .rel = {1, 0, 2}, .n = 3, .grade = {0, 1, 2}, .count = {1, 1, 1}, .n_lv = 3

/* ---------------------------------------------------------------------------
 * The evaluator: one plan, one scratch, one output vector.
 * ------------------------------------------------------------------------- */

typedef struct {
  rs_plan plan;
  rs_scratch s;
  double *out;
  char *relstring;
} evaluator;

typedef struct {
  long L;    /* relevance level, used when set_L */
  int set_L; /* 0: trec_eval's default level (1) */
  long n_docs_coll;
  int judged_only;
  long max_docs; /* 0: the default (unlimited) */
} options;

static void ev_open(evaluator *ev, const char *const *args, size_t n_args, const options *opt)
{
  rs_error err = {RS_OK, ""};
  memset(ev, 0, sizeof *ev);
  rs_plan_init(&ev->plan);
  for (size_t i = 0; i < n_args; i++)
    cr_assert(rs_plan_add(&ev->plan, args[i], &err) == RS_OK, "rs_plan_add(\"%s\"): %s", args[i], err.msg);
  if (opt->set_L) ev->plan.relevance_level = opt->L;
  ev->plan.n_docs_coll = opt->n_docs_coll;
  ev->plan.judged_only = opt->judged_only;
  if (opt->max_docs) ev->plan.max_docs = opt->max_docs;
  cr_assert(rs_plan_finish(&ev->plan, MAX_RANK, &err) == RS_OK, "rs_plan_finish: %s", err.msg);
  cr_assert(rs_scratch_init(&ev->s, &ev->plan, MAX_RANK, MAX_LEVELS, &err) == RS_OK, "rs_scratch_init: %s",
            err.msg);
  ev->out = malloc((ev->plan.n_values ? ev->plan.n_values : 1) * sizeof *ev->out);
  ev->relstring = malloc(ev->plan.relstring_len + 1);
  cr_assert(ev->out && ev->relstring, "out of memory");
}

/* Evaluates one topic.  The scratch and the output are filled with junk
 * first, so a measure that reads something nobody wrote shows up. */
static void ev_eval(evaluator *ev, const int32_t *rel, size_t n, const int32_t *grade, const uint32_t *count,
                    size_t n_lv)
{
  for (size_t i = 0; i <= ev->s.cap; i++) {
    ev->s.relpos[i] = 1000000 + (int32_t)i;
    ev->s.pospos[i] = 3000000 + (int32_t)i;
    ev->s.cunj[i] = 2000000 + (int32_t)i;
    ev->s.aps[i] = NAN;
    ev->s.dcg[i] = NAN;
  }
  memset(ev->s.gl, 0xa5, ev->s.cap_levels * sizeof *ev->s.gl);
  for (size_t i = 0; i < ev->plan.n_values; i++) ev->out[i] = -12345.0;
  memset(ev->relstring, '#', ev->plan.relstring_len + 1);
  rs_levels lv = {grade, count, n_lv};
  rs_eval_topic(&ev->plan, rel, n, &lv, &ev->s, ev->out, ev->relstring);
}

/* The values of measure id (NULL if it was not chosen). */
static const double *ev_values(const evaluator *ev, rs_measure_id id, size_t *n_values)
{
  int k = ev->plan.chosen[id];
  if (!k) return NULL;
  *n_values = ev->plan.sel[k - 1].n_values;
  return ev->out + ev->plan.sel[k - 1].slot;
}

static void ev_close(evaluator *ev)
{
  free(ev->out);
  free(ev->relstring);
  rs_scratch_free(&ev->s);
  rs_plan_free(&ev->plan);
}

static int close_enough(double got, double want, double tol)
{
  if (isnan(want)) return isnan(got);
  return fabs(got - want) <= tol;
}

/* ---------------------------------------------------------------------------
 * The main table: one -m argument, one topic, the expected values in
 * ascending cutoff order.
 * ------------------------------------------------------------------------- */

struct measure_case {
  char name[72];
  char measure[40]; /* one trec_eval -m argument */
  long L;           /* -l; 0 means the default (1) */
  long n_docs_coll; /* -N */
  int32_t rel[MAX_RANK];
  size_t n;
  int32_t grade[MAX_LEVELS];
  uint32_t count[MAX_LEVELS];
  size_t n_lv;
  double want[MAX_VALUES];
  size_t n_want;
  int want_log; /* gm_map, gm_bpref: the per-topic value is log(max(want, 1e-5)) */
};

ParameterizedTestParameters(measures, hand_worked)
{
  static struct measure_case cases[] = {
      /* ---- num_ret, num_rel, num_rel_ret -------------------------------- */
      /* 5 docs retrieved. */
      {"num_ret, topic A", "num_ret", TOPIC_A, WANT(5)},
      /* Unpooled and unjudged docs are retrieved docs too: 5. */
      {"num_ret counts unjudged docs", "num_ret", TOPIC_U, WANT(5)},
      {"num_ret, empty ranking", "num_ret", TOPIC_E, WANT(0)},
      /* Judged {0:2, 1:3}: R = 3. */
      {"num_rel, topic A", "num_rel", TOPIC_A, WANT(3)},
      /* R counts the relevant doc that was not retrieved: {1:3} -> 3. */
      {"num_rel counts unretrieved docs", "num_rel", TOPIC_U, WANT(3)},
      /* L = 2: only the 2 docs of grade 2 are relevant. */
      {"num_rel, -l 2", "num_rel", .L = 2, TOPIC_L2, WANT(2)},
      /* L = 1: grades 1 and 2, 3 + 2 = 5. */
      {"num_rel, -l 1", "num_rel", TOPIC_L2, WANT(5)},
      {"num_rel, no relevant doc", "num_rel", TOPIC_Z, WANT(0)},
      /* Ranks 2 and 5 are relevant: 2. */
      {"num_rel_ret, topic U", "num_rel_ret", TOPIC_U, WANT(2)},
      /* [2 1 0 2 1], L = 2: ranks 1, 4 -> 2; L = 1: ranks 1, 2, 4, 5 -> 4. */
      {"num_rel_ret, -l 2", "num_rel_ret", .L = 2, TOPIC_L2, WANT(2)},
      {"num_rel_ret, -l 1", "num_rel_ret", TOPIC_L2, WANT(4)},

      /* ---- map, gm_map ----------------------------------------------- */
      /* Literature: [N R R N R], R = 3: (1/2 + 2/3 + 3/5) / 3 = 0.5889. */
      {"map, topic A", "map", TOPIC_A, WANT(AP_A)},
      /* Relevant at ranks 2 and 5, the third relevant doc unretrieved adds 0:
       * (1/2 + 2/5) / 3 = 0.3. */
      {"map, unretrieved relevant doc", "map", TOPIC_U, WANT((1.0 / 2 + 2.0 / 5) / 3)},
      {"map, no relevant doc", "map", TOPIC_Z, WANT(0)},
      {"map, empty ranking", "map", TOPIC_E, WANT(0)},
      /* L = 2: relevant at ranks 1 and 4: (1/1 + 2/4) / 2 = 0.75. */
      {"map, -l 2", "map", .L = 2, TOPIC_L2, WANT((1.0 + 2.0 / 4) / 2)},
      /* L = 1: relevant at 1, 2, 4, 5, R = 5: (1 + 2/2 + 3/4 + 4/5) / 5 = 0.71. */
      {"map, -l 1", "map", TOPIC_L2, WANT((1.0 + 2.0 / 2 + 3.0 / 4 + 4.0 / 5) / 5)},
      /* gm_map's per-topic term is log(AP). */
      {"gm_map, topic A", "gm_map", TOPIC_A, WANT(AP_A), .want_log = 1},
      /* AP = 0 is floored at 1e-5 before the log. */
      {"gm_map, no relevant doc", "gm_map", TOPIC_Z, WANT(0), .want_log = 1},

      /* ---- Rprec ------------------------------------------------------ */
      /* Top R = 3: [N R R] -> 2/3. */
      {"Rprec, topic A", "Rprec", TOPIC_A, WANT(2.0 / 3)},
      /* R = 4 > ret = 3: the top 3 hold 2 relevant docs; divide by R, not
       * by min(R, ret): 2/4. */
      {"Rprec, R > ret divides by R", "Rprec", TOPIC_C, WANT(2.0 / 4)},
      {"Rprec, no relevant doc", "Rprec", TOPIC_Z, WANT(0)},
      {"Rprec, empty ranking", "Rprec", TOPIC_E, WANT(0)},

      /* ---- bpref, gm_bpref ------------------------------------------- */
      /* N = 2 judged non-relevant, R = 3, min(N, R) = 2.  Rank 1 N: nr = 1;
       * rank 2 R: 1 - 1/2; rank 3 R: 1 - 1/2; rank 4 N: nr = 2; rank 5 R:
       * 1 - 2/2 = 0.  (1/2 + 1/2 + 0) / 3 = 1/3. */
      {"bpref, topic A", "bpref", TOPIC_A, WANT(1.0 / 3)},
      /* Unpooled and unjudged docs are skipped.  N = 1, R = 3, min = 1.
       * Rank 2 R (nr = 0): 1; rank 4 N: nr = 1; rank 5 R: 1 - 1/1 = 0.
       * (1 + 0) / 3. */
      {"bpref skips unjudged docs", "bpref", TOPIC_U, WANT(1.0 / 3)},
      /* [N R R], N = 5, R = 2, min(N, R) = 2: (1 - 1/2) + (1 - 1/2) = 1,
       * / 2 = 0.5. */
      {"bpref, min(N, R) = R", "bpref", .rel = {0, 1, 1}, .n = 3, .grade = {0, 1}, .count = {5, 2}, .n_lv = 2,
       WANT(0.5)},
      /* L = 2: grades 0 and 1 are non-relevant: N = 2 + 3 = 5, R = 2, min 2.
       * Rank 1 R: 1; ranks 2, 3 N: nr = 2; rank 4 R: 1 - min(2,2)/2 = 0;
       * (1 + 0) / 2 = 0.5. */
      {"bpref, -l 2", "bpref", .L = 2, TOPIC_L2, WANT(0.5)},
      {"bpref, no relevant doc", "bpref", TOPIC_Z, WANT(0)},
      /* gm_bpref's per-topic term is log(bpref) = log(1/3). */
      {"gm_bpref, topic A", "gm_bpref", TOPIC_A, WANT(1.0 / 3), .want_log = 1},
      /* bpref = 0 is floored at 1e-5. */
      {"gm_bpref, no relevant doc", "gm_bpref", TOPIC_Z, WANT(0), .want_log = 1},

      /* ---- recip_rank --------------------------------------------------- */
      {"recip_rank, topic A", "recip_rank", TOPIC_A, WANT(1.0 / 2)},
      /* An unpooled doc at rank 1 is not relevant: 1/2. */
      {"recip_rank after an unpooled doc", "recip_rank", TOPIC_U, WANT(1.0 / 2)},
      {"recip_rank, no relevant doc", "recip_rank", TOPIC_Z, WANT(0)},
      {"recip_rank, empty ranking", "recip_rank", TOPIC_E, WANT(0)},
      /* [1 0 2]: with L = 2 the first relevant doc is at rank 3; with L = 1 at 1. */
      {"recip_rank, -l 2", "recip_rank", .L = 2, TOPIC_FR, WANT(1.0 / 3)},
      {"recip_rank, -l 1", "recip_rank", TOPIC_FR, WANT(1.0)},

      /* ---- iprec_at_recall ------------------------------------------------ */
      /* Topic A: precision at ranks 1..5 = 0, 1/2, 2/3, 2/4, 3/5.  The c-th
       * relevant doc is at rank 2, 3, 5; interpolated precision (max over
       * ranks >= it) = 2/3, 2/3, 3/5; c = 0 is as c = 1.  Cut c = lround(3x):
       * x = 0, .1 -> 0; .2, .3, .4 -> 1; .5 (1.5 rounds up), .6, .7, .8 -> 2;
       * .9, 1 -> 3. */
      {"iprec_at_recall, topic A", "iprec_at_recall", TOPIC_A,
       WANT(2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 3.0 / 5, 3.0 / 5)},
      /* Topic I [R N N R R], R = 4: precision 1, 1/2, 1/3, 2/4, 3/5; the
       * relevant docs are at 1, 4, 5, so interpolated: c=1 -> 1, c=2 -> 3/5,
       * c=3 -> 3/5, c=4 > num_rel_ret -> 0.  lround(4x): 0 .1 -> 0; .2 .3 ->
       * 1; .4 .5 .6 -> 2; .7 .8 -> 3; .9 1 -> 4.  (x = .3 tells 10.0 from
       * 9.0.8: lround(1.2) = 1 gives 1, (long)(1.2 + 0.9) = 2 would give 3/5.) */
      {"iprec_at_recall, interpolation and unretrieved", "iprec_at_recall", TOPIC_I,
       WANT(1, 1, 1, 1, 3.0 / 5, 3.0 / 5, 3.0 / 5, 3.0 / 5, 3.0 / 5, 0, 0)},
      /* Parameters are sorted: 1.0, 0.5 -> x = .5 (c = 2) then x = 1 (c = 3). */
      {"iprec_at_recall, custom points", "iprec_at_recall.1.0,0.5", TOPIC_A, WANT(2.0 / 3, 3.0 / 5)},
      /* R = 0, 3 docs: every cut is 0; the precision at the end is 0/3. */
      {"iprec_at_recall, no relevant doc", "iprec_at_recall", TOPIC_Z, WANT(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
      /* n = 0, R = 1: the precision num_rel_ret/num_ret is 0/0 = NaN.  Cuts
       * lround(x) = 0 for x < .5 take it; cuts 1 (x >= .5; lround(.5) = 1)
       * exceed num_rel_ret = 0 and stay 0. */
      {"iprec_at_recall, empty ranking", "iprec_at_recall", TOPIC_E, WANT(NAN, NAN, NAN, NAN, NAN, 0, 0, 0, 0, 0, 0)},
      /* n = 0, R = 0: every cut is 0, all NaN. */
      {"iprec_at_recall, empty ranking R=0", "iprec_at_recall", TOPIC_E0,
       WANT(NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN)},

      /* ---- P ---------------------------------------------------------- */
      /* Literature: P@3 of [R N R] = 2/3. */
      {"P@3 of [R N R]", "P.3", TOPIC_P3, WANT(2.0 / 3)},
      /* Relevant docs in the top 1, 2, 3, 5, 10: 0, 1, 2, 3, 3.  The missing
       * ranks 6..10 count as non-relevant: P@10 = 3/10. */
      {"P, cutoffs past the ranking", "P.1,2,3,5,10", TOPIC_A, WANT(0, 1.0 / 2, 2.0 / 3, 3.0 / 5, 3.0 / 10)},
      /* Cutoffs are sorted: 1, 3, 10. */
      {"P, unsorted cutoffs", "P.10,3,1", TOPIC_A, WANT(0, 2.0 / 3, 3.0 / 10)},
      /* Default cutoffs 5 10 15 20 30 100 200 500 1000, always 3 relevant. */
      {"P, default cutoffs", "P", TOPIC_A,
       WANT(3.0 / 5, 3.0 / 10, 3.0 / 15, 3.0 / 20, 3.0 / 30, 3.0 / 100, 3.0 / 200, 3.0 / 500, 3.0 / 1000)},
      {"P, no relevant doc", "P.1,5", TOPIC_Z, WANT(0, 0)},
      {"P, empty ranking", "P.5", TOPIC_E, WANT(0)},
      /* L = 2, [2 1 0 2 1]: relevant in the top 1, 2, 5: 1, 1, 2. */
      {"P, -l 2", "P.1,2,5", .L = 2, TOPIC_L2, WANT(1, 1.0 / 2, 2.0 / 5)},

      /* ---- recall ------------------------------------------------------- */
      /* Relevant in the top 1, 2, 3, 5, 10: 0, 1, 2, 3, 3; / R = 3. */
      {"recall, topic A", "recall.1,2,3,5,10", TOPIC_A, WANT(0, 1.0 / 3, 2.0 / 3, 1, 1)},
      /* Relevant in the top 2, 5, 10: 1, 2, 2; / R = 3 (never reaches 1). */
      {"recall, unretrieved relevant doc", "recall.2,5,10", TOPIC_U, WANT(1.0 / 3, 2.0 / 3, 2.0 / 3)},
      {"recall, no relevant doc", "recall.5", TOPIC_Z, WANT(0)},

      /* ---- infAP ------------------------------------------------------ */
      /* Topic A (0-based positions j; r, n, u seen up to j): j=1 R (r=1, n=1):
       * 1/2 + (1/2)(1/1)(EPS/(1 + 2EPS)); j=2 R (r=2, n=1): 1/3 + (2/3)(2/2)
       * ((1 + EPS)/(2 + 2EPS)); j=4 R (r=3, n=2): 1/5 + (4/5)(4/4)((2 + EPS)/
       * (4 + 2EPS)).  Sum / 3 (= AP + 1.7e-6). */
      {"infAP, topic A", "infAP", TOPIC_A,
       WANT(((1.0 / 2 + (1.0 / 2) * (EPS / (1 + 2 * EPS))) + (1.0 / 3 + (2.0 / 3) * ((1 + EPS) / (2 + 2 * EPS))) +
             (1.0 / 5 + (4.0 / 5) * ((2 + EPS) / (4 + 2 * EPS)))) /
            3)},
      /* Topic U [-1 R -2 N R]: j=0 unpooled, skipped but occupies j.  j=1 R
       * (r=1, n=0, u=0): 1/2 + (1/2)(0/1)(...) = 1/2.  j=2: u = 1.  j=3: n = 1.
       * j=4 R (r=2, n=1, u=1): 1/5 + (4/5)((1+1+1)/4)((1 + EPS)/(2 + 2EPS))
       * = 1/5 + (4/5)(3/4)(1/2) = 1/2.  (1/2 + 1/2) / 3 = 1/3 (AP is 0.3). */
      {"infAP with unjudged docs", "infAP", TOPIC_U,
       WANT((1.0 / 2 + (1.0 / 5 + (4.0 / 5) * (3.0 / 4) * ((1 + EPS) / (2 + 2 * EPS)))) / 3)},
      /* [R N R]: j=0 R: 1.  j=2 R (r=2, n=1): 1/3 + (2/3)(2/2)((1 + EPS)/
       * (2 + 2EPS)) = 2/3.  (1 + 2/3) / 2 = 5/6 (= AP). */
      {"infAP, relevant doc first", "infAP", TOPIC_P3,
       WANT((1.0 + (1.0 / 3 + (2.0 / 3) * ((1 + EPS) / (2 + 2 * EPS)))) / 2)},
      {"infAP, no relevant doc", "infAP", TOPIC_Z, WANT(0)},
      /* L = 2, [2 1 0 2 1]: grades 1 and 0 are judged non-relevant.  j=0 R: 1.
       * j=3 R (r=2, n=2): 1/4 + (3/4)((1+2)/3)((1 + EPS)/(3 + 2EPS)).  / R = 2. */
      {"infAP, -l 2", "infAP", .L = 2, TOPIC_L2,
       WANT((1 + (1.0 / 4 + (3.0 / 4) * (3.0 / 3) * ((1 + EPS) / (3 + 2 * EPS)))) / 2)},

      /* ---- Rprec_mult ------------------------------------------------- */
      /* Topic A, R = 3: cut (long)(3x + 0.9) for x = .2 .. 2.0: 1 2 2 3 3 4 5
       * 5 6 6.  P@1..5 = 0, 1/2, 2/3, 2/4, 3/5; P@6 = 3/6 (missing rank 6 is
       * non-relevant). */
      {"Rprec_mult, topic A", "Rprec_mult", TOPIC_A,
       WANT(0, 1.0 / 2, 1.0 / 2, 2.0 / 3, 2.0 / 3, 2.0 / 4, 3.0 / 5, 3.0 / 5, 3.0 / 6, 3.0 / 6)},
      /* Topic I [R N N R R], R = 4: cuts (long)(4x + 0.9): 1 2 3 4 4 5 6 7 8 8.
       * P@1..5 = 1, 1/2, 1/3, 2/4, 3/5; P@6, 7, 8 = 3/6, 3/7, 3/8. */
      {"Rprec_mult, cutoffs past the ranking", "Rprec_mult", TOPIC_I,
       WANT(1, 1.0 / 2, 1.0 / 3, 2.0 / 4, 2.0 / 4, 3.0 / 5, 3.0 / 6, 3.0 / 7, 3.0 / 8, 3.0 / 8)},
      /* R = 0: every cut is (long)0.9 = 0, which gives 0. */
      {"Rprec_mult, no relevant doc", "Rprec_mult", TOPIC_Z, WANT(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},

      /* ---- utility ------------------------------------------------------ */
      /* 1 * relret(3) - 1 * (ret - relret)(2) = 1. */
      {"utility, topic A", "utility", TOPIC_A, WANT(1)},
      /* 0 - 3 (the unpooled doc is a retrieved non-relevant doc). */
      {"utility, no relevant doc", "utility", TOPIC_Z, WANT(-3)},
      /* Topic C with -N 100: a = relret = 2, b = ret - relret = 1,
       * c = R - relret = 2, d = 100 + 2 - 3 - 4 = 95.
       * 2*2 - 1*1 - 0.5*2 + 0.1*95 = 4 - 1 - 1 + 9.5 = 11.5. */
      {"utility, custom weights and -N", "utility.2,-1,-0.5,0.1", .n_docs_coll = 100, TOPIC_C, WANT(11.5)},

      /* ---- 11pt_avg ----------------------------------------------------- */
      /* Mean of topic A's 11 iprec values: (9 * 2/3 + 2 * 3/5) / 11 = 7.2/11. */
      {"11pt_avg, topic A", "11pt_avg", TOPIC_A, WANT((9 * (2.0 / 3) + 2 * (3.0 / 5)) / 11)},
      /* Topic I: (4 * 1 + 5 * 3/5 + 2 * 0) / 11 = 7/11. */
      {"11pt_avg, topic I", "11pt_avg", TOPIC_I, WANT(7.0 / 11)},
      /* Points 0 and 1: (2/3 + 3/5) / 2. */
      {"11pt_avg, custom points", "11pt_avg.0.0,1.0", TOPIC_A, WANT((2.0 / 3 + 3.0 / 5) / 2)},
      /* The NaN of iprec_at_recall on an empty ranking carries over. */
      {"11pt_avg, empty ranking", "11pt_avg", TOPIC_E, WANT(NAN)},

      /* ---- binG --------------------------------------------------------- */
      /* 1/log2(2 + non-relevant docs above) per relevant doc, / R.  Topic A:
       * 1 non-rel above ranks 2 and 3, 2 above rank 5:
       * (1/log2 3 + 1/log2 3 + 1/log2 4) / 3. */
      {"binG, topic A", "binG", TOPIC_A, WANT((2 / LG3 + 1.0 / 2) / 3)},
      /* Topic U: the unpooled and unjudged docs count as non-relevant: 1 above
       * rank 2, 3 above rank 5: (1/log2 3 + 1/log2 5) / 3. */
      {"binG with unjudged docs", "binG", TOPIC_U, WANT((1 / LG3 + 1 / LG5) / 3)},
      {"binG, no relevant doc", "binG", TOPIC_Z, WANT(0)},

      /* ---- G ---------------------------------------------------------- */
      /* [1 0 1], judged {0:1, 1:2}; ideal gains 1, 1, then 0.  Per rank: sum of
       * result gains, sum_cost += max(ideal gain, 1).  Rank 1: results 1, cost
       * 1, G += 1/log2(2 + 1 - 1) = 1.  Rank 2: cost 2.  Rank 3: results 2,
       * cost 3, G += 1/log2(2 + 3 - 2).  Ideal sum = 2: (1 + 1/log2 3) / 2. */
      {"G, binary", "G", TOPIC_P3, WANT((1 + 1 / LG3) / 2)},
      /* [1 2], judged {1:1, 2:1}; ideal gains 2, 1.  Rank 1: results 1, cost 2,
       * G += 1/log2(2 + 2 - 1).  Rank 2: results 3, cost 3, G += 2/log2(2).
       * Ideal sum 3: (1/log2 3 + 2) / 3. */
      {"G, graded", "G", .rel = {1, 2}, .n = 2, .grade = {1, 2}, .count = {1, 1}, .n_lv = 2,
       WANT((1 / LG3 + 2) / 3)},
      {"G, no relevant doc", "G", TOPIC_Z, WANT(0)},

      /* ---- ndcg ------------------------------------------------------- */
      /* [3 2 3] vs ideal [3 3 2], gain = grade, discount log2(rank + 1):
       * (3 + 2/log2 3 + 3/2) / (3 + 3/log2 3 + 2/2). */
      {"ndcg, graded", "ndcg", TOPIC_GR, WANT((3 + 2 / LG3 + 3.0 / 2) / (3 + 3 / LG3 + 2.0 / 2))},
      /* [0 2 - 1], judged {0:3, 1:2, 2:1}: DCG = 2/log2 3 + 1/log2 5; the ideal
       * [2 1 1] holds all judged positives (one never retrieved):
       * 2 + 1/log2 3 + 1/2. */
      {"ndcg, unretrieved relevant doc", "ndcg", TOPIC_GD, WANT((2 / LG3 + 1 / LG5) / (2 + 1 / LG3 + 1.0 / 2))},
      /* Binary topic A: (1/log2 3 + 1/log2 4 + 1/log2 6) / (1 + 1/log2 3 + 1/2). */
      {"ndcg, binary", "ndcg", TOPIC_A, WANT((1 / LG3 + 1.0 / 2 + 1 / LG6) / (1 + 1 / LG3 + 1.0 / 2))},
      /* Custom gains 1->1, 2->3, 3->7: [7 3 7] vs ideal [7 7 3]:
       * (7 + 3/log2 3 + 7/2) / (7 + 7/log2 3 + 3/2). */
      {"ndcg, custom gains", "ndcg.1=1,2=3,3=7", TOPIC_GR,
       WANT((7 + 3 / LG3 + 7.0 / 2) / (7 + 7 / LG3 + 3.0 / 2))},
      /* Gain 2->10 reorders the ideal: grade 2 (gain 10) first, then the two
       * grade 3 (gain 3): [3 10 3] vs [10 3 3]:
       * (3 + 10/log2 3 + 3/2) / (10 + 3/log2 3 + 3/2). */
      {"ndcg, custom gain reorders the ideal", "ndcg.2=10", TOPIC_GR,
       WANT((3 + 10 / LG3 + 3.0 / 2) / (10 + 3 / LG3 + 3.0 / 2))},
      /* ndcg ignores -l: [2 1 0 2 1] vs the ideal [2 2 1 1 1] (raw grades):
       * (2 + 1/log2 3 + 2/log2 5 + 1/log2 6) /
       * (2 + 2/log2 3 + 1/2 + 1/log2 5 + 1/log2 6). */
      {"ndcg ignores -l 2", "ndcg", .L = 2, TOPIC_L2,
       WANT((2 + 1 / LG3 + 2 / LG5 + 1 / LG6) / (2 + 2 / LG3 + 1.0 / 2 + 1 / LG5 + 1 / LG6))},
      /* Level 0 given gain 1: every doc of [1 0 1] has gain 1, as has the
       * ideal [1 1 1]: 1. */
      {"ndcg, level 0 given a gain", "ndcg.0=1", TOPIC_P3, WANT(1)},
      /* Level 0 given gain -1: DCG of [1 0 1] = 1 - 1/log2 3 + 1/2; the ideal
       * stops at the first gain <= 0: [1 1] -> 1 + 1/log2 3. */
      {"ndcg, negative gain", "ndcg.0=-1", TOPIC_P3, WANT((1 - 1 / LG3 + 1.0 / 2) / (1 + 1 / LG3))},
      {"ndcg, no relevant doc", "ndcg", TOPIC_Z, WANT(0)},
      {"ndcg, empty ranking", "ndcg", TOPIC_E, WANT(0)},

      /* ---- ndcg_rel ----------------------------------------------------- */
      /* [1 0 1], ideal [1 1]: rank 1 relevant: DCG 1 / IDCG 1 = 1.  Rank 3
       * relevant: DCG 1 + 1/2, IDCG 1 + 1/log2 3.  Every relevant doc is
       * retrieved: (1 + 1.5/(1 + 1/log2 3)) / 2. */
      {"ndcg_rel, binary", "ndcg_rel", TOPIC_P3, WANT((1 + 1.5 / (1 + 1 / LG3)) / 2)},
      /* [0 2 - 1], ideal [2 1 1] (3 positive-gain docs).  Rank 2 (gain 2):
       * DCG 2/log2 3, IDCG 2 + 1/log2 3 -> a.  Rank 4 (gain 1): DCG
       * 2/log2 3 + 1/log2 5, IDCG 2 + 1/log2 3 + 1/2 -> b.  The unretrieved
       * relevant doc scores the final DCG/IDCG = b.  (a + 2b) / 3. */
      {"ndcg_rel, unretrieved relevant doc", "ndcg_rel", TOPIC_GD,
       WANT(((2 / LG3) / (2 + 1 / LG3) + 2 * ((2 / LG3 + 1 / LG5) / (2 + 1 / LG3 + 1.0 / 2))) / 3)},
      {"ndcg_rel, no relevant doc", "ndcg_rel", TOPIC_Z, WANT(0)},

      /* ---- Rndcg ------------------------------------------------------ */
      /* [2 0 1 0 1], ideal gains [2 1 1 0 0]: ndcg sampled where the ideal gain
       * changes (after ranks 1 and 3), and at the end of the ranking.  @1:
       * 2/2 = 1.  @3: (2 + 1/2) / (2 + 1/log2 3 + 1/2).  @5 (end):
       * (2 + 1/2 + 1/log2 6) / (2 + 1/log2 3 + 1/2).  Mean of the three. */
      {"Rndcg, ranking longer than the ideal", "Rndcg", TOPIC_RN,
       WANT((1 + 2.5 / (2.5 + 1 / LG3) + (2.5 + 1 / LG6) / (2.5 + 1 / LG3)) / 3)},
      /* [0 2 - 1], ideal [2 1 1]: @1: 0/2 = 0.  @3: (2/log2 3) /
       * (2 + 1/log2 3 + 1/2).  The ranking ends at 4, where the ideal reaches
       * gain 0: no further sample.  (0 + that) / 2. */
      {"Rndcg, graded", "Rndcg", TOPIC_GD, WANT((2 / LG3) / (2.5 + 1 / LG3) / 2)},
      /* R = 0: 0. */
      {"Rndcg, no relevant doc", "Rndcg", TOPIC_Z, WANT(0)},
      /* -l matters to Rndcg only through R: with L = 3, R = 0 gives 0 although
       * the raw-grade ndcg of [2 1 0 2 1] is positive. */
      {"Rndcg, R = 0 under -l 3", "Rndcg", .L = 3, TOPIC_L2, WANT(0)},

      /* ---- ndcg_cut ------------------------------------------------------ */
      /* Literature: [3 2 3] vs ideal [3 3 2]: DCG@3 = 3 + 2/log2 3 + 3/2 = 5.76;
       * IDCG@3 = 3 + 3/log2 3 + 2/2; nDCG@3 = 0.978. */
      {"ndcg_cut@3, graded", "ndcg_cut.3", TOPIC_GR, WANT((3 + 2 / LG3 + 3.0 / 2) / (3 + 3 / LG3 + 1))},
      /* @1: 3/3; @2: (3 + 2/log2 3) / (3 + 3/log2 3). */
      {"ndcg_cut, ideal truncated", "ndcg_cut.1,2", TOPIC_GR, WANT(1, (3 + 2 / LG3) / (3 + 3 / LG3))},
      /* A cutoff past both the ranking and the ideal: the full ratio. */
      {"ndcg_cut past the ranking", "ndcg_cut.10", TOPIC_GR, WANT((3 + 2 / LG3 + 3.0 / 2) / (3 + 3 / LG3 + 1))},
      /* [0 2 - 1], ideal [2 1 1]: @1: 0/2; @2: (2/log2 3) / (2 + 1/log2 3);
       * @5: (2/log2 3 + 1/log2 5) / (2 + 1/log2 3 + 1/2). */
      {"ndcg_cut, unretrieved relevant doc", "ndcg_cut.1,2,5", TOPIC_GD,
       WANT(0, (2 / LG3) / (2 + 1 / LG3), (2 / LG3 + 1 / LG5) / (2 + 1 / LG3 + 1.0 / 2))},
      /* ndcg_cut ignores -l: [2 1] vs ideal [2 2]: (2 + 1/log2 3) / (2 + 2/log2 3). */
      {"ndcg_cut ignores -l 2", "ndcg_cut.2", .L = 2, TOPIC_L2, WANT((2 + 1 / LG3) / (2 + 2 / LG3))},
      /* IDCG = 0: the value is the DCG, 0. */
      {"ndcg_cut, no relevant doc", "ndcg_cut.5", TOPIC_Z, WANT(0)},
      {"ndcg_cut, empty ranking", "ndcg_cut.5", TOPIC_E, WANT(0)},

      /* ---- map_cut ------------------------------------------------------ */
      /* Sum of precisions at relevant docs in the top k, / R = 3 (not
       * min(R, k)): @1: 0; @2: (1/2)/3; @3: (1/2 + 2/3)/3; @5, @10: AP. */
      {"map_cut, topic A", "map_cut.1,2,3,5,10", TOPIC_A,
       WANT(0, (1.0 / 2) / 3, (1.0 / 2 + 2.0 / 3) / 3, AP_A, AP_A)},
      /* Topic U: @2: (1/2)/3; @5: (1/2 + 2/5)/3. */
      {"map_cut, unretrieved relevant doc", "map_cut.2,5", TOPIC_U, WANT((1.0 / 2) / 3, (1.0 / 2 + 2.0 / 5) / 3)},
      {"map_cut, no relevant doc", "map_cut.5", TOPIC_Z, WANT(0)},

      /* ---- relative_P --------------------------------------------------- */
      /* Relevant in the top k / min(k, R = 3): 0/1, 1/2, 2/3, 3/3, 3/3. */
      {"relative_P, topic A", "relative_P.1,2,3,5,10", TOPIC_A, WANT(0, 1.0 / 2, 2.0 / 3, 1, 1)},
      /* Topic C (R = 4): @2: 1/min(2, 4); @5: 2/min(5, 4). */
      {"relative_P, R > ret", "relative_P.2,5", TOPIC_C, WANT(1.0 / 2, 2.0 / 4)},
      {"relative_P, no relevant doc", "relative_P.5", TOPIC_Z, WANT(0)},

      /* ---- success ------------------------------------------------------ */
      /* Default cutoffs 1, 5, 10: rank 1 is non-relevant, rank 2 relevant. */
      {"success, topic A", "success", TOPIC_A, WANT(0, 1, 1)},
      {"success@1", "success.1", TOPIC_P3, WANT(1)},
      {"success, no relevant doc", "success", TOPIC_Z, WANT(0, 0, 0)},
      /* [1 0 2] with L = 2: the first relevant doc is at rank 3. */
      {"success, -l 2", "success.1,2,3", .L = 2, TOPIC_FR, WANT(0, 0, 1)},

      /* ---- set_P, set_relative_P, set_recall, set_map, set_F ------------- */
      /* Topic C: ret = 3, R = 4, relret = 2.  set_P = 2/3. */
      {"set_P", "set_P", TOPIC_C, WANT(2.0 / 3)},
      {"set_P, no relevant doc", "set_P", TOPIC_Z, WANT(0)},
      {"set_P, empty ranking", "set_P", TOPIC_E, WANT(0)},
      /* relret / min(ret, R): topic C 2/min(3, 4); topic A 3/min(5, 3). */
      {"set_relative_P, ret < R", "set_relative_P", TOPIC_C, WANT(2.0 / 3)},
      {"set_relative_P, ret > R", "set_relative_P", TOPIC_A, WANT(1)},
      {"set_relative_P, no relevant doc", "set_relative_P", TOPIC_Z, WANT(0)},
      /* relret / R: 2/4. */
      {"set_recall", "set_recall", TOPIC_C, WANT(2.0 / 4)},
      {"set_recall, no relevant doc", "set_recall", TOPIC_Z, WANT(0)},
      /* relret^2 / (ret R): topic C 4/12; topic A 9/15. */
      {"set_map, topic C", "set_map", TOPIC_C, WANT(4.0 / 12)},
      {"set_map, topic A", "set_map", TOPIC_A, WANT(9.0 / 15)},
      {"set_map, no relevant doc", "set_map", TOPIC_Z, WANT(0)},
      /* (x + 1) P R / (x P + R), P = 2/3, R = 1/2.  x = 1: (2/3)/(7/6) = 4/7. */
      {"set_F", "set_F", TOPIC_C, WANT(4.0 / 7)},
      /* x = 0.5: 1.5 (1/3) / (1/3 + 1/2) = 3/5. */
      {"set_F, beta 0.5", "set_F.0.5", TOPIC_C, WANT(3.0 / 5)},
      /* x = 2 enters linearly (not squared): 3 (1/3) / (4/3 + 1/2) = 6/11
       * (with beta^2 = 4 it would be 5/8). */
      {"set_F, beta 2 is linear", "set_F.2", TOPIC_C, WANT(6.0 / 11)},
      /* relret = 0: 0 (not 0/0). */
      {"set_F, no relevant doc", "set_F", TOPIC_Z, WANT(0)},

      /* ---- num_nonrel_judged_ret ---------------------------------------- */
      /* Topic A: two grade-0 docs retrieved. */
      {"num_nonrel_judged_ret, topic A", "num_nonrel_judged_ret", TOPIC_A, WANT(2)},
      /* Topic U: only the grade-0 doc; unpooled/unjudged docs are not judged. */
      {"num_nonrel_judged_ret skips unjudged docs", "num_nonrel_judged_ret", TOPIC_U, WANT(1)},
      /* [2 1 0 2 1]: L = 2: grades 1, 0, 1 -> 3; L = 1: grade 0 -> 1. */
      {"num_nonrel_judged_ret, -l 2", "num_nonrel_judged_ret", .L = 2, TOPIC_L2, WANT(3)},
      {"num_nonrel_judged_ret, -l 1", "num_nonrel_judged_ret", TOPIC_L2, WANT(1)},

      /* ---- rbp ---------------------------------------------------------- */
      /* Max grade 1: gains as is.  Relevant at ranks 2, 3, 5:
       * (1 - 0.9)(p + p^2 + p^4), p = 0.9. */
      {"rbp, binary", "rbp", TOPIC_A, WANT((1.0 - 0.9) * (0.9 + 0.9 * 0.9 + 0.9 * 0.9 * 0.9 * 0.9))},
      /* p = 0.8: (1 - 0.8)(0.8 + 0.8^2 + 0.8^4). */
      {"rbp, p = 0.8", "rbp.p=0.8", TOPIC_A, WANT((1.0 - 0.8) * (0.8 + 0.8 * 0.8 + 0.8 * 0.8 * 0.8 * 0.8))},
      /* Max grade 3 > 1: gains g/3 (min-max over levels 0..3).  [3 2 3]:
       * (1 - 0.9)(1 + (2/3) p + 1 p^2). */
      {"rbp, gains / max grade 3", "rbp", TOPIC_GR, WANT((1.0 - 0.9) * (1 + (2.0 / 3) * 0.9 + 0.9 * 0.9))},
      /* rbp ignores -l; max grade 2: gains g/2.  [2 1 0 2 1]:
       * (1 - 0.9)(1 + p/2 + p^3 + p^4/2). */
      {"rbp, gains / max grade 2, -l 2", "rbp", .L = 2, TOPIC_L2,
       WANT((1.0 - 0.9) * (1 + 0.5 * 0.9 + 0.9 * 0.9 * 0.9 + 0.5 * (0.9 * 0.9 * 0.9 * 0.9)))},
      /* Only grade 2 is judged, but the gain table spans levels 0..2, so the
       * gain of grade 2 is (2 - 0)/(2 - 0) = 1: (1 - 0.9) * 1. */
      {"rbp, levels 0..max even if unjudged", "rbp", .rel = {2, -1}, .n = 2, .grade = {2}, .count = {1}, .n_lv = 1,
       WANT(1.0 - 0.9)},
      /* Gain 1 -> 0.5 keeps every gain in [0, 1]: no normalisation.
       * (1 - 0.9) 0.5 (p + p^2 + p^4). */
      {"rbp, custom gain in [0,1]", "rbp.1=0.5", TOPIC_A,
       WANT((1.0 - 0.9) * 0.5 * (0.9 + 0.9 * 0.9 + 0.9 * 0.9 * 0.9 * 0.9))},
      /* Gains 0, 1, 2 -> 4, 3 -> 3: max 4, min 0: grade 3 -> 3/4, grade 2 -> 1.
       * [3 2 3], p = 0.8: (1 - 0.8)(3/4 + 1 * 0.8 + (3/4) 0.8^2). */
      {"rbp, custom gain and p normalised", "rbp.p=0.8,2=4", TOPIC_GR,
       WANT((1.0 - 0.8) * (3.0 / 4 + 0.8 + (3.0 / 4) * (0.8 * 0.8)))},
      /* [1 0 2], gain 1 -> 3: the table {0: 0, 1: 3, 2: 2} spans [0, 3], so
       * grade 1 -> 1, grade 2 -> 2/3: (1 - 0.9)(1 + (2/3) p^2). */
      {"rbp, custom gain above max grade", "rbp.1=3", TOPIC_FR, WANT((1.0 - 0.9) * (1 + (2.0 / 3) * (0.9 * 0.9)))},
      /* [1 0 2], gain 0 -> -1: {0: -1, 1: 1, 2: 2} spans [-1, 2]: (g + 1)/3:
       * grade 1 -> 2/3, grade 0 -> 0, grade 2 -> 1: (1 - 0.9)(2/3 + p^2). */
      {"rbp, negative custom gain", "rbp.0=-1", TOPIC_FR, WANT((1.0 - 0.9) * (2.0 / 3 + 0.9 * 0.9))},
      /* A gain for a level nobody judged still widens the range: {0: 0, 1: 1,
       * 5: 10} spans [0, 10]: grade 1 -> 1/10.  (1 - 0.9)(p + p^2 + p^4)/10. */
      {"rbp, gain of an unjudged level", "rbp.5=10", TOPIC_A,
       WANT((1.0 - 0.9) * (0.1 * 0.9 + 0.1 * (0.9 * 0.9) + 0.1 * (0.9 * 0.9 * 0.9 * 0.9)))},
      /* Unpooled and unjudged docs give 0: relevant at ranks 2 and 5:
       * (1 - 0.9)(p + p^4). */
      {"rbp with unjudged docs", "rbp", TOPIC_U, WANT((1.0 - 0.9) * (0.9 + 0.9 * 0.9 * 0.9 * 0.9))},
      {"rbp, no relevant doc", "rbp", TOPIC_Z, WANT(0)},
      {"rbp, empty ranking", "rbp", TOPIC_E, WANT(0)},

      /* ---- rbp_resid ---------------------------------------------------- */
      /* [R - N .]: unjudged at ranks 2 and 4 (p^1, p^3); 4 docs: p^4 +
       * (1 - p)(p + p^3). */
      {"rbp_resid", "rbp_resid", TOPIC_RB,
       WANT(0.9 * 0.9 * 0.9 * 0.9 + (1 - 0.9) * (0.9 + 0.9 * 0.9 * 0.9))},
      /* [- R . N R]: ranks 1 and 3 (p^0, p^2); 5 docs: p^5 + (1 - p)(1 + p^2). */
      {"rbp_resid, topic U", "rbp_resid", TOPIC_U,
       WANT(0.9 * 0.9 * 0.9 * 0.9 * 0.9 + (1 - 0.9) * (1 + 0.9 * 0.9))},
      /* p = 0.5: p^4 + (1 - p)(p + p^3) = 1/16 + (1/2)(5/8) = 3/8. */
      {"rbp_resid, p = 0.5", "rbp_resid.p=0.5", TOPIC_RB, WANT(3.0 / 8)},
      /* Nothing unjudged: 0 (the p^5 tail is not added). */
      {"rbp_resid, all judged", "rbp_resid", TOPIC_A, WANT(0)},

      /* ---- unj ---------------------------------------------------------- */
      /* Topic RB: 2 unjudged docs (ranks 2, 4) among 4; cutoffs 5, 10, 20 keep
       * the denominator k: 2/5, 2/10, 2/20. */
      {"unj, default cutoffs", "unj", TOPIC_RB, WANT(2.0 / 5, 2.0 / 10, 2.0 / 20)},
      /* Top 1, 2, 4: 0, 1, 2 unjudged. */
      {"unj, small cutoffs", "unj.1,2,4", TOPIC_RB, WANT(0, 1.0 / 2, 2.0 / 4)},
      {"unj, all judged", "unj", TOPIC_A, WANT(0, 0, 0)},
      {"unj, empty ranking", "unj", TOPIC_E, WANT(0, 0, 0)},
  };
  return cr_make_param_array(struct measure_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct measure_case *tc, measures, hand_worked)
{
  const char *args[] = {tc->measure};
  const options opt = {.L = tc->L, .set_L = tc->L != 0, .n_docs_coll = tc->n_docs_coll};
  evaluator ev;
  ev_open(&ev, args, 1, &opt);
  cr_assert(ev.plan.n_sel == 1, "%s: -m %s chose %zu measures", tc->name, tc->measure, ev.plan.n_sel);
  ev_eval(&ev, tc->rel, tc->n, tc->grade, tc->count, tc->n_lv);
  size_t nv = 0;
  const double *got = ev_values(&ev, ev.plan.sel[0].id, &nv);
  cr_assert(got && nv == tc->n_want, "%s: -m %s gives %zu values, want %zu", tc->name, tc->measure, nv,
            tc->n_want);
  for (size_t i = 0; i < nv; i++) {
    double want = tc->want[i];
    if (tc->want_log) want = log(want > 1e-5 ? want : 1e-5);
    cr_expect(close_enough(got[i], want, 1e-12), "%s: %s value %zu: got %.17g, want %.17g", tc->name,
              ev.plan.sel[0].names[i], i, got[i], want);
  }
  ev_close(&ev);
}

/* ---------------------------------------------------------------------------
 * relstring
 * ------------------------------------------------------------------------- */

struct relstring_case {
  char name[64];
  char measure[24];
  int32_t rel[MAX_RANK];
  size_t n;
  char want[MAX_RANK + 1];
};

ParameterizedTestParameters(measures, relstring)
{
  static struct relstring_case cases[] = {
      /* '0'-'9' for grades, '>' above 9, '-' unpooled, '.' unjudged. */
      {"all kinds of value", "relstring", {1, -1, 0, -2, 12, 3}, 6, "1-0.>3"},
      /* The default length is 10: the 11th and 12th docs are left out. */
      {"default length 10", "relstring", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1}, 12, "0123456789"},
      {"grade 10 is '>'", "relstring.2", {10, 9}, 2, ">9"},
      {"length 3", "relstring.3", {1, -1, 0, -2, 12, 3}, 6, "1-0"},
      {"empty ranking", "relstring", {0}, 0, ""},
  };
  return cr_make_param_array(struct relstring_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct relstring_case *tc, measures, relstring)
{
  static const int32_t grade[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12};
  static const uint32_t count[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const char *args[] = {tc->measure};
  const options opt = {0};
  evaluator ev;
  ev_open(&ev, args, 1, &opt);
  ev_eval(&ev, tc->rel, tc->n, grade, count, sizeof grade / sizeof grade[0]);
  cr_expect(strcmp(ev.relstring, tc->want) == 0, "%s: -m %s: got '%.*s', want '%s'", tc->name, tc->measure,
            (int)ev.plan.relstring_len, ev.relstring, tc->want);
  ev_close(&ev);
}

/* ---------------------------------------------------------------------------
 * Literature examples, checked to 3 decimals as published and to 1e-12
 * against the exact expression.
 * ------------------------------------------------------------------------- */

/* One measure's first value for one topic. */
static double eval_one(const char *measure, const int32_t *rel, size_t n, const int32_t *grade,
                       const uint32_t *count, size_t n_lv)
{
  const char *args[] = {measure};
  const options opt = {0};
  evaluator ev;
  ev_open(&ev, args, 1, &opt);
  ev_eval(&ev, rel, n, grade, count, n_lv);
  size_t nv = 0;
  const double *v = ev_values(&ev, ev.plan.sel[0].id, &nv);
  cr_assert(v && nv >= 1, "-m %s gives no value", measure);
  double got = v[0];
  ev_close(&ev);
  return got;
}

Test(measures, literature_precision_at_3)
{
  /* [R N R]: 2 relevant in the top 3: P@3 = 2/3 = 0.667. */
  static const int32_t rel[] = {1, 0, 1}, grade[] = {0, 1};
  static const uint32_t count[] = {1, 2};
  double got = eval_one("P.3", rel, 3, grade, count, 2);
  cr_expect(fabs(got - 0.667) < 5e-4, "P@3 [R N R]: got %.17g, want 0.667", got);
  cr_expect(fabs(got - 2.0 / 3) < 1e-12, "P@3 [R N R]: got %.17g, want 2/3", got);
}

Test(measures, literature_mrr_three_queries)
{
  /* First relevant doc at ranks 1, 2, 3: recip_rank 1, 1/2, 1/3; the mean
   * (1 + 1/2 + 1/3) / 3 = 11/18 = 0.611. */
  static const int32_t rel[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, grade[] = {0, 1};
  static const uint32_t count[] = {2, 1};
  const double want[3] = {1.0, 1.0 / 2, 1.0 / 3};
  double sum = 0.0;
  for (int q = 0; q < 3; q++) {
    double rr = eval_one("recip_rank", rel[q], 3, grade, count, 2);
    cr_expect(fabs(rr - want[q]) < 1e-12, "recip_rank of query %d: got %.17g, want %.17g", q + 1, rr, want[q]);
    sum += rr;
  }
  double mrr = sum / 3;
  cr_expect(fabs(mrr - 0.611) < 5e-4, "MRR: got %.17g, want 0.611", mrr);
  cr_expect(fabs(mrr - 11.0 / 18) < 1e-12, "MRR: got %.17g, want 11/18", mrr);
}

Test(measures, literature_average_precision)
{
  /* [N R R N R], 3 relevant: (1/2 + 2/3 + 3/5) / 3 = 0.589. */
  static const int32_t rel[] = {0, 1, 1, 0, 1}, grade[] = {0, 1};
  static const uint32_t count[] = {2, 3};
  double got = eval_one("map", rel, 5, grade, count, 2);
  cr_expect(fabs(got - 0.589) < 5e-4, "AP: got %.17g, want 0.589", got);
  cr_expect(fabs(got - AP_A) < 1e-12, "AP: got %.17g, want %.17g", got, AP_A);
}

Test(measures, literature_dcg_ndcg_at_3)
{
  /* Grades [3 2 3] against the ideal [3 3 2], linear gain, log2(rank + 1):
   * DCG@3 = 3 + 2/log2 3 + 3/2 = 5.762, IDCG@3 = 3 + 3/log2 3 + 2/2 = 5.893,
   * nDCG@3 = 0.978; the DCG is recovered as nDCG@3 * IDCG@3. */
  static const int32_t rel[] = {3, 2, 3}, grade[] = {2, 3};
  static const uint32_t count[] = {1, 2};
  const double idcg = 3 + 3 / log2(3.0) + 2.0 / 2;
  double ndcg = eval_one("ndcg_cut.3", rel, 3, grade, count, 2);
  double dcg = ndcg * idcg;
  cr_expect(fabs(ndcg - 0.978) < 5e-4, "nDCG@3: got %.17g, want 0.978", ndcg);
  cr_expect(fabs(dcg - 5.76) < 5e-3, "DCG@3: got %.17g, want 5.76", dcg);
  cr_expect(fabs(dcg - (3 + 2 / log2(3.0) + 3.0 / 2)) < 1e-12, "DCG@3: got %.17g", dcg);
}

/* -l 0: every judged doc (grade >= 0) is relevant; unpooled and unjudged
 * docs are not. */
Test(measures, relevance_level_zero)
{
  /* Topic U [- 1 . 0 1], judged {0:1, 1:3}: R = 4; relevant at ranks 2, 4,
   * 5.  map = (1/2 + 2/4 + 3/5) / 4 = 0.4; P_5 = 3/5; bpref: N = 0, every
   * relevant doc adds 1: 3/4; no judged non-relevant doc retrieved. */
  static const int32_t rel[] = {-1, 1, -2, 0, 1}, grade[] = {0, 1};
  static const uint32_t count[] = {1, 3};
  const char *args[] = {"num_rel", "num_rel_ret", "map", "P.5", "bpref", "num_nonrel_judged_ret"};
  const options opt = {.L = 0, .set_L = 1};
  evaluator ev;
  ev_open(&ev, args, sizeof args / sizeof args[0], &opt);
  ev_eval(&ev, rel, 5, grade, count, 2);
  struct {
    rs_measure_id id;
    double want;
  } checks[] = {
      {RS_M_NUM_REL, 4}, {RS_M_NUM_REL_RET, 3}, {RS_M_MAP, (1.0 / 2 + 2.0 / 4 + 3.0 / 5) / 4},
      {RS_M_P, 3.0 / 5}, {RS_M_BPREF, 3.0 / 4}, {RS_M_NUM_NONREL_JUDGED_RET, 0},
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    size_t nv = 0;
    const double *v = ev_values(&ev, checks[i].id, &nv);
    cr_assert(v && nv == 1, "%s not chosen", rs_measure_name(checks[i].id));
    cr_expect(close_enough(v[0], checks[i].want, 1e-12), "-l 0, %s: got %.17g, want %.17g",
              rs_measure_name(checks[i].id), v[0], checks[i].want);
  }
  ev_close(&ev);
}

/* ---------------------------------------------------------------------------
 * Properties of the kernel as a whole.
 * ------------------------------------------------------------------------- */

Test(measures, constants_are_exact)
{
  cr_assert(fabs(LG3 - log2(3.0)) < 1e-15 && fabs(LG5 - log2(5.0)) < 1e-15 && fabs(LG6 - log2(6.0)) < 1e-15,
            "the log2 constants of this file are wrong");
}

/* A topic of the cross checks below (no pointers: copied per test). */
struct topic {
  char name[16];
  long L;
  int32_t rel[MAX_RANK];
  size_t n;
  int32_t grade[MAX_LEVELS];
  uint32_t count[MAX_LEVELS];
  size_t n_lv;
};

static const struct topic cross_topics[] = {
    {"A", 0, TOPIC_A},   {"U", 0, TOPIC_U},   {"GD", 0, TOPIC_GD}, {"L2 -l 2", 2, TOPIC_L2},
    {"Z", 0, TOPIC_Z},   {"E", 0, TOPIC_E},   {"E0", 0, TOPIC_E0}, {"RB", 0, TOPIC_RB},
    {"RN", 0, TOPIC_RN}, {"GR", 0, TOPIC_GR}, {"I", 0, TOPIC_I},
};

/* Every measure gives the same bits whether chosen alone or with all the
 * others (so no measure depends on work another one happens to do). */
Test(measures, all_trec_matches_each_measure_alone)
{
  const char *all[] = {"all_trec"};
  for (size_t t = 0; t < sizeof cross_topics / sizeof cross_topics[0]; t++) {
    const struct topic *tp = &cross_topics[t];
    const options opt = {.L = tp->L, .set_L = tp->L != 0};
    evaluator ev;
    ev_open(&ev, all, 1, &opt);
    cr_assert(ev.plan.n_sel == RS_N_MEASURES, "all_trec chose %zu of %d measures", ev.plan.n_sel,
              (int)RS_N_MEASURES);
    ev_eval(&ev, tp->rel, tp->n, tp->grade, tp->count, tp->n_lv);
    for (int id = 0; id < RS_N_MEASURES; id++) {
      const char *name = rs_measure_name((rs_measure_id)id);
      const char *one[] = {name};
      evaluator single;
      ev_open(&single, one, 1, &opt);
      ev_eval(&single, tp->rel, tp->n, tp->grade, tp->count, tp->n_lv);
      size_t n_all = 0, n_one = 0;
      const double *v_all = ev_values(&ev, (rs_measure_id)id, &n_all);
      const double *v_one = ev_values(&single, (rs_measure_id)id, &n_one);
      cr_assert(v_all && v_one && n_all == n_one, "topic %s, %s: not chosen, or %zu vs %zu values", tp->name, name,
                n_all, n_one);
      for (size_t i = 0; i < n_all; i++)
        cr_expect(memcmp(&v_all[i], &v_one[i], sizeof(double)) == 0,
                  "topic %s, %s value %zu: all_trec %.17g, alone %.17g", tp->name, name, i, v_all[i], v_one[i]);
      if (id == RS_M_RELSTRING)
        cr_expect(strcmp(ev.relstring, single.relstring) == 0, "topic %s: relstring '%s' vs '%s'", tp->name,
                  ev.relstring, single.relstring);
      ev_close(&single);
    }
    ev_close(&ev);
  }
}

/* -J and -M are applied before the kernel: the plan's judged_only and
 * max_docs must not change what rs_eval_topic computes from a ranking. */
Test(measures, judged_only_and_max_docs_do_not_matter_to_the_kernel)
{
  const char *all[] = {"all_trec"};
  for (size_t t = 0; t < sizeof cross_topics / sizeof cross_topics[0]; t++) {
    const struct topic *tp = &cross_topics[t];
    const options plain = {.L = tp->L, .set_L = tp->L != 0},
                  judged = {.L = tp->L, .set_L = tp->L != 0, .judged_only = 1, .max_docs = 2};
    evaluator a, b;
    ev_open(&a, all, 1, &plain);
    ev_open(&b, all, 1, &judged);
    cr_assert(a.plan.n_values == b.plan.n_values, "plans differ in size");
    ev_eval(&a, tp->rel, tp->n, tp->grade, tp->count, tp->n_lv);
    ev_eval(&b, tp->rel, tp->n, tp->grade, tp->count, tp->n_lv);
    for (size_t i = 0; i < a.plan.n_values; i++)
      cr_expect(memcmp(&a.out[i], &b.out[i], sizeof(double)) == 0,
                "topic %s, value %zu: %.17g with -J -M 2, %.17g without", tp->name, i, b.out[i], a.out[i]);
    cr_expect(strcmp(a.relstring, b.relstring) == 0, "topic %s: relstring '%s' vs '%s'", tp->name, a.relstring,
              b.relstring);
    ev_close(&a);
    ev_close(&b);
  }
}

/* In one all_trec plan each value lands in its own slot, in ascending
 * cutoff order (topic A, hand values from the table above). */
Test(measures, all_trec_slots)
{
  static const int32_t rel[] = {0, 1, 1, 0, 1}, grade[] = {0, 1};
  static const uint32_t count[] = {2, 3};
  const char *all[] = {"all_trec"};
  const options opt = {0};
  evaluator ev;
  ev_open(&ev, all, 1, &opt);
  ev_eval(&ev, rel, 5, grade, count, 2);
  struct {
    rs_measure_id id;
    size_t index;
    double want;
  } checks[] = {
      {RS_M_NUM_RET, 0, 5},
      {RS_M_NUM_REL, 0, 3},
      {RS_M_NUM_REL_RET, 0, 3},
      {RS_M_MAP, 0, AP_A},
      {RS_M_RPREC, 0, 2.0 / 3},
      {RS_M_BPREF, 0, 1.0 / 3},
      {RS_M_RECIP_RANK, 0, 1.0 / 2},
      {RS_M_IPREC_AT_RECALL, 0, 2.0 / 3},
      {RS_M_IPREC_AT_RECALL, 10, 3.0 / 5},
      {RS_M_P, 0, 3.0 / 5},   /* P_5 */
      {RS_M_P, 1, 3.0 / 10},  /* P_10 */
      {RS_M_P, 8, 3.0 / 1000}, /* P_1000 */
      {RS_M_RECALL, 0, 1},     /* recall_5 */
      {RS_M_UTILITY, 0, 1},
      {RS_M_SUCCESS, 0, 0}, /* success_1 */
      {RS_M_SUCCESS, 1, 1}, /* success_5 */
      {RS_M_SET_MAP, 0, 9.0 / 15},
      {RS_M_NUM_NONREL_JUDGED_RET, 0, 2},
      {RS_M_RBP_RESID, 0, 0},
      {RS_M_UNJ, 2, 0},
      {RS_M_NDCG_CUT, 0, (1 / LG3 + 1.0 / 2 + 1 / LG6) / (1 + 1 / LG3 + 1.0 / 2)}, /* ndcg_cut_5 */
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    size_t nv = 0;
    const double *v = ev_values(&ev, checks[i].id, &nv);
    cr_assert(v && checks[i].index < nv, "%s not chosen or too few values", rs_measure_name(checks[i].id));
    cr_expect(close_enough(v[checks[i].index], checks[i].want, 1e-12), "%s value %zu: got %.17g, want %.17g",
              rs_measure_name(checks[i].id), checks[i].index, v[checks[i].index], checks[i].want);
  }
  cr_expect(strcmp(ev.relstring, "01101") == 0, "relstring: got '%s', want '01101'", ev.relstring);
  ev_close(&ev);
}

/* ---------------------------------------------------------------------------
 * Custom fractional gains: trec_eval's gain table lists every level
 * 0 .. highest grade (even a grade no doc has) and sorts it with glibc's
 * merge sort under a comparator that truncates the gain difference to int.
 * ------------------------------------------------------------------------- */

/* -m ndcg.1=0.5, one relevant doc retrieved, no doc judged 0.  Table
 * [(1, 0.5), (0, 0.0, count 0)]: the two compare equal, so level 0 stays on
 * top, the ideal walk stops at once, IDCG = 0 and ndcg = 0. */
Test(measures, custom_gain_keeps_empty_level_zero)
{
  const int32_t rel[] = {1}, grade[] = {1};
  const uint32_t count[] = {1};
  double got = eval_one("ndcg.1=0.5", rel, 1, grade, count, 1);
  cr_expect(got == 0.0, "ndcg.1=0.5: got %.17g, trec_eval gives 0", got);
}

/* -m ndcg.3=1.25,1=0.5; ranking [2, 2, 1]; judged grades 0:1, 1:1, 2:2.
 * Table before sorting: (3,1.25,0) (1,0.5,1) (0,0,1) (2,2,2).  glibc's
 * merge sort: halves [(3,1.25),(1,0.5)] stay (diff 0), [(0,0),(2,2)] stay;
 * merging: (3,1.25) vs (0,0) -> diff 1 > 0, take (0,0); (3,1.25) vs (2,2)
 * -> diff 0, take (3,1.25); (1,0.5) vs (2,2) -> -1, take (1,0.5); then
 * (2,2).  Result [(0,0),(3,1.25),(1,0.5),(2,2)]: the ideal is 2, 2, 0.5 (then
 * (3, count 0) is skipped and (0,0) ends it), which is also the ranking's
 * DCG, so ndcg = 1. */
Test(measures, custom_gain_sorted_like_glibc)
{
  const int32_t rel[] = {2, 2, 1}, grade[] = {0, 1, 2};
  const uint32_t count[] = {1, 1, 2};
  double got = eval_one("ndcg.3=1.25,1=0.5", rel, 3, grade, count, 3);
  cr_expect(fabs(got - 1.0) < 1e-15, "ndcg.3=1.25,1=0.5: got %.17g, trec_eval gives 1", got);
}
