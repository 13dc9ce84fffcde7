/* ragsweep/trec_eval.h: trec_eval 10.0 semantics over TREC text files.
 *
 * rs_te_evaluate reads qrels and a run (plain, gzip or "-" for stdin),
 * builds each topic's ranking exactly as trec_eval does (score descending,
 * ties by docno descending, -M cut, duplicate check, -J), and computes the
 * plan's measures for every qrels topic on all threads.  The run is
 * streamed in blocks when it is grouped by topic (as runs are), so memory
 * stays bounded by the qrels and a few blocks; a run whose topics are
 * interleaved is read whole instead.  rs_te_write prints the results in
 * trec_eval's format, byte for byte.
 *
 * Version choice: a qrels topic missing from the run, without -c, is an
 * error as in trec_eval 10.0 (9.0.x skipped the topic silently). */
#ifndef RAGSWEEP_TREC_EVAL_H
#define RAGSWEEP_TREC_EVAL_H

#include <stddef.h>
#include <stdio.h>

#include "ragsweep/error.h"
#include "ragsweep/measures.h"

typedef struct rs_te_config {
  rs_plan plan; /* measures, and -l -M -J -N */
  int complete; /* -c: average over every qrels topic; missing ones score 0 */
  int threads;  /* 0: OMP_NUM_THREADS or all cores.  As many threads as the
                   calling thread's CPUs: the OpenMP workers are bound one to
                   each of those CPUs, and stay bound, and a calling thread's
                   first such team follows one empty region of one thread more,
                   which starts the runtime's threads without its long spin
                   (OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY set, e.g.
                   OMP_PROC_BIND=false: none of this) */
  size_t block_bytes; /* run read block (0: default); tests use small ones */
  /* Map a plain run file whole and parse it in place, instead of reading
   * it in blocks into two reused buffers of huge pages (the default).
   * Mapping copies nothing, but each page of the page cache costs at its
   * first touch: 0.61 s against 1.16 s for a newline count over 3.9 GB on
   * a KVM guest with nested paging, and 2.5-3.5 us a page (a run parsed
   * 1.5x slower) on a PVM guest, which shadows page tables. */
  int map_run;
  /* Read run lines with the baseline (SSE2) scan even on a CPU with AVX2,
   * whose scan is taken otherwise (the same fields, in fewer steps); for
   * tests of the baseline, and comparisons. */
  int baseline_simd;
} rs_te_config;

typedef struct rs_te_result rs_te_result;

/* Evaluates.  A failure of the inputs (unreadable, malformed) returns its
 * code with no result.  A failure at a topic (duplicate docs, a topic
 * missing from the run) still returns RS_OK and a result whose
 * rs_te_status reports it: trec_eval prints the per-topic lines before
 * that topic, so the caller can too. */
RS_API rs_code rs_te_evaluate(const rs_te_config *cfg, const char *qrels_path, const char *run_path,
                              rs_te_result **out, rs_error *err);

/* The topic failure, if any (RS_DUPLICATE or RS_MISSING), with its message. */
RS_API rs_code rs_te_status(const rs_te_result *r, rs_error *err);

/* Writes trec_eval's output: per-topic lines (per_topic, -q) for the topics
 * before any failing one, then the "all" lines unless summary is 0 (-n) or
 * a topic failed.  The per-topic lines are formatted on cfg->threads
 * threads, a few thousand topics at a time, and written in topic order.
 * RS_IO if the stream fails, RS_NOMEM if memory for those lines does not. */
RS_API rs_code rs_te_write(const rs_te_config *cfg, const rs_te_result *r, int per_topic, int summary, FILE *out);

/* Accessors. */
RS_API size_t rs_te_n_topics(const rs_te_result *r);
RS_API const char *rs_te_topic_id(const rs_te_result *r, size_t topic);
/* Per-topic value vector (plan->n_values), and the summary vector. */
RS_API const double *rs_te_values(const rs_te_result *r, size_t topic);
RS_API const double *rs_te_summary(const rs_te_result *r);
RS_API const char *rs_te_runid(const rs_te_result *r);

RS_API void rs_te_result_free(rs_te_result *r);

#endif
