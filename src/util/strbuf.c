/* strbuf.c: the growable text of strbuf.h. */
#define _POSIX_C_SOURCE 200809L
#include "util/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/numparse.h"

void rs__sb_add(rs__sb *b, const char *s, size_t n)
{
  if (b->failed) return;
  /* The + 1 keeps room for the NUL; a size that overflows is a failure, not a wrap. */
  if (n > SIZE_MAX - 1 - b->n) {
    b->failed = 1;
    return;
  }
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) {
      if (cap > SIZE_MAX / 2) {
        cap = b->n + n + 1;
        break;
      }
      cap *= 2;
    }
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->failed = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
  if (n) memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

void rs__sb_str(rs__sb *b, const char *s) { rs__sb_add(b, s, strlen(s)); }

void rs__sb_printf(rs__sb *b, const char *fmt, ...)
{
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1; /* an encoding error: the text would be incomplete */
    return;
  }
  if ((size_t)n < sizeof tmp) {
    rs__sb_add(b, tmp, (size_t)n);
    return;
  }
  /* Longer than the stack buffer: format again into the buffer itself, so
   * nothing is cut (reserve the room, then let vsnprintf write the NUL). */
  const size_t at = b->n;
  rs__sb_add(b, NULL, 0);
  if (b->failed) return;
  if (at + (size_t)n + 1 > b->cap) {
    char *ns = realloc(b->s, at + (size_t)n + 1);
    if (!ns) {
      b->failed = 1;
      return;
    }
    b->s = ns;
    b->cap = at + (size_t)n + 1;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + at, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n = at + (size_t)n;
}

const char *rs__sb_view(const rs__sb *b) { return b->s ? b->s : ""; }

char *rs__sb_take(rs__sb *b)
{
  char *s = b->failed ? NULL : b->s ? b->s : strdup("");
  if (b->failed) free(b->s);
  *b = (rs__sb){0};
  return s;
}

void rs__sb_free(rs__sb *b)
{
  free(b->s);
  *b = (rs__sb){0};
}

void rs__sb_clear(rs__sb *b)
{
  b->n = 0;
  if (b->s) b->s[0] = '\0';
}

void rs__sb_list(rs__sb *b, char *const *items, size_t n, size_t limit)
{
  size_t used = 0, i = 0;
  for (; i < n; i++) {
    size_t len = strlen(items[i]);
    if (i > 0 && used + len > limit) break;
    rs__sb_str(b, i ? ", " : "");
    rs__sb_str(b, *items[i] ? items[i] : "(empty)");
    used += len + 2;
  }
  if (i < n) rs__sb_printf(b, ", ... (%zu more)", n - i);
}

/* The ranges of the second byte are those of Unicode's Table 3-7: they rule
 * out overlong forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and
 * code points past U+10FFFF (F4 90..BF). */
size_t rs__utf8_seq_len(const unsigned char *s, size_t n, size_t *bad)
{
  const unsigned c = s[0];
  size_t len;
  unsigned lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
  } else {
    *bad = 1; /* a stray continuation byte, C0, C1 or F5..FF */
    return 0;
  }
  for (size_t i = 1; i < len; i++) {
    const unsigned d = i < n ? s[i] : 0;
    const int ok = i == 1 ? d >= lo && d <= hi : d >= 0x80 && d <= 0xBF;
    if (!ok) {
      *bad = i;
      return 0;
    }
  }
  return len;
}

void rs__sb_escaped(rs__sb *b, const char *s, size_t n, rs__sb_escape_fn escape)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0; /* run: bytes at u[i - run .. i) to copy as they are */
  while (i < n) {
    const unsigned c = u[i];
    const char *esc = NULL;
    char hex[8];
    size_t len = 1, bad = 0;
    if (c < 0x80) esc = escape(c, hex);
    else if (!(len = rs__utf8_seq_len(u + i, n - i, &bad))) {
      esc = "\xEF\xBF\xBD"; /* U+FFFD REPLACEMENT CHARACTER */
      len = bad;
    }
    if (!esc) {
      run += len;
      i += len;
      continue;
    }
    if (run) rs__sb_add(b, s + i - run, run);
    rs__sb_str(b, esc);
    run = 0;
    i += len;
  }
  if (run) rs__sb_add(b, s + i - run, run);
}

static const char *json_escape(unsigned c, char hex[8])
{
  switch (c) {
  case '"': return "\\\"";
  case '\\': return "\\\\";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  default:
    if (c >= 0x20) return NULL;
    snprintf(hex, 8, "\\u%04x", c);
    return hex;
  }
}

void rs__sb_json_str(rs__sb *b, const char *s, size_t n)
{
  rs__sb_add(b, "\"", 1);
  rs__sb_escaped(b, s, n, json_escape);
  rs__sb_add(b, "\"", 1);
}

void rs__sb_json_num(rs__sb *b, double v)
{
  if (!isfinite(v)) {
    rs__sb_str(b, "null");
    return;
  }
  char buf[32];
  rs__format_double(v, buf);
  rs__sb_str(b, buf);
}
