/* sweep.c: many runs, streamed in batches of queries, scored on all threads. */
#define _POSIX_C_SOURCE 200809L
#include "engine/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/sched.h"
#include "engine/shard.h"
#include "metrics/topic.h"
#include "util/idsort.h"
#include "util/simd.h"

enum {
  /* ~2 MB of doc ids and scores per batch: two batches (the one scored,
   * the one read) stay in the cache between the copy and the scoring.
   * 1M x 100 and 100 x 100k x 100 on a 2-core EPYC: 8-10% faster than
   * 1M docs, whose copies went to memory and back (reader 0.33 -> 0.20 s
   * per 1.6 GB); 64K docs gains nothing more.  2^18 docs less 1024: a
   * block of int32 docs and float32 scores (2612 rows of 100) then fits
   * one 2 MB page (rs__block_room).  It was 2^17, which batches filled
   * with two blocks of 1310 rows until a block was rounded up to fill one
   * (1M at two threads, 8 rounds alternated: median 0.310 -> 0.294 s). */
  DEFAULT_BATCH_DOCS = (1 << 18) - 1024,
  MAX_SEGMENTS = RS__SHARES_MAX, /* blocks (of different runs) per batch: a share each when reads are shared */
  /* Rows a thread claims at a time: their status bytes fill one cache line
   * (and their values lines of their own: rs__malloc_lines), so no two
   * threads write one line.  At 32, two chunks shared each status line.
   * Per-thread timers around the row loop, 5 run files of 100 x 100k: two
   * threads' scoring took 2.91-3.01 s in all against one thread's 2.33-2.36
   * s at 32 rows, 2.71 s at 256; at 64 with aligned lines, 5-7% less than
   * at 32 (this machine's noise is of that order). */
  CHUNK_ROWS = 64
};

/* Row outcome. */
enum { ROW_SKIP = 0, ROW_EVAL = 1, ROW_MISSING = 2, ROW_BAD_DOC = -1, ROW_NAN = -2, ROW_DUP = -3, ROW_AFTER_PAD = -4 };

typedef struct {
  size_t run, row0; /* run index (the first of its group); first row of the batch it fills */
  rs__block blk;
  /* With own sums (engine.own_sums): the segment's sum blocks (see
   * RS__SUM_BLOCK_ROWS), added up by the thread that read it; their sums
   * in sum_val, n_req each.  cap_sums: room for that many. */
  rs__block_sum *sums;
  double *sum_val;
  size_t n_sums, cap_sums;
  size_t first_bad; /* own sums: the batch row of the segment's first row in error, SIZE_MAX if none */
} segment;

typedef struct {
  segment seg[MAX_SEGMENTS];
  size_t n_seg, n_rows, max_len;
  double *values;  /* [n_rows * row_values]: per row, n_req values per run of its group */
  int8_t *status;  /* [n_rows] */
  int64_t *bad_at; /* [n_rows]: column of the problem */
  int summed;      /* own sums: every segment's sum blocks are added up (sum_own) */
  size_t cap_rows;
  rs_code rc; /* of reading it */
  rs_error err;
} batch;

/* The join table of score_row: open addressing on the doc index, one
 * 64-bit key per slot, (gen << 32) | doc, so that a slot of an earlier row
 * (another gen) reads as empty and nothing is cleared per row.  Doc indexes
 * are below 2^31 (checked first), so bit 31 marks a judged doc the ranking
 * has not reached yet; its grade is in the parallel array, read only then.
 * The table is sized for a load of at most 1/8: a probe nearly always ends
 * at its first slot, so its loop exit is a predicted branch. */
#define JOIN_JUDGED UINT64_C(0x80000000)
enum { JOIN_LOAD_INVERSE = 8 };

/* stamp_join's sizes: the rows it takes (at most STAMP_RANKS docs ranked,
 * STAMP_JUDGED_MAX judged), and its table of one-byte stamps: 16 KB, in
 * L1, where 100 ranked docs collide about 0.3 times a row. */
enum { STAMP_BITS = 14, STAMP_SLOTS = 1 << STAMP_BITS, STAMP_RANKS = 256, STAMP_JUDGED_MAX = 16 };

typedef struct {
  size_t cap, hcap;
  uint32_t *order, *tmp;
  int32_t *sdoc; /* the ranking's docs, when not in stored order */
  uint64_t *tie; /* [cap / 64 + 1]: see scan_scores_f32 */
  int32_t *rel;
  int32_t *judged; /* [cap]: the ranks of the row's judged docs (hash_join), for the metrics */
  size_t n_judged;
  double *score; /* the row's scores as double */
  /* the row's grade levels (rs_levels) */
  int32_t *lv_grade;
  uint32_t *lv_count;
  uint64_t *join_key;  /* [hcap]: see JOIN_JUDGED */
  int32_t *join_grade; /* [hcap]: a judged doc's grade */
  unsigned join_shift; /* 32 - log2(hcap) */
  uint32_t gen;
  /* stamp_join's: one byte a slot, [STAMP_SLOTS]; the slots of the row's
   * docs [cap]; the ranks whose slot was taken [cap]; the query's judged
   * docs and grades, padded with -1 docs to STAMP_JUDGED_MAX */
  uint8_t *stamp;
  uint8_t stamp_gen;
  uint8_t *stamp_was; /* [cap + 16] */
  uint32_t *stamp_slot, *deferred;
  int32_t stamp_jdoc[STAMP_JUDGED_MAX], stamp_jgrade[STAMP_JUDGED_MAX];
  rs__spec_scratch ss;
  int has_ss;
  char pad[128]; /* keeps a thread's gen and pointers off its neighbour's cache lines */
} thread_state;

/* A thread's share of a batch's reading (read_own): its time, and its
 * first failure (the segment, its code and message).  Apart from
 * thread_state, whose layout the scoring is timed with. */
typedef struct {
  double seconds;
  size_t fail_seg;
  rs_code rc;
  rs_error err;
} read_share;

typedef struct {
  const rs__sweep_cfg *cfg;
  const rs__corpus *c;
  const rs__run *const *runs;
  size_t n_runs;
  rs__run_result *res;
  int threads;
  size_t n_req, batch_docs, max_nnz, max_levels;
  /* Runs that share their rows (eval --depths): group[r] runs from r on
   * are read once and scored at each one's depth (1: an ordinary run;
   * set on the first run of a group only). */
  size_t *group;
  size_t row_values; /* n_req * the largest group */
  int32_t *id_rank; /* see rank_before */
  /* Every query's grade levels, worked out once (query_levels) when more
   * than one run's rows are scored, else NULL: query q's are at
   * lv_grade/lv_count + qoff[q], lv_n[q] of them. */
  int32_t *lv_grade;
  uint32_t *lv_count, *lv_n;
  thread_state *ts;
  rs__thread_busy *busy; /* [threads], with cfg->timing: each scoring thread's time in rows */
  rs__item_fn score; /* score_row, or its AVX2 build (row_scorer) */
  /* Three batches in turn: one scored (cur), the one before it combined
   * into the sums (prev) and the one after it read (next), the last two by
   * the side thread beside the scoring. */
  batch b[3];
  batch *prev, *cur, *next;
  rs__result_acc acc;
  uint64_t rows_done, rows_total; /* for cfg->progress */
  rs_code done_rc;                /* of finish_batch on prev */
  rs_error done_err;
  double combine_s;
  size_t n_batches;
  /* reading cursor */
  size_t rd_run, rd_q;
  size_t lat_seen, lat_done; /* runs [lat_done, lat_seen) reached by the reader, latencies not yet read */
  /* Run lat_done's latencies while they are read, LATENCY_STEP rows at a
   * time (read_latencies): lat_rows of them so far, binned into lat_bucket. */
  double *lat;
  size_t lat_rows;
  uint64_t lat_bucket[RS__LATENCY_N_BOUNDS + 1];
  double read_s; /* time spent in read_next */
  /* Each thread reads its own segments of a batch (read_own) and scores
   * them first: every run's rows are read with pread alone, on more than
   * one thread.  A batch then holds a segment a thread or more, of
   * block_docs docs each. */
  int reads_shared;
  size_t block_docs;
  read_share *rd; /* [threads], with reads_shared */
  /* Own sums: with shared reading, each thread also adds up the values of
   * its own segments of a scored batch, in sum blocks (sum_own), and the
   * caller adds the blocks to the runs' sums in order.  The values lines
   * then stay with the thread that wrote them: when one thread added up
   * every row (combine), the other's next writes to those lines each
   * waited for the line to come back from the other vCPU, whose caches
   * are far on the bench guest (a line's round trip between its two
   * vCPUs: 434 ns).  Segments then end on sum block boundaries, so that
   * no sum block is split between two threads.  Not with per_query or
   * per_block, which take the values row by row or the blocks as they
   * close, in run order; nor for runs cut from the same rows, nor where
   * a thread's block would hold less than half a sum block. */
  int own_sums;
} engine;

/* The rows [first_row, end_row) of run r the sweep evaluates. */
static inline size_t first_row(const engine *e, size_t r) { return e->cfg->ranges ? e->cfg->ranges[r].q0 : 0; }
static inline size_t end_row(const engine *e, size_t r)
{
  return e->cfg->ranges ? e->cfg->ranges[r].q1 : e->runs[r]->n_rows;
}
/* Whether the sweep reads run r's latencies (it has them, and they are its to read). */
static inline int reads_latency(const engine *e, size_t r)
{
  return e->runs[r]->has_latency && (!e->cfg->ranges || e->cfg->ranges[r].latency);
}
/* The run whose datasets hold r's rows: r, or the source of a virtual run
 * (eval --depths), read once for all the runs cut from it. */
static inline const rs__run *rows_of(const rs__run *r) { return r->source ? r->source : r; }

/* The segment (run block) that holds a batch row. */
static inline const segment *segment_of(const batch *bt, size_t row)
{
  size_t s = 0;
  while (s + 1 < bt->n_seg && bt->seg[s + 1].row0 <= row) s++;
  return &bt->seg[s];
}

/* --- sizes of the per-query scratch ------------------------------------------ */

/* The most judgments of one query, and the levels a query can have: the
 * gain tables of the scratch hold levels 0..highest grade (capped: sparse
 * huge grades still evaluate exactly with default gains), and a query has
 * at most as many distinct grades as judgments. */
static void size_levels(engine *e)
{
  const rs__corpus *c = e->c;
  const size_t nnz = (size_t)c->qoff[c->nq];
  size_t max_nnz = 0;
  for (size_t q = 0; q < c->nq; q++) {
    const size_t m = (size_t)(c->qoff[q + 1] - c->qoff[q]);
    max_nnz = m > max_nnz ? m : max_nnz;
  }
  int32_t top = 0;
  for (size_t j = 0; j < nnz; j++) top = c->qgrade[j] > top ? c->qgrade[j] : top;
  size_t range = (size_t)top + 1, cap = (size_t)1 << 16;
  if (range > cap) range = max_nnz > cap ? max_nnz : cap;
  e->max_nnz = max_nnz;
  e->max_levels = range;
}

static void levels_of_query(void *vctx, size_t q, int tid)
{
  engine *e = vctx;
  const size_t qa = (size_t)e->c->qoff[q], qb = (size_t)e->c->qoff[q + 1];
  (void)tid;
  e->lv_n[q] = (uint32_t)rs__levels_of(e->c->qgrade + qa, qb - qa, e->lv_grade + qa, e->lv_count + qa).n;
}

/* A query's levels are the same for every run that ranks it: when the
 * sweep scores at least two rows a query (100 runs x 100k queries), they
 * are counted once here, in the room of the query's judgments, rather
 * than once a row (3.7% of a one-thread profile of 100 x 100k, in
 * rs__levels_of).  With fewer (one run, or a shard's few rows of a big
 * corpus) there is little to share, and the table would only cost memory. */
static rs_code query_levels(engine *e, rs_error *err)
{
  const rs__corpus *c = e->c;
  size_t rows = 0;
  for (size_t r = 0; r < e->n_runs; r += e->group[r]) rows += end_row(e, r) - first_row(e, r);
  if (rows / 2 < c->nq || rows < 2) return RS_OK;
  const size_t nnz = (size_t)c->qoff[c->nq];
  e->lv_grade = rs__malloc(rs__mul(nnz ? nnz : 1, sizeof *e->lv_grade));
  e->lv_count = rs__malloc(rs__mul(nnz ? nnz : 1, sizeof *e->lv_count));
  e->lv_n = rs__malloc(rs__mul(c->nq ? c->nq : 1, sizeof *e->lv_n));
  if (!e->lv_grade || !e->lv_count || !e->lv_n)
    return rs__fail(err, RS_NOMEM, "out of memory for the grade levels of %zu queries", c->nq);
  rs__parallel_for(c->nq, e->threads, 1024, levels_of_query, e);
  return RS_OK;
}

/* NULL in *out when /docs/id is absent or already in strcmp order (import
 * and gen_sweep write it so): ties then compare doc indexes directly.
 * Else each doc's place in strcmp order of the ids, by the radix sort of
 * util/idsort.h: qsort's comparator reached the ids through a file-scope
 * pointer, which two sweeps on two threads would have shared. */
static rs_code build_id_rank(const rs__corpus *c, int32_t **out, rs_error *err)
{
  *out = NULL;
  if (!c->has_docs || c->doc_ids_sorted) return RS_OK; /* known sorted: the ids need not even be read */
  rs_code rc = rs__corpus_load_doc_ids((rs__corpus *)c, err); /* a cache fill: the corpus stays the same */
  if (rc) return rc;
  size_t i = 1;
  while (i < c->nd && strcmp(c->doc_id[i - 1], c->doc_id[i]) < 0) i++;
  if (i >= c->nd) return RS_OK;
  const size_t n = c->nd;
  uint32_t *perm = rs__malloc(rs__mul(n, sizeof *perm)), *perm2 = rs__malloc(rs__mul(n, sizeof *perm2));
  uint64_t *key = rs__malloc(rs__mul(n, sizeof *key)), *key2 = rs__malloc(rs__mul(n, sizeof *key2));
  int32_t *rank = rs__malloc(rs__mul(n, sizeof *rank));
  if (!perm || !perm2 || !key || !key2 || !rank) {
    rc = rs__fail(err, RS_NOMEM, "out of memory for %zu doc ids", n);
  } else {
    for (size_t d = 0; d < n; d++) perm[d] = (uint32_t)d;
    rs__sort_ids(c->doc_id, perm, n, key, key2, perm2);
    for (size_t r = 0; r < n; r++) rank[perm[r]] = (int32_t)r; /* equal ids cannot tie a ranking: no dups */
    *out = rank;
    rank = NULL;
  }
  free(perm), free(perm2), free(key), free(key2), free(rank);
  return rc;
}

/* --- thread state ---------------------------------------------------------- */

static void free_thread(thread_state *t)
{
  free(t->score);
  free(t->lv_grade);
  free(t->lv_count);
  free(t->order);
  free(t->sdoc);
  free(t->tmp);
  free(t->tie);
  free(t->rel);
  free(t->judged);
  free(t->join_key);
  free(t->join_grade);
  free(t->stamp);
  free(t->stamp_slot);
  free(t->stamp_was);
  free(t->deferred);
  if (t->has_ss) rs__spec_scratch_free(&t->ss);
  memset(t, 0, sizeof *t);
}

static rs_code ensure_thread(engine *e, thread_state *t, size_t len, rs_error *err)
{
  if (len <= t->cap && t->has_ss) return RS_OK;
  size_t cap = t->cap ? t->cap : 128;
  while (cap < len) cap *= 2;
  size_t hcap = 16;
  unsigned bits = 4;
  while (hcap < JOIN_LOAD_INVERSE * (cap + e->max_nnz)) hcap *= 2, bits++;
  free_thread(t);
  /* In whole cache lines, each block: see rs__calloc_lines. */
  t->order = rs__calloc_lines(cap, sizeof *t->order);
  t->tmp = rs__calloc_lines(cap, sizeof *t->tmp);
  t->sdoc = rs__calloc_lines(cap, sizeof *t->sdoc);
  t->tie = rs__calloc_lines(cap / 64 + 1, sizeof *t->tie);
  t->rel = rs__calloc_lines(cap, sizeof *t->rel);
  t->judged = rs__calloc_lines(cap, sizeof *t->judged);
  t->score = rs__calloc_lines(cap, sizeof *t->score);
  t->lv_grade = rs__calloc_lines(e->max_levels, sizeof *t->lv_grade);
  t->lv_count = rs__calloc_lines(e->max_levels, sizeof *t->lv_count);
  t->join_key = rs__calloc_lines(hcap, sizeof *t->join_key);
  t->join_grade = rs__calloc_lines(hcap, sizeof *t->join_grade);
  t->stamp = rs__calloc_lines(STAMP_SLOTS, sizeof *t->stamp);
  t->stamp_slot = rs__calloc_lines(cap, sizeof *t->stamp_slot);
  t->deferred = rs__calloc_lines(cap, sizeof *t->deferred);
  t->stamp_was = rs__malloc_lines(cap + 16);
  if (!t->order || !t->tmp || !t->sdoc || !t->tie || !t->rel || !t->judged || !t->score || !t->lv_grade || !t->lv_count || !t->join_key || !t->join_grade ||
      !t->stamp || !t->stamp_slot || !t->stamp_was || !t->deferred || bits > 32) {
    free_thread(t);
    return rs__fail(err, RS_NOMEM, "out of memory for rankings of %zu docs", cap);
  }
  rs_code rc = rs__spec_scratch_init(e->cfg->spec, cap, e->max_levels, &t->ss, err);
  if (rc) {
    free_thread(t);
    return rc;
  }
  t->has_ss = 1;
  t->cap = cap;
  t->hcap = hcap;
  t->join_shift = 32 - bits;
  t->gen = 0;
  t->stamp_gen = 0;
  return RS_OK;
}

/* --- one query --------------------------------------------------------------- */

/* strcmp order of the decimal forms of two doc indexes (ids without /docs/id). */
static int decimal_cmp(int32_t a, int32_t b)
{
  char x[12], y[12];
  snprintf(x, sizeof x, "%" PRId32, a);
  snprintf(y, sizeof y, "%" PRId32, b);
  return strcmp(x, y);
}

/* trec_eval's order: score descending, then doc id descending.  id_rank
 * places each doc id in strcmp order, so that breaking a tie is an integer
 * comparison (NULL: the ids are already in that order). */
static inline int rank_before(const rs__corpus *c, const int32_t *id_rank, const int32_t *doc, const double *score,
                              uint32_t x, uint32_t y)
{
  if (score[x] != score[y]) return score[x] > score[y] ? -1 : 1;
  if (!c->has_docs) return decimal_cmp(doc[y], doc[x]);
  const int32_t a = id_rank ? id_rank[doc[x]] : doc[x], b = id_rank ? id_rank[doc[y]] : doc[y];
  return (b > a) - (b < a);
}

/* Sorts ord[a..b) into trec_eval's order: O(length + swaps), the right
 * sort for nearly sorted rankings and short groups of tied scores. */
static void insertion_sort(const rs__corpus *c, const int32_t *id_rank, const int32_t *doc, const double *score,
                           uint32_t *ord, size_t a, size_t b)
{
  for (size_t i = a + 1; i < b; i++) {
    const uint32_t x = ord[i];
    size_t j = i;
    while (j > a && rank_before(c, id_rank, doc, score, ord[j - 1], x) > 0) ord[j] = ord[j - 1], j--;
    ord[j] = x;
  }
}

static void sort_ranking(const rs__corpus *c, const int32_t *id_rank, const int32_t *doc, const double *score, uint32_t *ord, uint32_t *tmp,
                         size_t n)
{
  if (n <= 256) { /* stored rankings are nearly sorted (ties out of order): insertion sort is O(n + swaps) */
    insertion_sort(c, id_rank, doc, score, ord, 0, n);
    return;
  }
  for (size_t w = 1; w < n; w *= 2) { /* stable bottom-up merge sort */
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = rank_before(c, id_rank, doc, score, ord[i], ord[j]) <= 0 ? ord[i++] : ord[j++];
      while (i < mid) tmp[k++] = ord[i++];
      while (j < hi) tmp[k++] = ord[j++];
    }
    memcpy(ord, tmp, n * sizeof *ord);
  }
}

/* Sorts docs[a..b), docs of one score, into trec_eval's tie-break order:
 * doc id descending.  The scores are not looked at: an insertion sort on
 * the ids' integer ranks (the groups are short, most of two docs), stable,
 * so copies of one doc keep their stored order. */
static inline void order_tie_group(const rs__corpus *c, const int32_t *id_rank, int32_t *docs, size_t a, size_t b)
{
  if (!c->has_docs) { /* ids are the decimal forms: rare, and slow */
    for (size_t i = a + 1; i < b; i++) {
      const int32_t x = docs[i];
      size_t j = i;
      while (j > a && decimal_cmp(docs[j - 1], x) < 0) docs[j] = docs[j - 1], j--;
      docs[j] = x;
    }
    return;
  }
  for (size_t i = a + 1; i < b; i++) {
    const int32_t x = docs[i], kx = id_rank ? id_rank[x] : x;
    size_t j = i;
    while (j > a) {
      const int32_t kp = id_rank ? id_rank[docs[j - 1]] : docs[j - 1];
      if (kp >= kx) break;
      docs[j] = docs[j - 1], j--;
    }
    docs[j] = x;
  }
}

/* Bit j of tie[] (word j / 64) is set when ranks j and j + 1 have equal
 * scores, compared in their stored type; m = n - 1 pairs.  A bit mask
 * rather than a byte per pair: the groups are then found with a count of
 * trailing zeros each, where scanning the bytes mispredicted a branch a
 * word (1 rank in 10 ties in the generated sweeps: 12% of a one-thread
 * profile of 100 x 100k went to the ties that way).  float64 scores here,
 * two a step with SSE2; float32 ones in the checks' pass (scan_scores_f32). */
static void tie_bits_f64(const double *restrict s, size_t m, uint64_t *restrict tie)
{
  for (size_t w = 0; w * 64 < m; w++) { /* each word built in a register */
    const size_t end = m - w * 64 < 64 ? m : w * 64 + 64;
    size_t j = w * 64;
    uint64_t bits = 0;
#if defined(__SSE2__)
    for (; j + 2 <= end; j += 2)
      bits |= (uint64_t)_mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(s + j), _mm_loadu_pd(s + j + 1))) << (j % 64);
#endif
    for (; j < end; j++) bits |= (uint64_t)(s[j] == s[j + 1]) << (j % 64);
    tie[w] = bits;
  }
}

/* What one pass over a row's float32 scores found: any NaN, any pair
 * rising (s[j] < s[j + 1]: the row must be sorted), any pair tied
 * (non-zero: true). */
typedef struct {
  uint32_t nan, rising, tied;
} score_flags;

/* The pairs [j, end) of word w's range, one at a time (the scans' tails). */
static inline void scan_pairs_f32(const float *s, size_t j, size_t end, uint64_t *bits, score_flags *f)
{
  for (; j < end; j++) {
    f->nan |= (uint32_t)(s[j + 1] != s[j + 1]);
    f->rising |= (uint32_t)(s[j] < s[j + 1]);
    *bits |= (uint64_t)(s[j] == s[j + 1]) << (j % 64);
  }
}

/* The checks of a row's float32 scores s[0, n) and its tie bits (as
 * tie_bits_f64's) in one pass: each pair's two loads give its NaN test,
 * its order and its tie.  Three loops over the row and a fourth for the
 * bits took 7.7 instructions a doc (callgrind, 5 runs x 20k x 100); this
 * takes 3.1 with SSE2, 1.9 with AVX2 (scan_scores_f32_avx2).  The last
 * step of a word overlaps the one before it instead of a scalar tail (a
 * third of the AVX2 scan's instructions); only words of fewer pairs than
 * a step's go one pair at a time. */
static score_flags scan_scores_f32(const float *restrict s, size_t n, uint64_t *restrict tie)
{
  score_flags f = {(uint32_t)(n && s[0] != s[0]), 0, 0};
  const size_t m = n ? n - 1 : 0;
  uint64_t any_tie = 0;
  for (size_t w = 0; w * 64 < m; w++) {
    const size_t end = m - w * 64 < 64 ? m : w * 64 + 64;
    size_t j = w * 64;
    uint64_t bits = 0;
#if defined(__SSE2__)
    __m128 nan = _mm_setzero_ps(), rising = _mm_setzero_ps();
    if (end - j >= 4)
      for (;;) {
        const __m128 a = _mm_loadu_ps(s + j), b = _mm_loadu_ps(s + j + 1);
        nan = _mm_or_ps(nan, _mm_cmpunord_ps(b, b));
        rising = _mm_or_ps(rising, _mm_cmplt_ps(a, b));
        bits |= (uint64_t)_mm_movemask_ps(_mm_cmpeq_ps(a, b)) << (j % 64);
        if ((j += 4) >= end) break;
        if (j + 4 > end) j = end - 4; /* the tail: a last step that overlaps, as OR takes a bit twice */
      }
    f.nan |= (uint32_t)_mm_movemask_ps(nan), f.rising |= (uint32_t)_mm_movemask_ps(rising);
#endif
    scan_pairs_f32(s, j, end, &bits, &f);
    tie[w] = bits;
    any_tie |= bits;
  }
  f.tied = any_tie != 0;
  return f;
}

#ifdef RS_HAVE_AVX2
RS_AVX2_TARGET static score_flags scan_scores_f32_avx2(const float *restrict s, size_t n, uint64_t *restrict tie)
{
  score_flags f = {(uint32_t)(n && s[0] != s[0]), 0, 0};
  const size_t m = n ? n - 1 : 0;
  uint64_t any_tie = 0;
  for (size_t w = 0; w * 64 < m; w++) {
    const size_t end = m - w * 64 < 64 ? m : w * 64 + 64;
    size_t j = w * 64;
    uint64_t bits = 0;
    __m256 nan = _mm256_setzero_ps(), rising = _mm256_setzero_ps();
    if (end - j >= 8)
      for (;;) {
        const __m256 a = _mm256_loadu_ps(s + j), b = _mm256_loadu_ps(s + j + 1);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
        rising = _mm256_or_ps(rising, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
        bits |= (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)) << (j % 64);
        if ((j += 8) >= end) break;
        if (j + 8 > end) j = end - 8; /* the tail, overlapping (see scan_scores_f32) */
      }
    f.nan |= (uint32_t)_mm256_movemask_ps(nan), f.rising |= (uint32_t)_mm256_movemask_ps(rising);
    scan_pairs_f32(s, j, end, &bits, &f);
    tie[w] = bits;
    any_tie |= bits;
  }
  f.tied = any_tie != 0;
  return f;
}
#endif

/* The first j in [from, m) whose tie bit is set (flip 0) or clear (flip
 * all ones); m if none. */
static inline size_t next_tie_bit(const uint64_t *tie, size_t from, size_t m, uint64_t flip)
{
  if (from >= m) return m;
  size_t w = from / 64;
  const size_t n_words = (m + 63) / 64;
  uint64_t x = (tie[w] ^ flip) & (~UINT64_C(0) << (from % 64));
  while (!x) {
    if (++w == n_words) return m;
    x = tie[w] ^ flip;
  }
  const size_t j = w * 64 + (size_t)__builtin_ctzll(x);
  return j < m ? j : m;
}

/* The tie bits of word w (of n_words) that start a group of two (a set
 * bit with clear neighbours); *carry: the last bit of the word before, in,
 * and of this word, out. */
static inline uint64_t tied_pairs(const uint64_t *tie, size_t w, size_t n_words, uint64_t *carry)
{
  const uint64_t bits = tie[w], next = w + 1 < n_words ? tie[w + 1] & 1 : 0;
  const uint64_t pairs = bits & ~((bits << 1) | *carry) & ~((bits >> 1) | (next << 63));
  *carry = bits >> 63;
  return pairs;
}

/* A ranking whose scores never rise needs only its groups of equal scores
 * put in doc-id order, here in docs[], a copy of the stored ids; tie[]
 * holds the bits of tie_bits_*, m = n - 1.  A group is the ranks a..b:
 * a's bit starts it, the next clear bit b ends it.
 *
 * Most groups are two docs (a set bit with clear neighbours): those are
 * put in order first without a branch on the ids, since which way a pair
 * goes is a coin toss that mispredicted once a group.  Longer groups
 * (rarer) then go through order_tie_group, which leaves the sorted pairs
 * as they are. */
static inline __attribute__((always_inline)) void order_ties(const rs__corpus *c, const int32_t *id_rank,
                                                             int32_t *restrict docs, const uint64_t *tie, size_t m)
{
  const size_t n_words = (m + 63) / 64;
  uint64_t carry = 0, longer = 0;
  if (c->has_docs) {
    for (size_t w = 0; w < n_words; w++) {
      uint64_t pairs = tied_pairs(tie, w, n_words, &carry);
      longer |= tie[w] & ~pairs;
      for (; pairs; pairs &= pairs - 1) {
        const size_t a = w * 64 + (size_t)__builtin_ctzll(pairs);
        const int32_t x = docs[a], y = docs[a + 1];
        const int32_t kx = id_rank ? id_rank[x] : x, ky = id_rank ? id_rank[y] : y;
        const uint32_t flip = ((uint32_t)x ^ (uint32_t)y) & -(uint32_t)(kx < ky); /* a mask, not a branch */
        docs[a] = (int32_t)((uint32_t)x ^ flip), docs[a + 1] = (int32_t)((uint32_t)y ^ flip);
      }
    }
    if (!longer) return;
  }
  for (size_t a = next_tie_bit(tie, 0, m, 0); a < m; a = next_tie_bit(tie, a, m, 0)) {
    const size_t b = next_tie_bit(tie, a + 1, m, ~UINT64_C(0));
    order_tie_group(c, id_rank, docs, a, b + 1);
    a = b + 1;
  }
}

/* A ranking whose scores never rise differs from trec_eval's order only
 * inside its groups of tied scores (tie[], m = n - 1, as for order_ties),
 * and the measures see a ranking only through the grades at its ranks: a
 * group whose docs have the same rel value ranks alike either way.  Given
 * the grades rel[] and the judged ranks judged[] (rel >= 0) of the stored
 * docs, puts the groups of two whose rel values differ in order, swapping
 * their rel values (and the judged rank that moves with a judged doc), to
 * the arrays order_ties and a join would have given.  1 when a longer
 * group's rel values differ (the caller then orders the docs and joins
 * again); rel and judged may then be part done. */
static inline __attribute__((always_inline)) int order_tied_rels(const rs__corpus *c, const int32_t *id_rank,
                                                                 const int32_t *docs, const uint64_t *tie, size_t m,
                                                                 int32_t *restrict rel, int32_t *restrict judged)
{
  const size_t n_words = (m + 63) / 64;
  uint64_t carry = 0;
  for (size_t w = 0; w < n_words; w++) {
    const uint64_t pairs = tied_pairs(tie, w, n_words, &carry);
    for (uint64_t x = tie[w]; x; x &= x - 1) {
      const size_t a = w * 64 + (size_t)__builtin_ctzll(x);
      const int32_t ra = rel[a], rb = rel[a + 1];
      if (ra == rb) continue; /* nearly always: two docs not judged */
      if (!(pairs >> (a % 64) & 1)) return 1;
      const int32_t p = docs[a], q = docs[a + 1];
      /* order_tie_group's test: the second goes first when its id is greater */
      const int swap = c->has_docs ? (id_rank ? id_rank[p] < id_rank[q] : p < q) : decimal_cmp(p, q) < 0;
      if (!swap) continue;
      rel[a] = rb, rel[a + 1] = ra;
      if ((ra >= 0) != (rb >= 0)) { /* one judged doc moves by a rank */
        size_t j = 0;
        while (judged[j] != (int32_t)(ra >= 0 ? a : a + 1)) j++;
        judged[j] = (int32_t)(ra >= 0 ? a + 1 : a);
      }
    }
  }
  return 0;
}

/* Fibonacci hashing: the top bits of the product, which mix every bit of
 * the doc index (the low bits would depend on its low bits only). */
static inline size_t join_slot_of(int32_t doc, unsigned shift) { return ((uint32_t)doc * 2654435761u) >> shift; }

/* The row's grades in ranking order into rel[0..n) (RS_REL_UNPOOLED for
 * docs the query's judgments [qa, qb) do not hold), docs[0..n) being the
 * ranking, and the ranks of its judged docs (rel >= 0) into t->judged, for
 * the metrics (metrics/topic.h); 1 when a doc repeats one ranked before
 * it, with *dup_rank its rank.  One table holds the judged docs and the
 * ranked ones (see JOIN_JUDGED).  Most ranked docs are not judged and land
 * on an empty slot at the first probe: that path is a load, a compare and
 * a store.  Rows of at most 256 ranked and 16 judged docs take stamp_join
 * instead.  Inlined into both builds of score_row's body, like order_ties:
 * out of line, the AVX2 build called baseline copies (5 runs x 20k x 100:
 * 591 against 582 M instructions). */
static inline __attribute__((always_inline)) int hash_join(thread_state *t, const rs__corpus *c,
                                                           const int32_t *restrict docs, size_t n, size_t qa, size_t qb,
                                                           int32_t *restrict rel, size_t *dup_rank)
{
  if (++t->gen == 0) {
    memset(t->join_key, 0, t->hcap * sizeof *t->join_key);
    t->gen = 1;
  }
  const uint64_t tag = (uint64_t)t->gen << 32;
  const size_t mask = t->hcap - 1;
  const unsigned shift = t->join_shift;
  uint64_t *restrict key = t->join_key;
  int32_t *restrict grade = t->join_grade;
  for (size_t j = qa; j < qb; j++) { /* judged docs are distinct (check_qrels) */
    size_t h = join_slot_of(c->qdoc[j], shift);
    while (key[h] >= tag) h = (h + 1) & mask;
    key[h] = tag | JOIN_JUDGED | (uint32_t)c->qdoc[j];
    grade[h] = c->qgrade[j];
  }
  for (size_t r = 0; r < n; r++) rel[r] = RS_REL_UNPOOLED;
  size_t n_judged = 0;
  for (size_t r = 0; r < n; r++) {
    const uint64_t want = tag | (uint32_t)docs[r];
    size_t h = join_slot_of(docs[r], shift);
    uint64_t k = key[h];
    if (k < tag) { /* empty: not judged, not ranked before */
      key[h] = want;
      continue;
    }
    while ((k & ~JOIN_JUDGED) != want) { /* another doc's slot: probe on */
      h = (h + 1) & mask;
      if ((k = key[h]) < tag) break;
    }
    key[h] = want; /* ranked: a second visit finds it without the mark */
    if (k < tag) continue;
    if (!(k & JOIN_JUDGED)) {
      *dup_rank = r;
      return 1;
    }
    const int32_t g = grade[h];
    rel[r] = g < 0 ? RS_REL_UNJUDGED : g;
    t->judged[n_judged] = (int32_t)r;
    n_judged += g >= 0;
  }
  t->n_judged = n_judged;
  return 0;
}

/* The positions of the bytes of b[0..n) that are v or v + 1 (v even),
 * ascending, into at[]; how many.  b has room for n + 16 (bytes past n are
 * overwritten).  Sixteen bytes a compare: matches are rare. */
static inline size_t byte_positions(uint8_t *restrict b, size_t n, uint8_t v, uint32_t *restrict at)
{
  size_t k = 0, i = 0;
#if defined(__SSE2__)
  _mm_storeu_si128((__m128i *)(b + n), _mm_setzero_si128()); /* v is not 0 */
  const __m128i want = _mm_set1_epi8((char)(v | 1)), one = _mm_set1_epi8(1);
  for (; i < n; i += 16) {
    const __m128i x = _mm_or_si128(_mm_loadu_si128((const __m128i *)(b + i)), one);
    for (unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, want)); m; m &= m - 1)
      at[k++] = (uint32_t)(i + (size_t)__builtin_ctz(m));
  }
#endif
  for (; i < n; i++) at[k] = (uint32_t)i, k += (b[i] | 1) == (v | 1);
  return k;
}

static inline size_t stamp_slot_of(int32_t doc) { return ((uint32_t)doc * 2654435761u) >> (32 - STAMP_BITS); }

/* hash_join for the usual row (at most STAMP_RANKS ranked, STAMP_JUDGED_MAX
 * judged docs), with the same results.  hash_join's probe branches on what
 * the slot holds, and every judged doc and every collision (5-10 of a
 * 100-doc row) mispredicts.  Here a byte a slot says only that a doc of
 * this row hashed there, and whether the last was ranked (the row's
 * generation, even) or judged (one more): the judged docs' slots are
 * stamped, then those of the ranked docs, in a pass without branches that
 * keeps what each slot held.  A doc whose slot was not stamped is neither
 * judged nor ranked before, so only the others (the judged docs, and about
 * 0.3 collisions a row) are compared with the query's judged docs, and
 * those whose slot a ranked doc stamped (every repeat is one) with the
 * ranks before them. */
static inline __attribute__((always_inline)) int stamp_join(thread_state *t, const rs__corpus *c,
                                                            const int32_t *restrict docs, size_t n, size_t qa,
                                                            size_t qb, int32_t *restrict rel, size_t *dup_rank)
{
  if ((t->stamp_gen += 2) == 0) { /* stamps of 127 rows ago would read as this row's */
    memset(t->stamp, 0, STAMP_SLOTS);
    t->stamp_gen = 2;
  }
  const uint8_t gen = t->stamp_gen;
  uint8_t *restrict stamp = t->stamp, *restrict was = t->stamp_was;
  uint32_t *restrict slot = t->stamp_slot, *restrict deferred = t->deferred;
  int32_t *restrict jdoc = t->stamp_jdoc, *restrict jgrade = t->stamp_jgrade;
  for (size_t j = 0; j < STAMP_JUDGED_MAX; j++) jdoc[j] = -1; /* never a ranked doc (checked) */
  for (size_t j = 0; j < qb - qa; j++) {
    jdoc[j] = c->qdoc[qa + j], jgrade[j] = c->qgrade[qa + j];
    stamp[stamp_slot_of(jdoc[j])] = (uint8_t)(gen + 1);
  }
  for (size_t r = 0; r < n; r++) slot[r] = (uint32_t)stamp_slot_of(docs[r]);
  /* A loop of plain stores here became a `rep stos` (GCC's memset), whose
   * start-up was 8% of score_row's time for 400 bytes.  Four at a time by
   * hand, up to n rounded up to 4 (rel holds cap >= 128 ranks, a power of
   * two, and n <= cap); the empty asm hides from GCC that every store is
   * the same constant, which it otherwise turned into the memset again. */
#if defined(__SSE2__) && defined(__GNUC__)
  __m128i unpooled = _mm_set1_epi32(RS_REL_UNPOOLED);
  for (size_t r = 0; r < n; r += 4) {
    __asm__("" : "+x"(unpooled));
    _mm_storeu_si128((__m128i *)(void *)(rel + r), unpooled);
  }
#else
  for (size_t r = 0; r < n; r++) rel[r] = RS_REL_UNPOOLED;
#endif
#pragma GCC unroll 4
  for (size_t r = 0; r < n; r++) {
    const uint32_t h = slot[r]; /* once: GCC reloads slot[r] after a byte store otherwise */
    was[r] = stamp[h];
    stamp[h] = gen;
  }
  const size_t n_deferred = byte_positions(was, n, gen, deferred);
  size_t n_judged = 0;
  for (size_t i = 0; i < n_deferred; i++) {
    const size_t r = deferred[i];
    const int32_t d = docs[r];
    unsigned seen = 0;
    if (was[r] == gen)
      for (size_t j = 0; j < r; j++) seen |= docs[j] == d;
    if (seen) { /* the first repeat: the ranks noted ascend, and every repeat is one */
      *dup_rank = r;
      return 1;
    }
    unsigned at = 0; /* 1 + the judged doc's index (judged docs are distinct) */
    for (size_t j = 0; j < STAMP_JUDGED_MAX; j++) at |= jdoc[j] == d ? (unsigned)j + 1 : 0;
    if (at) {
      const int32_t g = jgrade[at - 1];
      rel[r] = g < 0 ? RS_REL_UNJUDGED : g;
      t->judged[n_judged] = (int32_t)r;
      n_judged += g >= 0;
    }
  }
  t->n_judged = n_judged;
  return 0;
}

/* The join of a row: stamp_join for the usual one, else hash_join. */
static inline __attribute__((always_inline)) int join_row(thread_state *t, const rs__corpus *c, const int32_t *docs,
                                                          size_t n, size_t qa, size_t qb, int32_t *rel, size_t *dup_rank)
{
  return n <= STAMP_RANKS && qb - qa <= STAMP_JUDGED_MAX ? stamp_join(t, c, docs, n, qa, qb, rel, dup_rank)
                                                        : hash_join(t, c, docs, n, qa, qb, rel, dup_rank);
}

/* The stored column of the second copy of doc d in doc[0..n).  When the
 * scores never rise, copies of one doc keep their stored order in the
 * ranking (their scores are equal, and the tie order is stable), so the
 * first doc to repeat one ranked before it is its second stored copy. */
static size_t second_copy(const int32_t *doc, size_t n, int32_t d)
{
  size_t j = 0;
  while (doc[j] != d) j++;
  for (j++; j < n && doc[j] != d; j++) continue;
  return j;
}

/* One row: checked, ranked, joined with its judgments and scored.  One
 * body, built twice: for the baseline (score_row) and for AVX2
 * (score_row_avx2), where the row's checks run eight lanes wide; avx2 is
 * a constant in each. */
static inline __attribute__((always_inline)) void score_row_body(void *vctx, size_t row, int tid, int avx2)
{
  (void)avx2; /* unused where there is no AVX2 build */
  engine *e = vctx;
  batch *bt = e->cur;
  thread_state *t = &e->ts[tid];
  const segment *sg = segment_of(bt, row);
  const size_t i = row - sg->row0, q = sg->blk.q0 + i;
  const rs__corpus *c = e->c;
  int8_t *status = &bt->status[row];
  /* Every row is checked, judged or not; only judged queries are scored
   * (trec_eval never evaluates a topic without judgments). */
  const size_t qa = (size_t)c->qoff[q], qb = (size_t)c->qoff[q + 1];
  const size_t base = (size_t)sg->blk.off[i], m = (size_t)(sg->blk.off[i + 1] - sg->blk.off[i]);
  const int32_t *restrict doc = sg->blk.doc + base;
  /* the row's scores, in their stored type */
  const float *s32 = sg->blk.score32 ? sg->blk.score32 + base : NULL;
  const double *s64 = sg->blk.score64 ? sg->blk.score64 + base : NULL;
  const uint32_t nd = c->has_docs ? (uint32_t)c->nd : (uint32_t)INT32_MAX;

  /* Checks as whole-row reductions (they vectorise); the failing column is
   * looked for only when one fails. */
  /* A full row (its last column a doc) needs no search for the padding:
   * a -1 inside it fails the range check, and the error path below looks
   * again from the start. */
  size_t n = m;
  if (m && doc[m - 1] == -1) {
    n = 0;
    while (n < m && doc[n] != -1) n++;
  }
  unsigned bad_doc = 0, bad_pad = 0;
  for (size_t j = 0; j < n; j++) bad_doc |= (uint32_t)doc[j] >= nd;
  for (size_t j = n; j < m; j++) bad_pad |= doc[j] != -1;
  if (bad_doc | bad_pad) {
    n = 0;
    while (n < m && doc[n] != -1) n++;
    size_t j = 0;
    while (j < n && (uint32_t)doc[j] < nd) j++;
    if (j == n)
      while (doc[j] == -1) j++;
    *status = j < n ? ROW_BAD_DOC : ROW_AFTER_PAD, bt->bad_at[row] = (int64_t)j;
    return;
  }
  /* Scores are checked in their stored type (float32 compares as its
   * double would: the conversion is exact and keeps the order) and
   * converted only when the ranking must be sorted, which stored rankings
   * rarely need. */
  const double *score = NULL;
  uint64_t rising = 0, tied = 0;
  if (e->runs[sg->run]->has_score && n) {
    uint64_t nan = 0; /* 64-bit flags: the width of a double, so the loops vectorise */
    if (s32) {
#ifdef RS_HAVE_AVX2
      const score_flags f = avx2 ? scan_scores_f32_avx2(s32, n, t->tie) : scan_scores_f32(s32, n, t->tie);
#else
      const score_flags f = scan_scores_f32(s32, n, t->tie);
#endif
      nan = f.nan, rising = f.rising, tied = f.tied;
      if (!nan && rising) { /* a full sort compares doubles */
        double *restrict d = t->score;
        for (size_t j = 0; j < n; j++) d[j] = (double)s32[j];
        score = d;
      }
    } else {
      nan = s64[0] != s64[0];
      for (size_t j = 1; j < n; j++) {
        nan |= (uint64_t)(s64[j] != s64[j]);
        rising |= (uint64_t)(s64[j - 1] < s64[j]);
        tied |= (uint64_t)(s64[j - 1] == s64[j]);
      }
      score = s64;
    }
    if (nan) {
      size_t j = 0;
      if (s32)
        while (!isnan(s32[j])) j++;
      else
        while (!isnan(s64[j])) j++;
      *status = ROW_NAN, bt->bad_at[row] = (int64_t)j;
      return;
    }
  }

  const rs_levels lv = e->lv_n ? (rs_levels){e->lv_grade + qa, e->lv_count + qa, e->lv_n[q]}
                               : rs__levels_of(c->qgrade + qa, qb - qa, t->lv_grade, t->lv_count);
  double *out = bt->values + row * e->row_values;
  const size_t n_group = e->group[sg->run];
  if (n == 0) {
    if (qa == qb || !e->cfg->all_queries) { *status = ROW_SKIP; return; }
    for (size_t v = 0; v < n_group; v++) rs__spec_eval(e->cfg->spec, &t->ss, NULL, 0, NULL, 0, &lv, 1, out + v * e->n_req);
    *status = ROW_MISSING;
    return;
  }

  /* The ranking: the stored docs themselves (nearly always: two reductions
   * above tell, and the doc ids are compared only at tied scores), else a
   * copy in trec_eval's order, with ord the stored column of each rank
   * when a full sort made it.  Tied scores alone leave the stored docs
   * joined: only the grades of the tied ranks are put in order after
   * (order_tied_rels), and the docs themselves only when that cannot. */
  const int32_t *ranked = doc;
  const uint32_t *ord = NULL;
  const int order = !e->cfg->ties_stored && qa < qb && (rising | tied); /* rising or tied: the run has scores */
  if (order && rising) {
    int32_t *restrict sd = t->sdoc;
    uint32_t *restrict o = t->order;
    for (size_t j = 0; j < n; j++) o[j] = (uint32_t)j;
    sort_ranking(c, e->id_rank, doc, score, o, t->tmp, n);
    for (size_t j = 0; j < n; j++) sd[j] = doc[o[j]];
    ord = o;
    ranked = sd;
  }
  if (order && !rising && !s32) tie_bits_f64(s64, n - 1, t->tie); /* float32's: in t->tie since the checks */

  int32_t *restrict rel = t->rel;
  size_t dup_rank = 0;
  int dup = join_row(t, c, ranked, n, qa, qb, rel, &dup_rank);
  if (order && !rising && (dup || order_tied_rels(c, e->id_rank, doc, t->tie, n - 1, rel, t->judged))) {
    /* the docs in trec_eval's order, joined again: the repeat is named as
     * that ranking meets it */
    int32_t *restrict sd = t->sdoc;
    memcpy(sd, doc, n * sizeof *sd);
    order_ties(c, e->id_rank, sd, t->tie, n - 1);
    ranked = sd;
    dup = join_row(t, c, ranked, n, qa, qb, rel, &dup_rank);
  }
  if (dup) {
    bt->bad_at[row] = (int64_t)(ord ? ord[dup_rank] : second_copy(doc, n, ranked[dup_rank]));
    *status = ROW_DUP;
    return;
  }
  if (qa == qb) { *status = ROW_SKIP; return; }
  /* Each run of the group scores the ranking cut at its depth: the whole
   * row is checked above whatever the depth, as the file holds it. */
  for (size_t v = 0; v < n_group; v++) {
    const size_t depth = e->runs[sg->run + v]->depth, len = depth && depth < n ? depth : n;
    rs__spec_eval(e->cfg->spec, &t->ss, rel, len, t->judged, rs__count_below(t->judged, t->n_judged, len), &lv, 0,
                  out + v * e->n_req);
  }
  *status = ROW_EVAL;
}

static void score_row(void *vctx, size_t row, int tid) { score_row_body(vctx, row, tid, 0); }
#ifdef RS_HAVE_AVX2
RS_AVX2_TARGET static void score_row_avx2(void *vctx, size_t row, int tid) { score_row_body(vctx, row, tid, 1); }
#endif

/* The row scorer this CPU runs, unless the config asks for the baseline. */
static rs__item_fn row_scorer(const rs__sweep_cfg *cfg)
{
#ifdef RS_HAVE_AVX2
  if (!cfg->baseline_simd && rs__cpu_has_avx2()) return score_row_avx2;
#endif
  (void)cfg;
  return score_row;
}

/* --- reading ------------------------------------------------------------------- */

/* Room for `rows` rows; the contents are not kept (a batch's rows are
 * written again each time it is filled). */
static rs_code grow_batch(batch *b, size_t rows, size_t row_values, rs_error *err)
{
  if (rows <= b->cap_rows) return RS_OK;
  free(b->values), free(b->status), free(b->bad_at);
  b->values = rs__malloc_lines(rs__mul(rs__mul(rows, row_values), sizeof *b->values));
  b->status = rs__malloc_lines(rows);
  b->bad_at = rs__malloc_lines(rs__mul(rows, sizeof *b->bad_at));
  b->cap_rows = 0;
  if (!b->values || !b->status || !b->bad_at) return rs__fail(err, RS_NOMEM, "out of memory for a batch of %zu queries", rows);
  b->cap_rows = rows;
  return RS_OK;
}

/* Room for the sum blocks of a segment of n rows: a sum block or part of
 * one at each end, whole ones between. */
static rs_code grow_sums(segment *sg, size_t n, size_t n_req, rs_error *err)
{
  const size_t need = n / RS__SUM_BLOCK_ROWS + 2;
  if (need <= sg->cap_sums) return RS_OK;
  free(sg->sums);
  free(sg->sum_val);
  sg->sums = rs__malloc_lines(rs__mul(need, sizeof *sg->sums));
  sg->sum_val = rs__malloc_lines(rs__mul(rs__mul(need, n_req ? n_req : 1), sizeof *sg->sum_val));
  sg->cap_sums = sg->sums && sg->sum_val ? need : 0;
  return sg->cap_sums ? RS_OK : rs__fail(err, RS_NOMEM, "out of memory for a batch's sums");
}

/* Rows per block of a run, so that a block holds about batch_docs docs:
 * rounded up, so that one block fills a batch (rounded down, 1310 rows
 * of 100 docs fell 72 short of 2^17, and every batch read a second block
 * of 1310 rows into buffers of its own). */
static size_t rows_per_block(const rs__run *r, size_t block_docs)
{
  double per_row = r->csr ? (r->n_rows ? (double)r->n_docs / (double)r->n_rows : 1.0) : (double)r->k;
  if (per_row < 1.0) per_row = 1.0;
  size_t rows = (size_t)ceil((double)block_docs / per_row);
  return rows < 16 ? 16 : rows;
}

/* Rows of latencies read and binned a step.  A run's latencies were read
 * whole in one side slot: 1M of them took 20 ms beside a batch scored in
 * 1 ms, the other threads waiting out the rest. */
enum { LATENCY_STEP = 1 << 14 };

/* Reads and sums up the latencies of the runs the reader has reached, at
 * least `budget` rows of them (SIZE_MAX: all), in steps: each run's
 * percentiles once its last rows are in (they need the whole column; a
 * run's summary counts as a quarter of its rows: it is that much of the
 * work).  Called after a batch is read, so that on several threads the
 * first run's column is read beside the scoring of the first batch, not
 * before it. */
static void read_latencies(engine *e, batch *b, size_t budget)
{
  while (e->lat_done < e->lat_seen && !b->rc && budget > 0) {
    const size_t run = e->lat_done;
    const rs__run *r = rows_of(e->runs[run]);
    if (!reads_latency(e, run)) {
      e->lat_done += e->group[run];
      continue;
    }
    char where[600];
    snprintf(where, sizeof where, "%s:/runs/%s/latency", r->path, r->name);
    if (!e->lat) {
      if (!(e->lat = rs__malloc(rs__mul(r->n_rows ? r->n_rows : 1, sizeof *e->lat)))) {
        b->rc = rs__fail(&b->err, RS_NOMEM, "%s: out of memory", where);
        return;
      }
      e->lat_rows = 0;
      memset(e->lat_bucket, 0, sizeof e->lat_bucket);
    }
    while (e->lat_rows < r->n_rows && budget > 0) {
      const size_t n = r->n_rows - e->lat_rows < LATENCY_STEP ? r->n_rows - e->lat_rows : LATENCY_STEP;
      uint64_t bucket[RS__LATENCY_N_BOUNDS + 1];
      if ((b->rc = rs__run_read_latency(r, e->lat_rows, n, e->lat + e->lat_rows, &b->err))) return;
      rs__latency_histogram(e->lat + e->lat_rows, n, 1000.0, bucket);
      for (size_t k = 0; k <= RS__LATENCY_N_BOUNDS; k++) e->lat_bucket[k] += bucket[k];
      e->lat_rows += n;
      budget = budget > n ? budget - n : 0;
    }
    if (e->lat_rows < r->n_rows) return;
    /* every row in: the run's summary, the same for the runs cut from its rows */
    rs__run_result *res = &e->res[run];
    if ((b->rc = rs__latency_summarize(e->lat, r->n_rows, where, &res->latency, &b->err))) return;
    memcpy(res->latency.bucket, e->lat_bucket, sizeof e->lat_bucket);
    if (e->cfg->latency_cdf && r->n_rows) {
      if (!(res->latency_cdf = rs__malloc(RS__LATENCY_CDF_N * sizeof *res->latency_cdf))) {
        b->rc = rs__fail(&b->err, RS_NOMEM, "%s: out of memory", where);
        return;
      }
      rs__latency_cdf(e->lat, r->n_rows, res->latency_cdf); /* after the summary, as its selection left them */
    }
    free(e->lat);
    e->lat = NULL;
    res->has_latency = 1;
    /* The runs cut from the same rows answered in the same time. */
    for (size_t v = 1; v < e->group[run]; v++) {
      rs__run_result *to = &e->res[run + v];
      to->latency = res->latency, to->has_latency = 1;
      if (res->latency_cdf) {
        if (!(to->latency_cdf = rs__malloc(RS__LATENCY_CDF_N * sizeof *to->latency_cdf))) {
          b->rc = rs__fail(&b->err, RS_NOMEM, "%s: out of memory", where);
          return;
        }
        memcpy(to->latency_cdf, res->latency_cdf, RS__LATENCY_CDF_N * sizeof *to->latency_cdf);
      }
    }
    e->lat_done += e->group[run];
    const size_t summary = r->n_rows / 4;
    budget = budget == SIZE_MAX ? budget : budget > summary ? budget - summary : 0;
  }
}

/* Reads the next batch at the cursor into b (n_seg 0: nothing left); with
 * shared reading, only lays out its segments (each a run's rows q0, n in
 * its block), which read_own then reads. */
static void read_batch(engine *e, batch *b)
{
  b->n_seg = b->n_rows = b->max_len = 0;
  b->summed = 0;
  b->rc = RS_OK;
  size_t docs = 0;
  /* With own sums a batch holds a segment a thread at least, even when
   * fewer would reach the budget: each thread reads and adds up its own. */
  while (e->rd_run < e->n_runs && b->n_seg < MAX_SEGMENTS &&
         (docs < e->batch_docs || (e->own_sums && b->n_seg < (size_t)e->threads))) {
    const rs__run *r = rows_of(e->runs[e->rd_run]);
    /* latencies: noted here, read by read_next after the batch (see read_latencies) */
    if (e->rd_q == first_row(e, e->rd_run) && e->lat_seen <= e->rd_run) e->lat_seen = e->rd_run + 1;
    size_t want = rows_per_block(r, e->batch_docs), left = end_row(e, e->rd_run) - e->rd_q;
    /* Shared reading: a block a thread, in whole chunks (a segment's first
     * row then starts a status line, see CHUNK_ROWS), or with own sums in
     * whole sum blocks, up to the next boundary (a run's rows may start
     * inside one: then its first segment is shorter); not for the runs
     * below, whose blocks must not depend on the thread count. */
    if (e->own_sums) {
      const size_t sb = RS__SUM_BLOCK_ROWS;
      want = e->rd_q / sb * sb + (rows_per_block(r, e->block_docs) + sb - 1) / sb * sb - e->rd_q;
    } else if (e->reads_shared && e->group[e->rd_run] == 1) {
      want = (rows_per_block(r, e->block_docs) + CHUNK_ROWS - 1) / CHUNK_ROWS * CHUNK_ROWS;
    }
    /* Runs cut from the same rows hand their values over block by block
     * (combine): blocks that divide a shard unit (a power of two up to
     * RS__SHARD_UNIT_ROWS, from a unit's first row) give that order at any
     * share of the work (engine/shard.h). */
    if (e->group[e->rd_run] > 1) {
      size_t p = 16;
      while (p * 2 <= want && p * 2 <= RS__SHARD_UNIT_ROWS) p *= 2;
      want = p;
    }
    size_t n = want < left ? want : left;
    segment *sg = &b->seg[b->n_seg];
    if (n > 0) {
      if (e->reads_shared) {
        sg->blk.q0 = e->rd_q, sg->blk.n = n;
        if (r->k > b->max_len) b->max_len = r->k; /* pread-only runs are dense: k docs a row */
        docs += n * r->k;
      } else {
        if ((b->rc = rs__run_read(r, e->rd_q, n, &sg->blk, &b->err))) return;
        for (size_t i = 0; i < n; i++) {
          size_t len = (size_t)(sg->blk.off[i + 1] - sg->blk.off[i]);
          if (len > b->max_len) b->max_len = len;
        }
        docs += (size_t)sg->blk.off[n];
      }
      if ((b->rc = grow_batch(b, b->n_rows + n, e->row_values, &b->err))) return;
      if (e->own_sums && (b->rc = grow_sums(sg, n, e->n_req, &b->err))) return;
      sg->run = e->rd_run;
      sg->row0 = b->n_rows;
      b->n_rows += n;
      b->n_seg++;
      e->rd_q += n;
    }
    if (e->rd_q == end_row(e, e->rd_run) && (e->rd_run += e->group[e->rd_run]) < e->n_runs)
      e->rd_q = first_row(e, e->rd_run);
  }
}

/* The latencies of the runs the batch next reached, as many rows as it
 * has, at least a step: they keep up with the reading, each slot's share
 * small beside a batch's scoring. */
static void read_next_latencies(engine *e)
{
  if (!e->next->rc) read_latencies(e, e->next, e->next->n_rows > LATENCY_STEP ? e->next->n_rows : LATENCY_STEP);
}

static void read_next(engine *e)
{
  const double t0 = e->cfg->timing ? rs__seconds() : 0.0;
  read_batch(e, e->next);
  read_next_latencies(e);
  if (e->cfg->timing) e->read_s += rs__seconds() - t0;
}

/* Lays out the batch next at the cursor for the shared reading, no thread
 * having failed on it yet. */
static void lay_out_next(engine *e)
{
  for (int k = 0; k < e->threads; k++) e->rd[k].rc = RS_OK;
  read_batch(e, e->next);
}

/* Thread tid's share of the shared reading of batch next (laid out by
 * read_batch): its segments tid, tid + team, ..., into their blocks, in
 * order up to the first that fails. */
static void read_own(engine *e, int tid, int team)
{
  read_share *t = &e->rd[tid];
  batch *b = e->next;
  const double t0 = e->cfg->timing ? rs__seconds() : 0.0;
  for (size_t s = (size_t)tid; s < b->n_seg; s += (size_t)team) {
    segment *sg = &b->seg[s];
    const size_t q0 = sg->blk.q0, n = sg->blk.n;
    if ((t->rc = rs__run_read(rows_of(e->runs[sg->run]), q0, n, &sg->blk, &t->err))) {
      t->fail_seg = s;
      break;
    }
  }
  if (e->cfg->timing) t->seconds += rs__seconds() - t0;
}

/* After a shared reading: the failure of the earliest segment (as the
 * reading in order would have met it) becomes the batch's, before any of
 * its latencies'. */
static void read_own_verdict(engine *e)
{
  batch *b = e->next;
  const read_share *first = NULL;
  for (int k = 0; k < e->threads; k++)
    if (e->rd[k].rc && (!first || e->rd[k].fail_seg < first->fail_seg)) first = &e->rd[k];
  if (first) b->rc = first->rc, b->err = first->err;
}

static void free_batch(batch *b)
{
  for (size_t s = 0; s < MAX_SEGMENTS; s++) {
    rs__block_free(&b->seg[s].blk);
    free(b->seg[s].sums);
    free(b->seg[s].sum_val);
  }
  free(b->values);
  free(b->status);
  free(b->bad_at);
}

/* --- combining ----------------------------------------------------------------- */

static rs_code row_error(const engine *e, const batch *bt, size_t row, rs_error *err)
{
  const segment *sg = segment_of(bt, row);
  const rs__run *r = rows_of(e->runs[sg->run]);
  const size_t i = row - sg->row0, q = sg->blk.q0 + i;
  const int64_t col = bt->bad_at[row];
  const int32_t d = sg->blk.doc[sg->blk.off[i] + col];
  const char *qid = rs__corpus_qid(e->c, q);
  /* A dense row's column is the position in the row; a CSR row's is too
   * (its element index in doc is offsets[row] + column). */
  switch (bt->status[row]) {
  case ROW_BAD_DOC:
    return rs__fail(err, RS_FORMAT, "%s:/runs/%s/doc: row %zu (query \"%s\"), column %" PRId64
                    ": doc index %" PRId32 " out of range (expected -1 padding or 0..%zu)",
                    r->path, r->name, q, qid, col, d, e->c->has_docs ? e->c->nd - 1 : (size_t)INT32_MAX - 1);
  case ROW_NAN:
    return rs__fail(err, RS_FORMAT, "%s:/runs/%s/score: row %zu (query \"%s\"), column %" PRId64
                    ": expected a number, found NaN", r->path, r->name, q, qid, col);
  case ROW_AFTER_PAD:
    return rs__fail(err, RS_FORMAT, "%s:/runs/%s/doc: row %zu (query \"%s\"), column %" PRId64
                    ": doc index %" PRId32 " after -1 padding (padding must end the row)", r->path, r->name, q, qid,
                    col, d);
  default:
    return rs__fail(err, RS_DUPLICATE, "%s:/runs/%s/doc: row %zu (query \"%s\"), column %" PRId64
                    ": doc %s%s%s (index %" PRId32 ") appears twice in the ranking", r->path, r->name, q, qid, col,
                    e->c->has_docs ? "\"" : "", e->c->has_docs ? rs__corpus_did(e->c, d) : "", e->c->has_docs ? "\"" : "",
                    d);
  }
}

/* Adds the batch's values to the runs' sums in row order. */
static rs_code combine(engine *e, batch *bt, rs_error *err)
{
  for (size_t row = 0; row < bt->n_rows; row++)
    if (bt->status[row] < 0) return row_error(e, bt, row, err);
  for (size_t s = 0; s < bt->n_seg; s++) {
    const segment *sg = &bt->seg[s];
    for (size_t g = 0; g < e->group[sg->run]; g++) {
      const size_t run = sg->run + g;
      for (size_t i = 0; i < sg->blk.n; i++) {
        const size_t row = sg->row0 + i;
        if (bt->status[row] == ROW_SKIP) continue;
        const double *v = bt->values + row * e->row_values + g * e->n_req;
        rs_code rc = rs__result_acc_add(&e->acc, run, sg->blk.q0 + i, v, err);
        if (!rc && e->cfg->per_query) rc = e->cfg->per_query(e->cfg->per_query_ctx, run, sg->blk.q0 + i, v, err);
        if (rc) return rc;
      }
    }
  }
  return RS_OK;
}

/* One query's values v added to a sum block's running sums, and counted
 * (its queries, those with no relevant doc retrieved, those with P@1 = 1):
 * what rs__result_acc_add and sum_segment add alike. */
static inline void add_query_values(const rs__spec *sp, double *restrict sum, size_t *num_q, size_t *no_rel_ret,
                                    size_t *perfect_p1, const double *restrict v)
{
  for (size_t k = 0; k < sp->n_req; k++) sum[k] += v[k];
  ++*num_q;
  *no_rel_ret += v[sp->hidden_relret] == 0.0;
  *perfect_p1 += v[sp->hidden_p1] == 1.0;
}

/* Own sums: segment sg's values added up in its sum blocks, each from
 * zero in query order (as rs__result_acc_add adds them), skipped rows
 * left out (a sum block whose rows are all skipped is not there), and its
 * first row in error noted (first_bad): it stops the sweep before any
 * sums are used.  The status bytes are read here, on the thread that
 * wrote most of them, for the reason the values are. */
static void sum_segment(const engine *e, const batch *bt, segment *sg)
{
  const size_t n_req = e->n_req;
  rs__block_sum *bs = NULL;
  double *sum = NULL;
  size_t n_sums = 0;
  sg->first_bad = SIZE_MAX;
  for (size_t i = 0; i < sg->blk.n; i++) {
    const size_t row = sg->row0 + i, block = (sg->blk.q0 + i) / RS__SUM_BLOCK_ROWS;
    if (bt->status[row] < 0 && sg->first_bad == SIZE_MAX) sg->first_bad = row;
    if (bt->status[row] != ROW_EVAL && bt->status[row] != ROW_MISSING) continue;
    if (!bs || bs->block != block) {
      sum = sg->sum_val + n_sums * n_req;
      for (size_t k = 0; k < n_req; k++) sum[k] = 0.0;
      bs = &sg->sums[n_sums++];
      *bs = (rs__block_sum){.block = block, .sum = sum};
    }
    add_query_values(e->cfg->spec, sum, &bs->num_q, &bs->no_rel_ret, &bs->perfect_p1,
                     bt->values + row * e->row_values);
  }
  sg->n_sums = n_sums;
}

/* Own sums: thread tid's segments of the scored batch prev added up. */
static void sum_own(engine *e, int tid, int team)
{
  batch *bt = e->prev;
  for (size_t s = (size_t)tid; s < bt->n_seg; s += (size_t)team) sum_segment(e, bt, &bt->seg[s]);
}

/* Own sums: combine's work from the segments' sum blocks (added up here
 * if no thread did), in segment order, after the batch's first row in
 * error if there is one. */
static rs_code add_segment_sums(engine *e, batch *bt, rs_error *err)
{
  for (size_t s = 0; s < bt->n_seg; s++) { /* the first row in error, in batch order */
    segment *sg = &bt->seg[s];
    if (!bt->summed) sum_segment(e, bt, sg);
    if (sg->first_bad != SIZE_MAX) return row_error(e, bt, sg->first_bad, err);
  }
  for (size_t s = 0; s < bt->n_seg; s++) {
    const segment *sg = &bt->seg[s];
    for (size_t j = 0; j < sg->n_sums; j++) {
      rs_code rc = rs__result_acc_add_block(&e->acc, sg->run, &sg->sums[j], err);
      if (rc) return rc;
    }
  }
  return RS_OK;
}

/* A scored batch into the sums (combine), then the runs whose last row it
 * held are closed, and progress is told.  Errors into e->done_rc. */
static void finish_batch(engine *e, batch *bt)
{
  const double t0 = e->cfg->timing ? rs__seconds() : 0.0;
  rs_code rc = e->own_sums ? add_segment_sums(e, bt, &e->done_err) : combine(e, bt, &e->done_err);
  const segment *last = &bt->seg[bt->n_seg - 1];
  const size_t done_upto = last->blk.q0 + last->blk.n == end_row(e, last->run) ? last->run + 1 : last->run;
  for (size_t s = 0; s < bt->n_seg && !rc; s++) {
    const size_t r = bt->seg[s].run;
    if (r < done_upto && (s + 1 == bt->n_seg || bt->seg[s + 1].run != r))
      for (size_t g = 0; g < e->group[r] && !rc; g++) rc = rs__result_acc_finish(&e->acc, r + g, &e->done_err);
  }
  e->done_rc = rc;
  if (e->cfg->timing) e->combine_s += rs__seconds() - t0, e->n_batches++;
  if (rc) return;
  e->rows_done += bt->n_rows;
  if (e->cfg->progress) e->cfg->progress(e->cfg->progress_ctx, last->run, e->n_runs, e->rows_done, e->rows_total);
}

/* The side thread's work beside the scoring of cur: the batch before it
 * into the sums, then the next one read. */
static void side_work(void *vctx)
{
  engine *e = vctx;
  if (e->prev) finish_batch(e, e->prev);
  read_next(e);
}

/* Shared reading (reads_shared): each thread's own part (its segments of
 * next read; with own sums, its segments of prev added up), then the side
 * thread's, beside the scoring of cur: the batch before it into the sums
 * (without own sums: with them the caller does it after the region), then
 * the latencies of the runs the next one reached. */
static void own_work(void *vctx, int tid, int team)
{
  engine *e = vctx;
  read_own(e, tid, team);
  if (e->own_sums && e->prev) sum_own(e, tid, team);
}

static void side_work_shared(void *vctx)
{
  engine *e = vctx;
  if (e->prev && !e->own_sums) finish_batch(e, e->prev);
  const double t0 = e->cfg->timing ? rs__seconds() : 0.0;
  read_next_latencies(e);
  if (e->cfg->timing) e->read_s += rs__seconds() - t0;
}

/* Reads the batch next, laid out at the cursor, on this thread alone (the
 * first batch, before any scoring). */
static void read_next_here(engine *e)
{
  if (!e->reads_shared) {
    read_batch(e, e->next);
    return;
  }
  lay_out_next(e);
  if (!e->next->rc) {
    read_own(e, 0, 1);
    read_own_verdict(e);
  }
}

/* --- results from per-query values (shared with the merge of shares) ------------ */

rs_code rs__result_acc_init(rs__result_acc *a, const rs__spec *spec, rs__run_result *res, size_t n, rs_error *err)
{
  *a = (rs__result_acc){.spec = spec, .res = res, .n = n};
  if (n) memset(res, 0, n * sizeof *res);
  const size_t cells = rs__mul(n ? n : 1, spec->n_req ? spec->n_req : 1);
  a->sum = rs__calloc(cells, sizeof *a->sum);
  a->part = rs__calloc(cells, sizeof *a->part);
  a->part_block = rs__malloc(rs__mul(n ? n : 1, sizeof *a->part_block));
  a->part_count = rs__calloc(rs__mul(n ? n : 1, 3), sizeof *a->part_count);
  rs_code rc = a->sum && a->part && a->part_block && a->part_count
                   ? RS_OK
                   : rs__fail(err, RS_NOMEM, "out of memory for the sums of %zu results", n);
  for (size_t r = 0; r < n && !rc; r++) {
    a->part_block[r] = SIZE_MAX;
    if (!(res[r].value = rs__calloc(spec->n_req ? spec->n_req : 1, sizeof *res[r].value)))
      rc = rs__fail(err, RS_NOMEM, "out of memory");
  }
  if (rc) {
    for (size_t r = 0; r < n; r++) rs__run_result_free(&res[r]);
    rs__result_acc_free(a);
  }
  return rc;
}

/* Adds a block's sums and counts to result r's. */
static void add_block_sums(rs__result_acc *a, size_t r, const rs__block_sum *b)
{
  const size_t n_req = a->spec->n_req;
  double *restrict sum = a->sum + r * n_req;
  for (size_t k = 0; k < n_req; k++) sum[k] += b->sum[k];
  a->res[r].num_q += b->num_q;
  a->res[r].no_rel_ret += b->no_rel_ret;
  a->res[r].perfect_p1 += b->perfect_p1;
}

/* Closes result r's open block, if any: into the sums, and to on_block. */
static rs_code close_block(rs__result_acc *a, size_t r, rs_error *err)
{
  if (a->part_block[r] == SIZE_MAX) return RS_OK;
  const size_t n_req = a->spec->n_req;
  double *part = a->part + r * n_req;
  size_t *cnt = a->part_count + 3 * r;
  const rs__block_sum b = {.block = a->part_block[r], .num_q = cnt[0], .no_rel_ret = cnt[1], .perfect_p1 = cnt[2],
                           .sum = part};
  rs_code rc = a->on_block ? a->on_block(a->on_block_ctx, r, &b, err) : RS_OK;
  add_block_sums(a, r, &b);
  memset(part, 0, n_req * sizeof *part);
  cnt[0] = cnt[1] = cnt[2] = 0;
  a->part_block[r] = SIZE_MAX;
  return rc;
}

rs_code rs__result_acc_add(rs__result_acc *a, size_t r, size_t q, const double *v, rs_error *err)
{
  const rs__spec *sp = a->spec;
  const size_t block = q / RS__SUM_BLOCK_ROWS;
  rs_code rc = RS_OK;
  if (a->part_block[r] != block) {
    rc = close_block(a, r, err);
    a->part_block[r] = block;
  }
  size_t *cnt = a->part_count + 3 * r;
  add_query_values(sp, a->part + r * sp->n_req, &cnt[0], &cnt[1], &cnt[2], v);
  return rc;
}

rs_code rs__result_acc_add_block(rs__result_acc *a, size_t r, const rs__block_sum *b, rs_error *err)
{
  rs_code rc = close_block(a, r, err);
  add_block_sums(a, r, b);
  return rc;
}

rs_code rs__result_acc_finish(rs__result_acc *a, size_t r, rs_error *err)
{
  rs_code rc = close_block(a, r, err);
  const rs__spec *sp = a->spec;
  rs__run_result *res = &a->res[r];
  const double *sum = a->sum + r * sp->n_req;
  const double nq = (double)res->num_q;
  for (size_t k = 0; k < sp->n_req; k++) {
    switch (sp->req[k].summary) {
    case RS_SUM_TOTAL: res->value[k] = sum[k]; break;
    case RS_SUM_GEOM: res->value[k] = res->num_q ? exp(sum[k] / nq) : 0.0; break;
    default: res->value[k] = res->num_q ? sum[k] / nq : 0.0; break;
    }
  }
  return rc;
}

void rs__result_acc_free(rs__result_acc *a)
{
  free(a->sum);
  free(a->part);
  free(a->part_block);
  free(a->part_count);
  a->sum = a->part = NULL;
  a->part_block = a->part_count = NULL;
}

void rs__run_result_free(rs__run_result *r)
{
  if (!r) return;
  free(r->value);
  free(r->latency_cdf);
  memset(r, 0, sizeof *r);
}

rs_code rs__sweep(const rs__sweep_cfg *cfg, const rs__corpus *c, const rs__run *const *runs, size_t n_runs,
                  rs__run_result *results, rs_error *err)
{
  engine e = {.cfg = cfg, .c = c, .runs = runs, .n_runs = n_runs, .res = results,
              .threads = rs__threads(cfg->threads), .n_req = cfg->spec->n_req,
              .batch_docs = cfg->batch_docs ? cfg->batch_docs : DEFAULT_BATCH_DOCS, .score = row_scorer(cfg)};
  if (n_runs) memset(results, 0, n_runs * sizeof *results);
  if (!(e.group = rs__calloc(n_runs ? n_runs : 1, sizeof *e.group))) return rs__fail(err, RS_NOMEM, "out of memory");
  size_t max_group = 1;
  for (size_t r = 0; r < n_runs;) {
    const rs__run *src = rows_of(runs[r]);
    size_t g = 1;
    while (r + g < n_runs && runs[r + g]->source == src) g++;
    e.group[r] = g;
    max_group = g > max_group ? g : max_group;
    r += g;
  }
  e.row_values = rs__mul(e.n_req, max_group);
  rs_code rc = RS_OK;
  for (size_t r = 0; cfg->ranges && r < n_runs && !rc; r++) {
    const rs__sweep_range *g = &cfg->ranges[r], *first = g;
    for (size_t f = r; f > 0 && !e.group[f]; f--) first = &cfg->ranges[f - 1]; /* the group's first run */
    if (g->q0 > g->q1 || g->q1 > runs[r]->n_rows)
      rc = rs__fail(err, RS_USAGE, "run %s: rows [%zu, %zu) asked for, the run has %zu", runs[r]->name, g->q0, g->q1,
                    runs[r]->n_rows);
    else if (g->q0 != first->q0 || g->q1 != first->q1 || g->latency != first->latency)
      rc = rs__fail(err, RS_USAGE, "run %s: rows [%zu, %zu) asked for, other than the runs cut from the same rows",
                    runs[r]->name, g->q0, g->q1);
  }
  if (!rc) rc = rs__result_acc_init(&e.acc, cfg->spec, results, n_runs, err);
  e.acc.on_block = cfg->per_block, e.acc.on_block_ctx = cfg->per_block_ctx;
  if (rc) {
    free(e.group);
    return rc;
  }
  rs__sweep_timing *tm = cfg->timing;
  int held = 0; /* rs__sched_hold'ing */
  double t0 = rs__seconds();
  if (tm) memset(tm, 0, sizeof *tm);
  if (!rc) size_levels(&e);
  if (!rc) rc = query_levels(&e, err);
  if (!rc) rc = build_id_rank(c, &e.id_rank, err);
  if (tm) tm->setup = rs__seconds() - t0;
  if (!rc && !(e.ts = rs__calloc_lines((size_t)e.threads, sizeof *e.ts))) rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (!rc && tm && !(e.busy = rs__calloc_lines((size_t)e.threads, sizeof *e.busy)))
    rc = rs__fail(err, RS_NOMEM, "out of memory");
  if (rc) goto done;

  for (size_t r = 0; r < n_runs; r += e.group[r]) e.rows_total += end_row(&e, r) - first_row(&e, r);
  e.reads_shared = e.threads > 1;
  for (size_t r = 0; r < n_runs; r++) e.reads_shared &= rs__run_read_is_pread_only(rows_of(runs[r]));
  e.block_docs = e.reads_shared ? e.batch_docs / (size_t)e.threads : e.batch_docs;
  e.own_sums = e.reads_shared && !cfg->per_query && !cfg->per_block;
  for (size_t r = 0; r < n_runs && e.own_sums; r++)
    e.own_sums = e.group[r] <= 1 && rows_per_block(rows_of(runs[r]), e.block_docs) >= RS__SUM_BLOCK_ROWS / 2;
  if (e.reads_shared && !(e.rd = rs__calloc_lines((size_t)e.threads, sizeof *e.rd))) {
    rc = rs__fail(err, RS_NOMEM, "out of memory");
    goto done;
  }
  if (n_runs) e.rd_q = first_row(&e, 0);
  e.next = &e.b[0];
  read_next_here(&e); /* its runs' latencies: beside the scoring of this batch (read_next) */
  if (tm) e.read_s += rs__seconds() - t0;
  rs__sched_hold(); /* a region a batch: the caller stays on its CPU from one to the next */
  held = 1;
  for (size_t k = 0;; k++) {
    e.prev = e.cur; /* scored, not yet in the sums */
    e.cur = e.next;
    e.next = &e.b[(k + 1) % 3]; /* batch k - 2's: in the sums since the last turn */
    if (e.cur->rc || e.cur->n_seg == 0) {
      /* Errors in batch order: the one before first. */
      if (e.prev && (finish_batch(&e, e.prev), e.done_rc)) {
        rc = e.done_rc, *err = e.done_err;
        goto done;
      }
      if ((rc = e.cur->rc)) {
        *err = e.cur->err;
        goto done;
      }
      read_latencies(&e, e.cur, SIZE_MAX); /* any left (read_next reads them in steps after each batch) */
      if ((rc = e.cur->rc)) *err = e.cur->err;
      break;
    }
    /* Scratch for the longest ranking of this batch (no allocation while scoring). */
    for (int i = 0; i < e.threads && !rc; i++) rc = ensure_thread(&e, &e.ts[i], e.cur->max_len, err);
    if (rc) goto done;
    if (tm) t0 = rs__seconds();
    if (e.reads_shared) {
      /* the next batch laid out here, read by every thread beside the scoring */
      const double tr = tm ? rs__seconds() : 0.0;
      lay_out_next(&e);
      if (tm) e.read_s += rs__seconds() - tr;
      size_t cut[MAX_SEGMENTS + 1];
      for (size_t s = 0; s < e.cur->n_seg; s++) cut[s] = e.cur->seg[s].row0;
      cut[e.cur->n_seg] = e.cur->n_rows;
      rs__parallel_for_shares(e.cur->n_seg, cut, e.threads, CHUNK_ROWS, e.score, &e, own_work, side_work_shared, &e,
                              e.busy);
      read_own_verdict(&e);
      if (e.own_sums && e.prev) { /* its sum blocks, added up by the threads, into the sums in order */
        e.prev->summed = 1;
        finish_batch(&e, e.prev);
      }
    } else {
      rs__parallel_for_beside(e.cur->n_rows, e.threads, CHUNK_ROWS, e.score, &e, side_work, &e, e.busy);
    }
    if (tm) tm->score += rs__seconds() - t0;
    if ((rc = e.done_rc)) {
      *err = e.done_err;
      goto done;
    }
  }
  /* Runs with no rows at all (nq = 0), or none to evaluate here, still get their (zero) results. */
  for (size_t r = 0; r < n_runs && !rc; r++)
    if (end_row(&e, r) == first_row(&e, r)) rc = rs__result_acc_finish(&e.acc, r, err);
done:
  if (held) rs__sched_release();
  if (tm) tm->read = e.read_s, tm->combine = e.combine_s, tm->batches = e.n_batches;
  for (int k = 0; tm && e.rd && k < e.threads; k++) tm->read += e.rd[k].seconds;
  if (tm && e.busy) {
    tm->n_threads = e.threads < RS__TIMING_THREADS ? e.threads : RS__TIMING_THREADS;
    for (int k = 0; k < tm->n_threads; k++) tm->thread_s[k] = e.busy[k].seconds, tm->thread_rows[k] = e.busy[k].items;
  }
  free(e.busy);
  free(e.rd);
  for (int k = 0; e.ts && k < e.threads; k++) free_thread(&e.ts[k]);
  free(e.ts);
  for (size_t k = 0; k < 3; k++) free_batch(&e.b[k]);
  free(e.lat);
  free(e.id_rank);
  free(e.lv_grade);
  free(e.lv_count);
  free(e.lv_n);
  free(e.group);
  rs__result_acc_free(&e.acc);
  if (rc)
    for (size_t r = 0; r < n_runs; r++) rs__run_result_free(&results[r]);
  return rc;
}

/* --- top documents (for judging) ----------------------------------------------- */

rs_code rs__run_top_docs(const rs__corpus *c, const rs__run *run, size_t depth, int ties_stored,
                         rs__top_docs_fn emit, void *ctx, rs_error *err)
{
  const uint32_t nd = c->has_docs ? (uint32_t)c->nd : (uint32_t)INT32_MAX;
  int32_t *id_rank = NULL;
  rs_code rc = build_id_rank(c, &id_rank, err);
  if (rc) return rc;
  rs__block blk = {0};
  size_t cap = 0;
  uint32_t *ord = NULL, *tmp = NULL;
  double *score = NULL;
  int32_t *top = NULL;
  const size_t per_block = 4096;
  for (size_t q0 = 0; q0 < run->n_rows && !rc; q0 += per_block) {
    const size_t n_rows = run->n_rows - q0 < per_block ? run->n_rows - q0 : per_block;
    if ((rc = rs__run_read(run, q0, n_rows, &blk, err))) break;
    for (size_t i = 0; i < n_rows && !rc; i++) {
      const size_t q = q0 + i, base = (size_t)blk.off[i], m = (size_t)(blk.off[i + 1] - blk.off[i]);
      const int32_t *doc = blk.doc + base;
      size_t n = 0;
      while (n < m && doc[n] != -1) n++;
      if (n > cap) {
        cap = n * 2;
        free(ord), free(tmp), free(score), free(top);
        ord = rs__malloc(rs__mul(cap, sizeof *ord)), tmp = rs__malloc(rs__mul(cap, sizeof *tmp));
        score = rs__malloc(rs__mul(cap, sizeof *score)), top = rs__malloc(rs__mul(cap, sizeof *top));
        if (!ord || !tmp || !score || !top) {
          rc = rs__fail(err, RS_NOMEM, "out of memory for a ranking of %zu docs", n);
          break;
        }
      }
      for (size_t j = 0; j < n; j++) {
        if ((uint32_t)doc[j] >= nd)
          rc = rs__fail(err, RS_FORMAT, "%s:/runs/%s/doc: row %zu (query \"%s\"), column %zu: doc index %" PRId32
                        " out of range (expected -1 padding or 0..%zu)", run->path, run->name, q, rs__corpus_qid(c, q),
                        j, doc[j], (size_t)nd - 1);
        else if (run->has_score && isnan(score[j] = rs__block_score(&blk, base + j)))
          rc = rs__fail(err, RS_FORMAT, "%s:/runs/%s/score: row %zu (query \"%s\"), column %zu: expected a number, "
                        "found NaN", run->path, run->name, q, rs__corpus_qid(c, q), j);
        if (rc) break;
        ord[j] = (uint32_t)j;
      }
      if (rc) break;
      if (run->has_score && !ties_stored) sort_ranking(c, id_rank, doc, score, ord, tmp, n);
      const size_t k = n < depth ? n : depth;
      for (size_t j = 0; j < k; j++) top[j] = doc[ord[j]];
      rc = emit(ctx, q, top, k, err);
    }
  }
  rs__block_free(&blk);
  free(ord), free(tmp), free(score), free(top), free(id_rank);
  return rc;
}
