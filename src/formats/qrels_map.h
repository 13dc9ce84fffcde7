/* qrels_map.h: judgments from outside a corpus, as the corpus's CSR qrels
 * (internal).
 *
 * `eval` and `compare --qrels FILE` score a corpus's runs against a TREC
 * qrels file instead of the corpus's /qrels, and `judge` scores them
 * against an LLM's labels.  Both become the arrays rs__corpus holds
 * (qoff[nq + 1], qdoc[], qgrade[]) with the invariants rs__corpus_open
 * checks in a corpus: offsets from 0, non-decreasing, doc indexes in
 * range, no doc judged twice for a query.  Within a query the judgments
 * are in ascending doc index, which is also the order `import` writes, so
 * a corpus imported with a qrels file and the same file mapped onto it
 * give identical arrays.  A query with no judgment gets an empty row (it
 * is not judged).
 *
 * The arrays are malloc'd; *qoff, *qdoc and *qgrade are written only on
 * success, and then belong to the caller (rs__corpus_replace_qrels takes
 * them over).  Not thread-safe with respect to c (see below). */
#ifndef RAGSWEEP_QRELS_MAP_H
#define RAGSWEEP_QRELS_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "formats/corpus.h"
#include "internal.h"

/* Builds CSR qrels over c's queries from the TREC qrels file at path ("-"
 * is stdin; gzip is detected), read by rs__qrels_read with trec_eval's
 * layout rules (so its layout errors are trec_eval's) and strict numbers
 * (a grade that is not an integer is an error, RS_NUMBERS_STRICT).
 *
 * Query ids are matched against /queries/id (loaded here if not loaded
 * yet, which is why c is touched despite the const, as rs__corpus_qid
 * does), doc ids against /docs/id through a hash table built once per
 * call, or, in a corpus without /docs/id, read as the doc's index in
 * decimal (canonical: no sign, no leading zero, below 2^31 - 1).
 *
 * Errors, each naming the file and line:
 * - RS_FORMAT: a query id or doc id the corpus does not know; the first
 *   such line of the file is reported ("q.txt:12: doc 'D9' is not in the
 *   corpus (/docs/id of c.h5); ...").
 * - RS_DUPLICATE: a doc judged twice for one query (trec_eval refuses such
 *   qrels: "duplicate docs"); the first line that repeats a judgment is
 *   reported, with the line it repeats.  Unknown ids are reported first.
 * - whatever rs__qrels_read reports (RS_IO, RS_FORMAT), RS_NOMEM. */
rs_code rs__qrels_map_file(const rs__corpus *c, const char *path, int64_t **qoff, int32_t **qdoc, int32_t **qgrade,
                           rs_error *err);

/* The same from n in-memory judgments (q[i], doc[i], grade[i]): query
 * index < nq, doc index >= 0, in any order (used by `judge` for an LLM's
 * labels).  Errors: RS_USAGE for an index out of range, RS_DUPLICATE for a
 * (query, doc) given twice (naming both positions i), RS_NOMEM.  q, doc
 * and grade may be NULL when n == 0.  Pure: safe to call from any thread. */
rs_code rs__qrels_map_triples(size_t nq, size_t n, const uint32_t *q, const int32_t *doc, const int32_t *grade,
                              int64_t **qoff, int32_t **qdoc, int32_t **qgrade, rs_error *err);

/* Replaces c's qrels with the given arrays, which it takes over (they must
 * be malloc'd, over c->nq queries, with the invariants above), and frees
 * the old ones.  Not to be called while another thread reads c. */
void rs__corpus_replace_qrels(rs__corpus *c, int64_t *qoff, int32_t *qdoc, int32_t *qgrade);

#endif
