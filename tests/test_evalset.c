/* test_evalset.c: the JSON evaluation-set reader (src/formats/evalset.h).
 *
 * Each test writes its fixture from a string literal into a fresh temporary
 * folder.  Expected orders and grades are worked out by hand from the rules
 * in evalset.h; every rejection checks the code, that the message starts
 * with the file name, and a piece of the message that says where the
 * problem is and what was found. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/evalset.h"

enum { MAX_FILES = 8 };

static char dir[64];
static char files[MAX_FILES][128];
static int n_files;

static void setup(void)
{
  strcpy(dir, "/tmp/rs_evalset_XXXXXX");
  cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
  n_files = 0;
}

static void teardown(void)
{
  for (int i = 0; i < n_files; i++) unlink(files[i]);
  rmdir(dir);
}

TestSuite(evalset, .init = setup, .fini = teardown);

/* Writes n bytes of text to dir/name; returns the path. */
static const char *fixture_n(const char *name, const char *text, size_t n)
{
  cr_assert_lt(n_files, MAX_FILES);
  char *path = files[n_files++];
  snprintf(path, sizeof files[0], "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot create %s", path);
  cr_assert_eq(fwrite(text, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
  return path;
}

static const char *fixture(const char *text) { return fixture_n("evalset.json", text, strlen(text)); }

static rs__evalset *read_ok(const char *path)
{
  rs__evalset *s = NULL;
  rs_error e = {RS_OK, ""};
  rs_code rc = rs__evalset_read(path, &s, &e);
  cr_assert_eq(rc, RS_OK, "unexpected failure (%d): %s", rc, e.msg);
  cr_assert_not_null(s);
  return s;
}

/* Reads path expecting code, a message that starts with path and contains
 * want, and *out left alone. */
static void reject_path(const char *path, rs_code code, const char *want)
{
  static rs__evalset canary;
  rs__evalset *s = &canary;
  rs_error e = {RS_OK, ""};
  rs_code rc = rs__evalset_read(path, &s, &e);
  cr_assert_eq(rc, code, "expected code %d, got %d: %s", code, rc, e.msg);
  cr_assert_eq(e.code, code);
  cr_assert_eq(strncmp(e.msg, path, strlen(path)), 0, "message does not start with %s: %s", path, e.msg);
  cr_assert_not_null(strstr(e.msg, want), "message lacks [%s]: %s", want, e.msg);
  cr_assert_eq(s, &canary, "*out was written on failure");
}

static void reject(const char *text, rs_code code, const char *want) { reject_path(fixture(text), code, want); }

/* Checks query q's docs and grades exactly. */
static void expect_docs(const rs__evalset *s, size_t q, size_t n, const char *const *docs, const int32_t *grades)
{
  cr_assert_eq(s->off[q + 1] - s->off[q], n, "query %zu: %zu docs, expected %zu", q, s->off[q + 1] - s->off[q], n);
  for (size_t i = 0; i < n; i++) {
    cr_assert_str_eq(s->doc_id[s->off[q] + i], docs[i], "query %zu doc %zu", q, i);
    cr_assert_eq(s->grade[s->off[q] + i], grades[i], "query %zu doc %s: grade %d, expected %d", q, docs[i],
                 s->grade[s->off[q] + i], grades[i]);
  }
}

/* ---------------------------------------------------------------------------
 * Accepted files
 * ------------------------------------------------------------------------- */

Test(evalset, reads_valid_file)
{
  const char *path = fixture("{\"name\": \"seed-v2\", \"queries\": [\n"
                             "  {\"id\": \"q1\", \"query\": \"what is bm25?\",\n"
                             "   \"relevant_doc_ids\": [\"d3\", \"d1\", \"d3\"],\n"
                             "   \"graded_relevance\": {\"d1\": 2, \"d9\": 0, \"d4\": 3},\n"
                             "   \"extra\": {\"nested\": [1, 2.5, null, \"x\", {\"id\": 9}]}},\n"
                             "  {\"id\": 42, \"relevant_doc_ids\": []},\n"
                             "  {\"query\": \"caf\\u00e9\", \"id\": \"q\\u00e9\",\n"
                             "   \"graded_relevance\": {\"d2\": -1, \"d\\u0031\": 1, \"d3\": 2147483647},\n"
                             "   \"relevant_doc_ids\": [\"d1\", \"d5\"]},\n"
                             "  {\"id\": -5, \"query\": null, \"relevant_doc_ids\": null, \"graded_relevance\": null}\n"
                             "]}\n");
  rs__evalset *s = read_ok(path);
  cr_assert_eq(s->n_queries, 4);
  /* Integer ids become their decimal text; \u00e9 is UTF-8 c3 a9. */
  cr_assert_str_eq(s->query_id[0], "q1");
  cr_assert_str_eq(s->query_id[1], "42");
  cr_assert_str_eq(s->query_id[2], "q\xc3\xa9");
  cr_assert_str_eq(s->query_id[3], "-5");
  cr_assert_str_eq(s->query_text[0], "what is bm25?");
  cr_assert_str_eq(s->query_text[1], "");
  cr_assert_str_eq(s->query_text[2], "caf\xc3\xa9");
  cr_assert_str_eq(s->query_text[3], "");
  cr_assert_eq(s->off[0], 0);
  /* q1: relevant_doc_ids first (d3 once, d1), then the graded keys not yet
   * seen (d9, d4); d1's grade 2 replaces the implied 1. */
  expect_docs(s, 0, 4, (const char *[]){"d3", "d1", "d9", "d4"}, (const int32_t[]){1, 2, 0, 3});
  expect_docs(s, 1, 0, NULL, NULL);
  /* qé: d1 and d5 from relevant_doc_ids (d1 graded 1 through "d\u0031"),
   * then d2 and d3 from graded_relevance. */
  expect_docs(s, 2, 4, (const char *[]){"d1", "d5", "d2", "d3"}, (const int32_t[]){1, 1, -1, INT32_MAX});
  expect_docs(s, 3, 0, NULL, NULL);
  cr_assert_eq(s->off[4], 8);
  rs__evalset_free(s);
}

Test(evalset, empty_queries_array)
{
  rs__evalset *s = read_ok(fixture("{\"queries\": []}"));
  cr_assert_eq(s->n_queries, 0);
  cr_assert_not_null(s->off);
  cr_assert_eq(s->off[0], 0);
  rs__evalset_free(s);
}

Test(evalset, graded_zero_overrides_relevant)
{
  /* A doc listed as relevant but graded 0 is judged non-relevant. */
  rs__evalset *s = read_ok(fixture("{\"queries\": [{\"id\": \"a\", \"relevant_doc_ids\": [\"x\", \"y\"],"
                                   " \"graded_relevance\": {\"y\": 0, \"x\": 5}}]}"));
  expect_docs(s, 0, 2, (const char *[]){"x", "y"}, (const int32_t[]){5, 0});
  rs__evalset_free(s);
}

Test(evalset, repeated_graded_key_with_same_grade)
{
  /* The same doc graded twice alike is one judgment, at its first place. */
  rs__evalset *s = read_ok(fixture("{\"queries\": [{\"id\": \"a\","
                                   " \"graded_relevance\": {\"p\": 2, \"q\": 1, \"p\": 2}}]}"));
  expect_docs(s, 0, 2, (const char *[]){"p", "q"}, (const int32_t[]){2, 1});
  rs__evalset_free(s);
}

Test(evalset, byte_order_mark_and_white_space)
{
  rs__evalset *s = read_ok(fixture("\xEF\xBB\xBF\r\n\t {\"queries\" : [ {\"id\" : 1} ] } \n\n"));
  cr_assert_eq(s->n_queries, 1);
  cr_assert_str_eq(s->query_id[0], "1");
  rs__evalset_free(s);
}

/* A growing text buffer for generated fixtures. */
typedef struct {
  char *p;
  size_t cap;
} gen_text;

static void appendf(gen_text *t, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(gen_text *t, size_t *len, const char *fmt, ...)
{
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = t->p ? vsnprintf(t->p + *len, t->cap - *len, fmt, ap) : -1;
    va_end(ap);
    if (n >= 0 && (size_t)n < t->cap - *len) {
      *len += (size_t)n;
      return;
    }
    t->cap = t->cap ? t->cap * 2 : 1 << 16;
    t->p = realloc(t->p, t->cap);
    if (!t->p) abort();
  }
}

Test(evalset, many_queries_and_docs)
{
  /* 3000 queries (even ones with string ids, odd ones with integer ids);
   * query 1500 lists d0..d299 twice and grades d0..d149 as 2 and the new
   * docs e0..e99 as 0: 400 docs, which grows the per-query doc set. */
  enum { NQ = 3000, BIG = 1500 };
  gen_text t = {0};
  size_t len = 0;
  appendf(&t, &len, "{\"queries\": [");
  for (int q = 0; q < NQ; q++) {
    if (q % 2 == 0) appendf(&t, &len, "%s{\"id\": \"q%d\"", q ? "," : "", q);
    else appendf(&t, &len, ",{\"id\": %d", q);
    appendf(&t, &len, ", \"relevant_doc_ids\": [\"d%d\"", q);
    if (q == BIG)
      for (int r = 0; r < 2; r++)
        for (int d = 0; d < 300; d++) appendf(&t, &len, ", \"d%d\"", d);
    appendf(&t, &len, "]");
    if (q == BIG) {
      appendf(&t, &len, ", \"graded_relevance\": {\"d0\": 2");
      for (int d = 1; d < 150; d++) appendf(&t, &len, ", \"d%d\": 2", d);
      for (int d = 0; d < 100; d++) appendf(&t, &len, ", \"e%d\": 0", d);
      appendf(&t, &len, "}");
    }
    appendf(&t, &len, "}");
  }
  appendf(&t, &len, "]}");
  rs__evalset *s = read_ok(fixture_n("big.json", t.p, len));
  cr_assert_eq(s->n_queries, NQ);
  cr_assert_str_eq(s->query_id[0], "q0");
  cr_assert_str_eq(s->query_id[1], "1");
  cr_assert_str_eq(s->query_id[2998], "q2998");
  cr_assert_str_eq(s->query_id[2999], "2999");
  /* Every query but BIG has its one doc d<q>; BIG's own d1500 is outside
   * d0..d299 so it comes first, then d0..d299, then e0..e99. */
  cr_assert_eq(s->off[NQ], (NQ - 1) + 1 + 300 + 100);
  size_t b = s->off[BIG];
  cr_assert_eq(s->off[BIG + 1] - b, 401);
  cr_assert_str_eq(s->doc_id[b], "d1500");
  cr_assert_eq(s->grade[b], 1);
  for (int d = 0; d < 300; d++) {
    char want[16];
    sprintf(want, "d%d", d);
    cr_assert_str_eq(s->doc_id[b + 1 + (size_t)d], want);
    cr_assert_eq(s->grade[b + 1 + (size_t)d], d < 150 ? 2 : 1, "grade of %s", want);
  }
  cr_assert_str_eq(s->doc_id[b + 301], "e0");
  cr_assert_str_eq(s->doc_id[b + 400], "e99");
  cr_assert_eq(s->grade[b + 400], 0);
  cr_assert_str_eq(s->doc_id[s->off[2999]], "d2999");
  rs__evalset_free(s);

  /* The same file with the first id repeated at the very end. */
  len -= 2; /* drop "]}" */
  appendf(&t, &len, ",{\"id\": \"q0\"}]}");
  reject_path(fixture_n("dup.json", t.p, len), RS_DUPLICATE,
              ": queries[3000] (id \"q0\"): duplicate query id: queries[0] has it too");
  free(t.p);
}

Test(evalset, free_accepts_null) { rs__evalset_free(NULL); }

/* ---------------------------------------------------------------------------
 * Rejected files
 * ------------------------------------------------------------------------- */

Test(evalset, rejects_missing_file)
{
  char path[160];
  snprintf(path, sizeof path, "%s/no-such.json", dir);
  reject_path(path, RS_IO, "no-such.json: cannot open");
}

Test(evalset, rejects_empty_file) { reject("", RS_FORMAT, "evalset.json: the file is empty"); }

Test(evalset, rejects_not_json_with_position)
{
  /* The trailing comma is at line 2, column 14; json-c stops at the '}'
   * after it, column 15. */
  reject("{\"queries\": [\n  {\"id\": \"q1\",}\n]}", RS_FORMAT, "evalset.json:2:15: not valid JSON: ");
  reject("{\"queries\": [\n  {\"id\": \"q1\",}\n]}", RS_FORMAT, "found '}'");
}

Test(evalset, rejects_single_quoted_value)
{
  reject("{\"queries\": [{\"id\": 'q1'}]}", RS_FORMAT, "evalset.json:1:21: not valid JSON: ");
}

Test(evalset, rejects_unterminated_json)
{
  /* Line 2 has 12 bytes, so the end of the file is at its column 13. */
  reject("{\"queries\": [\n{\"id\": \"q1\"}", RS_FORMAT,
         "evalset.json:2:13: not valid JSON: the file ends inside a value");
}

Test(evalset, rejects_trailing_garbage)
{
  reject("{\"queries\": []}\n  {\"queries\": []}\n", RS_FORMAT,
         "evalset.json:2:3: unexpected data after the top-level JSON value: found '{'");
}

Test(evalset, rejects_nul_byte_after_value)
{
  reject_path(fixture_n("evalset.json", "{\"queries\": []}\0", 16), RS_FORMAT,
              "evalset.json:1:16: unexpected data after the top-level JSON value: found byte 0x00");
}

Test(evalset, rejects_top_level_not_object)
{
  reject("[{\"id\": \"q1\"}]", RS_FORMAT,
         "evalset.json: expected a JSON object with a \"queries\" array at the top level, found array");
}

Test(evalset, rejects_missing_queries)
{
  reject("{\"query\": [{\"id\": \"q1\"}]}", RS_FORMAT, "evalset.json: no \"queries\" key at the top level");
}

Test(evalset, rejects_queries_not_array)
{
  reject("{\"queries\": {\"id\": \"q1\"}}", RS_FORMAT,
         "evalset.json: \"queries\": expected an array of query objects, found object");
}

Test(evalset, rejects_repeated_queries_key)
{
  reject("{\"queries\": [], \"queries\": [{\"id\": 1}]}", RS_FORMAT,
         "evalset.json: the top-level key \"queries\" appears twice with different values");
}

Test(evalset, rejects_query_not_object)
{
  reject("{\"queries\": [{\"id\": \"q1\"}, \"q2\"]}", RS_FORMAT,
         "evalset.json: queries[1]: expected a query object, found string \"q2\"");
}

Test(evalset, rejects_missing_id)
{
  reject("{\"queries\": [{\"id\": \"q1\"}, {\"query\": \"x\", \"relevant_doc_ids\": []}]}", RS_FORMAT,
         "evalset.json: queries[1]: no \"id\"; expected \"id\" with a string or an integer");
}

Test(evalset, rejects_non_integer_id)
{
  reject("{\"queries\": [{\"id\": 7.0}]}", RS_FORMAT,
         "evalset.json: queries[0]: id: expected a string or an integer, found number 7.0");
}

Test(evalset, rejects_boolean_id)
{
  reject("{\"queries\": [{\"id\": true}]}", RS_FORMAT,
         "evalset.json: queries[0]: id: expected a string or an integer, found boolean true");
}

Test(evalset, rejects_empty_id)
{
  reject("{\"queries\": [{\"id\": \"\"}]}", RS_FORMAT,
         "evalset.json: queries[0]: id: expected a non-empty string without NUL characters, found string \"\"");
}

Test(evalset, rejects_id_beyond_64_bits)
{
  reject("{\"queries\": [{\"id\": 99999999999999999999}]}", RS_FORMAT,
         "evalset.json: queries[0]: id: expected a string or an integer in (-2^63, 2^63 - 1)");
}

Test(evalset, rejects_repeated_id_key)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"id\": \"q2\"}]}", RS_FORMAT,
         "evalset.json: queries[0]: key \"id\" appears twice with different values");
}

Test(evalset, rejects_duplicate_id)
{
  reject("{\"queries\": [{\"id\": \"q1\"}, {\"id\": \"q7\"}, {\"id\": \"q3\"}, {\"id\": \"q7\"}]}", RS_DUPLICATE,
         "evalset.json: queries[3] (id \"q7\"): duplicate query id: queries[1] has it too");
}

Test(evalset, rejects_duplicate_id_integer_and_string)
{
  /* 7 and "7" are the same id once 7 is written in decimal. */
  reject("{\"queries\": [{\"id\": 7}, {\"id\": \"7\"}]}", RS_DUPLICATE,
         "evalset.json: queries[1] (id \"7\"): duplicate query id: queries[0] has it too");
}

Test(evalset, rejects_query_text_not_string)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"query\": [\"a\"]}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): query: expected a string, found array");
}

Test(evalset, rejects_relevant_not_array)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"relevant_doc_ids\": \"d1\"}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): relevant_doc_ids: expected an array of doc id strings, found string "
         "\"d1\"");
}

Test(evalset, rejects_non_string_doc_id)
{
  reject("{\"queries\": [{\"id\": \"q1\"}, {\"id\": \"q2\", \"relevant_doc_ids\": [\"d1\", 5]}]}", RS_FORMAT,
         "evalset.json: queries[1] (id \"q2\"): relevant_doc_ids[1]: expected a non-empty doc id string without NUL "
         "characters, found number 5");
}

Test(evalset, rejects_nul_in_doc_id)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"relevant_doc_ids\": [\"d\\u0000x\"]}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): relevant_doc_ids[0]: expected a non-empty doc id string without NUL "
         "characters, found string \"d\\u0000x\"");
}

Test(evalset, rejects_nul_in_graded_key)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d\\u0000x\": 1}}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): graded_relevance: doc id \"d\\u0000x\" contains a NUL character");
}

Test(evalset, rejects_graded_not_object)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": [\"d1\"]}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): graded_relevance: expected an object mapping doc ids to integer "
         "grades, found array");
}

Test(evalset, rejects_string_grade)
{
  reject("{\"queries\": [{\"id\": \"q1\"}, {\"id\": \"q2\"}, {\"id\": \"q3\"},\n"
         " {\"id\": \"q7\", \"graded_relevance\": {\"d1\": 1, \"d2\": \"2\"}}]}",
         RS_FORMAT,
         "evalset.json: queries[3] (id \"q7\"): graded_relevance[\"d2\"]: expected an integer grade, found string "
         "\"2\"");
}

Test(evalset, rejects_fractional_grade)
{
  /* Only JSON integers are grades, even when the value is integral. */
  reject("{\"queries\": [{\"id\": 3, \"graded_relevance\": {\"d1\": 2.0}}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"3\"): graded_relevance[\"d1\"]: expected an integer grade, found number 2.0");
}

Test(evalset, rejects_null_grade)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d1\": null}}]}", RS_FORMAT,
         "graded_relevance[\"d1\"]: expected an integer grade, found null");
}

Test(evalset, rejects_grade_above_int32)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d1\": 2147483648}}]}", RS_FORMAT,
         "evalset.json: queries[0] (id \"q1\"): graded_relevance[\"d1\"]: expected an integer grade in "
         "[-2147483647, 2147483647], found number 2147483648");
}

Test(evalset, rejects_grade_int32_min)
{
  /* INT32_MIN is the "not judged" marker of the qrels tables. */
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d1\": -2147483648}}]}", RS_FORMAT,
         "graded_relevance[\"d1\"]: expected an integer grade in [-2147483647, 2147483647], found number -2147483648");
}

Test(evalset, rejects_doc_graded_twice)
{
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d1\": 1, \"d2\": 0, \"d1\": 2}}]}", RS_DUPLICATE,
         "evalset.json: queries[0] (id \"q1\"): graded_relevance[\"d1\"]: the doc is graded twice with different "
         "grades (1, then 2)");
}

Test(evalset, rejects_doc_graded_twice_through_escape)
{
  /* "d\u0031" is "d1": json-c merges the two keys, the raw scan does not. */
  reject("{\"queries\": [{\"id\": \"q1\", \"graded_relevance\": {\"d\\u0031\": 3, \"d1\": 1}}]}", RS_DUPLICATE,
         "graded_relevance[\"d1\"]: the doc is graded twice with different grades (3, then 1)");
}
