/* test_strbuf.c: the growable text (src/util/strbuf.c): appends, the sticky
 * out-of-memory flag, lists, and the JSON string and number writers, whose
 * UTF-8 repair is checked against a naive decoder on every 1- and 2-byte
 * input and on seeded random byte strings. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "util/strbuf.h"

#define FFFD "\xEF\xBF\xBD"

Test(strbuf, appends_and_take)
{
  rs__sb b = {0};
  cr_assert_str_eq(rs__sb_view(&b), "");
  char *e = rs__sb_take(&b);
  cr_assert_str_eq(e, "", "nothing added: an empty text, not NULL");
  free(e);
  rs__sb_str(&b, "ab");
  rs__sb_add(&b, "cdef", 2);
  rs__sb_printf(&b, "-%d-%s", 42, "x");
  cr_assert_eq(b.n, 9);
  cr_assert_str_eq(rs__sb_view(&b), "abcd-42-x");
  char *s = rs__sb_take(&b);
  cr_assert_str_eq(s, "abcd-42-x");
  cr_assert(b.s == NULL && b.n == 0 && b.cap == 0 && !b.failed, "empty after take");
  free(s);
}

Test(strbuf, printf_longer_than_the_stack_buffer)
{
  char big[1501];
  memset(big, 'y', 1500);
  big[1500] = '\0';
  rs__sb b = {0};
  rs__sb_str(&b, "<");
  rs__sb_printf(&b, "%s|%s", big, big);
  rs__sb_str(&b, ">");
  cr_assert_eq(b.n, 1 + 1500 + 1 + 1500 + 1, "nothing cut: got %zu bytes", b.n);
  cr_assert_eq(strlen(b.s), b.n);
  cr_assert(b.s[0] == '<' && b.s[1501] == '|' && b.s[1500] == 'y' && b.s[3002] == '>' && b.s[3001] == 'y');
  rs__sb_free(&b);
  cr_assert(b.s == NULL && b.n == 0);
}

Test(strbuf, failure_is_sticky_and_take_returns_null)
{
  rs__sb b = {0};
  rs__sb_str(&b, "kept");
  b.failed = 1; /* as after a realloc that failed */
  rs__sb_str(&b, "lost");
  rs__sb_printf(&b, "%d", 7);
  cr_assert_str_eq(rs__sb_view(&b), "kept", "no append after a failure");
  cr_assert_null(rs__sb_take(&b));
  cr_assert(b.s == NULL && !b.failed, "take frees and resets");
  /* A size that would overflow fails instead of wrapping. */
  rs__sb_str(&b, "x");
  rs__sb_add(&b, "", SIZE_MAX - 1);
  cr_assert(b.failed);
  cr_assert_null(rs__sb_take(&b));
}

Test(strbuf, list)
{
  char *items[] = {"a", "", "ccc"};
  rs__sb b = {0};
  rs__sb_list(&b, items, 3, 300);
  cr_assert_str_eq(rs__sb_view(&b), "a, (empty), ccc");
  rs__sb_free(&b);
  char *four[] = {"aaaa", "bbbb", "cccc"};
  rs__sb_list(&b, four, 3, 6); /* "aaaa" uses 6 of the 6 bytes; "bbbb" would pass them */
  cr_assert_str_eq(rs__sb_view(&b), "aaaa, ... (2 more)");
  rs__sb_free(&b);
  rs__sb_list(&b, four, 0, 6);
  cr_assert_str_eq(rs__sb_view(&b), "");
}

/* Cases are copied into a worker process: arrays, no pointers. */
struct json_case {
  char name[40];
  char in[16];
  size_t n;
  char want[64];
};

ParameterizedTestParameters(strbuf, json_str)
{
  static struct json_case cases[] = {
      {"plain", "plain", 5, "\"plain\""},
      {"empty", "", 0, "\"\""},
      {"quote and backslash", "a\"b\\c", 5, "\"a\\\"b\\\\c\""},
      {"short escapes", "\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\""},
      {"other controls", "\x01\x1f", 2, "\"\\u0001\\u001f\""},
      {"NUL inside", "a\0b", 3, "\"a\\u0000b\""},
      {"DEL is not a control", "\x7f", 1, "\"\x7f\""},
      {"slash stays", "a/b", 3, "\"a/b\""},
      {"2-byte e-acute", "\xC3\xA9", 2, "\"\xC3\xA9\""},
      {"3-byte euro", "\xE2\x82\xAC", 3, "\"\xE2\x82\xAC\""},
      {"4-byte emoji", "\xF0\x9F\x98\x80", 4, "\"\xF0\x9F\x98\x80\""},
      {"U+10FFFF", "\xF4\x8F\xBF\xBF", 4, "\"\xF4\x8F\xBF\xBF\""},
      {"stray continuation", "a\x80z", 3, "\"a" FFFD "z\""},
      {"overlong C0 AF", "\xC0\xAF", 2, "\"" FFFD FFFD "\""},
      {"overlong E0 80 80", "\xE0\x80\x80", 3, "\"" FFFD FFFD FFFD "\""},
      {"surrogate ED A0 80", "\xED\xA0\x80", 3, "\"" FFFD FFFD FFFD "\""},
      {"past U+10FFFF", "\xF4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""},
      {"F5 and FF", "\xF5\xFF", 2, "\"" FFFD FFFD "\""},
      {"truncated at the end", "x\xE2\x82", 3, "\"x" FFFD "\""},
      {"truncated then ASCII", "\xE2\x82" "A", 3, "\"" FFFD "A\""},
      {"truncated 4-byte", "\xF0\x9F\x98", 3, "\"" FFFD "\""},
      {"bad byte then quote", "\xC3\"", 2, "\"" FFFD "\\\"\""},
  };
  return cr_make_param_array(struct json_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct json_case *tc, strbuf, json_str)
{
  rs__sb b = {0};
  rs__sb_str(&b, "[");
  rs__sb_json_str(&b, tc->in, tc->n);
  char *s = rs__sb_take(&b);
  cr_assert_not_null(s);
  cr_assert_eq(s[0], '[');
  cr_assert_str_eq(s + 1, tc->want, "%s: got %s", tc->name, s + 1);
  free(s);
}

/* A naive decoder: is s[0..n) valid UTF-8?  (Decode, then check the value's
 * range, the shortest form, surrogates: another route than strbuf.c's.) */
static int naive_valid(const unsigned char *s, size_t n)
{
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || i + len > n) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t j = 1; j < len; j++) {
      if ((s[i + j] & 0xC0) != 0x80) return 0;
      cp = cp << 6 | (s[i + j] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    i += len;
  }
  return 1;
}

static void check_one(const unsigned char *in, size_t n)
{
  rs__sb b = {0};
  rs__sb_json_str(&b, (const char *)in, n);
  cr_assert(!b.failed);
  const unsigned char *o = (const unsigned char *)b.s;
  cr_assert(b.n >= 2 && o[0] == '"' && o[b.n - 1] == '"');
  cr_assert(naive_valid(o, b.n), "output is not valid UTF-8");
  for (size_t i = 1; i + 1 < b.n; i++) {
    cr_assert(o[i] >= 0x20, "raw control byte in the output");
    if (o[i] == '\\') i++; /* the escaped character */
    else cr_assert(o[i] != '"', "unescaped quote");
  }
  int plain = naive_valid(in, n);
  for (size_t i = 0; i < n && plain; i++) plain = in[i] >= 0x20 && in[i] != '"' && in[i] != '\\';
  if (plain) cr_assert(b.n == n + 2 && memcmp(o + 1, in, n) == 0, "valid text must be kept as it is");
  else if (naive_valid(in, n)) cr_assert(!strstr(b.s, FFFD) || memmem(in, n, FFFD, 3), "no U+FFFD for valid text");
  rs__sb_free(&b);
}

Test(strbuf, json_str_always_valid)
{
  unsigned char in[8];
  for (unsigned a = 0; a < 256; a++) {
    in[0] = (unsigned char)a;
    check_one(in, 1);
    for (unsigned c = 0; c < 256; c++) {
      in[1] = (unsigned char)c;
      check_one(in, 2);
    }
  }
  /* Seeded random strings, biased towards lead and continuation bytes. */
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 200000; t++) {
    size_t n = 1 + t % 8;
    for (size_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      unsigned r = (unsigned)(x >> 32);
      in[i] = (unsigned char)(r % 3 == 0 ? 0x80 | (r >> 8 & 0x3F) : r % 3 == 1 ? 0xC0 | (r >> 8 & 0x3F) : r >> 8);
    }
    check_one(in, n);
  }
}

Test(strbuf, json_num)
{
  struct {
    double v;
    const char *want;
  } cases[] = {
      {0.1, "0.1"},         {0.1 + 0.2, "0.30000000000000004"}, {1.0 / 3.0, "0.3333333333333333"},
      {100.0, "100"},       {-0.0, "-0"},                       {1e300, "1e+300"},
      {-2.5e-7, "-2.5e-07"}, {NAN, "null"},                     {INFINITY, "null"},
      {-INFINITY, "null"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rs__sb b = {0};
    rs__sb_json_num(&b, cases[i].v);
    cr_assert_str_eq(rs__sb_view(&b), cases[i].want, "%.17g", cases[i].v);
    rs__sb_free(&b);
  }
}
