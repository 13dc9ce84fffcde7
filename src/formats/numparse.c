/* numparse.c: the slow path of rs__atof, and shortest round-trip printing. */
#include "formats/numparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rs__atof_slow(const char *s, size_t n)
{
  char small[128];
  if (n < sizeof small) {
    memcpy(small, s, n);
    small[n] = '\0';
    return strtod(small, NULL);
  }
  /* A score token this long is pathological; allocation is acceptable. */
  char *big = malloc(n + 1);
  if (!big) return 0.0;
  memcpy(big, s, n);
  big[n] = '\0';
  double v = strtod(big, NULL);
  free(big);
  return v;
}

int rs__strict_atof_slow(const char *s, size_t n, double *out)
{
  char small[128], *buf = small, *end = NULL;
  if (n == 0) return 0;
  if (n >= sizeof small && !(buf = malloc(n + 1))) return 0;
  memcpy(buf, s, n);
  buf[n] = '\0';
  const double v = strtod(buf, &end);
  /* strtod skips leading white space; a token has none, but be exact. */
  const int whole = end == buf + n && !(buf[0] == ' ' || (buf[0] >= '\t' && buf[0] <= '\r'));
  if (buf != small) free(buf);
  if (!whole || isnan(v)) return 0;
  *out = v;
  return 1;
}

/* The decimal digits of u, most significant first, at p; returns their count. */
static size_t put_digits(char *p, uint64_t u);

void rs__format_double(double v, char buf[32])
{
  /* Whole numbers below 1e15 are %.15g's text, read back exactly: their
   * digits (most per-query values are 0 or 1; snprintf and strtod cost
   * about 0.3 us a value) */
  if (v == trunc(v) && fabs(v) < 1e15) {
    char *p = buf;
    if (signbit(v)) *p++ = '-'; /* -0 too, as printf writes it */
    p += put_digits(p, (uint64_t)fabs(v));
    *p = '\0';
    return;
  }
  if (isnan(v)) {
    strcpy(buf, "NaN");
    return;
  }
  if (isinf(v)) {
    strcpy(buf, v > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* The decimal digits of u, most significant first, at p; returns their count. */
static size_t put_digits(char *p, uint64_t u)
{
  char rev[20];
  size_t n = 0;
  do {
    rev[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  for (size_t i = 0; i < n; i++) p[i] = rev[n - 1 - i];
  return n;
}

size_t rs__format_long(long v, char buf[24])
{
  char *p = buf;
  uint64_t u = (uint64_t)v;
  if (v < 0) *p++ = '-', u = 0 - u; /* (LONG_MIN too: its magnitude fits) */
  p += put_digits(p, u);
  *p = '\0';
  return (size_t)(p - buf);
}

/* |v| = m 2^e exactly (m < 2^53), so |v| 10^4 = (625 m) 2^(e+4) with 625 m
 * < 2^63: an integer shifted right, whose remainder against half of the
 * last place decides the rounding, ties to even, as glibc rounds in the
 * default rounding mode.  The text of a value of 4 decimals is at least
 * 6 bytes ("0.0000"), so %6.4f never pads.  NaN, infinities and magnitudes
 * of 1e9 or more go to snprintf. */
size_t rs__format_f4(double v, char buf[48])
{
  if (!(fabs(v) < 1e9)) return (size_t)snprintf(buf, 48, "%6.4f", v);
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  const unsigned biased = (unsigned)(bits >> 52) & 0x7ff;
  uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
  int e = -1074; /* subnormal */
  if (biased) m |= UINT64_C(1) << 52, e = (int)biased - 1075;
  const uint64_t y = m * 625;
  uint64_t n; /* |v| 10^4, rounded */
  if (e + 4 >= 0) {
    n = y << (e + 4); /* < 1e13: |v| < 1e9 */
  } else if (-(e + 4) >= 64) {
    n = 0; /* y < 2^63 <= half of the last place */
  } else {
    const unsigned s = (unsigned)-(e + 4);
    const uint64_t rem = y & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
    n = y >> s;
    n += rem > half || (rem == half && (n & 1));
  }
  char *p = buf;
  if (bits >> 63) *p++ = '-'; /* -0.0 and values that round to zero keep it, as in printf */
  p += put_digits(p, n / 10000);
  const unsigned frac = (unsigned)(n % 10000);
  p[0] = '.';
  p[1] = (char)('0' + frac / 1000);
  p[2] = (char)('0' + frac / 100 % 10);
  p[3] = (char)('0' + frac / 10 % 10);
  p[4] = (char)('0' + frac % 10);
  p[5] = '\0';
  return (size_t)(p + 5 - buf);
}
