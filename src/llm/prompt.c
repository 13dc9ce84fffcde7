/* prompt.c: built-in and user judging prompts, rendering and label parsing. */
#define _GNU_SOURCE
#include "llm/prompt.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The wording is ours; the method (a YES/NO answerability question per
 * passage) and the 0-3 scale with its definitions follow the RAG guides'
 * "Answer Presence" judging and UMBRELA (TREC RAG 2024). README, "judge". */
static const char binary_system[] = "You are a careful relevance assessor for a search engine.";
static const char binary_user[] =
    "Question: {query}\n"
    "\n"
    "Passage: {document}\n"
    "\n"
    "Can an answer to the question be derived from this passage? "
    "Reply with exactly one word: YES or NO.";

static const char graded_system[] = "You are a careful relevance assessor for a search engine.";
static const char graded_user[] =
    "Rate how well the passage answers the question, on this scale:\n"
    "0 = the passage has nothing to do with the question.\n"
    "1 = the passage is related to the question but does not answer it.\n"
    "2 = the passage answers the question in part: some of the answer is there, or it is unclear "
    "or buried in unrelated text.\n"
    "3 = the passage is dedicated to the question and contains the exact answer.\n"
    "\n"
    "Question: {query}\n"
    "\n"
    "Passage: {document}\n"
    "\n"
    "Consider what the question asks and what the passage says, then end your reply with a last "
    "line of the form \"Final score: N\", where N is 0, 1, 2 or 3.";

static char *dup_str(const char *s)
{
  char *d = s ? strdup(s) : NULL;
  return d;
}

void rs__prompt_free(rs__prompt *p)
{
  free(p->name);
  free(p->system);
  free(p->user);
  free(p->label_prefix);
  memset(p, 0, sizeof *p);
}

static rs_code builtin(rs__prompt *p, rs__prompt_kind kind, rs_error *err)
{
  p->kind = kind;
  p->name = dup_str(kind == RS_PROMPT_BINARY ? "binary" : "graded");
  p->system = dup_str(kind == RS_PROMPT_BINARY ? binary_system : graded_system);
  p->user = dup_str(kind == RS_PROMPT_BINARY ? binary_user : graded_user);
  p->yes_no = kind == RS_PROMPT_BINARY;
  p->max_label = kind == RS_PROMPT_BINARY ? 1 : 3;
  p->label_prefix = dup_str(kind == RS_PROMPT_BINARY ? "" : "Final score");
  /* a YES/NO word, or a few sentences and the final line */
  p->expect_tokens = kind == RS_PROMPT_BINARY ? 2 : 120;
  if (!p->name || !p->system || !p->user || !p->label_prefix) {
    rs__prompt_free(p);
    return rs__fail(err, RS_NOMEM, "out of memory");
  }
  return RS_OK;
}

static char *trim(char *s)
{
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
  return s;
}

/* A prompt file: "key: value" header lines (labels, system, label-prefix,
 * expect-tokens; '#' starts a comment line), a blank line, the template. */
static rs_code load_file(const char *path, rs__prompt *p, rs_error *err)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return rs__fail(err, RS_IO, "--prompt %s: cannot open: %s (expected 'binary', 'graded' or a prompt file)", path,
                    strerror(errno));
  char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *t = realloc(text, cap);
      if (!t) {
        free(text);
        fclose(f);
        return rs__fail(err, RS_NOMEM, "out of memory reading %s", path);
      }
      text = t;
    }
    size_t got = fread(text + len, 1, 4096, f);
    len += got;
    if (got < 4096) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(text);
    return rs__fail(err, RS_IO, "%s: read error", path);
  }
  text[len] = '\0';
  if (strlen(text) != len) {
    free(text);
    return rs__fail(err, RS_FORMAT, "%s: contains a NUL byte; expected a text prompt file", path);
  }
  p->kind = RS_PROMPT_FILE;
  p->name = dup_str(path);
  p->max_label = -1;
  p->expect_tokens = -1;
  rs_code rc = RS_OK;
  char *line = text;
  size_t line_no = 0;
  for (;;) {
    line_no++;
    char *nl = strchr(line, '\n');
    if (!nl) {
      rc = rs__fail(err, RS_FORMAT,
                    "%s:%zu: expected a blank line between the header (labels: ...) and the template, found the end "
                    "of the file",
                    path, line_no);
      goto done;
    }
    *nl = '\0';
    char *l = trim(line);
    line = nl + 1;
    if (*l == '\0') break;
    if (*l == '#') continue;
    char *colon = strchr(l, ':');
    if (!colon) {
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: expected 'key: value' (labels, system, label-prefix, expect-tokens), found '%s'",
                    path, line_no, l);
      goto done;
    }
    *colon = '\0';
    char *key = trim(l), *val = trim(colon + 1);
    if (strcmp(key, "labels") == 0) {
      int a, b, used = 0;
      if (strcasecmp(val, "yes/no") == 0) {
        p->yes_no = 1, p->max_label = 1;
      } else if (sscanf(val, "%d..%d%n", &a, &b, &used) == 2 && val[used] == '\0' && a == 0 && b >= 1 && b <= 100) {
        p->max_label = b;
      } else {
        rc = rs__fail(err, RS_FORMAT, "%s:%zu: labels: expected 'yes/no' or '0..N' (N from 1 to 100), found '%s'", path,
                      line_no, val);
        goto done;
      }
    } else if (strcmp(key, "system") == 0) {
      free(p->system);
      p->system = dup_str(val);
    } else if (strcmp(key, "label-prefix") == 0) {
      free(p->label_prefix);
      p->label_prefix = dup_str(val);
    } else if (strcmp(key, "expect-tokens") == 0) {
      char *end;
      long v = strtol(val, &end, 10);
      if (end == val || *end || v < 1 || v > 100000) {
        rc = rs__fail(err, RS_FORMAT, "%s:%zu: expect-tokens: expected an integer from 1 to 100000, found '%s'", path,
                      line_no, val);
        goto done;
      }
      p->expect_tokens = (int)v;
    } else {
      rc = rs__fail(err, RS_FORMAT, "%s:%zu: unknown key '%s' (expected labels, system, label-prefix or expect-tokens)",
                    path, line_no, key);
      goto done;
    }
  }
  if (p->max_label < 0) {
    rc = rs__fail(err, RS_FORMAT, "%s: the header declares no label scale; add a line 'labels: yes/no' or 'labels: 0..N'",
                  path);
    goto done;
  }
  if (!strstr(line, "{query}") || !strstr(line, "{document}")) {
    rc = rs__fail(err, RS_FORMAT, "%s: the template must contain {query} and {document}", path);
    goto done;
  }
  p->user = dup_str(line);
  if (!p->label_prefix) p->label_prefix = dup_str(p->yes_no ? "" : "Final score");
  if (p->expect_tokens < 0) p->expect_tokens = p->yes_no ? 2 : 120;
  if (!p->user || !p->label_prefix || !p->name) rc = rs__fail(err, RS_NOMEM, "out of memory");
done:
  free(text);
  if (rc) rs__prompt_free(p);
  return rc;
}

rs_code rs__prompt_load(const char *spec, rs__prompt *p, rs_error *err)
{
  memset(p, 0, sizeof *p);
  if (strcmp(spec, "binary") == 0) return builtin(p, RS_PROMPT_BINARY, err);
  if (strcmp(spec, "graded") == 0) return builtin(p, RS_PROMPT_GRADED, err);
  return load_file(spec, p, err);
}

/* Bytes of the first max_chars code points of s[0..n) (whole sequences). */
static size_t prefix_bytes(const char *s, size_t n, size_t max_chars)
{
  size_t i = 0, chars = 0;
  while (i < n && chars < max_chars) {
    i++;
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++; /* continuation bytes */
    chars++;
  }
  return i;
}

char *rs__prompt_render(const rs__prompt *p, const char *query, const char *doc, size_t max_chars, int *cut)
{
  const size_t nq = strlen(query), nd_full = strlen(doc);
  size_t nd = max_chars ? prefix_bytes(doc, nd_full, max_chars) : nd_full;
  *cut = nd < nd_full;
  size_t cap = strlen(p->user) + 1;
  for (const char *t = p->user; (t = strstr(t, "{query}")); t += 7) cap += nq;
  for (const char *t = p->user; (t = strstr(t, "{document}")); t += 10) cap += nd;
  char *out = malloc(cap), *o = out;
  if (!out) return NULL;
  for (const char *t = p->user; *t;) {
    if (strncmp(t, "{query}", 7) == 0) {
      memcpy(o, query, nq), o += nq, t += 7;
    } else if (strncmp(t, "{document}", 10) == 0) {
      memcpy(o, doc, nd), o += nd, t += 10;
    } else {
      *o++ = *t++;
    }
  }
  *o = '\0';
  return out;
}

/* --- parsing ---------------------------------------------------------------- */

static int is_word(int c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whole-word, case-insensitive occurrences of w in s. */
static size_t count_word(const char *s, const char *w)
{
  const size_t n = strlen(w);
  size_t count = 0;
  for (const char *t = s; (t = strcasestr(t, w)); t += n)
    if ((t == s || !is_word(t[-1])) && !is_word(t[n])) count++;
  return count;
}

/* YES/NO: the reply's first word decides; otherwise exactly one of the two
 * words must occur (a reply that says both, or neither, is no label). */
static int parse_yes_no(const char *reply, int *label)
{
  const char *s = reply;
  while (*s && !isalpha((unsigned char)*s)) s++; /* "**Yes**", "\"NO\"", "- yes" */
  size_t n = 0;
  while (isalpha((unsigned char)s[n])) n++;
  if (n == 3 && strncasecmp(s, "yes", 3) == 0) return *label = 1, 1;
  if (n == 2 && strncasecmp(s, "no", 2) == 0) return *label = 0, 1;
  const size_t yes = count_word(reply, "yes"), no = count_word(reply, "no");
  if (yes && !no) return *label = 1, 1;
  if (no && !yes) return *label = 0, 1;
  return 0;
}

/* An integer in 0..max at s (after spaces, ':', '=', '*', '#'), not part of
 * a longer number or a decimal. */
static int read_grade(const char *s, int max, int *label)
{
  while (*s == ' ' || *s == '\t' || *s == ':' || *s == '=' || *s == '*' || *s == '#' || *s == '"') s++;
  if (!isdigit((unsigned char)*s)) return 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end == '.' && isdigit((unsigned char)end[1])) return 0; /* "2.5" */
  if (v < 0 || v > max) return 0;
  *label = (int)v;
  return 1;
}

/* Integer scales: the last "<prefix> N" in the reply, or a reply that is
 * only the number. */
static int parse_grade(const rs__prompt *p, const char *reply, int *label)
{
  const char *pre = p->label_prefix;
  const size_t n = strlen(pre);
  const char *last = NULL;
  if (n)
    for (const char *t = reply; (t = strcasestr(t, pre)); t += n) last = t;
  if (last) return read_grade(last + n, p->max_label, label);
  const char *s = reply;
  while (isspace((unsigned char)*s) || *s == '*' || *s == '"') s++;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || v < 0 || v > p->max_label) return 0;
  if (*end == '.') end++;
  while (isspace((unsigned char)*end) || *end == '*' || *end == '"') end++;
  if (*end) return 0;
  *label = (int)v;
  return 1;
}

int rs__prompt_parse(const rs__prompt *p, const char *reply, int *label)
{
  if (!reply) return 0;
  return p->yes_no ? parse_yes_no(reply, label) : parse_grade(p, reply, label);
}
