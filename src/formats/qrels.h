/* qrels.h: TREC qrels in memory, grouped by topic (internal layout).
 *
 * Topics are sorted by strcmp of their ids (trec_eval's evaluation and
 * output order).  Within a topic the judgments are sorted by docno; a
 * ranking is joined with them from the judgments' side (a topic holds a
 * handful, its ranking a hundred or more docs: see eval_ranking in
 * engine/treceval.c).  After rs__qrels_read returns, the structure is read-only and may be
 * shared by any number of threads. */
#ifndef RAGSWEEP_QRELS_H
#define RAGSWEEP_QRELS_H

#include <stddef.h>
#include <stdint.h>

#include "formats/textio.h"
#include "internal.h"

typedef struct rs__qrels {
  /* The file, read-only (mapped when it is a plain file): docnos point
   * into it and are not NUL-terminated (doc_len bytes; as for trec_eval's
   * strcmp, a NUL inside one ends it). */
  rs__whole file;
  const char *text; /* file.data */
  char *path;

  size_t n_topics;
  /* [n_topics], strcmp order: NUL-terminated copies of the ids of each
   * topic's first line (topic_len bytes, which a NUL may end early). */
  const char **topic_id;
  char *topic_names; /* their bytes */
  uint32_t *topic_len;
  /* Topic t's judgments are [first[t], first[t] + count[t]) of the arrays
   * below.  They stay in the file's order when no topic's lines are split
   * (nearly always: nothing is copied, and a run in the qrels' order reads
   * them in memory order), else they are gathered in topic order. */
  size_t *first;
  size_t *count;

  size_t n_judged; /* judgments (lines) */
  const char **doc;
  uint32_t *doc_len;
  int32_t *grade;

  /* A topic's grade levels are counted where it is evaluated
   * (rs__levels_of, from its grades), which needs no table here. */
  size_t max_count;  /* the most judgments a topic has */
  int32_t max_grade; /* the highest grade (-1: none >= 0) */

  /* First duplicate docno per topic (index into doc[]), or SIZE_MAX. */
  size_t *dup;

  size_t n_positive_lines; /* lines with grade > 0: trec_eval's -c num_rel */

  /* qid -> topic index */
  uint32_t *tix; /* 0 empty, else 1 + topic */
  size_t tix_mask;

  /* The topic whose lines follow topic t's in the file, UINT32_MAX after
   * the last: runs mostly list topics in the qrels' order, so a reader
   * can guess the next topic and fetch its data before its lines come. */
  uint32_t *next_in_file;
} rs__qrels;

/* How the numbers of TREC text are read.  trec_eval reads a grade with
 * atol and a score with atof, so "abc" is 0 and "2.9" is 2 without a word
 * (`ragsweep trec_eval` must do the same, SEMANTICS.md section 1);
 * ragsweep's own commands (import, eval/compare --qrels) reject a grade
 * that is not an integer and a score that is not a number (or is NaN),
 * naming the file, the line and the token. */
typedef enum { RS_NUMBERS_AS_TREC_EVAL = 0, RS_NUMBERS_STRICT = 1 } rs__numbers;

/* Parses qrels text from path ("-" = stdin; gzip detected by magic).  The
 * topics are indexed on up to threads threads (< 2: one); the
 * result does not depend on it. */
rs_code rs__qrels_read(const char *path, rs__numbers numbers, int threads, rs__qrels **out, rs_error *err);
void rs__qrels_free(rs__qrels *q);

/* Topic index of an id, or -1 when the qrels do not judge that topic. */
static inline long rs__qrels_topic(const rs__qrels *q, const char *id, size_t len, uint64_t h)
{
  for (size_t i = (size_t)h & q->tix_mask;; i = (i + 1) & q->tix_mask) {
    uint32_t s = q->tix[i];
    if (!s) return -1;
    size_t t = s - 1;
    if (q->topic_len[t] == len && rs__same_bytes(q->topic_id[t], id, len)) return (long)t;
  }
}

/* Starts fetching into cache what looking up and joining topic t reads,
 * ahead of its use (a million topics' tables are far out of cache: each
 * new topic cost several dependent misses).  Stages 0, 1, 2 in turn, some
 * lines of the run apart: each reads what the one before fetched. */
static inline void rs__qrels_prefetch(const rs__qrels *q, size_t t, int stage)
{
  if (stage == 0) {
    __builtin_prefetch(&q->topic_id[t]);
    __builtin_prefetch(&q->topic_len[t]);
    __builtin_prefetch(&q->first[t]);
    __builtin_prefetch(&q->count[t]);
    __builtin_prefetch(&q->dup[t]);
    __builtin_prefetch(&q->next_in_file[t]);
  } else if (stage == 1) {
    const size_t a = q->first[t], b = a + q->count[t];
    __builtin_prefetch(q->topic_id[t]);
    __builtin_prefetch(&q->doc_len[a]);
    __builtin_prefetch(&q->grade[a]);
    __builtin_prefetch(&q->doc[a]);
    if (b - a > 8) __builtin_prefetch(&q->doc[a + 8]);
  } else {
    const size_t a = q->first[t], b = a + q->count[t];
    for (size_t j = a; j < b && j < a + 16; j++) __builtin_prefetch(q->doc[j]);
  }
}

#endif
