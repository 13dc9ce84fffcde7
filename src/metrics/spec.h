/* spec.h: measure names for `ragsweep eval` (internal).
 *
 * Users name measures the ir_measures way (P@5, nDCG@10, RR, AP@100,
 * P(rel=2)@5, nDCG(gain=exp)@10, R@1..100, nDCG@{1,3,5}) or in trec_eval's
 * spelling (P.5,10, ndcg_cut.10, map, recip_rank, infAP).  A spec turns the
 * list into the fewest rs_plans that compute them all (one per relevance
 * level, plus one per trec_eval measure given with its own parameters) and
 * the few measures trec_eval lacks (rs_eval_rag, F1@k), and gives every
 * output value its canonical name: trec_eval spellings with an ir_measures
 * equivalent are renamed (ndcg_cut.10 -> nDCG@10), the others keep
 * trec_eval's output name (iprec_at_recall_0.10).  Aliases are renamed too
 * (Hit@5 -> Success@5), but the named measures AnswerPresence@k (Success@k's
 * value) and Accuracy@k (P@k's) keep their own names: they share the
 * kernel's value slot and are written under the name asked for. */
#ifndef RAGSWEEP_SPEC_H
#define RAGSWEEP_SPEC_H

#include <stddef.h>

#include "internal.h"
#include "metrics/fused.h"
#include "ragsweep/measures.h"

/* The default measure set, chosen for RAG retrieval (see README). */
#define RS_DEFAULT_MEASURES "nDCG@10", "RR@10", "R@{1,5,10,100}", "P@{1,5,10}", "Success@{1,5,10}", "AP@100", "nDCG@5"

typedef enum { RS_REQ_PLAN, RS_REQ_RAG, RS_REQ_F1 } rs__req_kind;

/* One output value. */
typedef struct rs__req {
  char *name; /* canonical */
  rs__req_kind kind;
  size_t plan;           /* the plan it is computed with */
  size_t slot;           /* PLAN: value slot in the plan; RAG: index into the plan's rag list */
  size_t slot_p, slot_r; /* F1: slots of P@k and R@k */
  size_t at, at_p, at_r;  /* the same places in the per-query work vector (PLAN and RAG: at) */
  rs_summary_kind summary;
} rs__req;

typedef struct rs__spec_plan {
  rs_plan plan;
  rs_rag_measure *rag;
  size_t n_rag;
  size_t out; /* offset of this plan's values in the per-query work vector */
  rs__fused *fused; /* its one-pass program (metrics/fused.h), or NULL */
} rs__spec_plan;

typedef struct rs__spec {
  rs__spec_plan *plans;
  size_t n_plans;
  rs__req *req; /* n_out visible values, then the hidden ones below */
  size_t n_req, n_out;
  /* req indexes of hidden values at level 1: P@1 and NumRelRet (the
   * num_q_* counts), RR and NumRel (worst.csv) */
  size_t hidden_p1, hidden_relret, hidden_rr, hidden_numrel;
  size_t n_work; /* length of the per-query work vector (all plans' values and rag values) */
  /* rs__spec_eval's copy out of the work vector, as two plain loops: each
   * value's place in it (req[i].at; an F1 value's is that of its P@k, and
   * it is then worked out again), and the F1 values' req indexes. */
  size_t *work_at; /* [n_req] */
  size_t *f1;      /* [n_f1] */
  size_t n_f1;
  /* One fused plan and no F1 (the default set): the plan writes each value
   * straight to its req index, the first that asks for it, and a value
   * asked for twice is copied to the second, req index dup_from[i] to
   * dup_to[i].  The copy out of the work vector was 113 of the 891
   * instructions a query of the default set. */
  int direct;
  size_t *dup_from, *dup_to; /* [n_dup] */
  size_t n_dup;
} rs__spec;

/* Builds a spec from names (each may expand to several values).  Unknown
 * names and bad parameters are RS_USAGE with a message that names them.
 * max_ranking sizes the discount table. */
/* For trec_eval mode's error message: the trec_eval spelling of an
 * ir_measures-style name (nDCG@10 -> "-m ndcg_cut.10", P(rel=2)@5 ->
 * "-l 2 -m P.5", RR@10 -> "-M 10 -m recip_rank") written into buf, or 0
 * when the name has no trec_eval equivalent or is not a measure name. */
int rs__spec_trec_spelling(const char *name, char *buf, size_t len);

rs_code rs__spec_build(const char *const *names, size_t n_names, size_t max_ranking, rs__spec **out, rs_error *err);
void rs__spec_free(rs__spec *s);
/* As rs__spec_build, plus the values of extra[0..n_extra) (parsed as names
 * are) after the hidden ones: computed and averaged like the others but not
 * among the n_out visible values, so aggregate.csv, per_query.csv, gates and
 * worst.csv do not change (eval --report's curves).  An extra value that
 * names[] already asks for is computed once, as the visible value. */
rs_code rs__spec_build_extra(const char *const *names, size_t n_names, const char *const *extra, size_t n_extra,
                             size_t max_ranking, rs__spec **out, rs_error *err);
/* The index in req[0..n_req) of the value with canonical name `name`,
 * visible or extra (never a hidden one); SIZE_MAX when there is none. */
size_t rs__spec_find_value(const rs__spec *s, const char *name);

/* Per-thread scratch for rs__spec_eval. */
typedef struct rs__spec_scratch {
  rs_scratch *ms; /* [n_plans] */
  double *work;   /* [n_work] */
  size_t n_plans;
} rs__spec_scratch;

rs_code rs__spec_scratch_init(const rs__spec *s, size_t cap, size_t max_levels, rs__spec_scratch *ss, rs_error *err);
void rs__spec_scratch_free(rs__spec_scratch *ss);

/* Every value of one query into out[n_req].  missing: the run does not
 * rank this judged query (rel and n are ignored); it scores as under
 * trec_eval -c.  judged[0, n_judged): the ranks of the docs with rel >= 0,
 * ascending, when the caller knows them (else NULL; see metrics/topic.h);
 * then a plan with a fused program (metrics/fused.h) takes it.
 * Requires n <= the scratch's cap.  Never allocates. */
void rs__spec_eval(const rs__spec *s, rs__spec_scratch *ss, const int32_t *rel, size_t n, const int32_t *judged,
                   size_t n_judged, const rs_levels *lv, int missing, double *out);

#endif
