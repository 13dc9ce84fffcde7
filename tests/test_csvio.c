/* test_csvio.c: the CSV writer (formats/csvio.h).  Rows go through a
 * buffer of the writer's own, so a file of many buffers' worth, with
 * fields that must be quoted among them and text written through the
 * stream after the rows, must hold exactly the bytes a plain reference
 * writer gives, and read back to the same fields; numbers are the shortest
 * %.15g/%.16g/%.17g text that reads back to the same double. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, strdup */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/csvio.h"
#include "formats/numparse.h"
#include "util/strbuf.h"

/* The reference: shortest round-trip text, by definition. */
static void shortest(double v, char *out, size_t cap)
{
  if (isnan(v)) {
    snprintf(out, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(out, cap, v > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, v);
    if (strtod(out, NULL) == v) return;
  }
}

/* The reference quoting: quotes when a comma, quote, CR or LF is inside
 * or a space begins or ends the field; quotes inside are doubled. */
static void ref_field(rs__sb *b, const char *s)
{
  const size_t n = strlen(s);
  if (n && (s[0] == ' ' || s[n - 1] == ' ' || strpbrk(s, ",\"\r\n"))) {
    rs__sb_add(b, "\"", 1);
    for (const char *c = s; *c; c++) {
      if (*c == '"') rs__sb_add(b, "\"\"", 2);
      else rs__sb_add(b, c, 1);
    }
    rs__sb_add(b, "\"", 1);
  } else {
    rs__sb_str(b, s);
  }
}

Test(csvio, numbers_are_the_shortest_round_trip_text)
{
  const double cases[] = {0.0, -0.0, 1.0, -1.0, 7.0, 123456789012345.0, 999999999999999.0, 1e15, -1e15, 1e16,
                          0.1, 1.0 / 3, 2.0 / 3, 0.6309297535714575, 5e-324, 1e300, NAN, INFINITY, -INFINITY,
                          4503599627370496.5, 9007199254740993.0, 0.5, 1e-7};
  char got[32], want[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rs__format_double(cases[i], got);
    shortest(cases[i], want, sizeof want);
    cr_assert_str_eq(got, want, "%.17g", cases[i]);
  }
  cr_assert_str_eq((rs__format_double(-0.0, got), got), "-0");
  cr_assert_str_eq((rs__format_double(42.0, got), got), "42");
  /* seeded random: whole numbers, binary fractions of every scale, and
   * the range numparse.c formats with integers (1e-4 to 1e5: measure
   * values and means, 16-digit texts above 2^53 among them) */
  uint64_t s = 77;
  for (int i = 0; i < 400000; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double unit = (double)(s >> 11) / 9007199254740992.0;
    double v;
    switch (i % 5) {
    case 0: v = (double)(int64_t)(s >> (i % 64)); break;
    case 1: v = ldexp((double)(s >> 11), -(int)(s % 80)); break;
    case 2: v = unit; break;
    case 3: v = -unit * 1e5; break;
    default: v = (double)(s % 100000) / (double)(1 + s % 997); break;
    }
    rs__format_double(v, got);
    shortest(v, want, sizeof want);
    cr_assert_str_eq(got, want, "%.17g", v);
  }
  for (int k = 1; k < 100000; k++) { /* four decimals, thirds */
    rs__format_double(k / 1e4, got), shortest(k / 1e4, want, sizeof want);
    cr_assert_str_eq(got, want, "%.17g", k / 1e4);
    rs__format_double(k / 3e3, got), shortest(k / 3e3, want, sizeof want);
    cr_assert_str_eq(got, want, "%.17g", k / 3e3);
  }
}

typedef struct {
  char **want;
  size_t n_want, seen;
} expected_rows;

static rs_code check_row(void *ctx, char **fields, size_t n_fields, size_t line, rs_error *err)
{
  (void)line, (void)err;
  expected_rows *x = ctx;
  cr_assert_eq(n_fields, 3, "row %zu: %zu fields", x->seen, n_fields);
  for (size_t k = 0; k < 3; k++) cr_assert_str_eq(fields[k], x->want[x->seen * 3 + k], "row %zu field %zu", x->seen, k);
  x->seen++;
  return RS_OK;
}

Test(csvio, many_buffers_of_rows_are_the_reference_bytes)
{
  char dir[] = "/tmp/rs_csvio_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  static const char *const odd[] = {"plain", "a,b", "say \"hi\"", " lead", "trail ", "two\nlines", "cr\rhere", "", "ü"};
  enum { ROWS = 20000 };
  char **want = calloc(ROWS * 3, sizeof *want);
  rs__sb ref = {0};
  rs__csv *w = NULL;
  rs_error err = {0};
  cr_assert_eq(rs__csv_create(dir, "t.csv", &w, &err), RS_OK, "%s", err.msg);
  for (size_t r = 0; r < ROWS; r++) {
    char id[32], num[32];
    snprintf(id, sizeof id, "q%07zu", r);
    const char *text = odd[r % (sizeof odd / sizeof odd[0])];
    const double v = r % 3 ? (double)r / 7.0 : (double)(r % 2);
    rs__csv_str(w, id);
    rs__csv_str(w, text);
    rs__csv_num(w, v);
    cr_assert_eq(rs__csv_end_row(w, &err), RS_OK);
    shortest(v, num, sizeof num);
    ref_field(&ref, id), rs__sb_add(&ref, ",", 1), ref_field(&ref, text), rs__sb_add(&ref, ",", 1);
    ref_field(&ref, num), rs__sb_add(&ref, "\n", 1);
    want[r * 3] = strdup(id), want[r * 3 + 1] = strdup(text), want[r * 3 + 2] = strdup(num);
  }
  /* text through the stream after the rows: it follows them */
  fputs("# end\n", rs__csv_file(w));
  rs__sb_str(&ref, "# end\n");
  cr_assert_eq(rs__csv_commit(w, &err), RS_OK, "%s", err.msg);
  cr_assert_gt(ref.n, (size_t)4 << 16, "the file must span several of the writer's buffers");

  char path[64];
  snprintf(path, sizeof path, "%s/t.csv", dir);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f);
  char *bytes = malloc(ref.n + 1);
  const size_t got = fread(bytes, 1, ref.n + 1, f);
  fclose(f);
  cr_assert_eq(got, ref.n, "file of %zu bytes, the reference %zu", got, ref.n);
  cr_assert(memcmp(bytes, ref.s, ref.n) == 0, "the file differs from the reference bytes");

  /* and the fields read back (the last line is not CSV: cut it off) */
  f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite(bytes, 1, ref.n - strlen("# end\n"), f);
  fclose(f);
  expected_rows x = {want, ROWS, 0};
  cr_assert_eq(rs__csv_read(path, check_row, &x, &err), RS_OK, "%s", err.msg);
  cr_assert_eq(x.seen, (size_t)ROWS);

  unlink(path);
  rmdir(dir);
  for (size_t i = 0; i < ROWS * 3; i++) free(want[i]);
  free(want);
  free(bytes);
  rs__sb_free(&ref);
}
