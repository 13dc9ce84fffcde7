/* numparse.c: the slow path of rs__atof, and shortest round-trip printing. */
#include "formats/numparse.h"

#include <float.h>
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

#if defined(__SIZEOF_INT128__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define RS_SHORTEST_FAST 1
__extension__ typedef unsigned __int128 u128;

/* rs__format_double's text for 1e-4 <= |v| < 1e5 (per-query values, means),
 * found exactly with integers: 1 when buf holds it, 0 to leave v to the
 * definition.  |v| = m 2^-s exactly; N = floor(|v| 10^k) has 17 digits
 * (m 10^k < 2^120), R/2^s is what floor dropped.  From N and R, the
 * correctly rounded 15, 16 and 17 significant digits (ties to even, as
 * printf); the first that reads back to |v| is printed as %.{15,16,17}g
 * prints it (fixed notation in this range, trailing zeros dropped).
 * Reading back is Clinger's: q < 2^53 and 10^j (j <= 22) are exact doubles,
 * so one correctly rounded division gives the double nearest to q / 10^j,
 * as strtod does; a 15- or 16-digit q above 2^53 is read back by strtod. */
static int shortest_fixed(double v, char buf[32])
{
  static const double pow10_f[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  static const uint64_t pow10_u[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
  const double a = fabs(v);
  if (!(a >= 1e-4 && a < 1e5)) return 0;
  uint64_t bits;
  memcpy(&bits, &a, sizeof bits);
  const int e2 = (int)(bits >> 52 & 0x7ff) - 1023; /* a in [2^e2, 2^(e2+1)): normal here */
  const uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
  const unsigned s = (unsigned)(52 - e2); /* 36..66 */
  int x10 = (int)floor(e2 * 0.30102999566398120); /* floor(log10 a), or one below */
  uint64_t n17 = 0;
  u128 rem = 0;
  for (int tries = 0; tries < 3; tries++) {
    const int k = 16 - x10; /* 11..21 */
    const u128 x = k <= 19 ? (u128)m * pow10_u[k] : (u128)m * pow10_u[19] * pow10_u[k - 19];
    const u128 nn = x >> s;
    rem = x & (((u128)1 << s) - 1);
    if (nn >= pow10_u[17]) x10++;
    else if (nn < pow10_u[16]) x10--;
    else {
      n17 = (uint64_t)nn;
      break;
    }
  }
  if (!n17) return 0;
  const u128 half = (u128)1 << (s - 1);
  for (int prec = 15; prec <= 17; prec++) {
    const int drop = 17 - prec;
    uint64_t q = n17 / pow10_u[drop];
    const uint64_t r = n17 % pow10_u[drop];
    int up;
    if (drop == 0) {
      up = rem > half || (rem == half && (q & 1));
    } else {
      const uint64_t half_d = 5 * pow10_u[drop - 1];
      up = r > half_d || (r == half_d && (rem != 0 || (q & 1)));
    }
    int x = x10;
    q += (uint64_t)up;
    if (q == pow10_u[prec]) q = pow10_u[prec - 1], x++; /* 9.99.. rounded up to 10.0.. */
    const int j = prec - 1 - x; /* q / 10^j is the value: 10..21 */
    if (j < 0 || j > 22) return 0;
    const int exact = q < (UINT64_C(1) << 53);
    if (exact && (double)q / pow10_f[j] != a) continue;
    /* fixed notation: x + 1 digits before the point (x >= 0), or "0." and -x - 1 zeros */
    char digits[20], *p = buf;
    const size_t nd = put_digits(digits, q);
    size_t last = nd; /* trailing zeros of the fraction are dropped */
    if (v < 0) *p++ = '-';
    if (x >= 0) {
      const size_t int_digits = (size_t)x + 1;
      while (last > int_digits && digits[last - 1] == '0') last--;
      memcpy(p, digits, int_digits), p += int_digits;
      if (last > int_digits) {
        *p++ = '.';
        memcpy(p, digits + int_digits, last - int_digits), p += last - int_digits;
      }
    } else {
      while (last > 0 && digits[last - 1] == '0') last--;
      *p++ = '0', *p++ = '.';
      for (int z = 0; z < -x - 1; z++) *p++ = '0';
      memcpy(p, digits, last), p += last;
    }
    *p = '\0';
    if (exact || prec == 17 || strtod(buf, NULL) == v) return 1; /* 17 digits always read back */
  }
  return 0;
}
#endif

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
#ifdef RS_SHORTEST_FAST
  if (shortest_fixed(v, buf)) return;
#endif
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) return;
  }
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
