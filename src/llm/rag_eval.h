/* rag_eval.h: generation metrics of RAG samples by LLM judges
 * (`ragsweep rag`): faithfulness, answer relevancy, context precision and
 * recall, factual correctness, the id-based context metrics, and custom
 * 1-5 criteria.  Formulas and prompts: README, "rag".
 *
 * The work runs in stages, each one batch of requests through the cache
 * and the HTTP pool (calls.h), per judge model:
 *   1. statements of the response (faithfulness, factual correctness) and
 *      of the reference (factual correctness, recall or F1), questions
 *      (answer relevancy), one usefulness verdict per retrieved context
 *      (context precision), reference attribution (context recall), and
 *      each criterion;
 *   2. the statements' verdicts against the contexts (faithfulness) and
 *      against the reference / the response (factual correctness);
 *   3. the embeddings of the question and the generated questions.
 * A request is never sent twice in a run: faithfulness and factual
 * correctness share the statements of a response.
 *
 * Every value is one of: a number; undefined (an empty denominator: no
 * statements, no retrieved contexts, no reference ids), which is neither a
 * failure nor 0 and stays out of mean and n; failed (a reply without the
 * JSON asked for, a truncated reply, an HTTP error), counted per metric and
 * configuration, never a number; or not sent (the run stopped at the
 * budget or on an error that cannot heal).  Values are computed on one
 * thread in sample order: the same replies give the same bits. */
#ifndef RAGSWEEP_LLM_RAG_EVAL_H
#define RAGSWEEP_LLM_RAG_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "formats/rag_samples.h"
#include "internal.h"
#include "llm/calls.h"

typedef enum {
  RS_RAG_FAITHFULNESS,
  RS_RAG_ANSWER_RELEVANCY,
  RS_RAG_CONTEXT_PRECISION,
  RS_RAG_CONTEXT_RECALL,
  RS_RAG_FACTUAL_CORRECTNESS,
  RS_RAG_ID_CONTEXT_PRECISION,
  RS_RAG_ID_CONTEXT_RECALL,
  RS_RAG_CRITERION
} rs__rag_kind;

typedef enum { RS_FC_F1, RS_FC_PRECISION, RS_FC_RECALL } rs__fc_mode;

typedef struct rs__rag_metric {
  rs__rag_kind kind;
  char *name;     /* as written in the outputs: "faithfulness", "factual_correctness(mode=f1)", a criterion's NAME */
  rs__fc_mode mode;
  char *template_text; /* criterion: the user template, read from its file */
} rs__rag_metric;

/* A metric name as -m takes it (factual_correctness alone is mode f1). */
rs_code rs__rag_metric_parse(const char *text, rs__rag_metric *m, rs_error *err);
/* --criterion NAME=FILE: the template file ({user_input}, {response},
 * {retrieved_contexts}, {reference}; at least one of them). */
rs_code rs__rag_criterion_load(const char *spec, rs__rag_metric *m, rs_error *err);
void rs__rag_metric_free(rs__rag_metric *m);
/* 1 when the metric asks an LLM (all but the id-based ones). */
int rs__rag_metric_uses_llm(const rs__rag_metric *m);

typedef struct rs__rag_stats {
  rs__llm_calls_stats calls;  /* over every stage */
  uint64_t values;            /* numbers */
  uint64_t undefined, failures, not_sent;
  uint64_t samples, samples_all; /* samples in the share, in all shares */
  uint64_t missing;              /* offline: samples with a value no cache or shard answered */
  uint64_t calls_by_metric[8];     /* requests (cached or sent) by the metric kind that caused them; a shared */
                                   /* statement split counts for faithfulness */
} rs__rag_stats;

typedef struct rs__rag_cfg {
  const rs__rag_set *set;
  const rs__rag_metric *metrics;
  size_t n_metrics;
  const char *const *judges; /* chat models, >= 1 when a metric asks an LLM */
  size_t n_judges;
  const char *embed_model;   /* answer_relevancy's embeddings */
  int n_questions;           /* answer_relevancy's generated questions (ragas's strictness; default 3) */
  double temperature;
  int max_tokens;            /* 0: not sent */
  rs__http_cfg http;
  const char *cache_path;
  double price_in, price_out, max_cost;
  int dry_run;
  /* Share share_i of share_n of the samples (rag --shard I/N; share_n 0:
   * all): the distinct sample keys (id, else position) in order of first
   * appearance are cut as rs__share_bounds cuts them, and a share holds
   * every configuration's sample of its keys (the requests configurations
   * share, such as a reference's statements, stay in one share).  A share
   * writes no outputs. */
  size_t share_i, share_n;
  int record_sent;         /* store how each request was sent (calls.h) */
  rs__llm_replay *replay;  /* with offline: the shards' sent requests */
  int offline;             /* send nothing (calls.h) */
  void (*progress)(void *ctx, const rs__llm_calls_stats *s, const char *stage);
  void *progress_ctx;
} rs__rag_cfg;

typedef struct rs__rag rs__rag;

/* Checks every sample has the fields its metrics need (an error names
 * file:line and the field), then runs the stages. */
rs_code rs__rag_run(const rs__rag_cfg *cfg, rs__rag **out, rs_error *err);
const rs__rag_stats *rs__rag_get_stats(const rs__rag *r);

/* The mean of a configuration's values of metric m by judge j (judge 0
 * for the id-based metrics), with n, failures and undefined. */
typedef struct rs__rag_agg {
  double mean; /* NaN when n == 0 */
  uint64_t n, failures, undefined, not_sent;
} rs__rag_agg;
rs__rag_agg rs__rag_aggregate(const rs__rag *r, size_t config, size_t metric, size_t judge);
/* The value of sample s: NaN unless it is a number. */
double rs__rag_value(const rs__rag *r, size_t sample, size_t metric, size_t judge);

/* per_sample.csv, aggregate.csv, calls.jsonl, with two judges or more
 * agreement.csv, and when samples have latency_ms latency.csv and
 * latency_hist.csv (eval's layouts, the configuration columns in place of
 * run and attributes), each under a temporary name until all are complete
 * (stale ones of an earlier run are removed). */
rs_code rs__rag_write(rs__rag *r, const char *dir, rs_error *err);
void rs__rag_free(rs__rag *r);
/* Offline: counts[i] = the samples of share i of n with a value that no
 * cache answered (counts[0..n) zeroed first). */
void rs__rag_missing_by_share(const rs__rag *r, size_t n, uint64_t *counts);

#endif
