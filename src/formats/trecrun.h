/* trecrun.h: a TREC run's rankings, as trec_eval builds them (internal).
 *
 * rs__te_rankings reads a run with the trec_eval engine (streaming, all
 * threads) and, for every topic of the qrels that the run ranks, calls fn
 * with the topic's ranking in trec_eval's order (score descending, ties by
 * docno descending), duplicates rejected as trec_eval rejects them.  doc,
 * doc_len and score are indexed by order[0..n); they are valid during the
 * call only.  fn is called from several threads at once, never for one
 * topic at once; tid (below the threads asked for, rs__threads) tells the
 * calling thread, for state kept a thread apart.  A run that interleaves topics (one turns up again after
 * its lines ended) is read again whole once that is seen, and fn is then
 * called again for the topics it had seen, maybe with part of their lines:
 * the last call for a topic holds its whole ranking.  (Streaming evaluates
 * a topic as soon as its lines end, before the rest of its block is read.)
 * Topics the qrels do not judge are skipped, as trec_eval skips
 * them; topic indexes follow the qrels' strcmp order (rs__qrels_read).
 * judged[i] (i in 0..n, in ranking order, not indexed by order) is the
 * place of the i-th ranked doc's judgment among its topic's judgments in
 * the qrels reader's order (rs__qrels first[topic] + judged[i]), or -1
 * when the qrels do not judge it: the join trec_eval makes, so that a
 * caller needs no doc ids of its own to tell judged docs. */
#ifndef RAGSWEEP_TRECRUN_H
#define RAGSWEEP_TRECRUN_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "formats/qrels.h" /* rs__numbers */

typedef void (*rs__ranking_fn)(void *ctx, int tid, size_t topic, const char *const *doc, const uint32_t *doc_len,
                               const double *score, const uint32_t *order, const int32_t *judged, size_t n);

/* numbers: how grades and scores are read (qrels.h); ragsweep's own
 * commands pass RS_NUMBERS_STRICT.  runid (optional) receives the run tag
 * (malloc'd). */
rs_code rs__te_rankings(const char *qrels_path, const char *run_path, rs__numbers numbers, int threads,
                        rs__ranking_fn fn, void *ctx, char **runid, rs_error *err);

/* The same against qrels already read (rs__qrels_read with the same
 * numbers), so that a caller that read them for itself does not read the
 * file twice (1M topics, 5.7M judgments: about a second). */
rs_code rs__te_rankings_of(const rs__qrels *q, const char *run_path, rs__numbers numbers, int threads,
                           rs__ranking_fn fn, void *ctx, char **runid, rs_error *err);

#endif
