/* ragsweep/measures.h: the measure catalogue and the per-topic kernel.
 *
 * A measure is named as in trec_eval ("P", "ndcg_cut", ...) and chosen with
 * parameters ("P.5,10", "ndcg.1=1,2=3").  An rs_plan holds the chosen
 * measures in trec_eval's fixed print order, with their parameters parsed,
 * the output slot of every value and every output name.  rs_eval_topic
 * computes one topic's values from its joined ranking; it never allocates
 * and touches only the caller's scratch, so a plan may be shared by any
 * number of threads, each with its own rs_scratch.
 *
 * Values follow trec_eval 10.0 to the bit: every per-topic value is built
 * with the operation order trec_eval uses (incremental double sums in rank
 * order), so averages over topics print the same digits. */
#ifndef RAGSWEEP_MEASURES_H
#define RAGSWEEP_MEASURES_H

#include <stddef.h>
#include <stdint.h>

#include "ragsweep/error.h"

/* trec_eval's print order (all_trec, then the summary-only measures placed
 * where trec_eval prints them). */
#define RS_MEASURE_LIST(X)                                                     \
  X(RUNID, "runid")                                                            \
  X(NUM_Q, "num_q")                                                            \
  X(NUM_RET, "num_ret")                                                        \
  X(NUM_REL, "num_rel")                                                        \
  X(NUM_REL_RET, "num_rel_ret")                                                \
  X(MAP, "map")                                                                \
  X(GM_MAP, "gm_map")                                                          \
  X(RPREC, "Rprec")                                                            \
  X(BPREF, "bpref")                                                            \
  X(RECIP_RANK, "recip_rank")                                                  \
  X(IPREC_AT_RECALL, "iprec_at_recall")                                        \
  X(P, "P")                                                                    \
  X(RELSTRING, "relstring")                                                    \
  X(RECALL, "recall")                                                          \
  X(INFAP, "infAP")                                                            \
  X(GM_BPREF, "gm_bpref")                                                      \
  X(RPREC_MULT, "Rprec_mult")                                                  \
  X(UTILITY, "utility")                                                        \
  X(PT11_AVG, "11pt_avg")                                                      \
  X(BING, "binG")                                                              \
  X(G, "G")                                                                    \
  X(NDCG, "ndcg")                                                              \
  X(NDCG_REL, "ndcg_rel")                                                      \
  X(RNDCG, "Rndcg")                                                            \
  X(NDCG_CUT, "ndcg_cut")                                                      \
  X(MAP_CUT, "map_cut")                                                        \
  X(RELATIVE_P, "relative_P")                                                  \
  X(SUCCESS, "success")                                                        \
  X(SET_P, "set_P")                                                            \
  X(SET_RELATIVE_P, "set_relative_P")                                          \
  X(SET_RECALL, "set_recall")                                                  \
  X(SET_MAP, "set_map")                                                        \
  X(SET_F, "set_F")                                                            \
  X(NUM_NONREL_JUDGED_RET, "num_nonrel_judged_ret")                            \
  X(RBP, "rbp")                                                                \
  X(RBP_RESID, "rbp_resid")                                                    \
  X(UNJ, "unj")

typedef enum {
#define RS_MID_(id, name) RS_M_##id,
  RS_MEASURE_LIST(RS_MID_)
#undef RS_MID_
      RS_N_MEASURES
} rs_measure_id;

/* How the "all" line combines per-topic values. */
typedef enum {
  RS_SUM_MEAN,   /* arithmetic mean: sequential sum in topic order, one division */
  RS_SUM_TOTAL,  /* integer counts: the sum */
  RS_SUM_GEOM,   /* exp(mean(log(max(v, 1e-5)))): per-topic value holds the log */
  RS_SUM_NUM_Q,  /* the number of topics */
  RS_SUM_RUNID,  /* the run tag */
  RS_SUM_NONE    /* per-topic only (relstring) */
} rs_summary_kind;

typedef struct rs_gain_pair {
  long level;
  double gain;
} rs_gain_pair;

/* One chosen measure with its parsed parameters. */
typedef struct rs_measure_sel {
  rs_measure_id id;
  size_t slot;     /* first value slot in the per-topic vector */
  size_t n_values; /* values it produces (cutoffs, recall points, ...) */
  long *cut;       /* integer cutoffs, ascending, unique (n_values) */
  double *dcut;    /* fractional cutoffs, ascending (n_values) */
  double *dparam;  /* plain parameter list (utility, 11pt_avg, set_F, relstring) */
  size_t n_dparam;
  rs_gain_pair *gains; /* "level=gain" pairs whose level is an integer */
  size_t n_gains;
  double p;            /* rbp persistence */
  char *param_str;     /* the parameter string as given, or NULL */
  char **names;        /* [n_values] output names, e.g. "P_5" */
} rs_measure_sel;

typedef struct rs_plan {
  rs_measure_sel sel[RS_N_MEASURES]; /* chosen measures, in print order */
  size_t n_sel;
  size_t n_values; /* length of the per-topic value vector */
  int chosen[RS_N_MEASURES]; /* 1 + index into sel, or 0 */
  /* evaluation options (trec_eval -l -M -J -N) */
  long relevance_level; /* L: "relevant" means grade >= L (default 1) */
  long max_docs;        /* keep the top max_docs of each ranking (default LONG_MAX) */
  int judged_only;      /* -J: drop unjudged docs and close up the ranks */
  long n_docs_coll;     /* -N: collection size, for utility */
  size_t relstring_len; /* characters of relstring per topic (0 if not chosen) */
  unsigned needs;       /* internal: which prefix arrays the kernel builds */
  double *lg;           /* lg[i] = log2(i + 2) for i < n_lg */
  size_t n_lg;
} rs_plan;

/* Name, summary kind and whether a measure prints per topic / as an integer. */
RS_API const char *rs_measure_name(rs_measure_id id);
RS_API rs_summary_kind rs_measure_summary(rs_measure_id id);
RS_API int rs_measure_is_integer(rs_measure_id id);
RS_API int rs_measure_per_topic(rs_measure_id id);

/* Initialises an empty plan with trec_eval's defaults (L=1, no -M). */
RS_API void rs_plan_init(rs_plan *plan);

/* Adds measures from one trec_eval "-m" argument: a name ("map"), a name
 * with parameters ("P.5,10", "ndcg.1=1,2=3") or a nickname ("official",
 * "all_trec").  As in trec_eval, the first parameter string given for a
 * measure wins.  RS_USAGE for an unknown name or a bad parameter. */
RS_API rs_code rs_plan_add(rs_plan *plan, const char *arg, rs_error *err);

/* Fixes slots and names; call once after the last rs_plan_add and after
 * setting the options.  max_ranking is a hint for the log table size. */
RS_API rs_code rs_plan_finish(rs_plan *plan, size_t max_ranking, rs_error *err);

/* Releases what rs_plan_add/rs_plan_finish allocated; accepts NULL. */
RS_API void rs_plan_free(rs_plan *plan);

/* A topic's judgments, summarised: distinct grades >= 0 ascending, with
 * how many docs carry each. */
typedef struct rs_levels {
  const int32_t *grade;
  const uint32_t *count;
  size_t n;
} rs_levels;

/* One row of a topic's gain table (the gain family's ideal ranking). */
typedef struct rs_gain_level {
  long level;
  double gain;
  uint32_t count;
} rs_gain_level;

/* Scratch for rs_eval_topic; one per thread. */
typedef struct rs_scratch {
  size_t cap; /* rankings up to this length */
  /* A ranking is summarised by where its relevant docs are: a topic has a
   * few, so the counts and sums at any cutoff are read off these short
   * lists instead of prefix arrays as long as the ranking. */
  int32_t *relpos; /* [cap + 1] 0-based ranks of the docs with grade >= L, ascending */
  int32_t *pospos; /* [cap + 1] ranks of the docs with grade > 0 (relpos when L = 1) */
  int32_t *cunj;   /* [cap + 1] unjudged or unpooled docs in the top i */
  double *aps;     /* [cap + 1] sum of precision at the first j relevant docs */
  double *dcg;     /* [cap + 1] linear-gain DCG up to the j-th doc with grade > 0 */
  size_t cap_levels;   /* distinct grades per topic plus gain parameters */
  rs_gain_level *gl;   /* [cap_levels] */
  rs_gain_level *gl_tmp; /* [cap_levels] */
} rs_scratch;

/* cap: the longest ranking; max_levels: the most grade levels of any topic,
 * counting 0 .. highest grade (the gain parameters of the plan are added
 * here).  Topics with more levels than that still evaluate exactly with
 * default gains. */
RS_API rs_code rs_scratch_init(rs_scratch *s, const rs_plan *plan, size_t cap, size_t max_levels, rs_error *err);
RS_API void rs_scratch_free(rs_scratch *s);

/* Relevance values of a ranking, per rank (after -M and -J):
 * grade >= 0 when judged, RS_REL_UNPOOLED when the doc is not in the
 * topic's qrels, RS_REL_UNJUDGED when its grade there is negative. */
enum { RS_REL_UNPOOLED = -1, RS_REL_UNJUDGED = -2 };

/* Computes every chosen measure for one topic into out[plan->n_values]
 * (summary-only measures get the per-topic term their summary combines).
 * relstring, when chosen, is written NUL-terminated to relstring_out
 * (plan->relstring_len + 1 bytes).  Requires n <= scratch->cap. */
RS_API void rs_eval_topic(const rs_plan *plan, const int32_t *rel, size_t n, const rs_levels *lv,
                          rs_scratch *scratch, double *out, char *relstring_out);

/* Evaluates a judged topic that the run does not rank, as trec_eval 10.0's
 * -c does: one unpooled dummy doc is ranked, then the counts that would
 * betray it (num_ret, utility, unj, rbp_resid) are zeroed, so every measure
 * is 0 except num_rel (under -J the dummy is dropped like any unjudged
 * doc).  relstring_out, when chosen, becomes "". */
RS_API void rs_eval_topic_missing(const rs_plan *plan, const rs_levels *lv, rs_scratch *scratch, double *out,
                                  char *relstring_out);

/* Measures beyond trec_eval's, for ir_measures-style names, computed from
 * the same per-rank relevance values as rs_eval_topic:
 *   RS_RAG_RR_CUT  RR@k: 1/rank of the first doc with grade >= level if
 *                  that rank is <= k, else 0;
 *   RS_RAG_DCG     DCG@k: sum over ranks i <= k of gain(grade)/log2(i+1),
 *                  with gain(g) = g (linear, trec_eval's) or 2^g - 1 (exp)
 *                  for judged g > 0, else 0;
 *   RS_RAG_NDCG    nDCG@k = DCG@k / IDCG@k (0 when IDCG@k is 0), the ideal
 *                  ranking being the judged grades > 0 in descending order;
 *   RS_RAG_JUDGED  Judged@k: docs in the top k with a judgment (any grade,
 *                  including 0 and negative ones), divided by k;
 * and the variants some RAG guides and ir_measures' code compute:
 *   RS_RAG_P_RETRIEVED      P(denom=retrieved)@k: docs with grade >= level in
 *                           the top k / min(k, n) (0 when n = 0);
 *   RS_RAG_NDCG_IDEAL_RETRIEVED  nDCG(ideal=retrieved)@k: DCG@k over the DCG
 *                           of the top k's own grades sorted descending;
 *   RS_RAG_JUDGED_RETRIEVED Judged(denom=retrieved)@k: judged docs in the
 *                           top k / min(k, n) (0 when n = 0).
 * Linear DCG is summed in rank order with trec_eval's discount table, so it
 * equals the DCG inside ndcg_cut to the bit. */
typedef enum {
  RS_RAG_RR_CUT,
  RS_RAG_DCG,
  RS_RAG_NDCG,
  RS_RAG_JUDGED,
  RS_RAG_P_RETRIEVED,
  RS_RAG_NDCG_IDEAL_RETRIEVED,
  RS_RAG_JUDGED_RETRIEVED
} rs_rag_kind;

typedef struct rs_rag_measure {
  rs_rag_kind kind;
  long cutoff;  /* k >= 1 */
  long level;   /* relevance level (RR@k, P(denom=retrieved)@k) */
  int exp_gain; /* DCG, nDCG: 2^g - 1 instead of g */
} rs_rag_measure;

/* One value per measure into out[n_measures]; the plan supplies the
 * discount table.  Never allocates. */
RS_API void rs_eval_rag(const rs_plan *plan, const rs_rag_measure *m, size_t n_measures, const int32_t *rel, size_t n,
                        const rs_levels *lv, double *out);

#endif
