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

#endif
