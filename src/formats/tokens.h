/* tokens.h: white-space separated tokens of TREC text (internal).
 *
 * trec_eval splits run and qrels lines with C's isspace in the "C" locale:
 * ' ', '\t', '\n', '\v', '\f', '\r'.  Every other byte (control bytes and
 * bytes >= 0x80 included) belongs to a token. */
#ifndef RAGSWEEP_TOKENS_H
#define RAGSWEEP_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "util/simd.h"

/* C's isspace in the "C" locale, without the locale lookup. */
static inline int rs__is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The first white-space byte at or after p, or end.  Ids and numbers are
 * short but were scanned a byte at a time at ~6 instructions a byte, the
 * largest cost of reading a run (10k x 100: 226M of 806M instructions);
 * this tests 8 bytes per step.  All white space is below 0x21, so a word
 * with no byte below 0x21 holds none; the lowest flagged byte of the
 * classic "has a byte less than n" test is exact (a borrow only runs
 * upwards from a byte that is itself flagged), and a flagged byte that is
 * not white space (a control byte) is stepped over. */
static inline const char *rs__token_end(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    uint64_t low = (w - ones * 0x21) & ~w & highs; /* bytes < 0x21 */
    if (!low) {
      p += 8;
      continue;
    }
    const char *c = p + (__builtin_ctzll(low) >> 3);
    if (rs__is_space((unsigned char)*c)) return c;
    p = c + 1;
  }
#endif
  while (p < end && !rs__is_space((unsigned char)*p)) p++;
  return p;
}

/* The bytes a line scan may read at once: buffers handed to
 * rs__line_tokens keep this many readable bytes past the text's end. */
enum { RS_LINE_WINDOW = 64 };

#if defined(__SSE2__)
#include <emmintrin.h>

/* The white space (ws) and newline (nl) bytes of p[0, 64), a bit each. */
static inline void rs__line_masks(const char *p, uint64_t *ws_out, uint64_t *nl_out)
{
  uint64_t ws = 0, nl = 0;
  const __m128i space = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'),
                four = _mm_set1_epi8(4);
  for (int k = 0; k < 4; k++) {
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
    const __m128i d = _mm_sub_epi8(b, tab); /* '\t'..'\r' -> 0..4 */
    const __m128i is_ws = _mm_or_si128(_mm_cmpeq_epi8(b, space), _mm_cmpeq_epi8(_mm_min_epu8(d, four), d));
    ws |= (uint64_t)(unsigned)_mm_movemask_epi8(is_ws) << (16 * k);
    nl |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, newline)) << (16 * k);
  }
  *ws_out = ws, *nl_out = nl;
}

/* The first n (<= 6) tokens of the line at p, found from two 64-bit masks
 * (white space, newline) of the RS_LINE_WINDOW bytes at p: no branch per
 * byte or per token, where a run line's six tokens cost a mispredicted
 * branch or two each.  Returns the length of the line with its newline,
 * or 0 when this line needs the byte-at-a-time reader: no newline in the
 * window, a blank or comment line, or fewer than n tokens.  p[0, 64) must
 * be readable (bytes after the newline are not interpreted). */
static inline size_t rs__line_tokens(const char *p, int n, const char **tok, size_t *tl)
{
  uint64_t ws, nl;
  rs__line_masks(p, &ws, &nl);
  if (!nl) return 0;
  const unsigned len = (unsigned)__builtin_ctzll(nl); /* bytes before the newline */
  const uint64_t in_line = len == 0 ? 0 : (~0ull >> (64 - len));
  const uint64_t body = ~ws & in_line;
  uint64_t starts = body & ~(body << 1), ends = body & ~(body >> 1);
  uint64_t nth = starts; /* (no popcount: without -mpopcnt it is a libgcc call) */
  for (int i = 1; i < n; i++) nth &= nth - 1;
  if (!nth || p[__builtin_ctzll(starts)] == '#') return 0;
  for (int i = 0; i < n; i++) {
    const unsigned a = (unsigned)__builtin_ctzll(starts), b = (unsigned)__builtin_ctzll(ends);
    tok[i] = p + a;
    tl[i] = b - a + 1;
    starts &= starts - 1;
    ends &= ends - 1;
  }
  return len + 1;
}

/* A run line's fields as rs__line_tokens(p, 6, ...) finds them, but only
 * those a run's reader keeps: the qid, the docno and the score (fields 0,
 * 2 and 4); a sixth field must be there.  Each field's start and end are
 * the lowest set bits of two masks, the fields between them cleared
 * unread; the outputs are scalars, which stay in registers where the
 * general function stored six of each into arrays (callgrind, 10k x 100:
 * the line scan was 141 of 487 instructions a line).  Bit 63 is never in
 * a line (its newline is within the 64 bytes), so with it set the count
 * of trailing zeros is defined for a missing field, which the check for a
 * sixth start then rejects.  ws and nl are rs__line_masks's. */
static inline size_t rs__run_fields_of(const char *p, uint64_t ws, uint64_t nl, const char **qid, size_t *qid_len,
                                       const char **doc, size_t *doc_len, const char **score, size_t *score_len)
{
  if (!nl) return 0;
  const uint64_t body = ~ws & ((nl & (0 - nl)) - 1); /* field bytes before the first newline */
  const uint64_t stop = 1ull << 63;
  const uint64_t s0 = body & ~(body << 1), e0 = body & ~(body >> 1);
  const uint64_t s1 = s0 & (s0 - 1), e1 = e0 & (e0 - 1);
  const uint64_t s2 = s1 & (s1 - 1), e2 = e1 & (e1 - 1);
  const uint64_t s3 = s2 & (s2 - 1), e3 = e2 & (e2 - 1);
  const uint64_t s4 = s3 & (s3 - 1), e4 = e3 & (e3 - 1);
  const uint64_t s5 = s4 & (s4 - 1);
  const unsigned a0 = (unsigned)__builtin_ctzll(s0 | stop), b0 = (unsigned)__builtin_ctzll(e0 | stop);
  const unsigned a2 = (unsigned)__builtin_ctzll(s2 | stop), b2 = (unsigned)__builtin_ctzll(e2 | stop);
  const unsigned a4 = (unsigned)__builtin_ctzll(s4 | stop), b4 = (unsigned)__builtin_ctzll(e4 | stop);
  if (!s5 || p[a0] == '#') return 0; /* no sixth field, or a comment */
  *qid = p + a0, *qid_len = b0 - a0 + 1;
  *doc = p + a2, *doc_len = b2 - a2 + 1;
  *score = p + a4, *score_len = b4 - a4 + 1;
  return (size_t)__builtin_ctzll(nl) + 1;
}

static inline size_t rs__run_line_fields(const char *p, const char **qid, size_t *qid_len, const char **doc,
                                         size_t *doc_len, const char **score, size_t *score_len)
{
  uint64_t ws, nl;
  rs__line_masks(p, &ws, &nl);
  return rs__run_fields_of(p, ws, nl, qid, qid_len, doc, doc_len, score, score_len);
}

#ifdef RS_HAVE_AVX2
/* rs__line_masks and rs__run_line_fields on CPUs with AVX2 (asked at run
 * time: the build targets the baseline x86-64), for code compiled for
 * them (RS_AVX2_TARGET): two 32-byte steps where SSE2 takes four of 16,
 * and the bit steps of BMI1/2.  10k x 100, one thread: 449 -> 413 M
 * instructions (callgrind); 1M x 100 at two threads, three runs each in
 * turn: 2.24-2.37 -> 2.06-2.12 s.  The same masks, so the same fields. */
#define RS_HAVE_AVX2_LINES 1
RS_AVX2_TARGET static inline void rs__line_masks_avx2(const char *p, uint64_t *ws_out, uint64_t *nl_out)
{
  uint64_t ws = 0, nl = 0;
  const __m256i space = _mm256_set1_epi8(' '), newline = _mm256_set1_epi8('\n'), tab = _mm256_set1_epi8('\t'),
                four = _mm256_set1_epi8(4);
  for (int k = 0; k < 2; k++) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * k));
    const __m256i d = _mm256_sub_epi8(b, tab); /* '\t'..'\r' -> 0..4 */
    const __m256i is_ws =
        _mm256_or_si256(_mm256_cmpeq_epi8(b, space), _mm256_cmpeq_epi8(_mm256_min_epu8(d, four), d));
    ws |= (uint64_t)(uint32_t)_mm256_movemask_epi8(is_ws) << (32 * k);
    nl |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, newline)) << (32 * k);
  }
  *ws_out = ws, *nl_out = nl;
}

RS_AVX2_TARGET static inline size_t rs__run_line_fields_avx2(const char *p, const char **qid, size_t *qid_len,
                                                             const char **doc, size_t *doc_len, const char **score,
                                                             size_t *score_len)
{
  uint64_t ws, nl;
  rs__line_masks_avx2(p, &ws, &nl);
  return rs__run_fields_of(p, ws, nl, qid, qid_len, doc, doc_len, score, score_len);
}
#endif
#define RS_HAVE_LINE_TOKENS 1
#endif

#endif
