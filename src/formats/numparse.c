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

void rs__format_double(double v, char buf[32])
{
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
