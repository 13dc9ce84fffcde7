/* treceval.c: trec_eval 10.0 over TREC text: stream the run, rank and join
 * each topic, evaluate topics in parallel, combine in topic order. */
#define _POSIX_C_SOURCE 200809L
#include "ragsweep/trec_eval.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "formats/numparse.h"
#include "formats/qrels.h"
#include "engine/sched.h"
#include "util/strbuf.h"
#include "formats/textio.h"
#include "metrics/topic.h"
#include "formats/tokens.h"
#include "formats/trecrun.h"

/* 8 MB blocks in two buffers used in turn (one is read while the other is
 * parsed): they are faulted in once, on huge pages (alloc.c), and each
 * block costs one parallel region, whose barrier is expensive on a loaded
 * machine (10k x 100, 2 threads, three regions a block: 2 MB blocks
 * 380-470 ms of CPU, 8 MB 250-300).  A mapped run costs no buffer, so its
 * blocks (windows on the mapping) are 32 MB: a quarter of the barriers.
 * Each block is cut into 16 slices a thread, claimed in turn, so that a
 * thread slowed down (this guest's vCPUs differ) waits at the barrier
 * for a sixteenth of its share, not a quarter.  1M x 100 at two threads,
 * 9 runs each in turn: 8 MB and 4 slices 2163 ms (median 2276), 32 MB and
 * 16 slices 1898 ms (2084); one thread and 10k unchanged. */
enum { DEFAULT_BLOCK = 8 << 20, MAPPED_BLOCK = 32 << 20, SLICES_PER_THREAD = 16 };

struct rs_te_result {
  const rs__qrels *qrels; /* own_qrels, or the caller's (rs__te_rankings_of) */
  rs__qrels *own_qrels;
  size_t n_topics, n_values, relstring_stride;
  double *values;   /* [n_topics * n_values] */
  char *relstrings; /* [n_topics * relstring_stride] */
  unsigned char *present;
  double *summary; /* [n_values] */
  char *runid;
  size_t n_ok;        /* topics before the first failing one */
  rs_error topic_err; /* why topic n_ok failed */
};

/* ---------------------------------------------------------------------- */
/* Parsed run lines of one block, struct-of-arrays. */
typedef struct {
  const char **qid;
  const char **doc;
  uint32_t *doc_len;
  int32_t *topic; /* qrels topic index, or -1 when the qrels do not judge it */
  double *score;
  size_t n, cap;
} run_lines;

typedef struct {
  size_t begin, end; /* byte range of the slice */
  size_t n_newlines;
  size_t rec0, n_rec; /* where its records go, how many it produced */
  size_t err_off;     /* offset of its first malformed line, or SIZE_MAX */
  int err_fields;     /* that line's field count, or 0 when its score is the problem */
  size_t score_off, score_len; /* the score token that is not a number (strict reading) */
  const char *tag; /* run tag of its last data line */
  size_t tag_len;
  int interleaved; /* streaming: a topic it ranks was ranked before */
  int nomem;       /* streaming: no memory for a ranking */
} slice;

typedef struct {
  size_t a, b; /* records [a, b) */
  int32_t topic;
} group;

/* Per-thread scratch for building rankings. */
typedef struct {
  size_t cap;
  uint32_t *order, *tmp;
  uint64_t *hash;
  int32_t *rel;
  int32_t *judged; /* the ranks of the ranking's judged docs (see metrics/topic.h) */
  uint32_t *set;
  size_t set_cap;
  int32_t *lv_grade; /* [qrels max_count]: a topic's grade levels (rs__levels_of) */
  uint32_t *lv_count;
  rs_scratch ms;
  int has_ms;
  run_lines group; /* streaming: the records of the topic being read */
  /* lowest failing topic seen by this thread */
  long err_topic;
  char err_doc[200];
} thread_state;

typedef struct {
  const rs_te_config *cfg;
  const rs__qrels *q;
  rs_te_result *res;
  int threads;
  const char *buf;       /* the block being parsed */
  char *whole;           /* whole-run mode: the run, read by rs__read_all */
  const char *buf_limit; /* bytes up to here may be read (RS_LINE_WINDOW) */
  run_lines lines;
  slice *slices;
  size_t n_slices;
  group *groups;
  size_t n_groups, cap_groups;
  thread_state *ts;
  size_t max_levels;
  rs__ranking_fn visit; /* rs__te_rankings: hand rankings over instead of scoring */
  void *visit_ctx;
  rs__item_fn parse; /* parse_slice or parse_slice_avx2 (line_parser), chosen once */
  rs__numbers numbers; /* trec_eval's atof, or scores that must be numbers */
  int streaming;       /* parse_slice evaluates each topic as soon as its lines are read */
} engine;

static inline int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The bytes of a run line: white space (is_space) but the newline, the
 * newline, and the rest (token bytes). */
enum { CH_TOKEN = 0, CH_BLANK = 1, CH_NEWLINE = 2 };
static const unsigned char char_class[256] = {
    ['\t'] = CH_BLANK, ['\n'] = CH_NEWLINE, ['\v'] = CH_BLANK, ['\f'] = CH_BLANK, ['\r'] = CH_BLANK, [' '] = CH_BLANK};

static int grow_lines(run_lines *l, size_t need)
{
  if (need <= l->cap) return 1;
  size_t cap = l->cap ? l->cap : 1 << 16;
  while (cap < need) cap *= 2;
#define GROW(f)                                                                \
  do {                                                                         \
    void *p_ = rs__realloc(l->f, rs__mul(cap, sizeof *l->f));                  \
    if (!p_) return 0;                                                         \
    l->f = p_;                                                                 \
  } while (0)
  GROW(qid);
  GROW(doc);
  GROW(doc_len);
  GROW(topic);
  GROW(score);
#undef GROW
  l->cap = cap;
  return 1;
}

static void free_lines(run_lines *l)
{
  free(l->qid);
  free(l->doc);
  free(l->doc_len);
  free(l->topic);
  free(l->score);
}

/* --- parsing ---------------------------------------------------------- */

/* The qid of the line before, which each line's qid is compared with (a
 * byte loop was a tenth of the parse at 1M x 100).  A qid of at most 8
 * bytes is also kept as a masked word, worked out once a topic, so that
 * a line's compare is one load, a mask and a compare (a masked compare of
 * two loads, its mask worked out each line, was 20 instructions a line). */
typedef struct {
  const char *id;
  size_t len;           /* 0: none yet */
  uint64_t head, keep; /* keep != 0: its bytes (head) under the mask keep */
} qid_memo;

static inline void memo_qid(qid_memo *m, const char *id, size_t n, const char *limit)
{
  m->id = id, m->len = n, m->keep = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n - 1 < 8 && limit - id >= 8) {
    uint64_t x;
    memcpy(&x, id, 8);
    m->keep = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
    m->head = x & m->keep;
  }
#else
  (void)limit;
#endif
}

/* Whether the qid at id (n >= 1 bytes, after m's in the buffer) is m's. */
static inline int same_qid(const qid_memo *m, const char *id, size_t n, const char *limit)
{
  if (n != m->len) return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (m->keep && limit - id >= 8) {
    uint64_t x;
    memcpy(&x, id, 8);
    return (x & m->keep) == m->head;
  }
#else
  (void)limit;
#endif
  return rs__same_bytes(m->id, id, n);
}

static int ensure_thread_state(thread_state *ts, const rs_plan *plan, size_t n, size_t max_levels, rs_error *err);
static void eval_ranking(engine *e, thread_state *ts, size_t t, const run_lines *V, size_t n);

/* Streaming: the n records in ts->group are all the lines of topic (the
 * slices are cut between topics), so it is evaluated now, while they are
 * in cache, unless an earlier group claimed the topic: then the run
 * interleaves topics and is read again whole. */
static int flush_group(engine *e, slice *s, thread_state *ts, int32_t topic, size_t n)
{
  if (topic < 0) return 1; /* a topic the qrels do not judge: skipped, as by trec_eval */
  if (__atomic_exchange_n(&e->res->present[topic], (unsigned char)1, __ATOMIC_RELAXED)) {
    s->interleaved = 1;
    return 0;
  }
  if (!ensure_thread_state(ts, &e->cfg->plan, n, e->max_levels, NULL)) {
    s->nomem = 1;
    return 0;
  }
  eval_ranking(e, ts, (size_t)topic, &ts->group, n);
  return 1;
}

/* Stage `stage` of fetching topic t's data ahead of its lines: the
 * qrels' tables, then (stage 1) the row of results it will write. */
static inline void prefetch_topic(const engine *e, size_t t, int stage)
{
  rs__qrels_prefetch(e->q, t, stage);
  if (stage == 1) {
    const double *v = e->res->values + t * e->res->n_values;
    __builtin_prefetch(v, 1);
    if (e->res->n_values > 8) __builtin_prefetch(v + 8, 1);
    __builtin_prefetch(&e->res->present[t], 1);
  }
}

/* The lines of one topic that only add a record to its group, while
 * streaming: read by the window, of the topic's qid, with room in the
 * group and a score that needs no strtod.  They are nearly all the lines
 * of a run, so they have a loop of their own, in a function of its own,
 * with no call in it: inside parse_lines, which reads every other line
 * too, the loop's values did not fit in the registers (spills and reloads
 * were a fifth of its instructions), and a call in the loop made the
 * compiler rebuild its vector constants each line.  The first line it
 * turns down is left to parse_lines.  callgrind, 100k x 100, one thread:
 * 246 -> 189 instructions a line, the BMI2 score (rs__atof8_bmi2)
 * included; 4.14 -> 3.54 G for the whole run. */
typedef struct {
  const char *p;    /* in and out: the next line */
  const char *last; /* out: the last line taken, or NULL */
  size_t r;         /* in and out: the group's records */
  unsigned until;   /* in and out: parse_lines's prefetch countdown */
  int slow_score;   /* out: it stopped at a score that needs strtod */
} group_lines;

static inline __attribute__((always_inline)) void group_lines_body(const engine *e, group_lines *t,
                                                                   const char *const end, const qid_memo *qw,
                                                                   const run_lines *L, long guess, int avx2)
{
  const char *const buf_limit = e->buf_limit;
  const char *p = t->p, *last = NULL;
  size_t r = t->r;
  unsigned until = t->until;
  const size_t cap = L->cap, qid_len_want = qw->len;
  const uint64_t keep = qw->keep, head = qw->head;
  const char *const qid_want = qw->id;
  const char **const rec_doc = L->doc;
  uint32_t *const rec_doc_len = L->doc_len;
  double *const rec_score = L->score;
  while (r < cap && p + RS_LINE_WINDOW <= buf_limit) {
    const char *qid, *doc, *sc;
    size_t qid_len, doc_len, sc_len, n_line;
#ifdef RS_HAVE_AVX2_LINES
    if (avx2) n_line = rs__run_line_fields_avx2(p, &qid, &qid_len, &doc, &doc_len, &sc, &sc_len);
    else
#endif
      n_line = rs__run_line_fields(p, &qid, &qid_len, &doc, &doc_len, &sc, &sc_len);
    if (n_line == 0 || n_line > (size_t)(end - p) || qid_len != qid_len_want) break;
    /* same_qid without its window test: a fast line's qid is its first
     * field, with five more and a newline after it in the window, so the
     * 8 bytes at it are in the window too. */
    if (keep) {
      uint64_t x;
      memcpy(&x, qid, 8);
      if ((x & keep) != head) break;
    } else if (!rs__same_bytes(qid_want, qid, qid_len)) {
      break;
    }
    /* The score as parse_lines reads it, when no strtod is needed (both
     * readings give rs__atof_fast's double): scores longer than 8 bytes
     * ("25.859501") are common. */
    double score;
    int short_score = sc + 8 <= buf_limit;
#ifdef RS_HAVE_AVX2
    if (avx2) short_score = short_score && rs__atof8_bmi2(sc, sc_len, &score);
    else
#endif
      short_score = short_score && rs__atof8(sc, sc_len, &score);
    if (!short_score && !rs__atof_fast(sc, sc_len, &score)) {
      t->slow_score = 1;
      break;
    }
    if (until && (--until == 8 || until == 0)) prefetch_topic(e, (size_t)guess, until ? 1 : 2);
    rec_doc[r] = doc;
    rec_doc_len[r] = (uint32_t)doc_len;
    rec_score[r] = score;
    r++;
    last = p;
    p += n_line;
  }
  t->p = p, t->last = last, t->r = r, t->until = until;
}

__attribute__((noinline)) static void take_group_lines_base(const engine *e, group_lines *t, const char *end,
                                                           const qid_memo *qw, const run_lines *L, long guess)
{
  group_lines_body(e, t, end, qw, L, guess, 0);
}
#ifdef RS_HAVE_AVX2_LINES
RS_AVX2_TARGET __attribute__((noinline)) static void take_group_lines_avx2(const engine *e, group_lines *t,
                                                                          const char *end, const qid_memo *qw,
                                                                          const run_lines *L, long guess)
{
  group_lines_body(e, t, end, qw, L, guess, 1);
}
#endif

static inline __attribute__((always_inline)) void take_group_lines(const engine *e, group_lines *t, const char *end,
                                                                   const qid_memo *qw, const run_lines *L,
                                                                   long guess, int avx2)
{
#ifdef RS_HAVE_AVX2_LINES
  if (avx2) {
    take_group_lines_avx2(e, t, end, qw, L, guess);
    return;
  }
#endif
  (void)avx2;
  take_group_lines_base(e, t, end, qw, L, guess);
}

/* Parses "qid iter docno rank sim tag ..." lines of one slice.  Blank lines
 * and lines whose first non-blank character is '#' are skipped; a line with
 * fewer than six fields, or (strict reading) a score that is not a number,
 * stops the slice with an error.  Whole-run mode stores the records at
 * e->lines[rec0...]; streaming keeps one topic's records in the thread's
 * group and evaluates each topic when its lines end (flush_group): nothing
 * is stored per block, and a block costs one parallel region, not two. */
static inline __attribute__((always_inline)) void parse_lines(void *vctx, size_t i, int tid, int avx2)
{
  engine *e = vctx;
  slice *s = &e->slices[i];
  const rs__qrels *q = e->q;
  thread_state *ts = &e->ts[tid];
  const int streaming = e->streaming;
  run_lines *L = streaming ? &ts->group : &e->lines;
  const char *p = e->buf + s->begin, *const end = e->buf + s->end;
  size_t r = streaming ? 0 : s->rec0;
  int32_t group_topic = -1; /* streaming: the topic of L[0, r) */
  int ok = 1;
  qid_memo prev = {NULL, 0, 0, 0}; /* the line before's qid */
  int32_t prev_topic = -1;
  size_t n_newlines = 0;
  long guess = -1;    /* the topic whose lines likely come next (the qrels' file order) */
  unsigned until = 0; /* lines until the guess's last prefetch stage: 12 lines after it, 8, then 0 */
  /* The record arrays, held here: stores through them might otherwise
   * reload each pointer from L a line (they change only in grow_lines). */
  const char **rec_doc = L->doc;
  uint32_t *rec_doc_len = L->doc_len;
  double *rec_score = L->score;
  const char *last_fast = NULL; /* the last line read by the fast path, when it was the last line read */
  const char *const buf_limit = e->buf_limit;
  int slow_scores = 0; /* the loop of group_lines met a score that needs strtod */
  s->err_off = SIZE_MAX;
  s->tag = NULL;
  s->interleaved = s->nomem = 0;
  while (p < end) {
#ifdef RS_HAVE_LINE_TOKENS
    /* Streaming, inside a judged topic (r > 0: its lines so far are in
     * L): the lines that only add a record to it (group_lines).  A line
     * that loop turns down (another topic, no room, a score or a line it
     * does not read) is read below.  A slice whose scores need strtod
     * (20 digits: "-0.0015749443555250764") reads them all below, rather
     * than each line twice. */
    if (streaming && r > 0 && !slow_scores) {
      group_lines tl = {p, NULL, r, until, 0};
      take_group_lines(e, &tl, end, &prev, L, guess, avx2);
      n_newlines += tl.r - r;
      r = tl.r, p = tl.p, until = tl.until;
      if (tl.last) last_fast = tl.last;
      slow_scores = tl.slow_score;
      if (p >= end) break;
    }
#endif
    const char *line = p;
    const char *tok[6];
    size_t tl[6];
    const char *qid, *doc, *sc; /* fields 0, 2 and 4 */
    size_t qid_len, doc_len, sc_len;
    int fast = 0; /* read by the fast path, which does not look for the sixth field's end */
#ifdef RS_HAVE_LINE_TOKENS
    size_t n_line = 0;
    if (p + RS_LINE_WINDOW <= buf_limit) {
#ifdef RS_HAVE_AVX2_LINES
      if (avx2) n_line = rs__run_line_fields_avx2(p, &qid, &qid_len, &doc, &doc_len, &sc, &sc_len);
      else
#endif
        n_line = rs__run_line_fields(p, &qid, &qid_len, &doc, &doc_len, &sc, &sc_len);
    }
    if (n_line != 0 && n_line <= (size_t)(end - p)) {
      p += n_line; /* a data line that fits the window: the common case */
      n_newlines++;
      fast = 1;
      goto parsed;
    }
#endif
    while (p < end && *p != '\n' && is_space((unsigned char)*p)) p++;
    if (p == end) break;
    if (*p == '\n' || *p == '#') { /* blank or comment line */
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl + 1 : end;
      n_newlines += nl != NULL;
      continue;
    }
    int nt = 0;
    while (nt < 6) { /* blanks: one table load per byte (CH_*); tokens: 8 bytes a step */
      while (p < end && char_class[(unsigned char)*p] == CH_BLANK) p++;
      if (p == end || *p == '\n') break;
      tok[nt] = p;
      p = rs__token_end(p + 1, end);
      tl[nt] = (size_t)(p - tok[nt]);
      nt++;
    }
    if (nt < 6) {
      s->err_off = (size_t)(line - e->buf);
      s->err_fields = nt;
      ok = 0;
      break;
    }
    const char *nl = *p == '\n' ? p : memchr(p, '\n', (size_t)(end - p)); /* the rest is ignored */
    p = nl ? nl + 1 : end;
    n_newlines += nl != NULL;
    qid = tok[0], qid_len = tl[0], doc = tok[2], doc_len = tl[2], sc = tok[4], sc_len = tl[4];
#ifdef RS_HAVE_LINE_TOKENS
  parsed:;
#endif
    int32_t topic;
    if (same_qid(&prev, qid, qid_len, buf_limit)) {
      topic = prev_topic;
      if (until && (--until == 8 || until == 0)) prefetch_topic(e, (size_t)guess, until ? 1 : 2);
    } else {
      if (guess >= 0 && q->topic_len[guess] == qid_len && rs__same_bytes(q->topic_id[guess], qid, qid_len))
        topic = (int32_t)guess;
      else
        topic = (int32_t)rs__qrels_topic(q, qid, qid_len, rs__hash_bytes(qid, qid_len));
      memo_qid(&prev, qid, qid_len, buf_limit);
      prev_topic = topic;
      if (topic >= 0) { /* (after a topic the qrels do not judge, the guess stands) */
        const uint32_t next = q->next_in_file[topic];
        guess = next == UINT32_MAX ? -1 : (long)next;
        until = guess >= 0 ? 12 : 0;
        if (guess >= 0) prefetch_topic(e, (size_t)guess, 0);
      }
    }
    double score;
    if (sc + 8 <= buf_limit && rs__atof8(sc, sc_len, &score)) { /* the common score */
    } else if (e->numbers == RS_NUMBERS_STRICT) {
      if (!rs__strict_atof(sc, sc_len, &score)) {
        s->err_off = (size_t)(line - e->buf);
        s->err_fields = 0;
        s->score_off = (size_t)(sc - e->buf);
        s->score_len = sc_len;
        ok = 0;
        break;
      }
    } else {
      score = rs__atof(sc, sc_len);
    }
    /* The run tag is the last line's sixth field: looked for in a line the
     * fast path read only once the slice is read (below). */
    if (fast) {
      last_fast = line;
    } else {
      s->tag = tok[5], s->tag_len = tl[5];
      last_fast = NULL;
    }
    if (streaming) {
      if (r > 0 && topic != group_topic) {
        if (!(ok = flush_group(e, s, ts, group_topic, r))) break;
        r = 0;
      }
      group_topic = topic;
      if (topic < 0) continue; /* not judged: its records are not needed */
      if (r == L->cap) {
        if (!grow_lines(L, r + 1)) {
          s->nomem = 1;
          ok = 0;
          break;
        }
        rec_doc = L->doc, rec_doc_len = L->doc_len, rec_score = L->score;
      }
    } else {
      L->qid[r] = qid;
      L->topic[r] = topic;
    }
    rec_doc[r] = doc;
    rec_doc_len[r] = (uint32_t)doc_len;
    rec_score[r] = score;
    r++;
  }
#ifdef RS_HAVE_LINE_TOKENS
  if (last_fast) {
    const char *tok[6];
    size_t tl[6];
    rs__line_tokens(last_fast, 6, tok, tl); /* as it did before: six tokens */
    s->tag = tok[5], s->tag_len = tl[5];
  }
#endif
  if (streaming && ok && r > 0) flush_group(e, s, ts, group_topic, r);
  s->n_rec = streaming ? 0 : r - s->rec0;
  s->n_newlines = n_newlines;
  (void)avx2;
}

/* parse_lines with the baseline line scan, and (parse_slice_avx2)
 * compiled for AVX2 with its line scan; the engine takes the one the CPU
 * runs (line_parser). */
static void parse_slice(void *vctx, size_t i, int tid) { parse_lines(vctx, i, tid, 0); }
#ifdef RS_HAVE_AVX2_LINES
RS_AVX2_TARGET static void parse_slice_avx2(void *vctx, size_t i, int tid) { parse_lines(vctx, i, tid, 1); }
#endif

static rs__item_fn line_parser(const rs_te_config *cfg)
{
#ifdef RS_HAVE_AVX2_LINES
  if (!cfg->baseline_simd && rs__cpu_has_avx2()) return parse_slice_avx2;
#endif
  (void)cfg;
  return parse_slice;
}

/* --- ranking and evaluation of one topic ------------------------------ */

/* trec_eval's order: score descending, then docno descending (strcmp). */
static inline int rank_cmp(const run_lines *L, size_t x, size_t y)
{
  if (L->score[x] > L->score[y]) return -1;
  if (L->score[x] < L->score[y]) return 1;
  return rs__strncmp2(L->doc[y], L->doc_len[y], L->doc[x], L->doc_len[x]);
}

/* Stable bottom-up merge sort of record indices. */
static void sort_ranking(const run_lines *L, uint32_t *ord, uint32_t *tmp, size_t n)
{
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = rank_cmp(L, ord[i], ord[j]) <= 0 ? ord[i++] : ord[j++];
      while (i < mid) tmp[k++] = ord[i++];
      while (j < hi) tmp[k++] = ord[j++];
    }
    memcpy(ord, tmp, n * sizeof *ord);
  }
}

static int ensure_thread_state(thread_state *ts, const rs_plan *plan, size_t n, size_t max_levels, rs_error *err)
{
  if (n <= ts->cap && ts->has_ms) return 1;
  size_t cap = ts->cap ? ts->cap : 1024;
  while (cap < n) cap *= 2;
  size_t set_cap = 2;
  while (set_cap < 8 * cap) set_cap *= 2;
  uint32_t *order = rs__realloc(ts->order, rs__mul(cap, sizeof *order));
  if (order) ts->order = order;
  uint32_t *tmp = rs__realloc(ts->tmp, rs__mul(cap, sizeof *tmp));
  if (tmp) ts->tmp = tmp;
  uint64_t *hash = rs__realloc(ts->hash, rs__mul(cap, sizeof *hash));
  if (hash) ts->hash = hash;
  int32_t *rel = rs__realloc(ts->rel, rs__mul(cap, sizeof *rel));
  if (rel) ts->rel = rel;
  int32_t *judged = rs__realloc(ts->judged, rs__mul(cap, sizeof *judged));
  if (judged) ts->judged = judged;
  uint32_t *set = rs__realloc(ts->set, rs__mul(set_cap, sizeof *set));
  if (set) ts->set = set;
  if (!order || !tmp || !hash || !rel || !judged || !set) {
    rs__fail(err, RS_NOMEM, "out of memory for rankings of %zu docs", n);
    return 0;
  }
  ts->set_cap = set_cap;
  ts->cap = cap;
  if (ts->has_ms) rs_scratch_free(&ts->ms);
  ts->has_ms = 0;
  if (rs_scratch_init(&ts->ms, plan, cap, max_levels, err)) return 0;
  ts->has_ms = 1;
  return 1;
}

/* A docno of len bytes (not NUL-terminated: run and qrels docnos point into
 * their files) as a string for a message, cut to fit out[cap]. */
static void docno_for_message(char *out, size_t cap, const char *doc, size_t len)
{
  const size_t n = len < cap - 1 ? len : cap - 1;
  memcpy(out, doc, n);
  out[n] = '\0';
}

static void note_topic_error(thread_state *ts, int32_t topic, const char *doc, size_t len)
{
  if (ts->err_topic >= 0 && ts->err_topic <= topic) return;
  ts->err_topic = topic;
  docno_for_message(ts->err_doc, sizeof ts->err_doc, doc, len);
}

static rs_levels topic_levels(const rs__qrels *q, size_t t, thread_state *ts)
{
  return rs__levels_of(q->grade + q->first[t], q->count[t], ts->lv_grade, ts->lv_count);
}

/* Evaluates a ranking already turned into relevance values, with
 * judged[0, n_judged) the ranks of its judged docs. */
static void finish_topic(engine *e, thread_state *ts, size_t t, int32_t *rel, size_t n, const int32_t *judged,
                         size_t n_judged)
{
  const rs_plan *plan = &e->cfg->plan;
  if (plan->judged_only) { /* -J: drop unjudged docs, close up the ranks (the judged list no longer holds) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      rel[k] = rel[i];
      k += rel[i] >= 0;
    }
    n = k;
    judged = NULL, n_judged = 0;
  }
  rs_levels lv = topic_levels(e->q, t, ts);
  rs_te_result *res = e->res;
  rs__eval_topic_judged(plan, rel, n, judged, n_judged, &lv, &ts->ms, res->values + t * res->n_values,
                        res->relstrings ? res->relstrings + t * res->relstring_stride : NULL);
}

/* The hash of a docno in a topic's set of ranked docs (eval_ranking): one
 * of 8 to 16 bytes (nearly all are) as its first and last 8 bytes
 * multiplied into 128 bits, whose halves are folded; others by
 * rs__hash_bytes.  It only spreads one topic's docs over a set 8 times
 * their number, where a collision costs a compare, not a wrong answer;
 * rs__hash_bytes's word loop and tail took 38 instructions a doc, hashed
 * once a ranked doc and once a judgment (100k x 100: 10.5M times). */
static inline uint64_t ranked_hash(const char *d, size_t len)
{
#if defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (len - 8 <= 8) {
    uint64_t a, b;
    memcpy(&a, d, 8);
    memcpy(&b, d + len - 8, 8);
    __extension__ typedef unsigned __int128 u128; /* (GCC and Clang on 64-bit targets) */
    const u128 m = (u128)(a ^ 0x9e3779b97f4a7c15ull) * (b ^ 0xd6e8feb86659fd93ull ^ len);
    return (uint64_t)m ^ (uint64_t)(m >> 64);
  }
#endif
  return rs__hash_bytes(d, len);
}

/* The slot of ts->set (set_n slots) holding the ranked doc d of len bytes
 * and hash h, else the empty slot where it would go.  The set holds
 * 1 + the rank of each doc put in, whose hash is in ts->hash. */
static size_t ranked_slot(const thread_state *ts, const run_lines *L, const uint32_t *ord, size_t set_n, uint64_t h,
                          const char *d, size_t len)
{
  size_t s = (size_t)h & (set_n - 1);
  for (; ts->set[s]; s = (s + 1) & (set_n - 1)) {
    const size_t i = ts->set[s] - 1, r = ord[i];
    if (ts->hash[i] == h && L->doc_len[r] == len && rs__same_bytes(L->doc[r], d, len)) break;
  }
  return s;
}

/* The rank (from 0) at which judgment j's doc is in the ranking whose
 * docs fill ts->set, or -1 when it is not ranked. */
static inline long judged_rank(const thread_state *ts, const run_lines *L, const uint32_t *ord, size_t set_n,
                               const rs__qrels *q, size_t j)
{
  return (long)ts->set[ranked_slot(ts, L, ord, set_n, ranked_hash(q->doc[j], q->doc_len[j]), q->doc[j],
                                   q->doc_len[j])] - 1;
}

/* Ranks, checks and evaluates topic t's records V[0, n) (all its lines). */
static void eval_ranking(engine *e, thread_state *ts, size_t t, const run_lines *V, size_t n)
{
  const run_lines *L = V;
  const rs__qrels *q = e->q;
  uint32_t *ord = ts->order;

  int sorted = 1; /* (checked on the records, not through ord: one load a doc) */
  for (size_t i = 1; i < n && sorted; i++) sorted = rank_cmp(L, i - 1, i) <= 0;
  for (size_t i = 0; i < n; i++) ord[i] = (uint32_t)i;
  if (!sorted) sort_ranking(L, ord, ts->tmp, n);
  const size_t m = (long)n > e->cfg->plan.max_docs ? (size_t)e->cfg->plan.max_docs : n;

  /* Duplicate docnos among the kept docs are an error, as in trec_eval.
   * The set is at most 1/8 full: whether a slot is taken is a branch the
   * predictor cannot guess, and at 1/2 full it was taken often. */
  size_t set_n = 2;
  while (set_n < 8 * m) set_n *= 2;
  memset(ts->set, 0, set_n * sizeof *ts->set);
  const char *dup = NULL;
  size_t dup_len = 0;
  for (size_t i = 0; i < m; i++) {
    size_t r = ord[i];
    uint64_t h = ranked_hash(L->doc[r], L->doc_len[r]);
    ts->hash[i] = h;
    const size_t s = ranked_slot(ts, L, ord, set_n, h, L->doc[r], L->doc_len[r]);
    if (!ts->set[s]) {
      ts->set[s] = (uint32_t)(i + 1);
    } else if (!dup || rs__strncmp2(L->doc[r], L->doc_len[r], dup, dup_len) < 0) {
      /* report the smallest duplicated docno, as trec_eval's sort does */
      dup = L->doc[r];
      dup_len = L->doc_len[r];
    }
  }
  if (dup) {
    note_topic_error(ts, (int32_t)t, dup, dup_len);
    return;
  }
  if (q->dup[t] != SIZE_MAX) {
    note_topic_error(ts, (int32_t)t, q->doc[q->dup[t]], q->doc_len[q->dup[t]]);
    return;
  }
  if (e->visit) { /* the join below, as places among the topic's judgments */
    int32_t *place = ts->rel;
    for (size_t i = 0; i < m; i++) place[i] = -1;
    for (size_t j = q->first[t], end = j + q->count[t]; j < end; j++) {
      const long r = judged_rank(ts, L, ord, set_n, q, j);
      if (r >= 0) place[r] = (int32_t)(j - q->first[t]);
    }
    e->visit(e->visit_ctx, (int)(ts - e->ts), t, L->doc, L->doc_len, L->score, ord, place, m);
    return;
  }
  /* The join runs from the judgments into the set of ranked docs built
   * above: a topic has a handful of judgments against a hundred or more
   * ranked docs, and a lookup per ranked doc in the qrels was a branch the
   * predictor missed on one doc in ten or so (1M x 100: 0.48 s). */
  int32_t *rel = ts->rel, *judged = ts->judged;
  for (size_t i = 0; i < m; i++) rel[i] = RS_REL_UNPOOLED;
  /* The ranks of the judged docs come from the join, put in order by
   * insertion (no docno is judged twice here: q->dup), where a pass over
   * the ranking for them cost 8 instructions a ranked doc; a topic with
   * more than JUDGED_SORT_MAX of them ranked takes that pass. */
  enum { JUDGED_SORT_MAX = 32 };
  size_t n_judged = 0;
  for (size_t j = q->first[t], end = j + q->count[t]; j < end; j++) {
    const long r = judged_rank(ts, L, ord, set_n, q, j);
    if (r < 0) continue;
    rel[r] = q->grade[j] < 0 ? RS_REL_UNJUDGED : q->grade[j];
    if (q->grade[j] < 0) continue;
    if (n_judged < JUDGED_SORT_MAX) {
      size_t k = n_judged;
      for (; k > 0 && judged[k - 1] > r; k--) judged[k] = judged[k - 1];
      judged[k] = (int32_t)r;
    }
    n_judged++;
  }
  if (n_judged > JUDGED_SORT_MAX) {
    n_judged = 0;
    for (size_t i = 0; i < m; i++) {
      judged[n_judged] = (int32_t)i;
      n_judged += rel[i] >= 0;
    }
  }
  finish_topic(e, ts, t, rel, m, judged, n_judged);
}

/* Whole-run mode: group gi is a topic's records e->lines[a, b). */
static void eval_group(void *vctx, size_t gi, int tid)
{
  engine *e = vctx;
  const group *g = &e->groups[gi];
  const run_lines *L = &e->lines;
  const run_lines V = {.doc = L->doc + g->a, .doc_len = L->doc_len + g->a, .score = L->score + g->a};
  eval_ranking(e, &e->ts[tid], (size_t)g->topic, &V, g->b - g->a);
}

/* --- blocks ------------------------------------------------------------ */

/* The first token of the line starting at p (before end): *n is its
 * length; 0 for a blank or comment line, which belongs to no topic. */
static const char *line_qid(const char *p, const char *end, size_t *n)
{
  while (p < end && *p != '\n' && is_space((unsigned char)*p)) p++;
  const char *t = p;
  while (p < end && !is_space((unsigned char)*p)) p++;
  *n = t < end && *t == '#' ? 0 : (size_t)(p - t);
  return t;
}

/* The start of the first line at or after pos (a line start) whose topic
 * differs from that of the last data line before pos, or len: cutting
 * there, no topic's lines are split between two slices. */
static size_t topic_cut(const char *buf, size_t len, size_t pos)
{
  const char *const end = buf + len;
  const char *prev = NULL;
  size_t prev_n = 0;
  for (size_t at = pos; at > 0 && !prev_n;) { /* the last data line before pos */
    size_t a = at - 1;
    while (a > 0 && buf[a - 1] != '\n') a--;
    prev = line_qid(buf + a, end, &prev_n);
    at = a;
  }
  if (!prev_n) return pos;
  const char *p = buf + pos;
  while (p < end) {
    size_t n;
    const char *q = line_qid(p, end, &n);
    if (n && (n != prev_n || memcmp(q, prev, n) != 0)) break;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  return (size_t)(p - buf);
}

/* Parses buf[0, len) (complete lines only) on all threads.  compact
 * (whole-run mode): the records end up in e->lines[0, n).  Else
 * (streaming) buf[0, len) holds whole topics, the slices are cut between
 * topics (topic_cut), and each topic is evaluated as its slice reads it;
 * RS_UNSUPPORTED (no message) when a topic turns up a second time. */
static rs_code parse_region(engine *e, size_t len, size_t base_line, const char *name, int compact,
                            void (*side)(void *), void *side_ctx, rs_error *err)
{
  size_t ns = (size_t)e->threads * SLICES_PER_THREAD;
  if (len < ((size_t)1 << 16)) ns = 1;
  size_t pos = 0, k = 0;
  for (; k < ns && pos < len; k++) {
    size_t end = k + 1 == ns ? len : (len / ns) * (k + 1);
    if (end < pos) end = pos;
    const char *nl = end < len ? memchr(e->buf + end, '\n', len - end) : NULL;
    end = nl ? (size_t)(nl - e->buf) + 1 : len;
    if (!compact && end < len) end = topic_cut(e->buf, len, end);
    e->slices[k] = (slice){.begin = pos, .end = end};
    pos = end;
  }
  e->n_slices = k;
  e->streaming = !compact;
  if (compact) {
    /* A data line has at least 6 fields, so at least 12 bytes: reserve that
     * many records per slice (untouched pages cost no memory). */
    size_t total = 0;
    for (size_t i = 0; i < k; i++) {
      e->slices[i].rec0 = total;
      total += (e->slices[i].end - e->slices[i].begin) / 12 + 1;
    }
    if (!grow_lines(&e->lines, total)) return rs__fail(err, RS_NOMEM, "%s: out of memory for %zu lines", name, total);
  }
  if (side) rs__parallel_for_beside(k, e->threads, 1, e->parse, e, side, side_ctx, NULL);
  else rs__parallel_for(k, e->threads, 1, e->parse, e);
  /* A slice that stopped here did not read on, so these come before its
   * format errors: the whole-run reading finds those in line order. */
  for (size_t i = 0; i < k; i++)
    if (e->slices[i].nomem) return rs__fail(err, RS_NOMEM, "%s: out of memory for a ranking", name);
  for (size_t i = 0; i < k; i++)
    if (e->slices[i].interleaved) return RS_UNSUPPORTED;

  size_t line = base_line;
  for (size_t i = 0; i < k; i++) {
    const slice *s = &e->slices[i];
    if (s->err_off != SIZE_MAX) {
      const char *eol = memchr(e->buf + s->err_off, '\n', s->end - s->err_off);
      /* earlier slices ended cleanly, so line counts their newlines */
      for (const char *c = e->buf + s->begin; c < e->buf + s->err_off; c++) line += *c == '\n';
      int shown = (int)((eol ? eol : e->buf + s->end) - (e->buf + s->err_off));
      if (s->err_fields == 0) {
        const int tok_shown = s->score_len > 40 ? 40 : (int)s->score_len;
        return rs__fail(err, RS_FORMAT,
                        "%s:%zu: expected a number score, found '%.*s'%s; fix the line (trec_eval reads it as "
                        "%g, and only 'ragsweep trec_eval' keeps that rule)",
                        name, line + 1, tok_shown, e->buf + s->score_off, (size_t)tok_shown < s->score_len ? "..." : "",
                        rs__atof(e->buf + s->score_off, s->score_len));
      }
      return rs__fail(err, RS_FORMAT,
                      "%s:%zu: malformed run line: expected at least 6 fields "
                      "'qid iter docno rank score tag', found %d: \"%.*s\"",
                      name, line + 1, s->err_fields, shown > 80 ? 80 : shown, e->buf + s->err_off);
    }
    line += s->n_newlines;
  }
  run_lines *L = &e->lines;
  if (!compact) return RS_OK;
  /* Close the gaps left by blank and comment lines. */
  size_t w = 0;
  for (size_t i = 0; i < k; i++) {
    const slice *s = &e->slices[i];
    if (w != s->rec0) {
      memmove(L->qid + w, L->qid + s->rec0, s->n_rec * sizeof *L->qid);
      memmove(L->doc + w, L->doc + s->rec0, s->n_rec * sizeof *L->doc);
      memmove(L->doc_len + w, L->doc_len + s->rec0, s->n_rec * sizeof *L->doc_len);
      memmove(L->topic + w, L->topic + s->rec0, s->n_rec * sizeof *L->topic);
      memmove(L->score + w, L->score + s->rec0, s->n_rec * sizeof *L->score);
    }
    w += s->n_rec;
  }
  L->n = w;
  return RS_OK;
}

static int push_group(engine *e, size_t a, size_t b, int32_t topic)
{
  if (e->n_groups == e->cap_groups) {
    size_t cap = e->cap_groups ? e->cap_groups * 2 : 4096;
    group *g = rs__realloc(e->groups, rs__mul(cap, sizeof *g));
    if (!g) return 0;
    e->groups = g;
    e->cap_groups = cap;
  }
  e->groups[e->n_groups++] = (group){a, b, topic};
  return 1;
}

static rs_code run_groups(engine *e, rs_error *err)
{
  size_t max_n = 1;
  for (size_t i = 0; i < e->n_groups; i++)
    if (e->groups[i].b - e->groups[i].a > max_n) max_n = e->groups[i].b - e->groups[i].a;
  for (int t = 0; t < e->threads; t++)
    if (!ensure_thread_state(&e->ts[t], &e->cfg->plan, max_n, e->max_levels, err)) return err ? err->code : RS_NOMEM;
  rs__parallel_for(e->n_groups, e->threads, 8, eval_group, e);
  return RS_OK;
}

static void save_tag(engine *e, char **tag)
{
  for (size_t i = e->n_slices; i-- > 0;) {
    const slice *s = &e->slices[i];
    if (s->tag) {
      char *t = rs__malloc(s->tag_len + 1);
      if (!t) return;
      memcpy(t, s->tag, s->tag_len);
      t[s->tag_len] = '\0';
      free(*tag);
      *tag = t;
      return;
    }
  }
}

/* Whole-run mode, for runs whose topics are interleaved (and stdin): all
 * lines in memory, grouped by topic with a stable sort. */
static rs_code evaluate_whole(engine *e, const char *path, const char *name, char **tag, rs_error *err)
{
  size_t len = 0;
  free(e->whole);
  e->buf = e->whole = NULL;
  rs_code rc = rs__read_all(path, &e->whole, &len, err);
  if (rc) return rc;
  e->buf = e->whole;
  if (len == 0) return rs__fail(err, RS_FORMAT, "%s: the run file is empty", name);
  e->buf_limit = e->buf + len + 1; /* rs__read_all's NUL */
  if ((rc = parse_region(e, len, 0, name, 1, NULL, NULL, err))) return rc;
  save_tag(e, tag);
  run_lines *L = &e->lines;
  e->n_groups = 0;
  /* Each maximal run of one topic becomes a group; then groups of a topic
   * are merged by sorting the records by (topic, position). */
  size_t *count = rs__calloc(e->q->n_topics + 1, sizeof *count);
  uint32_t *perm = rs__malloc(rs__mul(L->n, sizeof *perm));
  if (!count || !perm) {
    free(count);
    free(perm);
    return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
  }
  size_t judged = 0;
  for (size_t i = 0; i < L->n; i++)
    if (L->topic[i] >= 0) count[L->topic[i] + 1]++, judged++;
  for (size_t t = 0; t < e->q->n_topics; t++) count[t + 1] += count[t];
  for (size_t i = 0; i < L->n; i++)
    if (L->topic[i] >= 0) perm[count[L->topic[i]]++] = (uint32_t)i;
  /* permute the records in place through a copy of the judged ones */
  run_lines S = {0};
  if (!grow_lines(&S, judged)) {
    free(count);
    free(perm);
    return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
  }
  for (size_t k = 0; k < judged; k++) {
    size_t i = perm[k];
    S.qid[k] = L->qid[i];
    S.doc[k] = L->doc[i];
    S.doc_len[k] = L->doc_len[i];
    S.topic[k] = L->topic[i];
    S.score[k] = L->score[i];
  }
  S.n = judged;
  free(count);
  free(perm);
  free_lines(L);
  *L = S;
  for (size_t a = 0; a < L->n;) {
    size_t b = a + 1;
    while (b < L->n && L->topic[b] == L->topic[a]) b++;
    if (!push_group(e, a, b, L->topic[a])) return rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    e->res->present[L->topic[a]] = 1;
    a = b;
  }
  return run_groups(e, err);
}

/* Reading a plain file: each thread preads its share of a block, so that
 * no thread waits while one copies. */
typedef struct {
  const rs__input *in;
  char *buf;
  unsigned long long off; /* file offset of buf[0] */
  size_t len, piece;
  size_t *got;       /* [pieces] */
  rs_code *rc;       /* [pieces] */
  rs_error *errs;    /* [pieces] */
} fill_job;

static void fill_piece(void *vctx, size_t i, int tid)
{
  (void)tid;
  fill_job *j = vctx;
  const size_t a = i * j->piece, n = j->len - a < j->piece ? j->len - a : j->piece;
  j->rc[i] = rs__input_pread(j->in, j->buf + a, n, j->off + a, &j->got[i], &j->errs[i]);
}

enum { FILL_PIECES_MAX = 64, FILL_PIECE_MIN = 1 << 18 };

/* Fills buf[0, want) from file offset off on all threads; *got < want
 * only at the end of the file. */
static rs_code fill_parallel(engine *e, const rs__input *in, char *buf, size_t want, unsigned long long off,
                             size_t *got, rs_error *err)
{
  size_t pieces = (size_t)e->threads * 2, gots[FILL_PIECES_MAX];
  rs_code rcs[FILL_PIECES_MAX];
  rs_error errs[FILL_PIECES_MAX];
  if (pieces > FILL_PIECES_MAX) pieces = FILL_PIECES_MAX;
  size_t piece = (want + pieces - 1) / pieces;
  if (piece < FILL_PIECE_MIN) piece = FILL_PIECE_MIN;
  pieces = want ? (want + piece - 1) / piece : 0;
  fill_job j = {.in = in, .buf = buf, .off = off, .len = want, .piece = piece, .got = gots, .rc = rcs, .errs = errs};
  rs__parallel_for(pieces, e->threads, 1, fill_piece, &j);
  size_t n = 0;
  for (size_t i = 0; i < pieces; i++) {
    if (rcs[i]) {
      if (err) *err = errs[i];
      return rcs[i];
    }
    n += gots[i];
    if (gots[i] < (want - i * piece < piece ? want - i * piece : piece)) break; /* the file ended (or shrank) here */
  }
  *got = n;
  return RS_OK;
}

/* The start of the last topic's lines in buf[0, end) (end a line start):
 * the first line of the final run of data lines with one qid (blank and
 * comment lines among or after them go with them); end when there is no
 * data line. */
static size_t last_topic_start(const char *buf, size_t end)
{
  const char *last = NULL;
  size_t last_n = 0, start = end;
  for (size_t at = end; at > 0;) {
    size_t a = at - 1;
    while (a > 0 && buf[a - 1] != '\n') a--;
    size_t n;
    const char *qid = line_qid(buf + a, buf + end, &n);
    if (n) {
      if (!last) last = qid, last_n = n;
      else if (n != last_n || memcmp(qid, last, n) != 0) break;
      start = a;
    }
    at = a;
  }
  return start;
}

/* The next block, read by one thread while the others parse this one
 * (rs__parallel_for_beside): the held-back lines of this block, then new
 * bytes up to cap.  At 2 threads the read no longer has a parallel region
 * (and its barrier) of its own. */
typedef struct {
  rs__input *in;
  long long plain;              /* rs__input_plain_size */
  unsigned long long file_off; /* plain files: where the read starts */
  const char *tail;             /* held-back lines */
  size_t tail_len;
  char *dst; /* the other buffer, cap bytes (and RS_LINE_WINDOW more) */
  size_t cap;
  size_t got; /* new bytes read */
  int eof;
  rs_code rc;
  rs_error err;
} read_ahead;

static void read_next_block(void *vctx)
{
  read_ahead *r = vctx;
  memcpy(r->dst, r->tail, r->tail_len);
  size_t want = r->cap - r->tail_len, got = 0;
  r->rc = RS_OK;
  r->eof = 0;
  if (r->plain >= 0) {
    const unsigned long long left =
        (unsigned long long)r->plain > r->file_off ? (unsigned long long)r->plain - r->file_off : 0;
    if (left < want) want = (size_t)left;
    r->rc = rs__input_pread(r->in, r->dst + r->tail_len, want, r->file_off, &got, &r->err);
    if (got < want || r->file_off + got >= (unsigned long long)r->plain) r->eof = 1;
  } else {
    while (!r->rc && got < want) { /* gzip and pipes hand out what they have */
      size_t n = 0;
      r->rc = rs__input_read(r->in, r->dst + r->tail_len + got, want - got, &n, &r->err);
      if (n == 0) {
        r->eof = 1;
        break;
      }
      got += n;
    }
  }
  r->got = got;
}

/* Where a block of len bytes (buf at a line start) is cut: after its
 * complete lines, less those of its last topic, which may go on in the next
 * block and are held back to be read with it; all of it at the input's
 * end.  0 before the end when one line or one topic fills the block. */
static size_t block_cut(const char *buf, size_t len, int eof)
{
  if (eof) return len;
  size_t end = len;
  while (end > 0 && buf[end - 1] != '\n') end--;
  return last_topic_start(buf, end);
}

/* After a block's parse: the run tag so far, and the lines it held. */
static void block_done(engine *e, char **tag, size_t *base_line)
{
  save_tag(e, tag);
  for (size_t k = 0; k < e->n_slices; k++) *base_line += e->slices[k].n_newlines;
}

/* Streaming a mapped file: the blocks are windows on the mapping, so no
 * byte is copied, and all threads parse (1M x 100, 3.9 GB from the page
 * cache, one thread: a newline count over 8 MB windows of the mapping took
 * 0.61 s, over 8 MB blocks read with pread 1.16 s).  Pages wholly before
 * a block are handed back by one thread as the block's parse starts
 * (release_beside): handing back 32 MiB of mapping (page tables, and on
 * two threads a TLB flush of the other) was a serial step between blocks
 * while the other thread spun.  1M x 100 at two threads, 9 runs each in
 * turn: 1907 -> 1880 ms, median 2270 -> 2016; peak RSS +5 MB. */
typedef struct {
  rs__mapped *m;
  size_t upto;
} release_job;

static void release_beside(void *ctx)
{
  release_job *job = ctx;
  rs__mapped_release(job->m, job->upto);
}

static rs_code evaluate_mapped(engine *e, rs__mapped *m, const char *name, char **tag, rs_error *err)
{
  size_t cap = e->cfg->block_bytes ? e->cfg->block_bytes : MAPPED_BLOCK - RS_LINE_WINDOW, start = 0, base_line = 0;
  if (m->len == 0) return rs__fail(err, RS_FORMAT, "%s: the run file is empty", name);
  e->buf_limit = m->data + m->len + RS_LINE_WINDOW;
  while (start < m->len) {
    const int eof = m->len - start <= cap;
    const size_t len = eof ? m->len - start : cap;
    e->buf = m->data + start;
    const size_t keep_from = block_cut(e->buf, len, eof);
    if (keep_from == 0 && !eof) { /* one line or one topic fills the window: widen it */
      if (cap > SIZE_MAX / 4) return rs__fail(err, RS_NOMEM, "%s: a topic too large to read", name);
      cap *= 2;
      continue;
    }
    release_job job = {m, start}; /* the blocks before this one: nothing reads them again */
    rs_code rc = parse_region(e, keep_from, base_line, name, 0, release_beside, &job, err);
    if (rc) return rc;
    block_done(e, tag, &base_line);
    start += keep_from;
  }
  return RS_OK;
}

/* Streaming mode: blocks of complete lines, each topic evaluated as soon
 * as its lines are read.  Returns RS_UNSUPPORTED (with no message) when a
 * topic turns up again after its lines ended. */
static rs_code evaluate_stream(engine *e, const char *path, const char *name, char **tag, rs_error *err)
{
  rs__input *in = NULL;
  rs_code rc = rs__input_open(path, &in, err);
  if (rc) return rc;
  if (e->cfg->map_run) { /* (see rs_te_config.map_run) */
    rs__mapped m;
    if (rs__input_map(in, RS_LINE_WINDOW, &m, NULL) == RS_OK) {
      rs__input_close(in);
      rc = evaluate_mapped(e, &m, name, tag, err);
      e->buf = NULL;
      rs__mapped_close(&m);
      return rc;
    }
  }
  /* cap + RS_LINE_WINDOW bytes fill whole huge pages (rs__malloc) */
  size_t cap = e->cfg->block_bytes ? e->cfg->block_bytes : DEFAULT_BLOCK - RS_LINE_WINDOW, len = 0, base_line = 0;
  int eof = 0, any = 0;
  const long long plain = rs__input_plain_size(in);
  unsigned long long file_off = 0; /* plain files: where the next read starts */
  char *cur = NULL;                /* the block being parsed */
  char *spare = NULL;              /* the buffer the next block is read into */
  if (!(cur = rs__malloc(cap + RS_LINE_WINDOW)) || !(spare = rs__malloc(cap + RS_LINE_WINDOW))) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    goto done;
  }
  while (!eof || len > 0) {
    if (!eof && len < cap) { /* the first block, or a buffer just grown */
      size_t got = 0;
      if (plain >= 0) {
        const unsigned long long left = (unsigned long long)plain > file_off ? (unsigned long long)plain - file_off : 0;
        const size_t want = left < cap - len ? (size_t)left : cap - len;
        if ((rc = fill_parallel(e, in, cur + len, want, file_off, &got, err))) goto done;
        file_off += got;
        if (got < want || file_off >= (unsigned long long)plain) eof = 1;
      } else {
        if ((rc = rs__input_read(in, cur + len, cap - len, &got, err))) goto done;
        if (got == 0) eof = 1;
      }
      any |= got > 0;
      len += got;
      if (!eof && len < cap) continue;
    }
    const size_t keep_from = block_cut(cur, len, eof);
    if (keep_from == 0 && !eof) { /* one line or one topic fills the buffer: grow both */
      char *nb = rs__malloc(rs__mul(cap, 2) + RS_LINE_WINDOW);
      char *ns = nb ? rs__malloc(rs__mul(cap, 2) + RS_LINE_WINDOW) : NULL;
      if (!nb || !ns) {
        free(nb);
        rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
        goto done;
      }
      memcpy(nb, cur, len);
      free(cur);
      free(spare);
      cur = nb;
      spare = ns;
      cap *= 2;
      continue;
    }
    memset(cur + len, 0, RS_LINE_WINDOW); /* the line scan reads defined bytes */
    e->buf = cur;
    e->buf_limit = cur + len + RS_LINE_WINDOW;
    read_ahead ra = {.in = in, .plain = plain, .file_off = file_off, .tail = cur + keep_from,
                     .tail_len = len - keep_from, .dst = spare, .cap = cap};
    if ((rc = parse_region(e, keep_from, base_line, name, 0, eof ? NULL : read_next_block, &ra, err))) goto done;
    block_done(e, tag, &base_line);
    if (eof) break;
    if (ra.rc) { /* after this block's own errors, which come first in the file */
      rc = ra.rc;
      if (err) *err = ra.err;
      goto done;
    }
    char *t = cur;
    cur = spare;
    spare = t;
    len = ra.tail_len + ra.got;
    file_off += ra.got;
    eof = ra.eof;
    any |= ra.got > 0;
  }
  if (!any) rc = rs__fail(err, RS_FORMAT, "%s: the run file is empty", name);
done:
  e->buf = NULL;
  free(cur);
  free(spare);
  rs__input_close(in);
  return rc;
}

/* --- the whole evaluation ---------------------------------------------- */

static void topic_failed(rs_te_result *res, size_t t, rs_code code, const char *fmt_doc)
{
  if (t >= res->n_ok) return;
  res->n_ok = t;
  if (code == RS_MISSING)
    rs__fail(&res->topic_err, code,
             "topic '%s' is judged in the qrels but has no ranking in the run "
             "(trec_eval 10.0 stops here too; use -c to score it 0)",
             res->qrels->topic_id[t]);
  else
    rs__fail(&res->topic_err, code, "topic '%s': duplicate docs %s", res->qrels->topic_id[t], fmt_doc);
}

/* Gain-table rows a topic may need: its levels 0 .. highest grade, capped
 * (a topic with grades in the millions still evaluates; see gain.c). */
static size_t max_levels_of(const rs__qrels *q)
{
  size_t range = q->max_grade >= 0 ? (size_t)q->max_grade + 1 : 1, distinct = q->max_count > 1 ? q->max_count : 1;
  if (range > ((size_t)1 << 16)) range = (size_t)1 << 16;
  return range > distinct ? range : distinct;
}

/* qrels: read from qrels_path, unless given (then qrels_path is unused). */
static rs_code evaluate(const rs_te_config *cfg, rs__numbers numbers, const char *qrels_path, const rs__qrels *given,
                        const char *run_path, rs__ranking_fn visit, void *visit_ctx, rs_te_result **out, rs_error *err)
{
  rs_code rc = RS_OK;
  const rs_plan *plan = &cfg->plan;
  engine e = {.cfg = cfg, .threads = rs__threads(cfg->threads), .visit = visit, .visit_ctx = visit_ctx,
              .numbers = numbers, .parse = line_parser(cfg)};
  rs_te_result *res = rs__calloc(1, sizeof *res);
  char *tag = NULL;
  const char *run_name = strcmp(run_path, "-") == 0 ? "<stdin>" : run_path;
  if (!res) return rs__fail(err, RS_NOMEM, "out of memory");
  if (!given && (rc = rs__qrels_read(qrels_path, numbers, e.threads, &res->own_qrels, err))) goto done;
  const rs__qrels *q = e.q = res->qrels = given ? given : res->own_qrels;
  e.res = res;
  e.max_levels = max_levels_of(q);
  res->n_topics = q->n_topics;
  res->n_values = plan->n_values;
  res->n_ok = q->n_topics;
  res->values = rs__calloc(rs__mul(q->n_topics, plan->n_values), sizeof *res->values);
  res->present = rs__calloc(q->n_topics, 1);
  res->summary = rs__calloc(plan->n_values, sizeof *res->summary);
  if (plan->relstring_len || plan->chosen[RS_M_RELSTRING]) {
    res->relstring_stride = plan->relstring_len + 1;
    res->relstrings = rs__calloc(q->n_topics, res->relstring_stride);
  }
  e.ts = rs__calloc((size_t)e.threads, sizeof *e.ts);
  e.slices = rs__calloc((size_t)e.threads * SLICES_PER_THREAD, sizeof *e.slices);
  if (!res->values || !res->present || !res->summary || !e.ts || !e.slices ||
      (res->relstring_stride && !res->relstrings)) {
    rc = rs__fail(err, RS_NOMEM, "out of memory for %zu topics", q->n_topics);
    goto done;
  }
  for (int t = 0; t < e.threads; t++) {
    e.ts[t].err_topic = -1;
    e.ts[t].lv_grade = rs__malloc(rs__mul(q->max_count ? q->max_count : 1, sizeof *e.ts[t].lv_grade));
    e.ts[t].lv_count = rs__malloc(rs__mul(q->max_count ? q->max_count : 1, sizeof *e.ts[t].lv_count));
    if (!e.ts[t].lv_grade || !e.ts[t].lv_count) {
      rc = rs__fail(err, RS_NOMEM, "out of memory for topics of %zu judgments", q->max_count);
      goto done;
    }
  }

  rc = strcmp(run_path, "-") == 0 ? RS_UNSUPPORTED : evaluate_stream(&e, run_path, run_name, &tag, err);
  if (rc == RS_UNSUPPORTED) { /* stdin, or topics interleaved: read it whole */
    memset(res->present, 0, q->n_topics);
    for (int t = 0; t < e.threads; t++) e.ts[t].err_topic = -1;
    rc = evaluate_whole(&e, run_path, run_name, &tag, err);
  }
  if (rc) goto done;

  for (int t = 0; t < e.threads; t++)
    if (e.ts[t].err_topic >= 0) topic_failed(res, (size_t)e.ts[t].err_topic, RS_DUPLICATE, e.ts[t].err_doc);

  /* Topics judged but not ranked. */
  for (size_t t = 0; t < q->n_topics && t < res->n_ok; t++) {
    if (res->present[t]) continue;
    if (!cfg->complete) {
      topic_failed(res, t, RS_MISSING, NULL);
      break;
    }
    /* 10.0 ranks one unpooled dummy doc (see rs_eval_topic_missing). */
    if (q->dup[t] != SIZE_MAX) {
      char doc[sizeof e.ts[0].err_doc];
      docno_for_message(doc, sizeof doc, q->doc[q->dup[t]], q->doc_len[q->dup[t]]);
      topic_failed(res, t, RS_DUPLICATE, doc);
      break;
    }
    if (!ensure_thread_state(&e.ts[0], plan, 1, e.max_levels, err)) { rc = err ? err->code : RS_NOMEM; goto done; }
    rs_levels lv = topic_levels(q, t, &e.ts[0]);
    rs_eval_topic_missing(plan, &lv, &e.ts[0].ms, res->values + t * res->n_values,
                          res->relstrings ? res->relstrings + t * res->relstring_stride : NULL);
  }

  /* Summary: per value, a sequential sum over topics in qrels order, then
   * one division.  The rows are read once, in memory order (res->summary
   * starts at zero): a pass per value read one value of each row, a cache
   * line for 8 bytes, and at 1M topics the rows (8 values, 64 MB) came from
   * memory once per value.  Each value's additions are the same, in the
   * same order. */
  const size_t nt = q->n_topics, nv = plan->n_values;
  double *sums = res->summary; /* (not restrict: the switch below writes res->summary) */
  for (size_t t = 0; t < nt; t++) {
    const double *restrict row = res->values + t * nv;
    for (size_t v = 0; v < nv; v++) sums[v] += row[v];
  }
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    for (size_t k = 0; k < m->n_values; k++) {
      size_t v = m->slot + k;
      const double sum = sums[v];
      switch (rs_measure_summary(m->id)) {
      case RS_SUM_MEAN: res->summary[v] = nt ? sum / (double)nt : sum; break;
      case RS_SUM_TOTAL:
        res->summary[v] = m->id == RS_M_NUM_REL && cfg->complete ? (double)q->n_positive_lines : sum;
        break;
      case RS_SUM_GEOM: res->summary[v] = nt ? exp(sum / (double)nt) : 0.0; break;
      case RS_SUM_NUM_Q: res->summary[v] = (double)nt; break;
      case RS_SUM_RUNID:
      case RS_SUM_NONE: res->summary[v] = 0.0; break;
      }
    }
  }
  res->runid = tag ? tag : strdup("");
  tag = NULL;
  if (!res->runid) { rc = rs__fail(err, RS_NOMEM, "out of memory"); goto done; }
  *out = res;
  res = NULL;
done:
  for (int t = 0; e.ts && t < e.threads; t++) {
    free(e.ts[t].order);
    free(e.ts[t].tmp);
    free(e.ts[t].hash);
    free(e.ts[t].rel);
    free(e.ts[t].judged);
    free(e.ts[t].set);
    free(e.ts[t].lv_grade);
    free(e.ts[t].lv_count);
    free_lines(&e.ts[t].group);
    if (e.ts[t].has_ms) rs_scratch_free(&e.ts[t].ms);
  }
  free(e.ts);
  free(e.slices);
  free(e.groups);
  free(e.whole);
  free_lines(&e.lines);
  free(tag);
  rs_te_result_free(res);
  return rc;
}

/* --- results ----------------------------------------------------------- */

rs_code rs_te_evaluate(const rs_te_config *cfg, const char *qrels_path, const char *run_path, rs_te_result **out,
                       rs_error *err)
{
  return evaluate(cfg, RS_NUMBERS_AS_TREC_EVAL, qrels_path, NULL, run_path, NULL, NULL, out, err);
}

static rs_code rankings(const char *qrels_path, const rs__qrels *q, const char *run_path, rs__numbers numbers,
                        int threads, rs__ranking_fn fn, void *ctx, char **runid, rs_error *err)
{
  rs_te_config cfg = {.complete = 1, .threads = threads};
  rs_te_result *res = NULL;
  rs_plan_init(&cfg.plan);
  rs_code rc = rs_plan_finish(&cfg.plan, 0, err);
  if (!rc) rc = evaluate(&cfg, numbers, qrels_path, q, run_path, fn, ctx, &res, err);
  if (!rc) rc = rs_te_status(res, err);
  if (!rc && runid) {
    *runid = res->runid;
    res->runid = NULL;
  }
  rs_te_result_free(res);
  rs_plan_free(&cfg.plan);
  return rc;
}

rs_code rs__te_rankings(const char *qrels_path, const char *run_path, rs__numbers numbers, int threads,
                        rs__ranking_fn fn, void *ctx, char **runid, rs_error *err)
{
  return rankings(qrels_path, NULL, run_path, numbers, threads, fn, ctx, runid, err);
}

rs_code rs__te_rankings_of(const rs__qrels *q, const char *run_path, rs__numbers numbers, int threads,
                           rs__ranking_fn fn, void *ctx, char **runid, rs_error *err)
{
  return rankings(NULL, q, run_path, numbers, threads, fn, ctx, runid, err);
}

rs_code rs_te_status(const rs_te_result *r, rs_error *err)
{
  if (r->n_ok == r->n_topics) return RS_OK;
  if (err) *err = r->topic_err;
  return r->topic_err.code;
}

size_t rs_te_n_topics(const rs_te_result *r) { return r->n_topics; }
const char *rs_te_topic_id(const rs_te_result *r, size_t t) { return r->qrels->topic_id[t]; }
const double *rs_te_values(const rs_te_result *r, size_t t) { return r->values + t * r->n_values; }
const double *rs_te_summary(const rs_te_result *r) { return r->summary; }
const char *rs_te_runid(const rs_te_result *r) { return r->runid; }

void rs_te_result_free(rs_te_result *r)
{
  if (!r) return;
  rs__qrels_free(r->own_qrels);
  free(r->values);
  free(r->relstrings);
  free(r->present);
  free(r->summary);
  free(r->runid);
  free(r);
}

/* Topic t's -q lines, as trec_eval prints them ("%-22s\t%s\t%6.4f\n",
 * %ld for counts, '%s' for relstring), appended to b a line at a time. */
static void format_topic_lines(const rs_plan *plan, const rs_te_result *r, size_t t, rs__sb *b)
{
  enum { NAME_WIDTH = 22 };
  const char *qid = r->qrels->topic_id[t];
  const size_t qid_len = strlen(qid); /* as %s prints it: to a NUL inside the id */
  const double *v = r->values + t * r->n_values;
  char line[256], num[48];
  for (size_t i = 0; i < plan->n_sel; i++) {
    const rs_measure_sel *m = &plan->sel[i];
    if (!rs_measure_per_topic(m->id)) continue;
    for (size_t k = 0; k < m->n_values; k++) {
      if (m->id == RS_M_RELSTRING) {
        rs__sb_printf(b, "%-22s\t%s\t'%s'\n", m->names[k], qid, r->relstrings + t * r->relstring_stride);
        continue;
      }
      const size_t name_len = strlen(m->names[k]);
      const size_t num_len = rs_measure_is_integer(m->id) ? rs__format_long((long)v[m->slot + k], num)
                                                          : rs__format_f4(v[m->slot + k], num);
      if (num_len >= sizeof num || name_len + qid_len + num_len + NAME_WIDTH + 3 > sizeof line) {
        /* a long id or name, a huge value: printf itself */
        if (rs_measure_is_integer(m->id))
          rs__sb_printf(b, "%-22s\t%s\t%ld\n", m->names[k], qid, (long)v[m->slot + k]);
        else
          rs__sb_printf(b, "%-22s\t%s\t%6.4f\n", m->names[k], qid, v[m->slot + k]);
        continue;
      }
      char *p = line;
      memcpy(p, m->names[k], name_len), p += name_len;
      for (size_t pad = name_len; pad < NAME_WIDTH; pad++) *p++ = ' ';
      *p++ = '\t';
      memcpy(p, qid, qid_len), p += qid_len;
      *p++ = '\t';
      memcpy(p, num, num_len), p += num_len;
      *p++ = '\n';
      rs__sb_add(b, line, (size_t)(p - line));
    }
  }
}

/* The -q lines are formatted on all threads, TOPICS_PER_PIECE topics to a
 * piece, a round of pieces at a time, and written in topic order: printf
 * formatted them at about 160 ns a line on one thread (100k topics of the
 * default measures, 2.7M lines: 0.44 s of a 0.98 s run). */
enum { TOPICS_PER_PIECE = 256, PIECES_PER_THREAD = 8 };

typedef struct {
  const rs_plan *plan;
  const rs_te_result *r;
  size_t first, end; /* the round's topics */
  rs__sb *piece;     /* [pieces of the round] */
} topic_lines;

static void topic_lines_item(void *ctx, size_t i, int tid)
{
  (void)tid;
  const topic_lines *w = ctx;
  const size_t a = w->first + i * TOPICS_PER_PIECE, b = a + TOPICS_PER_PIECE < w->end ? a + TOPICS_PER_PIECE : w->end;
  rs__sb_clear(&w->piece[i]);
  for (size_t t = a; t < b; t++) format_topic_lines(w->plan, w->r, t, &w->piece[i]);
}

static rs_code write_topic_lines(const rs_te_config *cfg, const rs_te_result *r, FILE *out)
{
  const int threads = rs__threads(cfg->threads);
  const size_t pieces = (size_t)threads * PIECES_PER_THREAD, per_round = pieces * TOPICS_PER_PIECE;
  rs__sb *piece = rs__calloc(pieces, sizeof *piece);
  if (!piece) return RS_NOMEM;
  rs_code rc = RS_OK;
  topic_lines w = {.plan = &cfg->plan, .r = r, .piece = piece};
  for (size_t t0 = 0; t0 < r->n_ok && !rc; t0 += per_round) {
    w.first = t0;
    w.end = r->n_ok - t0 < per_round ? r->n_ok : t0 + per_round;
    const size_t n = (w.end - w.first + TOPICS_PER_PIECE - 1) / TOPICS_PER_PIECE;
    rs__parallel_for(n, threads, 1, topic_lines_item, &w);
    for (size_t i = 0; i < n && !rc; i++) {
      if (piece[i].failed) rc = RS_NOMEM;
      else if (piece[i].n && fwrite(piece[i].s, 1, piece[i].n, out) != piece[i].n) rc = RS_IO;
    }
  }
  for (size_t i = 0; i < pieces; i++) rs__sb_free(&piece[i]);
  free(piece);
  return rc;
}

rs_code rs_te_write(const rs_te_config *cfg, const rs_te_result *r, int per_topic, int summary, FILE *out)
{
  const rs_plan *plan = &cfg->plan;
  if (per_topic) {
    const rs_code rc = write_topic_lines(cfg, r, out);
    if (rc) return rc;
  }
  if (summary && r->n_ok == r->n_topics) {
    for (size_t i = 0; i < plan->n_sel; i++) {
      const rs_measure_sel *m = &plan->sel[i];
      rs_summary_kind kind = rs_measure_summary(m->id);
      if (kind == RS_SUM_NONE) continue;
      for (size_t k = 0; k < m->n_values; k++) {
        double v = r->summary[m->slot + k];
        if (kind == RS_SUM_RUNID) fprintf(out, "%-22s\tall\t%s\n", m->names[k], r->runid);
        else if (rs_measure_is_integer(m->id)) fprintf(out, "%-22s\tall\t%ld\n", m->names[k], (long)v);
        else fprintf(out, "%-22s\tall\t%6.4f\n", m->names[k], v);
      }
    }
  }
  return ferror(out) ? RS_IO : RS_OK;
}
