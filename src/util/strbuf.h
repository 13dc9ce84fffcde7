/* strbuf.h: a growable NUL-terminated text (internal), for labels, messages,
 * tables and JSON request bodies.
 *
 * Out of memory is sticky: once an append fails, `failed` is set, every
 * later append does nothing, and rs__sb_take returns NULL (and frees what
 * there was).  So a caller builds a whole text without checking each append
 * and checks once, at the take.  A zero-initialised rs__sb is empty and
 * valid.  Not for sharing across threads while it is being appended to. */
#ifndef RAGSWEEP_UTIL_STRBUF_H
#define RAGSWEEP_UTIL_STRBUF_H

#include <stddef.h>

#include "internal.h"

typedef struct rs__sb {
  char *s;       /* the text, NUL-terminated; NULL while nothing was added */
  size_t n, cap; /* length without the NUL; bytes allocated */
  int failed;    /* an append ran out of memory (sticky) */
} rs__sb;

/* Appends the n bytes at s (which may hold NULs; s may be NULL when n is 0). */
void rs__sb_add(rs__sb *b, const char *s, size_t n);
/* Appends the NUL-terminated s. */
void rs__sb_str(rs__sb *b, const char *s);
/* Appends printf(fmt, ...) in full, however long. */
void rs__sb_printf(rs__sb *b, const char *fmt, ...) RS_PRINTF(2, 3);
/* The text so far, or "" when there is none: a view valid until the next
 * append, take or free.  After a failure it is what was added before it. */
const char *rs__sb_view(const rs__sb *b);
/* Takes the text (malloc'd; "" when nothing was added); NULL if an append
 * ran out of memory.  b is empty (and usable) afterwards either way. */
char *rs__sb_take(rs__sb *b);
/* Frees the text; b is empty (and usable) afterwards. */
void rs__sb_free(rs__sb *b);
/* Empties b but keeps its memory for the next text (and a failure). */
void rs__sb_clear(rs__sb *b);

/* "a, b, c, ... (12 more)": the n items (an empty one as "(empty)"), with
 * at most about limit bytes of items before the count of the rest. */
void rs__sb_list(rs__sb *b, char *const *items, size_t n, size_t limit);

/* Names the replacement of ASCII byte c (hex: room for one of up to 7
 * characters), or NULL to keep it. */
typedef const char *(*rs__sb_escape_fn)(unsigned c, char hex[8]);
/* Appends the n bytes at s with each ASCII byte that escape names
 * replaced, and bytes that are not valid UTF-8 as U+FFFD (one per maximal
 * invalid subpart, as below): the loop of every text format's escaping. */
void rs__sb_escaped(rs__sb *b, const char *s, size_t n, rs__sb_escape_fn escape);
/* Appends the n bytes at s as a JSON string literal, quotes included:
 * '"' and '\' escaped, \b \f \n \r \t in their short forms, other control
 * characters (and NUL) as \u00XX.  Bytes that are not valid UTF-8 (stray
 * continuation bytes, overlong forms, surrogates, code points past
 * U+10FFFF, truncated sequences) become U+FFFD, one per maximal invalid
 * subpart (Unicode's recommended practice), so the output is always valid
 * JSON and valid UTF-8. */
void rs__sb_json_str(rs__sb *b, const char *s, size_t n);
/* The length of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0 when
 * it is not valid; then *bad is the length of its maximal invalid subpart
 * (>= 1), which the escapers replace by one U+FFFD. */
size_t rs__utf8_seq_len(const unsigned char *s, size_t n, size_t *bad);

/* Appends v as a JSON number, the shortest text that reads back as v
 * (rs__format_double); NaN and infinities, which JSON lacks, as null. */
void rs__sb_json_num(rs__sb *b, double v);

#endif
