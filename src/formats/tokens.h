/* tokens.h: white-space separated tokens of TREC text (internal).
 *
 * trec_eval splits run and qrels lines with C's isspace in the "C" locale:
 * ' ', '\t', '\n', '\v', '\f', '\r'.  Every other byte (control bytes and
 * bytes >= 0x80 included) belongs to a token. */
#ifndef RAGSWEEP_TOKENS_H
#define RAGSWEEP_TOKENS_H

#include <stddef.h>
#include <stdint.h>

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

/* The first n (<= 6) tokens of the line at p, found from two 64-bit masks
 * (white space, newline) of the RS_LINE_WINDOW bytes at p: no branch per
 * byte or per token, where a run line's six tokens cost a mispredicted
 * branch or two each.  Returns the length of the line with its newline,
 * or 0 when this line needs the byte-at-a-time reader: no newline in the
 * window, a blank or comment line, or fewer than n tokens.  p[0, 64) must
 * be readable (bytes after the newline are not interpreted). */
static inline size_t rs__line_tokens(const char *p, int n, const char **tok, size_t *tl)
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
#define RS_HAVE_LINE_TOKENS 1
#endif

#endif
