/* test_numfmt.c: the printers of trec_eval's per-topic values
 * (numparse.h): rs__format_f4 must print what printf("%6.4f") prints and
 * rs__format_long what printf("%ld") prints, byte for byte, on hand-worked
 * values (ties at the fifth decimal go to the even digit), on every tie of
 * a dyadic fraction, on seeded random values, and on raw bit patterns. */
#include <criterion/criterion.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/numparse.h"

/* printf's text of v and ours agree: length, and bytes (the first 47 of a
 * text too long for the buffer). */
static void assert_f4_as_printf(double v)
{
  char want[400], got[48];
  const int n = snprintf(want, sizeof want, "%6.4f", v);
  const size_t len = rs__format_f4(v, got);
  cr_assert_eq(len, (size_t)n, "%.17g: length %zu, printf's %d ('%s')", v, len, n, want);
  if (n < (int)sizeof got) cr_assert_str_eq(got, want, "%.17g", v);
  else cr_assert(strncmp(got, want, sizeof got - 1) == 0 && got[sizeof got - 1] == '\0', "%.17g", v);
}

Test(numfmt, f4_hand_worked)
{
  static const struct {
    double v;
    const char *text;
  } cases[] = {
      {0.0, "0.0000"},        {-0.0, "-0.0000"},         {0.03125, "0.0312"},      /* 312.5: the even 312 */
      {0.09375, "0.0938"},    {-0.03125, "-0.0312"},     {1.5, "1.5000"},          /* 937.5: the even 938 */
      {-2.25, "-2.2500"},     {12345.5, "12345.5000"},   {1.0 / 3, "0.3333"},      /* */
      {2.0 / 3, "0.6667"},    {5e-324, "0.0000"},        {-1e-10, "-0.0000"},      /* sign kept */
      {0.00005, "0.0001"},    {999999999.5, "999999999.5000"}, {1.0, "1.0000"}, /* 0.00005: just above */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char got[48];
    const size_t n = rs__format_f4(cases[i].v, got);
    cr_assert_str_eq(got, cases[i].text, "%.17g", cases[i].v);
    cr_assert_eq(n, strlen(cases[i].text));
    assert_f4_as_printf(cases[i].v);
  }
  /* printf's own text where ours hands over: NaN, infinities, 1e9 and up */
  const double others[] = {NAN, -NAN, INFINITY, -INFINITY, 1e9, -1e9, 1e300, -DBL_MAX};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) assert_f4_as_printf(others[i]);
}

/* Every odd multiple of 2^-j up to 4096 2^-j, both signs: the exact ties at
 * the fifth decimal (k 2^-5 with 625 | k, ...) and their neighbours. */
Test(numfmt, f4_dyadic_fractions)
{
  for (int j = 1; j <= 60; j++)
    for (long k = 1; k < 4096; k += 2) {
      assert_f4_as_printf(ldexp((double)k, -j));
      assert_f4_as_printf(-ldexp((double)k, -j));
    }
  for (long k = -100000; k <= 100000; k++) {
    assert_f4_as_printf((double)k / 20000.0); /* halves of the fourth decimal */
    assert_f4_as_printf((double)k / 3.0);
  }
}

static uint64_t xorshift(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

Test(numfmt, f4_seeded_random)
{
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 300000; i++) {
    const uint64_t r = xorshift(&s);
    double raw;
    memcpy(&raw, &r, sizeof raw);
    const double unit = (double)(r >> 11) / 9007199254740992.0; /* [0, 1): where measures live */
    assert_f4_as_printf(raw);
    assert_f4_as_printf(unit);
    assert_f4_as_printf(unit * 2000.0 - 1000.0);
    assert_f4_as_printf(ldexp(unit, -(int)(r % 40)));
  }
}

Test(numfmt, long_as_printf)
{
  const long cases[] = {0, 1, -1, 9, 10, -10, 100, 12345678, -987654321, LONG_MAX, LONG_MIN, LONG_MIN + 1};
  char got[24], want[32];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(want, sizeof want, "%ld", cases[i]);
    cr_assert_eq(rs__format_long(cases[i], got), strlen(want));
    cr_assert_str_eq(got, want);
  }
  uint64_t s = 12345;
  for (int i = 0; i < 100000; i++) {
    const long v = (long)xorshift(&s) >> (i % 60);
    snprintf(want, sizeof want, "%ld", v);
    cr_assert_eq(rs__format_long(v, got), strlen(want));
    cr_assert_str_eq(got, want);
  }
}
