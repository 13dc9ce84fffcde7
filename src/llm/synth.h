/* synth.h: a synthetic evaluation set from a document collection
 * (`ragsweep synth`).
 *
 * N documents with text are drawn without replacement (seeded: the same
 * seed draws the same documents on every machine), each is given a
 * question type in turn from the list, and an LLM is asked, through the
 * batch runner of calls.h (cache, concurrency, retries, budget, stops), for
 * one question of that type the document answers and its reference answer,
 * as {"question": ..., "answer": ...}.  A reply without both, non-empty, is
 * a failure: counted, the document skipped, never an invented sample.
 * Near-duplicate questions are dropped, the first in draw order kept.  The
 * outputs are the JSON evaluation set of evalset.h (the source document
 * relevant at grade 2) and a ragas-style JSONL (rag_samples.h). */
#ifndef RAGSWEEP_LLM_SYNTH_H
#define RAGSWEEP_LLM_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "llm/http.h"

/* The question types the RAG guides name, in the default order. */
#define RS_SYNTH_TYPES "definition,how-to,troubleshooting,comparison"

typedef struct rs__synth_stats rs__synth_stats;

typedef struct rs__synth_cfg {
  const char *docs_path;       /* TSV id<TAB>text or BEIR corpus.jsonl (texts.h) */
  size_t n;                    /* documents to draw (>= 1) */
  uint64_t seed;
  const char *const *types;    /* question types, each one of RS_SYNTH_TYPES */
  size_t n_types;
  size_t max_doc_chars;        /* cut documents to this many code points in the prompt; 0: never */
  const char *model;
  double temperature;
  int max_tokens;              /* 0: not sent */
  rs__http_cfg http;
  const char *cache_path;
  double price_in, price_out;  /* USD per million tokens */
  double max_cost;             /* USD; < 0: no budget */
  int dry_run;
  /* Called on the caller's thread after each finished request. */
  void (*progress)(void *ctx, const rs__synth_stats *s);
  void *progress_ctx;
} rs__synth_cfg;

struct rs__synth_stats {
  uint64_t records;          /* documents in the collection */
  uint64_t usable;           /* with text that is not blank */
  uint64_t drawn;            /* = requests */
  uint64_t requests, cached, sent, retries, done;
  uint64_t request_failures; /* requests that gave no sample so far (progress) */
  uint64_t failures;         /* drawn documents without a sample */
  uint64_t unparsed, empty, truncated, bad_reply, http_error; /* failures by kind */
  uint64_t not_sent;         /* left unasked by a stop (budget, fatal error) */
  uint64_t duplicates;       /* samples dropped as near-duplicate questions */
  uint64_t written;          /* samples in the outputs */
  uint64_t cut;              /* documents cut to max_doc_chars in the prompt */
  uint64_t prompt_tokens, completion_tokens;
  uint64_t est_prompt_tokens, est_completion_tokens;
  double cost, est_cost, wall_s;
  int stopped_budget, stopped_fatal;
  char fatal_message[512];
  char first_failure[400];   /* the first failure in draw order: document, kind, why ("" when none) */
};

typedef struct rs__synth rs__synth;

/* Loads the documents, draws, and (unless dry_run) asks.  A document count
 * below n is RS_USAGE naming both numbers; an unknown type RS_USAGE.  A stop
 * on a fatal reply or on the budget is not an error here: *out holds what
 * was answered and the stats say why it stopped. */
rs_code rs__synth_run(const rs__synth_cfg *cfg, rs__synth **out, rs_error *err);
const rs__synth_stats *rs__synth_get_stats(const rs__synth *s);
/* Writes the evaluation set to evalset_path and the JSONL to jsonl_path,
 * both under temporary names beside them, renamed once both are complete. */
rs_code rs__synth_write(rs__synth *s, const char *evalset_path, const char *jsonl_path, rs_error *err);
void rs__synth_free(rs__synth *s);

/* The draw: shuffles the first n of a[0..n_all) in place, so a[0..n) are
 * the n drawn, in draw order: a partial Fisher-Yates shuffle (step i swaps
 * a[i] with a[i + u], u uniform in [0, n_all - i)) driven by SplitMix64
 * from seed, each u uniform by rejection (README, "synth"). */
void rs__synth_draw(uint64_t seed, size_t *a, size_t n_all, size_t n);

/* 1 when questions a and b are near-duplicates: the sets of their word
 * tokens (maximal runs of ASCII letters and digits and of bytes >= 0x80,
 * ASCII lower-cased) have Jaccard similarity |A n B| / |A u B| >= 0.8 (two
 * empty sets count as equal); 0 otherwise; -1 when out of memory. */
int rs__synth_near_duplicate(const char *a, const char *b);

#endif
