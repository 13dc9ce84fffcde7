/* numparse.h: exact, allocation-free replacements for atof/atol on tokens
 * that are not NUL-terminated (internal).
 *
 * rs__atof gives the same double as glibc's atof on the same token: the fast
 * path handles plain decimals whose digits fit in 53 bits and that have at
 * most 22 fractional digits (Clinger's fast path: one correctly rounded
 * division of two exact doubles); anything else goes through strtod. */
#ifndef RAGSWEEP_NUMPARSE_H
#define RAGSWEEP_NUMPARSE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "util/simd.h"

double rs__atof_slow(const char *s, size_t n);

/* The shortest "%.{15,16,17}g" text of v that reads back as v ("NaN",
 * "inf", "-inf" for the others): CSV values and numeric attributes. */
void rs__format_double(double v, char buf[32]);

/* printf("%6.4f", v), byte for byte, into buf (NUL-terminated); returns
 * the length.  trec_eval prints every per-topic value so, and printf's
 * exact float formatting was most of the time of `trec_eval -q` on one
 * thread.  A value of 1e9 or more may need 48 bytes or more (up to 316):
 * then the return is that length and buf holds its first 47 bytes, as
 * with snprintf. */
size_t rs__format_f4(double v, char buf[48]);
/* printf("%ld", v) into buf (NUL-terminated); returns the length. */
size_t rs__format_long(long v, char buf[24]);

/* As rs__atof_slow, but 1 only when the whole token is a number in
 * strtod's syntax other than NaN (e.g. "1e-3", "inf"), 0 for "abc", "1x",
 * "nan" or "" (*out is then unchanged). */
int rs__strict_atof_slow(const char *s, size_t n, double *out);

/* The fast path of both parsers: 1 with *out set for a plain decimal
 * ("-12.5") whose digits fit in 53 bits, 0 for anything else. */
static inline int rs__atof_fast(const char *s, size_t n, double *out)
{
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char *p = s, *end = s + n;
  int neg = 0;
  if (p < end && (*p == '-' || *p == '+')) neg = (*p++ == '-');
  /* 19 digits cannot overflow 64 bits, and m only grows digit by digit, so
   * one test at the end replaces a test per digit (a score is read per run
   * line).  Past 19 digits m may wrap, but then the token goes to strtod,
   * which returns the same correctly rounded double. */
  /* Two digits a step halve the chain of dependent multiply-adds, which
   * the parse of a run line waits on (m * 100 + 10a + b = (m * 10 + a) * 10 + b). */
  uint64_t m = 0;
  const char *int0 = p;
  while (end - p >= 2 && (unsigned)(p[0] - '0') < 10 && (unsigned)(p[1] - '0') < 10) {
    m = m * 100 + (uint64_t)((p[0] - '0') * 10 + (p[1] - '0'));
    p += 2;
  }
  if (p < end && (unsigned)(*p - '0') < 10) m = m * 10 + (uint64_t)(*p++ - '0');
  size_t n_digits = (size_t)(p - int0), n_frac = 0;
  if (p < end && *p == '.') {
    const char *frac0 = ++p;
    while (end - p >= 2 && (unsigned)(p[0] - '0') < 10 && (unsigned)(p[1] - '0') < 10) {
      m = m * 100 + (uint64_t)((p[0] - '0') * 10 + (p[1] - '0'));
      p += 2;
    }
    if (p < end && (unsigned)(*p - '0') < 10) m = m * 10 + (uint64_t)(*p++ - '0');
    n_frac = (size_t)(p - frac0);
    n_digits += n_frac;
  }
  if (p != end || n_digits == 0 || n_digits > 19 || n_frac > 22 || (m >> 53)) return 0;
  double v = (double)m;
  if (n_frac) v = v / pow10[n_frac];
  *out = neg ? -v : v;
  return 1;
}

/* The end of rs__atof8 and rs__atof8_bmi2: d holds a token's digits in
 * its top bytes (the first digit highest, as in a big-endian number),
 * '0's below; every byte must be '0'..'9': high nibble 3, and still 3
 * after adding 6 (no byte carries into the next once the first test
 * holds).  Eight digits to a number (pairs, then fours, then the whole),
 * over 10^n_frac. */
static inline int rs__digits8_value(uint64_t d, size_t n_frac, double *out)
{
  static const double pow10[8] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7};
  const uint64_t ones = 0x0101010101010101ull, zeros = ones * '0', nibble = ones * 0xF0;
  if ((d & nibble) != zeros || ((d + ones * 6) & nibble) != zeros) return 0;
  uint64_t v = d - zeros;
  v = v * 10 + (v >> 8);
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  double r = (double)v;
  if (n_frac) r = r / pow10[n_frac];
  *out = r;
  return 1;
}

/* rs__atof_fast for tokens of at most 8 bytes, digits with at most one
 * '.', as a run's scores nearly always are ("20.6393"): one 8-byte load
 * and word arithmetic, where the byte loop costs a branch per digit pair
 * and mispredicts where the lengths change (1M x 100 run lines: the score
 * was 0.6 s of the parse).  Reads the 8 bytes at s whatever n is, so the
 * caller must know them readable; 0 for anything else (no sign, no
 * exponent: those take rs__atof_fast).  The same m / 10^k, so the same
 * double. */
static inline int rs__atof8(const char *s, size_t n, double *out)
{
  if (n - 1 >= 8) return 0; /* 0 or more than 8 bytes */
  uint64_t w;
  __builtin_memcpy(&w, s, 8);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return 0; /* the byte arithmetic below takes s[0] as the lowest byte */
#endif
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  const uint64_t keep = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
  w &= keep;
  /* The first '.': the lowest byte flagged by the "has a zero byte" test
   * of w ^ "........" is exact (a borrow runs upwards only). */
  const uint64_t x = w ^ (ones * '.');
  const uint64_t dot = (x - ones) & ~x & highs & keep;
  size_t k = n, n_frac = 0; /* digits, fractional digits */
  if (dot) {                /* the bytes above it move down one */
    const unsigned at = (unsigned)__builtin_ctzll(dot) >> 3;
    const uint64_t below = at ? ~0ull >> (64 - 8 * at) : 0;
    w = (w & below) | ((w >> 8) & ~below);
    k = n - 1;
    n_frac = k - at;
  }
  if (k == 0) return 0;
  /* the k digits moved to the top bytes, '0's below */
  const uint64_t zeros = ones * '0';
  return rs__digits8_value(k == 8 ? w : (w << (8 * (8 - k))) | (zeros >> (8 * k)), n_frac, out);
}

#ifdef RS_HAVE_AVX2
/* rs__atof8 for code compiled for RS_AVX2_TARGET: the same tokens taken,
 * the same digits, so the same double.  BMI2 drops the '.' from the word
 * and cuts it to the token in one step each (pext, bzhi), where shifts
 * and masks do it in rs__atof8 (callgrind, 100k x 100: 82 -> 74
 * instructions a score). */
RS_AVX2_TARGET static inline int rs__atof8_bmi2(const char *s, size_t n, double *out)
{
  if (n - 1 >= 8) return 0;
  uint64_t w;
  __builtin_memcpy(&w, s, 8);
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull, zeros = ones * '0';
  const uint64_t keep = _bzhi_u64(~0ull, (unsigned)(8 * n)); /* the token's bytes (all 8 when n is 8) */
  const uint64_t x = w ^ (ones * '.');
  const uint64_t dot = (x - ones) & ~x & highs & keep; /* its lowest flag is the first '.', as in rs__atof8 */
  const uint64_t first_dot = dot & (0 - dot);
  const uint64_t dot_byte = (first_dot << 1) - (first_dot >> 7); /* 0xFF at that byte; 0 without one */
  const size_t k = n - (dot != 0); /* digits */
  if (k == 0) return 0;
  const size_t n_frac = dot ? n - 1 - ((unsigned)__builtin_ctzll(dot) >> 3) : 0;
  /* the k bytes but the '.', first one highest, '0's below (as rs__atof8's) */
  return rs__digits8_value((_pext_u64(w, keep & ~dot_byte) << (64 - 8 * k)) | _bzhi_u64(zeros, (unsigned)(64 - 8 * k)),
                           n_frac, out);
}
#endif

static inline double rs__atof(const char *s, size_t n)
{
  double v;
  return rs__atof_fast(s, n, &v) ? v : rs__atof_slow(s, n);
}

/* rs__atof for ragsweep's own readers: 1 and the same double when the whole
 * token is a number other than NaN, else 0 (trec_eval's atof reads "abc"
 * as 0.0; a score like that is a mistake in the file). */
static inline int rs__strict_atof(const char *s, size_t n, double *out)
{
  return rs__atof_fast(s, n, out) || rs__strict_atof_slow(s, n, out);
}

/* 1 when the token is an optional sign and one or more decimal digits:
 * an integer that rs__atol reads whole (it reads "2.9" as 2, "abc" as 0). */
static inline int rs__is_integer_token(const char *s, size_t n)
{
  size_t i = n && (s[0] == '-' || s[0] == '+');
  if (i == n) return 0;
  for (; i < n; i++)
    if ((unsigned)(s[i] - '0') >= 10) return 0;
  return 1;
}

/* atol: optional sign and decimal digits, stopping at the first other
 * character; saturates like glibc's strtol. */
static inline long rs__atol(const char *s, size_t n)
{
  const char *p = s, *end = s + n;
  int neg = 0;
  if (p < end && (*p == '-' || *p == '+')) neg = (*p++ == '-');
  unsigned long v = 0, lim = neg ? (unsigned long)LONG_MAX + 1ul : (unsigned long)LONG_MAX;
  int over = 0;
  for (; p < end && (unsigned)(*p - '0') < 10; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (lim - d) / 10) over = 1;
    else v = v * 10 + d;
  }
  if (over) return neg ? LONG_MIN : LONG_MAX;
  return neg ? (long)(0ul - v) : (long)v;
}

#endif
