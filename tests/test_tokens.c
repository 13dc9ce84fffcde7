/* test_tokens.c: the TREC text scanners (src/formats/tokens.h), the fast
 * score parsers (numparse.h) and the id hash (internal.h), checked on
 * hand-worked lines and against naive byte-at-a-time versions on every
 * byte value and on seeded random input. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/numparse.h"
#include "formats/tokens.h"
#include "internal.h"

static const char *naive_token_end(const char *p, const char *end)
{
  while (p < end && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\v' || *p == '\f' || *p == '\r')) p++;
  return p;
}

Test(tokens, token_end_hand_worked)
{
  const char *s = "doc7872442 20.6391";
  cr_assert_eq(rs__token_end(s, s + strlen(s)) - s, 10);
  const char *t = "abcdefghijklmnop\tq"; /* the white space is in the third 8-byte step */
  cr_assert_eq(rs__token_end(t, t + strlen(t)) - t, 16);
  const char u[] = "ab\x01\x1f\x7f\x80\xff" "cdefgh\rx"; /* control and high bytes belong to the token */
  cr_assert_eq(rs__token_end(u, u + sizeof u - 1) - u, 13);
  const char *v = "abcdefghijkl";
  cr_assert_eq(rs__token_end(v, v + 12) - v, 12, "no white space: the end");
  cr_assert_eq(rs__token_end(v, v + 5) - v, 5, "never past end");
}

/* Every byte value at every position of a 20-byte token. */
Test(tokens, token_end_every_byte_every_position)
{
  char buf[24];
  for (int c = 0; c < 256; c++) {
    for (int pos = 0; pos < 20; pos++) {
      memset(buf, 'x', sizeof buf);
      buf[pos] = (char)c;
      buf[20] = ' ';
      const char *want = naive_token_end(buf, buf + 21), *got = rs__token_end(buf, buf + 21);
      cr_assert_eq(got, want, "byte 0x%02x at %d: %td, expected %td", c, pos, got - buf, want - buf);
    }
  }
}

/* The naive reader of a run line's first n tokens: 0 for a blank or
 * comment line or one with fewer tokens, else the line's length. */
static size_t naive_line(const char *p, const char *end, int n, const char **tok, size_t *tl)
{
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  if (!nl) return 0;
  const char *c = p;
  int k = 0;
  while (k < n) {
    while (c < nl && rs__is_space((unsigned char)*c)) c++;
    if (c == nl) return 0;
    if (k == 0 && *c == '#') return 0;
    tok[k] = c;
    c = naive_token_end(c, nl);
    tl[k] = (size_t)(c - tok[k]);
    k++;
  }
  return (size_t)(nl - p) + 1;
}

#ifdef RS_HAVE_LINE_TOKENS
static size_t scan(const char *line, const char **tok, size_t *tl)
{
  static char buf[RS_LINE_WINDOW + 8];
  memset(buf, 'z', sizeof buf);
  memcpy(buf, line, strlen(line) < sizeof buf ? strlen(line) : sizeof buf);
  size_t n = rs__line_tokens(buf, 6, tok, tl);
  for (int i = 0; n && i < 6; i++) tok[i] = line + (tok[i] - buf);
  return n;
}

Test(tokens, line_tokens_hand_worked)
{
  const char *tok[6];
  size_t tl[6];
  const char *line = "q1 Q0 doc711793 1 20.6393 gen01\nq1 Q0";
  cr_assert_eq(scan(line, tok, tl), 32);
  const size_t want_off[6] = {0, 3, 6, 16, 18, 26}, want_len[6] = {2, 2, 9, 1, 7, 5};
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(tok[i] - line, (ptrdiff_t)want_off[i], "token %d", i);
    cr_assert_eq(tl[i], want_len[i], "token %d", i);
  }
  cr_assert_eq(scan(" \tq2  0 d 1 -2.5 tag extra words\r\n", tok, tl), 34, "leading blanks, a 7th token, CR");
  cr_assert_eq(tok[0][0], 'q');
  cr_assert_eq(tl[4], 4);
  cr_assert_eq(tok[5][0], 't');
  cr_assert_eq(tl[5], 3);
  cr_assert_eq(scan("\n", tok, tl), 0, "blank line: the byte reader");
  cr_assert_eq(scan("   \n", tok, tl), 0, "blank line: the byte reader");
  cr_assert_eq(scan("# q1 Q0 d 1 2 t\n", tok, tl), 0, "comment: the byte reader");
  cr_assert_eq(scan("q1 Q0 d 1 2\n", tok, tl), 0, "5 fields: the byte reader reports it");
  cr_assert_eq(scan("q1 Q0 d 1 2 t", tok, tl), 0, "no newline in the window");
  char longline[100];
  memset(longline, 'a', sizeof longline);
  memcpy(longline, "q Q0 d 1 2 ", 11);
  longline[70] = '\n';
  longline[71] = '\0';
  cr_assert_eq(scan(longline, tok, tl), 0, "a newline past 64 bytes: the byte reader");
  longline[63] = '\n';
  longline[64] = '\0';
  cr_assert_eq(scan(longline, tok, tl), 64, "a newline in the last byte of the window");
  cr_assert_eq(tl[5], 52);
}

/* n random bytes: a line's tokens over an alphabet heavy in white space,
 * control and high bytes (rand(), seeded by the test). */
static void random_line(char *buf, size_t n)
{
  static const char alphabet[] = " \t\v\f\r\n#x0.\x01\x08\x0e\x1f\x20\x21\x7f\x80\xff";
  for (size_t i = 0; i < n; i++)
    buf[i] = rand() % 3 ? (char)('a' + rand() % 3) : alphabet[rand() % (int)(sizeof alphabet - 1)];
}

/* Random lines against the naive reader. */
Test(tokens, line_tokens_random_lines)
{
  srand(18);
  char buf[RS_LINE_WINDOW + 8];
  for (int it = 0; it < 200000; it++) {
    random_line(buf, sizeof buf);
    const char *tok[6], *wtok[6];
    size_t tl[6], wtl[6];
    const size_t got = rs__line_tokens(buf, 6, tok, tl);
    size_t want = naive_line(buf, buf + RS_LINE_WINDOW, 6, wtok, wtl);
    if (got == 0) continue; /* the byte reader takes the line: always allowed */
    cr_assert_eq(got, want, "iteration %d: line length %zu, expected %zu", it, got, want);
    for (int i = 0; i < 6; i++) {
      cr_assert_eq(tok[i], wtok[i], "iteration %d token %d", it, i);
      cr_assert_eq(tl[i], wtl[i], "iteration %d token %d", it, i);
    }
  }
  /* The fast reader must also take ordinary lines, or it gains nothing. */
  const char *tok[6];
  size_t tl[6];
  cr_assert_neq(rs__line_tokens("q9 Q0 doc1 7 0.25 run\n" "0123456789012345678901234567890123456789012", 6, tok, tl), 0);
}

/* rs__run_line_fields: fields 0, 2 and 4 of the naive reader's six, and
 * its line length, on the same random lines; it may leave a line to the
 * byte reader only where rs__line_tokens does. */
Test(tokens, run_line_fields_random_lines)
{
  srand(19);
  char buf[RS_LINE_WINDOW + 8];
  size_t taken = 0;
  for (int it = 0; it < 200000; it++) {
    random_line(buf, sizeof buf);
    const char *f[3] = {NULL, NULL, NULL}, *wtok[6], *gtok[6];
    size_t fl[3] = {0, 0, 0}, wtl[6], gtl[6];
    const size_t got = rs__run_line_fields(buf, &f[0], &fl[0], &f[1], &fl[1], &f[2], &fl[2]);
    const size_t general = rs__line_tokens(buf, 6, gtok, gtl);
    cr_assert_eq(got != 0, general != 0, "iteration %d: taken %zu, by rs__line_tokens %zu", it, got, general);
    if (got == 0) continue;
    taken++;
    const size_t want = naive_line(buf, buf + RS_LINE_WINDOW, 6, wtok, wtl);
    cr_assert_eq(got, want, "iteration %d: line length %zu, expected %zu", it, got, want);
    for (int i = 0; i < 3; i++) {
      cr_assert_eq(f[i], wtok[2 * i], "iteration %d field %d", it, 2 * i);
      cr_assert_eq(fl[i], wtl[2 * i], "iteration %d field %d", it, 2 * i);
    }
  }
  cr_assert_gt(taken, 1000, "%zu lines taken", taken);
  const char *line = "q1 Q0 doc711793 1 20.6393 gen01\n" "0123456789012345678901234567890123456789012";
  const char *qid, *doc, *score;
  size_t qid_len, doc_len, score_len;
  cr_assert_eq(rs__run_line_fields(line, &qid, &qid_len, &doc, &doc_len, &score, &score_len), 32);
  cr_assert(qid == line && qid_len == 2 && doc == line + 6 && doc_len == 9 && score == line + 18 && score_len == 7);
  cr_assert_eq(rs__run_line_fields("q1 Q0 d 1 2\n" "0123456789012345678901234567890123456789012345678901234567890",
                                   &qid, &qid_len, &doc, &doc_len, &score, &score_len),
               0, "5 fields: the byte reader reports it");
}

#ifdef RS_HAVE_AVX2_LINES
/* The AVX2 line scan gives the baseline's masks, so the same fields and
 * lengths, on random lines (where the CPU runs it). */
Test(tokens, avx2_line_scan_equals_the_baseline)
{
  if (!rs__cpu_has_avx2()) cr_skip_test("this CPU has no AVX2");
  srand(20);
  char buf[RS_LINE_WINDOW + 8];
  size_t taken = 0;
  for (int it = 0; it < 200000; it++) {
    random_line(buf, sizeof buf);
    uint64_t ws, nl, ws2, nl2;
    rs__line_masks(buf, &ws, &nl);
    rs__line_masks_avx2(buf, &ws2, &nl2);
    cr_assert(ws == ws2 && nl == nl2, "iteration %d: masks %016llx %016llx, baseline %016llx %016llx", it,
              (unsigned long long)ws2, (unsigned long long)nl2, (unsigned long long)ws, (unsigned long long)nl);
    const char *f[3] = {NULL, NULL, NULL}, *g[3] = {NULL, NULL, NULL};
    size_t fl[3] = {0, 0, 0}, gl[3] = {0, 0, 0};
    const size_t got = rs__run_line_fields_avx2(buf, &f[0], &fl[0], &f[1], &fl[1], &f[2], &fl[2]);
    const size_t want = rs__run_line_fields(buf, &g[0], &gl[0], &g[1], &gl[1], &g[2], &gl[2]);
    cr_assert_eq(got, want, "iteration %d", it);
    for (int i = 0; got && i < 3; i++) cr_assert(f[i] == g[i] && fl[i] == gl[i], "iteration %d field %d", it, i);
    taken += got != 0;
  }
  cr_assert_gt(taken, 1000, "%zu lines taken", taken);
}
#endif
#endif

Test(tokens, fast_score_parser_equals_strtod)
{
  static const char *cases[] = {"20.6393", "-2.5", "+7", "0", "-0", "1.", ".5", "9007199254740991",
                                "9007199254740992", "1234567890123456789", "0.00000000000000000001",
                                "0.0000000000000000000000001", "123456789.0123456789", "00000000000000000000001.5",
                                "1e3", "abc", "", "-", ".", "1.2.3"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *s = cases[i];
    double fast;
    const int took = rs__atof_fast(s, strlen(s), &fast);
    const double want = strtod(s, NULL);
    cr_assert_eq(rs__atof(s, strlen(s)), want, "'%s': %.17g, expected %.17g", s, rs__atof(s, strlen(s)), want);
    if (took) cr_assert_eq(fast, want, "'%s' fast path: %.17g, expected %.17g", s, fast, want);
  }
  double v;
  cr_assert(rs__atof_fast("20.6393", 7, &v) && v == 20.6393, "a run score takes the fast path");
  cr_assert(!rs__atof_fast("9007199254740992", 16, &v), "2^53: past the exact range, strtod's");
  cr_assert(!rs__atof_fast("12345678901234567890", 20, &v), "20 digits (m wraps): strtod's");
  cr_assert(!rs__atof_fast("1e3", 3, &v), "exponents: strtod's");
}

/* Seeded random decimals of 1 to 24 digits, signs and points anywhere:
 * rs__atof gives strtod's double, and the fast path, when it answers, too. */
Test(tokens, fast_score_parser_random_decimals)
{
  srand(1818);
  char buf[40];
  for (int it = 0; it < 300000; it++) {
    size_t n = 0;
    if (rand() % 4 == 0) buf[n++] = rand() % 2 ? '-' : '+';
    const int digits = 1 + rand() % 24, point = rand() % (digits + 2);
    for (int d = 0; d < digits; d++) {
      if (d == point) buf[n++] = '.';
      buf[n++] = (char)('0' + (rand() % 10 < 3 ? 0 : rand() % 10));
    }
    buf[n] = '\0';
    double fast, want = strtod(buf, NULL);
    cr_assert_eq(rs__atof(buf, n), want, "'%s': %.17g, expected %.17g", buf, rs__atof(buf, n), want);
    if (rs__atof_fast(buf, n, &fast)) cr_assert_eq(fast, want, "'%s' fast path: %.17g, expected %.17g", buf, fast, want);
  }
}

/* rs__atof8 answers only for 1 to 8 bytes of digits with at most one '.',
 * and then with rs__atof_fast's double; the bytes after the token (here
 * random) change nothing.  Seeded random tokens over an alphabet with the
 * near misses ('/' and ':' border the digits, '.', signs, 'e', blanks). */
Test(tokens, short_score_parser_equals_the_fast_path)
{
  double v;
  cr_assert(rs__atof8("20.6393 run\n", 7, &v) && v == 20.6393, "a run score takes it");
  cr_assert(rs__atof8("12345678", 8, &v) && v == 12345678.0);
  cr_assert(rs__atof8("1234567.", 8, &v) && v == 1234567.0);
  cr_assert(rs__atof8(".5      ", 2, &v) && v == 0.5);
  cr_assert(!rs__atof8("0.1234567", 9, &v), "9 bytes: the byte loop's");
  cr_assert(!rs__atof8("-1.5    ", 4, &v), "signs: the byte loop's");
  cr_assert(!rs__atof8("1.2.3   ", 5, &v), "a second point");
  cr_assert(!rs__atof8(".       ", 1, &v), "no digit");
  cr_assert(!rs__atof8("        ", 0, &v), "empty");
  static const char alphabet[] = "0123456789012345678901234567890123456789....../:-+e \t";
  srand(4242);
  char buf[16];
  size_t answered = 0;
  for (int it = 0; it < 2000000; it++) {
    const size_t n = (size_t)(rand() % 9);
    for (size_t j = 0; j < sizeof buf; j++) buf[j] = alphabet[rand() % (int)(sizeof alphabet - 1)];
    double got = -1, want = -2;
    if (!rs__atof8(buf, n, &got)) continue;
    answered++;
    cr_assert(rs__atof_fast(buf, n, &want) && got == want, "'%.*s': %.17g, the fast path %.17g", (int)n, buf, got,
              want);
    for (size_t j = 0; j < n; j++) cr_assert(buf[j] == '.' || (buf[j] >= '0' && buf[j] <= '9'), "'%.*s'", (int)n, buf);
  }
  cr_assert_gt(answered, 20000, "%zu tokens answered", answered);
}

#ifdef RS_HAVE_AVX2
RS_AVX2_TARGET static int atof8_bmi2(const char *s, size_t n, double *out) { return rs__atof8_bmi2(s, n, out); }
#endif

/* rs__atof8_bmi2 (the AVX2 build's) must take the tokens rs__atof8 takes
 * and give the same bits: every token of up to 8 bytes over the digits
 * 0, 5, 9, '.', and the near misses '/', ':' and 'a' (5.8M), then seeded
 * random ones over all digits, '.', signs, 'e' and blanks. */
Test(tokens, bmi2_short_score_parser_equals_the_word_one)
{
#ifndef RS_HAVE_AVX2
  cr_skip_test("no AVX2 build on this target");
#else
  if (!rs__cpu_has_avx2()) cr_skip_test("this CPU has no AVX2/BMI2");
  static const char small[] = "059./:a";
  char buf[16];
  size_t taken = 0, tried = 0;
  for (size_t n = 0; n <= 8; n++) {
    size_t total = 1;
    for (size_t i = 0; i < n; i++) total *= 7;
    for (size_t c = 0; c < total; c++) {
      size_t x = c;
      for (size_t i = 0; i < 8; i++) {
        buf[i] = i < n ? small[x % 7] : "9.5x"[i & 3]; /* after the token: bytes it must not read as its own */
        if (i < n) x /= 7;
      }
      double a = -1, b = -2;
      const int ra = rs__atof8(buf, n, &a), rb = atof8_bmi2(buf, n, &b);
      cr_assert_eq(ra, rb, "'%.*s': the word parser says %d, BMI2 %d", (int)n, buf, ra, rb);
      if (ra) cr_assert(memcmp(&a, &b, sizeof a) == 0, "'%.*s': %.17g and %.17g", (int)n, buf, a, b);
      taken += (size_t)ra, tried++;
    }
  }
  static const char alphabet[] = "0123456789012345678901234567890123456789....../:-+e \t";
  srand(4343);
  for (int it = 0; it < 2000000; it++) {
    const size_t n = (size_t)(rand() % 10);
    for (size_t j = 0; j < sizeof buf; j++) buf[j] = alphabet[rand() % (int)(sizeof alphabet - 1)];
    double a = -1, b = -2;
    const int ra = rs__atof8(buf, n, &a), rb = atof8_bmi2(buf, n, &b);
    cr_assert_eq(ra, rb, "'%.*s': the word parser says %d, BMI2 %d", (int)n, buf, ra, rb);
    if (ra) cr_assert(memcmp(&a, &b, sizeof a) == 0, "'%.*s': %.17g and %.17g", (int)n, buf, a, b);
    taken += (size_t)ra, tried++;
  }
  cr_assert_gt(taken, 500000, "%zu of %zu tokens taken", taken, tried);
#endif
}

/* rs__hash_bytes reads the last bytes of an id with overlapping word
 * loads; it must give the value of the plain byte-by-byte definition
 * below, for every length (each copy sits at the end of its own
 * allocation, so a read past it shows under `make asan`). */
static uint64_t hash_by_bytes(const char *s, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    for (size_t j = 0; j < 8; j++) w |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  for (size_t j = 0; i < n; i++, j += 8) tail |= (uint64_t)(unsigned char)s[i] << j;
  h = (h ^ tail) * 0x100000001b3ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

Test(tokens, id_hash_equals_its_byte_definition)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  cr_skip_test("the byte definition above is the little-endian one");
#endif
  srand(77);
  for (size_t n = 0; n <= 40; n++)
    for (int it = 0; it < 200; it++) {
      char *s = malloc(n ? n : 1);
      cr_assert(s);
      for (size_t j = 0; j < n; j++) s[j] = (char)(rand() % 256);
      cr_assert_eq(rs__hash_bytes(s, n), hash_by_bytes(s, n), "length %zu", n);
      free(s);
    }
  cr_assert_eq(rs__hash_bytes("doc7872442", 10), hash_by_bytes("doc7872442", 10));
}
