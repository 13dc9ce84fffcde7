#define _POSIX_C_SOURCE 200809L
/* qrels.c: parse TREC qrels ("qid iter docno grade") with trec_eval 10.0's
 * rules (SEMANTICS.md section 1) and build the per-topic lookup tables. */
#include "formats/qrels.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/sched.h"
#include "formats/numparse.h"
#include "formats/textio.h"
#include "formats/tokens.h"

typedef struct {
  const char *doc;
  uint32_t doc_len;
  int32_t grade;
  uint64_t head; /* see id_head */
} judgment;

/* An id's bytes before its first NUL, at most 8, as a big-endian number
 * padded with zeros: heads order ids (topic ids, docnos) as strcmp does,
 * and equal heads whose last byte is 0 are equal ids.  The len bytes of
 * the token are read with loads inside them, and a NUL inside the token
 * (not white space, so part of it) is found as a zero byte, where strcmp
 * would stop. */
static uint64_t id_head(const char *id, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w;
  if (len >= 8) __builtin_memcpy(&w, id, 8);
  else w = rs__load_short_le(id, len);
  /* bytes from the first zero one on are dropped (the lowest flagged byte
   * of the "has a zero byte" test is exact) */
  const uint64_t ones = 0x0101010101010101ull, zero = (w - ones) & ~w & (ones << 7);
  if (zero) {
    const unsigned k = (unsigned)__builtin_ctzll(zero) >> 3; /* bytes before it */
    w = k ? w & (~0ull >> (64 - 8 * k)) : 0;
  }
  return __builtin_bswap64(w);
#else
  uint64_t h = 0;
  size_t i = 0;
  for (; i < 8 && i < len && id[i]; i++) h = h << 8 | (unsigned char)id[i];
  return i ? h << (8 * (8 - i)) : 0;
#endif
}

/* strcmp order of two ids of na and nb bytes (the text is not
 * NUL-terminated), each ending at its first NUL as for strcmp, whose first
 * `from` bytes (from <= na, nb) are known equal and NUL-free. */
static int id_cmp_from(const char *a, size_t na, const char *b, size_t nb, size_t from)
{
  na = from + strnlen(a + from, na - from);
  nb = from + strnlen(b + from, nb - from);
  const int c = memcmp(a + from, b + from, (na < nb ? na : nb) - from);
  return c ? c : (na > nb) - (na < nb);
}

/* strcmp order of the docnos: the heads, and past them the rest. */
static int cmp_judgment(const void *a, const void *b)
{
  const judgment *x = a, *y = b;
  if (x->head != y->head) return x->head < y->head ? -1 : 1;
  if ((x->head & 0xff) == 0) return 0;
  return id_cmp_from(x->doc, x->doc_len, y->doc, y->doc_len, 8);
}

/* A topic's judgments by docno (strcmp), stably, as qsort (glibc's merge
 * sort) orders them.  Most topics have a few judgments, and insertion sort
 * costs no call per comparison (1M x 100 qrels, 5.5 a topic: sorting was a
 * third of the instructions of reading them), nor, on the heads, a strcmp
 * call. */
static void sort_judgments(judgment *v, size_t n)
{
  if (n > 16) {
    qsort(v, n, sizeof *v, cmp_judgment);
    return;
  }
  for (size_t i = 1; i < n; i++) {
    const judgment x = v[i];
    size_t j = i;
    for (; j > 0 && cmp_judgment(&v[j - 1], &x) > 0; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

/* One run of consecutive lines of one qid (a group); a topic whose lines
 * are not all together has several. */
typedef struct {
  const char *id;
  uint32_t len;
  uint32_t group; /* the group's index, in file order */
  uint64_t head;  /* see id_head */
  size_t first;   /* the group's first judgment */
} topic_key;


/* strcmp order.  Equal heads whose last byte is 0 mean both ids ended (for
 * strcmp) within their first 8 bytes; the head alone orders a million short
 * topic ids without a call to strcmp per comparison. */
static int cmp_topic_key(const void *a, const void *b)
{
  const topic_key *x = a, *y = b;
  if (x->head != y->head) return x->head < y->head ? -1 : 1;
  if ((x->head & 0xff) == 0) return 0;
  return id_cmp_from(x->id, x->len, y->id, y->len, 8);
}

/* Keys of one head: the rest of the ids, then file order (which a stable
 * sort would keep). */
static int cmp_key_rest(const void *a, const void *b)
{
  const topic_key *x = a, *y = b;
  const int c = id_cmp_from(x->id, x->len, y->id, y->len, 8);
  return c ? c : (x->group > y->group) - (x->group < y->group);
}

/* Sorts keys[0, n) into cmp_topic_key's order, stably (groups of one
 * topic keep their file order: its first line names it), as glibc's
 * merge sort did at a call per comparison (a tenth of reading 1M x 100
 * qrels, and all of it on one thread): a radix sort on the heads, a byte
 * a pass from the lowest, skipping bytes every head shares; then each run
 * of equal heads of ids longer than 8 bytes in order of the rest.
 *
 * Each pass runs on n_parts threads, each counting and then moving its
 * part of the keys: part c's keys of digit d go after those of smaller
 * digits and after those of digit d in parts before c, which is where one
 * thread's pass puts them, so the order is the same at any thread count
 * (1M keys, 7 passes: 50 ms on one thread). */
typedef struct {
  const topic_key *src;
  topic_key *dst;
  size_t n, n_parts;
  int byte; /* this pass's; -1: the first count, of all 8 bytes */
  size_t (*count)[8][256]; /* [part] */
} radix_pass;

static inline size_t part_start(size_t n, size_t n_parts, size_t c) { return c == n_parts ? n : n / n_parts * c; }

static void radix_count_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const radix_pass *rp = ctx;
  size_t(*count)[256] = rp->count[c];
  const size_t a = part_start(rp->n, rp->n_parts, c), b = part_start(rp->n, rp->n_parts, c + 1);
  if (rp->byte < 0) {
    memset(count, 0, sizeof rp->count[c]);
    for (size_t i = a; i < b; i++)
      for (int k = 0; k < 8; k++) count[k][(rp->src[i].head >> (8 * k)) & 0xff]++;
    return;
  }
  const int k = rp->byte;
  memset(count[k], 0, sizeof count[k]);
  for (size_t i = a; i < b; i++) count[k][(rp->src[i].head >> (8 * k)) & 0xff]++;
}

static void radix_move_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const radix_pass *rp = ctx;
  size_t *at = rp->count[c][rp->byte]; /* offsets by now */
  const size_t a = part_start(rp->n, rp->n_parts, c), b = part_start(rp->n, rp->n_parts, c + 1);
  const int shift = 8 * rp->byte;
  for (size_t i = a; i < b; i++) rp->dst[at[(rp->src[i].head >> shift) & 0xff]++] = rp->src[i];
}

static topic_key *sort_topic_keys(topic_key *keys, topic_key *tmp, size_t n, size_t n_parts)
{
  if (n == 0) return keys;
  size_t(*count)[8][256] = rs__malloc(rs__mul(n_parts, sizeof *count));
  if (!count) n_parts = 0; /* (then on one thread, counts on the stack) */
  size_t one[1][8][256];
  radix_pass rp = {keys, tmp, n, n_parts ? n_parts : 1, -1, count ? count : one};
  rs__parallel_for(rp.n_parts, (int)rp.n_parts, 1, radix_count_item, &rp);
  topic_key *src = keys, *dst = tmp;
  for (int b = 0, counted = 1; b < 8; b++) {
    size_t total[256] = {0};
    for (size_t c = 0; c < rp.n_parts; c++)
      for (int d = 0; d < 256; d++) total[d] += rp.count[c][b][d];
    if (total[(src[0].head >> (8 * b)) & 0xff] == n) continue; /* the same byte in every head */
    rp.src = src, rp.dst = dst, rp.byte = b;
    if (!counted) rs__parallel_for(rp.n_parts, (int)rp.n_parts, 1, radix_count_item, &rp);
    for (size_t d = 0, sum = 0; d < 256; d++)
      for (size_t c = 0; c < rp.n_parts; c++) {
        const size_t k = rp.count[c][b][d];
        rp.count[c][b][d] = sum;
        sum += k;
      }
    rs__parallel_for(rp.n_parts, (int)rp.n_parts, 1, radix_move_item, &rp);
    counted = 0; /* the first count was of the keys as they came */
    topic_key *t = src;
    src = dst, dst = t;
  }
  free(count);
  for (size_t a = 0, b; a < n; a = b) {
    for (b = a + 1; b < n && src[b].head == src[a].head; b++) continue;
    if (b - a < 2 || (src[a].head & 0xff) == 0) continue; /* one key, or ids that end within the head */
    if (b - a > 16) { /* ids sharing their first 8 bytes, many of them */
      qsort(src + a, b - a, sizeof *src, cmp_key_rest);
      continue;
    }
    for (size_t i = a + 1; i < b; i++) {
      const topic_key x = src[i];
      size_t j = i;
      for (; j > a && id_cmp_from(src[j - 1].id, src[j - 1].len, x.id, x.len, 8) > 0; j--) src[j] = src[j - 1];
      src[j] = x;
    }
  }
  return src;
}

static size_t pow2_at_least(size_t n)
{
  size_t p = 2;
  while (p < n) p <<= 1;
  return p;
}

void rs__qrels_free(rs__qrels *q)
{
  if (!q) return;
  rs__whole_free(&q->file);
  free(q->path);
  free(q->topic_id);
  free(q->topic_names);
  free(q->topic_len);
  free(q->first);
  free(q->count);
  free(q->doc);
  free(q->doc_len);
  free(q->grade);
  free(q->dup);
  free(q->tix);
  free(q->next_in_file);
  free(q);
}

/* The fields of the line [p, eol), byte by byte: up to five in tok and
 * tlen; returns their count, 6 for more than five. */
static int split_fields(const char *p, const char *eol, const char **tok, size_t *tlen)
{
  int nt = 0;
  const char *c = p;
  while (c < eol) {
    while (c < eol && rs__is_space((unsigned char)*c)) c++;
    if (c == eol) break;
    const char *s = c;
    c = rs__token_end(c + 1, eol);
    if (nt == 5) return 6;
    tok[nt] = s;
    tlen[nt] = (size_t)(c - s);
    nt++;
  }
  return nt;
}

/* Topic r's judgments in docno order, and its first duplicate; one holds
 * a topic's judgments. */
static void index_topic(rs__qrels *q, size_t r, judgment *one)
{
  const size_t a = q->first[r], n = q->count[r];
  q->dup[r] = SIZE_MAX;
  for (size_t i = 0; i < n; i++)
    one[i] = (judgment){q->doc[a + i], q->doc_len[a + i], q->grade[a + i], id_head(q->doc[a + i], q->doc_len[a + i])};
  int in_order = 1;
  for (size_t i = 1; i < n && in_order; i++) in_order = cmp_judgment(&one[i - 1], &one[i]) < 0;
  if (in_order) return; /* strictly ascending: no docno twice */
  sort_judgments(one, n);
  for (size_t i = 0; i < n; i++) {
    q->doc[a + i] = one[i].doc;
    q->doc_len[a + i] = one[i].doc_len;
    q->grade[a + i] = one[i].grade;
  }
  for (size_t i = 1; i < n; i++)
    if (cmp_judgment(&one[i - 1], &one[i]) == 0) {
      q->dup[r] = a + i;
      return;
    }
}

/* Texts of 2 shares' worth or more are read on all threads: at 1 MiB a
 * share, the 1.1 MB qrels of 10k x 100 were read on one thread (at two
 * threads the whole run took 40.5 ms, mean of 45; 36.5 ms at 256 KiB). */
enum { SHARE_MIN = 1 << 18, MAX_SHARES = 64 };

/* A share of the qrels text for pass 1, read by one thread: whole lines
 * [begin, end). */
typedef struct {
  const char *begin, *end;
  const char *limit;    /* a line window may read up to here (the next share's bytes are not its) */
  const char *file_end; /* the text's end: a comment there is the file's last line */
  size_t n_lines, n_comments; /* counted first */
  size_t first_line;          /* lines before it in the file */
  size_t first_judgment;      /* where its judgments go in the arrays */
  int after_comment;          /* the line before it is a comment */
  size_t n_judged, n_positive;
  int32_t max_grade; /* its highest grade, -1 when none is >= 0 */
  /* Its groups, one per change of qid, at most one a judgment line: the
   * room of its judgments in the key array (rs__qrels_read), so nothing
   * grows (doubling a million keys copied 32 MB of them into fresh pages,
   * and joining the shares' arrays copied them again).  A group's index
   * counts from 0 here. */
  topic_key *keys;
  size_t n_keys;
  rs_code rc; /* its first failure, with err */
  rs_error err;
} qrels_share;

/* Whether the line that ends just before p (p > text, p after a newline)
 * is a comment line. */
static int line_is_comment(const char *text, const char *p)
{
  const char *a = p - 1; /* its newline */
  while (a > text && a[-1] != '\n') a--;
  return *a == '#';
}

/* The share's lines and how many of them are comments: a line starts at
 * begin and after each newline before end, a comment with '#'.  A memchr
 * per 23-byte line was a call per line (1M x 100's qrels: 28-42 ms); the
 * newlines, and the '#' bytes after them, are counted 16 bytes a step. */
static void count_share(qrels_share *sh)
{
  const char *const p = sh->begin;
  const size_t m = sh->end > p ? (size_t)(sh->end - p) - 1 : 0; /* newlines at [0, m) start a line */
  size_t lines = sh->end > p, comments = sh->end > p && *p == '#', i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n'), hash = _mm_set1_epi8('#'), zero = _mm_setzero_si128();
  while (i + 16 <= m) { /* p[i + 16] is still in the share */
    __m128i n_acc = zero, c_acc = zero; /* per byte lane: -1 per hit, at most 255 rounds */
    for (int round = 0; round < 255 && i + 16 <= m; round++, i += 16) {
      const __m128i is_nl = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), newline);
      const __m128i then_hash = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i + 1)), hash);
      n_acc = _mm_sub_epi8(n_acc, is_nl);
      c_acc = _mm_sub_epi8(c_acc, _mm_and_si128(is_nl, then_hash));
    }
    const __m128i n_sum = _mm_sad_epu8(n_acc, zero), c_sum = _mm_sad_epu8(c_acc, zero);
    lines += (size_t)_mm_cvtsi128_si32(n_sum) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(n_sum, 8));
    comments += (size_t)_mm_cvtsi128_si32(c_sum) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(c_sum, 8));
  }
#endif
  for (; i < m; i++)
    if (p[i] == '\n') lines++, comments += p[i + 1] == '#';
  sh->n_lines = lines;
  sh->n_comments = comments;
}

/* Pass 1 on one share: splits its lines into fields, checks them, notes
 * its groups of lines of one qid, and writes its judgments into q's
 * arrays at first_judgment on.  Stops at its first failure (sh->rc). */
static void read_share(qrels_share *sh, const char *name, rs__numbers numbers, rs__qrels *q)
{
  const char *p = sh->begin, *const end = sh->end;
  size_t line_no = sh->first_line, w = sh->first_judgment;
  int prev_comment = sh->after_comment;
  const char *prev_qid = NULL;
  size_t prev_qid_len = 0;
  rs_error *err = &sh->err;
  while (p < end) {
    const char *tok[5];
    size_t tlen[5];
    int nt = 0;
    const char *next = NULL; /* where the next line starts */
    line_no++;
#ifdef RS_HAVE_LINE_TOKENS
    /* The common line: four tokens, then only blanks to its newline, all in
     * one window (a token and a newline search per line were half the
     * time of this pass at 5.5M lines). */
    size_t n_line;
    const char *ct[4];
    if (sh->limit - p >= RS_LINE_WINDOW && (n_line = rs__line_tokens(p, 4, ct, tlen)) != 0 &&
        n_line <= (size_t)(end - p)) {
      const char *c = ct[3] + tlen[3], *const nl = p + n_line - 1;
      while (c < nl && rs__is_space((unsigned char)*c)) c++;
      if (c == nl) { /* no fifth token */
        for (int i = 0; i < 4; i++) tok[i] = ct[i];
        nt = 4;
        next = p + n_line;
      }
    }
#endif
    if (!next) {
      const char *eol = memchr(p, '\n', (size_t)(end - p));
      if (!eol) eol = end;
      if (*p == '#') {
        /* trec_eval 10.0 skips only one comment line before each data line
         * and crashes on a trailing one; we reject both cases with a clear
         * message instead of guessing what was meant. */
        if (eol + 1 >= sh->file_end) {
          sh->rc = rs__fail(err, RS_FORMAT,
                            "%s:%zu: a comment is the last line of the qrels (trec_eval 10.0 crashes here); "
                            "expected a judgment 'qid iter docno grade' after every comment line",
                            name, line_no);
          return;
        }
        if (prev_comment) {
          sh->rc = rs__fail(err, RS_FORMAT,
                            "%s:%zu: two consecutive comment lines in the qrels (trec_eval 10.0 would read "
                            "this one as a judgment); expected at most one '#' line before each judgment",
                            name, line_no);
          return;
        }
        prev_comment = 1;
        p = eol + 1;
        continue;
      }
      nt = split_fields(p, eol, tok, tlen);
      next = eol + 1;
    }
    prev_comment = 0;
    if (nt != 4) {
      sh->rc = rs__fail(err, RS_FORMAT,
                        "%s:%zu: malformed qrels line: expected 4 fields 'qid iter docno grade', found %s%d", name,
                        line_no, nt > 5 ? "more than " : "", nt > 5 ? 5 : nt);
      return;
    }
    if (numbers == RS_NUMBERS_STRICT && !rs__is_integer_token(tok[3], tlen[3])) {
      const int shown = tlen[3] > 40 ? 40 : (int)tlen[3];
      sh->rc = rs__fail(err, RS_FORMAT,
                        "%s:%zu: expected an integer grade, found '%.*s'%s; fix the line (trec_eval reads it as %ld, "
                        "and only 'ragsweep trec_eval' keeps that rule)",
                        name, line_no, shown, tok[3], (size_t)shown < tlen[3] ? "..." : "",
                        rs__atol(tok[3], tlen[3]));
      return;
    }
    long g = rs__atol(tok[3], tlen[3]);
    if (g <= INT32_MIN || g > INT32_MAX) {
      sh->rc = rs__fail(err, RS_FORMAT, "%s:%zu: grade %.*s is outside the supported range [%d, %d]", name,
                        line_no, (int)tlen[3], tok[3], INT32_MIN + 1, INT32_MAX);
      return;
    }
    if (tlen[0] > UINT32_MAX / 2 || tlen[2] > UINT32_MAX / 2) {
      sh->rc = rs__fail(err, RS_FORMAT, "%s:%zu: id longer than 2 GiB", name, line_no);
      return;
    }
    /* Qrels come grouped by topic: a qid is looked at again only where it
     * changes, and the groups' keys are sorted once (a hash table of
     * topics missed the cache at each new topic, a million times at 1M
     * topics). */
    if (!(prev_qid && prev_qid_len == tlen[0] && rs__same_bytes(prev_qid, tok[0], tlen[0]))) {
      sh->keys[sh->n_keys] = (topic_key){tok[0], (uint32_t)tlen[0], (uint32_t)sh->n_keys, id_head(tok[0], tlen[0]), w};
      sh->n_keys++;
      prev_qid = tok[0], prev_qid_len = tlen[0];
    }
    q->doc[w] = tok[2];
    q->doc_len[w] = (uint32_t)tlen[2];
    q->grade[w++] = (int32_t)g;
    sh->n_positive += g > 0;
    if (g > sh->max_grade) sh->max_grade = (int32_t)g;
    p = next;
  }
  sh->n_judged = w - sh->first_judgment;
}

static void count_share_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  count_share(&((qrels_share *)ctx)[c]);
}

typedef struct {
  qrels_share *shares;
  const char *name;
  rs__numbers numbers;
  rs__qrels *q;
} share_pass;

static void read_share_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const share_pass *pass = ctx;
  read_share(&pass->shares[c], pass->name, pass->numbers, pass->q);
}

/* Topics are indexed TOPICS_PER_ITEM to an item, on up to
 * MAX_INDEX_THREADS threads, each with its own room for a topic's
 * judgments.  They are taken in the order their judgments are stored:
 * the file's (in_file[g], the topic of group g), unless they were
 * gathered in topic order.  In topic order, a million topics of 1M x 100
 * read the judgments and their docnos all over the arrays and the file:
 * 0.09-0.14 s on one thread. */
enum { TOPICS_PER_ITEM = 1024, MAX_INDEX_THREADS = 64 };
typedef struct {
  rs__qrels *q;
  size_t n_topics;
  const uint32_t *in_file; /* NULL: topic order */
  judgment *one[MAX_INDEX_THREADS];
} topic_pass;

static void index_topics_item(void *ctx, size_t item, int tid)
{
  const topic_pass *pass = ctx;
  const size_t a = item * TOPICS_PER_ITEM;
  const size_t b = a + TOPICS_PER_ITEM < pass->n_topics ? a + TOPICS_PER_ITEM : pass->n_topics;
  for (size_t i = a; i < b; i++) index_topic(pass->q, pass->in_file ? pass->in_file[i] : i, pass->one[tid]);
}

/* A part of the sorted keys [k0, k1), named on one thread. */
enum { PARTS_MIN = 1 << 14 };
typedef struct {
  size_t k0, k1;
  size_t n_topics, n_bytes;        /* topics starting in it, and their names' bytes with a NUL each */
  size_t first_topic, first_byte; /* those of the parts before it */
} key_part;

typedef struct {
  const topic_key *keys;
  rs__qrels *q;
  uint32_t *rank_of; /* [group]: its topic */
  key_part *parts;
} naming_pass;

/* Whether sorted key k starts a topic. */
static inline int starts_topic(const topic_key *keys, size_t k)
{
  return k == 0 || cmp_topic_key(&keys[k - 1], &keys[k]) != 0;
}

static void count_topics_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const naming_pass *pass = ctx;
  key_part *pt = &pass->parts[c];
  for (size_t k = pt->k0; k < pt->k1; k++)
    if (starts_topic(pass->keys, k)) pt->n_topics++, pt->n_bytes += (size_t)pass->keys[k].len + 1;
}

/* The part's topics' names (NUL-terminated copies), lengths, and each
 * group's topic; a part that starts inside a topic gives its first
 * groups the topic the part before it ends with. */
static void name_topics_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const naming_pass *pass = ctx;
  const key_part *pt = &pass->parts[c];
  const topic_key *keys = pass->keys;
  rs__qrels *q = pass->q;
  size_t r = pt->first_topic, at = pt->first_byte;
  for (size_t k = pt->k0; k < pt->k1; k++) {
    if (!starts_topic(keys, k)) {
      pass->rank_of[keys[k].group] = (uint32_t)(r - 1);
      continue;
    }
    memcpy(q->topic_names + at, keys[k].id, keys[k].len);
    q->topic_names[at + keys[k].len] = '\0';
    q->topic_id[r] = q->topic_names + at;
    at += (size_t)keys[k].len + 1;
    q->topic_len[r] = keys[k].len;
    pass->rank_of[keys[k].group] = (uint32_t)r;
    r++;
  }
}

/* Where each topic's judgments are, and the topic after it in the file,
 * when each topic is one group (rank_of then maps groups one to one onto
 * topics), for the groups of one part. */
typedef struct {
  rs__qrels *q;
  const uint32_t *rank_of;
  const size_t *group_first;
  size_t n_keys, n_parts;
} placing_pass;

static void place_topics_item(void *ctx, size_t c, int tid)
{
  (void)tid;
  const placing_pass *pass = ctx;
  rs__qrels *q = pass->q;
  const size_t a = part_start(pass->n_keys, pass->n_parts, c), b = part_start(pass->n_keys, pass->n_parts, c + 1);
  for (size_t g = a; g < b; g++) {
    const uint32_t r = pass->rank_of[g];
    q->next_in_file[r] = g + 1 < pass->n_keys ? pass->rank_of[g + 1] : UINT32_MAX;
    q->first[r] = pass->group_first[g];
    q->count[r] = pass->group_first[g + 1] - pass->group_first[g];
  }
}

rs_code rs__qrels_read(const char *path, rs__numbers numbers, int threads, rs__qrels **out, rs_error *err)
{
  rs_code rc = RS_OK;
  rs__qrels *q = rs__calloc(1, sizeof *q);
  uint32_t *rank_of = NULL;
  size_t *group_first = NULL;
  topic_key *keys = NULL;
  size_t n_lines = 0, cap_lines = 0, n_keys = 0;
  qrels_share shares[MAX_SHARES];
  size_t n_shares = 0;
  memset(shares, 0, sizeof shares);
  size_t len = 0;
  const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;

  if (!q || !(q->path = strdup(name))) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    goto done;
  }
  if ((rc = rs__whole_load(path, RS_LINE_WINDOW, &q->file, err))) goto done;
  q->text = q->file.data, len = q->file.len;
  if (len == 0) {
    rc = rs__fail(err, RS_FORMAT, "%s: the qrels file is empty (expected lines of 'qid iter docno grade')", name);
    goto done;
  }

  /* Pass 1 on shares of the text, one a thread: each counts its lines and
   * comment lines (so each knows where its judgments go: the arrays are
   * sized once, where doubling them copied each judgment about twice into
   * fresh pages), then splits them into fields, checks them and notes its
   * groups; the first failure in the file is told. */
  n_shares = threads > 1 && len >= SHARE_MIN * 2 ? (size_t)threads : 1;
  if (n_shares > MAX_SHARES) n_shares = MAX_SHARES;
  {
    const char *const end = q->text + len;
    for (size_t c = 0; c < n_shares; c++) {
      const char *b = c == 0 ? q->text : shares[c - 1].end;
      const char *e = c + 1 == n_shares ? end : q->text + len / n_shares * (c + 1);
      if (e < b) e = b;
      if (e < end) { /* shares end after a newline */
        const char *nl = memchr(e, '\n', (size_t)(end - e));
        e = nl ? nl + 1 : end;
      }
      shares[c].begin = b;
      shares[c].end = e;
      /* the window may read this far: the next share's bytes are another thread's */
      shares[c].limit = e == end ? end + 1 : e;
      shares[c].file_end = end;
    }
  }
  rs__parallel_for(n_shares, (int)n_shares, 1, count_share_item, shares);
  for (size_t c = 0; c < n_shares; c++) {
    shares[c].max_grade = -1;
    shares[c].first_line = c ? shares[c - 1].first_line + shares[c - 1].n_lines : 0;
    shares[c].first_judgment = c ? shares[c - 1].first_judgment + shares[c - 1].n_lines - shares[c - 1].n_comments : 0;
    shares[c].after_comment = c && shares[c].begin > q->text && line_is_comment(q->text, shares[c].begin);
  }
  /* The judgments go straight into their final arrays, in file order
   * (see rs__qrels.first). */
  cap_lines = shares[n_shares - 1].first_judgment + shares[n_shares - 1].n_lines + 1;
  if (cap_lines > UINT32_MAX) { /* a group's index is 32 bits */
    rc = rs__fail(err, RS_UNSUPPORTED, "%s: %zu lines, more than the %u a qrels file may have; split it by topic", name,
                  cap_lines - 1, UINT32_MAX);
    goto done;
  }
  q->doc = rs__malloc(rs__mul(cap_lines, sizeof *q->doc));
  q->doc_len = rs__malloc(rs__mul(cap_lines, sizeof *q->doc_len));
  q->grade = rs__malloc(rs__mul(cap_lines, sizeof *q->grade));
  /* Room for a key a judgment line, of which only the groups' are touched. */
  keys = rs__malloc(rs__mul(cap_lines, sizeof *keys));
  if (!q->doc || !q->doc_len || !q->grade || !keys) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory for %zu lines", name, cap_lines);
    goto done;
  }
  for (size_t c = 0; c < n_shares; c++) shares[c].keys = keys + shares[c].first_judgment;
  {
    share_pass pass = {shares, name, numbers, q};
    rs__parallel_for(n_shares, (int)n_shares, 1, read_share_item, &pass);
  }
  for (size_t c = 0; c < n_shares && !rc; c++) {
    rc = shares[c].rc;
    if (rc && err) *err = shares[c].err;
  }
  if (rc) goto done;
  /* The shares' groups, one after another (each share counted its groups
   * from 0; their first judgments are already the file's).  A share that
   * begins inside a topic's lines goes on with the group the share before
   * it ended with: its judgments follow that group's in the arrays, and a
   * topic split only by where the text was cut would otherwise take the
   * gathering path below (at 1M x 100 and two threads, 90-280 ms of fresh
   * arrays and copies). */
  for (size_t c = 0; c < n_shares; c++) {
    qrels_share *sh = &shares[c];
    if (c == 0) {
      n_keys = sh->n_keys; /* in place already */
    } else if (sh->n_keys) {
      /* moved down to follow the keys before them, which are no more than
       * the judgments before them: no key is overwritten before it moves */
      const topic_key *last = n_keys ? &keys[n_keys - 1] : NULL;
      const size_t go_on = last && last->len == sh->keys[0].len && rs__same_bytes(last->id, sh->keys[0].id, last->len);
      for (size_t k = go_on; k < sh->n_keys; k++) {
        keys[n_keys + k - go_on] = sh->keys[k];
        keys[n_keys + k - go_on].group += (uint32_t)(n_keys - go_on);
      }
      n_keys += sh->n_keys - go_on;
    }
    n_lines += sh->n_judged;
    q->n_positive_lines += sh->n_positive;
  }

  /* Group g's judgments are [group_first[g], group_first[g + 1]). */
  group_first = rs__malloc(rs__mul(n_keys + 1, sizeof *group_first));
  if (!group_first) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    goto done;
  }
  for (size_t k = 0; k < n_keys; k++) group_first[k] = keys[k].first;
  group_first[n_keys] = n_lines;

  /* The keys in parts, one a thread, for the steps below that run on all
   * threads. */
  const size_t n_parts = threads > 1 && n_keys >= PARTS_MIN * 2 ? (size_t)(threads < MAX_SHARES ? threads : MAX_SHARES) : 1;
  /* Topics in strcmp order: the groups' keys sorted, equal ones (groups
   * of one topic) side by side; rank_of maps a group to its topic. */
  {
    topic_key *tmp = rs__malloc(rs__mul(n_keys, sizeof *tmp));
    if (!tmp) {
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
      goto done;
    }
    if (sort_topic_keys(keys, tmp, n_keys, n_parts) == tmp) {
      free(keys);
      keys = tmp;
    } else {
      free(tmp);
    }
  }
  /* The sorted keys in parts, one a thread: each counts its topics (the
   * keys unlike the one before them) and their names' bytes, then, placed
   * by the parts before it, names them (at 1M topics, a tenth of a second
   * on one thread, most of it first touches of the arrays). */
  key_part parts[MAX_SHARES];
  naming_pass naming = {keys, q, NULL, parts};
  for (size_t c = 0; c < n_parts; c++)
    parts[c] = (key_part){part_start(n_keys, n_parts, c), part_start(n_keys, n_parts, c + 1), 0, 0, 0, 0};
  rs__parallel_for(n_parts, (int)n_parts, 1, count_topics_item, &naming);
  size_t nt = 0, name_bytes = 0;
  for (size_t c = 0; c < n_parts; c++) {
    parts[c].first_topic = nt, parts[c].first_byte = name_bytes;
    nt += parts[c].n_topics, name_bytes += parts[c].n_bytes;
  }
  q->n_topics = nt;
  q->topic_id = rs__malloc(rs__mul(nt, sizeof *q->topic_id));
  q->topic_names = rs__malloc(name_bytes);
  q->topic_len = rs__malloc(rs__mul(nt, sizeof *q->topic_len));
  q->first = rs__malloc(rs__mul(nt, sizeof *q->first));
  q->count = rs__calloc(nt, sizeof *q->count);
  rank_of = rs__malloc(rs__mul(n_keys, sizeof *rank_of));
  q->n_judged = n_lines;
  q->dup = rs__malloc(rs__mul(nt, sizeof *q->dup));
  q->tix_mask = pow2_at_least(2 * nt) - 1;
  q->tix = rs__calloc(q->tix_mask + 1, sizeof *q->tix);
  if (!q->topic_id || !q->topic_names || !q->topic_len || !q->first || !q->count || !rank_of || !q->dup || !q->tix) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory indexing %zu judgments", name, n_lines);
    goto done;
  }
  naming.rank_of = rank_of;
  rs__parallel_for(n_parts, (int)n_parts, 1, name_topics_item, &naming);
  /* The topic index is out of cache at a million topics: its slots are
   * fetched AHEAD topics ahead, and the slot worked out for the fetch is
   * kept for the insertion (home[r % AHEAD]: each id hashed once). */
  enum { AHEAD = 16 };
  size_t home[AHEAD];
  for (size_t r = 0; r < AHEAD && r < nt; r++) home[r] = (size_t)rs__hash_bytes(q->topic_id[r], q->topic_len[r]) & q->tix_mask;
  for (size_t r = 0; r < nt; r++) {
    size_t i = home[r % AHEAD];
    if (r + AHEAD < nt) {
      home[r % AHEAD] = (size_t)rs__hash_bytes(q->topic_id[r + AHEAD], q->topic_len[r + AHEAD]) & q->tix_mask;
      __builtin_prefetch(&q->tix[home[r % AHEAD]], 1);
    }
    while (q->tix[i]) i = (i + 1) & q->tix_mask;
    q->tix[i] = (uint32_t)(r + 1);
  }

  /* The topic after each one's in the file (groups are in file order),
   * filled in below with where the judgments are. */
  q->next_in_file = rs__malloc(rs__mul(nt, sizeof *q->next_in_file));
  if (!q->next_in_file) {
    rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
    goto done;
  }

  /* Where each topic's judgments are.  A topic whose lines are all
   * together in the file (one group) keeps them where they are: nothing
   * is copied, and runs in the qrels' order then meet the judgments in
   * memory order.  When any topic is split in several groups, all are
   * gathered in topic order into new arrays (stably: a topic's groups in
   * file order).  Each topic is then sorted by docno in place. */
  if (n_keys == nt) { /* one group a topic: each group's topic is written once, so in parts */
    placing_pass pass = {q, rank_of, group_first, n_keys, n_parts};
    rs__parallel_for(n_parts, (int)n_parts, 1, place_topics_item, &pass);
  } else {
    for (size_t g = 0; g < n_keys; g++) q->next_in_file[rank_of[g]] = g + 1 < n_keys ? rank_of[g + 1] : UINT32_MAX;
    for (size_t g = 0; g < n_keys; g++) q->count[rank_of[g]] += group_first[g + 1] - group_first[g];
    const char **doc = rs__malloc(rs__mul(n_lines, sizeof *doc));
    uint32_t *doc_len = rs__malloc(rs__mul(n_lines, sizeof *doc_len));
    int32_t *grade = rs__malloc(rs__mul(n_lines, sizeof *grade));
    size_t *fill = rs__malloc(rs__mul(nt, sizeof *fill));
    if (!doc || !doc_len || !grade || !fill) {
      free(doc), free(doc_len), free(grade), free(fill);
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
      goto done;
    }
    for (size_t r = 0, at = 0; r < nt; r++) q->first[r] = fill[r] = at, at += q->count[r];
    for (size_t g = 0; g < n_keys; g++) {
      size_t k = fill[rank_of[g]];
      for (size_t i = group_first[g]; i < group_first[g + 1]; i++, k++) {
        doc[k] = q->doc[i];
        doc_len[k] = q->doc_len[i];
        grade[k] = q->grade[i];
      }
      fill[rank_of[g]] = k;
    }
    free(fill);
    free(q->doc), free(q->doc_len), free(q->grade);
    q->doc = doc, q->doc_len = doc_len, q->grade = grade;
  }
  size_t max_topic = 0;
  for (size_t r = 0; r < nt; r++)
    if (q->count[r] > max_topic) max_topic = q->count[r];

  /* Per topic, on all threads: docno order and duplicates (each topic
   * writes only its own range). */
  if (threads < 1 || nt < 4096) threads = 1;
  if (threads > MAX_INDEX_THREADS) threads = MAX_INDEX_THREADS;
  {
    topic_pass pass = {q, nt, n_keys == nt ? rank_of : NULL, {NULL}};
    int nomem = 0;
    for (int t = 0; t < threads; t++)
      nomem |= !(pass.one[t] = rs__malloc(rs__mul(max_topic ? max_topic : 1, sizeof *pass.one[t])));
    if (!nomem) rs__parallel_for((nt + TOPICS_PER_ITEM - 1) / TOPICS_PER_ITEM, threads, 1, index_topics_item, &pass);
    for (int t = 0; t < threads; t++) free(pass.one[t]);
    if (nomem) {
      rc = rs__fail(err, RS_NOMEM, "%s: out of memory", name);
      goto done;
    }
  }
  q->max_count = max_topic;
  q->max_grade = -1;
  for (size_t c = 0; c < n_shares; c++)
    if (shares[c].max_grade > q->max_grade) q->max_grade = shares[c].max_grade;

  *out = q;
  q = NULL;
done:
  free(group_first);
  free(keys);
  free(rank_of);
  rs__qrels_free(q);
  return rc;
}
