/* judge.h: LLM relevance judging of a sweep's top-k (`ragsweep judge`).
 *
 * The pairs are the union over the runs of each query's top `depth` docs,
 * each (query, doc) judged once however many runs retrieved it.  Every
 * request is keyed by a SHA-256 of what can change its answer (base URL,
 * endpoint, request body with model, messages and sampling parameters,
 * sample index) and looked up in the reply cache first; every reply is
 * stored as soon as it arrives, so a killed run resumes where it stopped.
 * A reply that gives no label is a failure: counted, written to
 * judgments.jsonl with its status, and left out of the qrels. */
#ifndef RAGSWEEP_LLM_JUDGE_H
#define RAGSWEEP_LLM_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/corpus.h"
#include "internal.h"
#include "llm/calls.h"
#include "llm/http.h"
#include "llm/prompt.h"

typedef struct rs__judge_stats rs__judge_stats;

typedef struct rs__judge_cfg {
  rs__corpus *corpus;            /* texts are loaded into it on demand */
  const rs__run *const *runs;
  size_t n_runs;
  const char *queries_path;      /* query texts (TSV / JSONL), or NULL: /queries/text */
  const char *docs_path;         /* doc texts, or NULL: /docs/text */
  size_t depth;                  /* top docs per run and query */
  int holes_only;                /* skip pairs the corpus's qrels judge */
  int ties_stored;               /* rank as eval --ties=stored */
  const rs__prompt *prompt;
  size_t max_doc_chars;          /* 0: no cut */
  int samples;                   /* requests per pair; the most frequent label wins */
  const char *model;
  double temperature;
  int max_tokens;                /* 0: not sent */
  rs__http_cfg http;
  const char *cache_path;
  double max_failures;           /* fraction of judged pairs */
  double price_in, price_out;    /* USD per million tokens */
  double max_cost;               /* USD; < 0: no budget */
  int dry_run;
  /* Share share_i of share_n of the pairs (judge --shard I/N, MPI rank r of
   * P; share_n 0: all): the distinct pairs in their output order (query in
   * corpus order, then doc id), cut as rs__share_bounds cuts them.  Only
   * the share is asked; a share writes no outputs (rs__judge_write refuses). */
  size_t share_i, share_n;
  /* MPI: requests already answered by the job's cache (rank 0 looked them
   * up), [pairs_all × samples] over all pairs, 1 to leave out; or NULL. */
  const uint8_t *skip;
  int record_sent;               /* store how each request was sent (calls.h) */
  rs__llm_replay *replay;        /* with offline: the shards' or ranks' sent requests */
  int offline;                   /* send nothing (calls.h); pairs left unanswered are missing */
  /* Called on the caller's thread after each finished request (at most
   * every few hundred ms is up to the callee). */
  void (*progress)(void *ctx, const rs__judge_stats *s);
  void *progress_ctx;
} rs__judge_cfg;

struct rs__judge_stats {
  uint64_t retrieved;       /* (run, query, doc) triples in the runs' top depth */
  uint64_t pairs;           /* distinct (query, doc) pairs to judge (in the share) */
  uint64_t pairs_all;       /* distinct pairs of all shares */
  uint64_t share_first;     /* the share's first pair among them */
  uint64_t missing;         /* offline: pairs whose requests no cache or shard answered (counted in not_sent too) */
  uint64_t already_judged;  /* pairs dropped by holes_only */
  uint64_t requests;        /* pairs x samples */
  uint64_t cached;          /* requests answered from the cache */
  uint64_t sent;            /* requests sent (finished, any outcome) */
  uint64_t retries;
  uint64_t done;            /* requests finished (cached or sent) */
  uint64_t judged;          /* pairs with a label */
  uint64_t failures;        /* pairs without one (unparsable, truncated, bad reply, HTTP error) */
  uint64_t unparsed, truncated, bad_reply, http_error; /* failures by kind */
  uint64_t request_failures; /* requests that gave no label so far (progress) */
  uint64_t not_sent;        /* pairs left unjudged by a stop (budget, fatal error) */
  uint64_t cut;             /* pairs whose document was cut to max_doc_chars */
  uint64_t prompt_tokens, completion_tokens;       /* reported usage (cached and sent) */
  uint64_t est_prompt_tokens, est_completion_tokens; /* dry run: the estimate for the uncached requests */
  double cost;              /* USD of the reported usage of the requests sent */
  double est_cost;          /* USD estimated for the uncached requests */
  double wall_s;
  int stopped_budget;       /* --max-cost reached */
  int stopped_fatal;        /* an error that cannot heal (401, 400, 404, quota) */
  char fatal_message[512];
};

typedef struct rs__judge rs__judge;

/* Builds the pairs, checks every text, and (unless dry_run) judges them.
 * A stop on a fatal reply or on the budget is not an error here: *out holds
 * what was judged and stats say why it stopped. */
rs_code rs__judge_run(const rs__judge_cfg *cfg, rs__judge **out, rs_error *err);
const rs__judge_stats *rs__judge_get_stats(const rs__judge *j);
/* Writes qrels.txt, judgments.jsonl and (when the corpus's qrels judge some
 * of the pairs) agreement.csv into dir, each under a temporary name until
 * all are complete. */
rs_code rs__judge_write(rs__judge *j, const char *dir, rs_error *err);
void rs__judge_free(rs__judge *j);
/* Offline: counts[i] = the pairs of share i of n that no cache answered
 * (counts[0..n) zeroed first). */
void rs__judge_missing_by_share(const rs__judge *j, size_t n, uint64_t *counts);
/* After a dry run of all pairs: out[k] (room for pairs × samples) is 1 for
 * every request the cache answers, 0 for the others (the MPI ranks' skip). */
void rs__judge_cached_requests(const rs__judge *j, uint8_t *out);
/* Folds what other processes of the job did into the stats (MPI: the
 * ranks' stops, which rank 0's replay cannot see, and the job's wall time). */
void rs__judge_note_ranks(rs__judge *j, int budget, int fatal, const char *message, double wall_s);

#endif
