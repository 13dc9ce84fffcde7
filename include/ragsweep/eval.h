/* ragsweep/eval.h: measures by their ir_measures-style names.
 *
 * The names `ragsweep eval -m` takes: P@5, nDCG@10, RR@10, AP@100, R@100,
 * Success@5, P(rel=2)@5, nDCG(gain=exp)@10, Judged@10, F1@5, the named
 * measures AnswerPresence@k (Success@k's value) and Accuracy@k (P@k's), the
 * expansions R@1..100 and nDCG@{1,3,5}, and trec_eval spellings (P.5,10,
 * ndcg_cut.10, map), which are renamed to their ir_measures equivalent when
 * there is one (ndcg_cut.10 -> nDCG@10).  See the README's measure table.
 *
 *   rs_error err = {0};
 *   const char *names[] = {"nDCG@10", "AnswerPresence@5"};
 *   rs_measure_set *set = rs_measure_set_new(names, 2, &err);
 *   rs_measure_scratch *ms = rs_measure_scratch_new(set, 1000, 4, &err);
 *   double v[2];   (rs_measure_set_count(set) values)
 *   rs_measure_set_eval(set, ms, rel, n, &levels, v, &err);
 *
 * A set is read-only once built, so any number of threads may share one;
 * each thread evaluates with its own scratch.  rs_measure_set_eval never
 * allocates.  Relevance values and levels are as for rs_eval_topic
 * (measures.h): rel[i] is the grade of the doc at rank i + 1, or
 * RS_REL_UNPOOLED / RS_REL_UNJUDGED; levels count the query's judged docs
 * per grade >= 0.  Values are ragsweep eval's per-query values, bit for bit. */
#ifndef RAGSWEEP_EVAL_H
#define RAGSWEEP_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"
#include "ragsweep/measures.h"

typedef struct rs_measure_set rs_measure_set;
typedef struct rs_measure_scratch rs_measure_scratch;

/* Builds a set from n names (each may expand to several values).  NULL on
 * failure, with err filled: RS_USAGE names the unknown name or the bad
 * parameter, RS_NOMEM when out of memory. */
RS_API rs_measure_set *rs_measure_set_new(const char *const *names, size_t n, rs_error *err);
/* Accepts NULL. */
RS_API void rs_measure_set_free(rs_measure_set *set);

/* How many values a query gets (out[] of rs_measure_set_eval), and the
 * canonical name of value i (< count), valid while the set lives. */
RS_API size_t rs_measure_set_count(const rs_measure_set *set);
RS_API const char *rs_measure_set_name(const rs_measure_set *set, size_t i);

/* Scratch for one thread: rankings up to cap docs, queries with up to
 * max_levels grade levels (0 .. highest grade; more still evaluate exactly
 * with default gains).  NULL on failure, with err filled. */
RS_API rs_measure_scratch *rs_measure_scratch_new(const rs_measure_set *set, size_t cap, size_t max_levels,
                                                  rs_error *err);
/* Accepts NULL. */
RS_API void rs_measure_scratch_free(rs_measure_scratch *scratch);

/* Every value of one query into out[rs_measure_set_count(set)].  rel NULL:
 * the run does not rank this judged query (n is ignored); it scores as
 * under trec_eval -c (0 everywhere).  RS_USAGE when n exceeds the
 * scratch's cap or the scratch was made for another set; out is then
 * untouched.  Never allocates. */
RS_API rs_code rs_measure_set_eval(const rs_measure_set *set, rs_measure_scratch *scratch, const int32_t *rel,
                                   size_t n, const rs_levels *levels, double *out, rs_error *err);

#endif
