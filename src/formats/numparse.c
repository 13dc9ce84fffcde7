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
