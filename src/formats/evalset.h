/* evalset.h: the seeds' JSON evaluation-set format (internal).
 *
 *   {"queries": [{"id": "q1", "query": "text",
 *                 "relevant_doc_ids": ["d1", "d2"],
 *                 "graded_relevance": {"d1": 2, "d3": 1}}, ...]}
 *
 * A doc in relevant_doc_ids has grade 1 unless graded_relevance gives its
 * grade; graded_relevance may also judge docs that relevant_doc_ids does
 * not list (a grade of 0 judges a doc non-relevant).  "query",
 * "relevant_doc_ids" and "graded_relevance" are optional; "id" is required
 * and may be a string or an integer.  src/formats/evalset_json.c is the only file
 * of src/formats that includes <json-c/json.h>: the JSONL readers
 * (texts.c, rag_samples.c, textruns.c, detect.c) go through the views at the
 * end. */
#ifndef RAGSWEEP_EVALSET_H
#define RAGSWEEP_EVALSET_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct rs__evalset {
  size_t n_queries;
  char **query_id;   /* [n_queries], in file order, unique */
  char **query_text; /* [n_queries], "" when absent */
  /* Judgments, CSR by query in file order: query i owns [off[i], off[i+1]).
   * Within a query, docs are unique and in first-appearance order
   * (relevant_doc_ids first, then graded_relevance keys in file order). */
  size_t *off;       /* [n_queries + 1] */
  char **doc_id;     /* [off[n_queries]] */
  int32_t *grade;    /* [off[n_queries]] */
} rs__evalset;

/* Reads and validates path.  Errors (RS_IO, RS_FORMAT, RS_DUPLICATE) name
 * the file and the query (by index and id) and say what was expected and
 * what was found: not JSON, no "queries" array, a query without "id", a
 * duplicate query id, a non-string doc id, a grade that is not an integer
 * in int32 range, a doc graded twice with different grades.
 *
 * Details: the file is strict JSON (json-c's strict mode; a UTF-8 byte order
 * mark is skipped; anything but white space after the top-level object is
 * an error).  An integer id is written in decimal, so 7 and "7" are the same
 * id (RS_DUPLICATE); integer ids must lie strictly inside the int64 range.
 * Ids and doc ids must be non-empty and free of NUL.  A grade must be a JSON
 * integer (2.0 is refused) in [INT32_MIN + 1, INT32_MAX]: INT32_MIN marks
 * "not judged" in the qrels tables.  A null "query", "relevant_doc_ids" or
 * "graded_relevance" counts as absent; other keys are ignored.  A key
 * repeated in an object (json-c would keep the last silently) is an error
 * unless both values are written identically: a doc graded twice
 * differently is RS_DUPLICATE, a repeated "id", "query", "relevant_doc_ids",
 * "graded_relevance" or top-level "queries" is RS_FORMAT.  Listing a doc
 * twice in relevant_doc_ids is one judgment.  *out is set only on success. */
rs_code rs__evalset_read(const char *path, rs__evalset **out, rs_error *err);
void rs__evalset_free(rs__evalset *s);

/* --- JSONL text records (for src/formats/texts.c) --------------------------
 *
 * One line of a text collection in JSONL: an object with the id under
 * "_id", "id" or "docid" (the first of these present; a string, or an
 * integer written in decimal), the text under "text" (or "contents", the
 * Pyserini layout) and an optional "title" (a string or null).  Other keys
 * are ignored.  A parser is reused line after line and used by one thread. */
typedef struct rs__jsonl rs__jsonl;

rs_code rs__jsonl_new(rs__jsonl **out, rs_error *err);
/* Frees the parser and the views of its last record; accepts NULL. */
void rs__jsonl_free(rs__jsonl *p);

typedef struct rs__text_record {
  const char *id, *title, *text; /* views valid until the next parse or free */
  size_t id_len, title_len, text_len; /* title_len is 0 when absent */
} rs__text_record;

/* Parses line[0, len) (no newline) of file name at line line_no.  Errors
 * (RS_FORMAT) say name:line_no, what was expected and what was found: not
 * strict JSON, not an object, no id or text, an empty id, an id or a text
 * of the wrong type, NUL bytes in an id. */
rs_code rs__json_text_record(rs__jsonl *p, const char *name, size_t line_no, const char *line, size_t len,
                             rs__text_record *out, rs_error *err);

/* --- JSONL objects of any keys (for src/formats/rag_samples.c) -------------
 *
 * A line parsed into one object whose members are read through the views
 * below, so that json-c stays in this file.  Views are valid until the
 * next parse with the same parser, or its free. */
typedef enum {
  RS_JSON_NULL, RS_JSON_BOOL, RS_JSON_INT, RS_JSON_DOUBLE, RS_JSON_STRING, RS_JSON_ARRAY, RS_JSON_OBJECT
} rs__json_kind;
typedef struct rs__json rs__json; /* a value of the last line parsed (opaque) */

/* Parses line[0, len) (no newline) of file name, line line_no: one strict
 * JSON object with nothing but white space after it.  A key that appears
 * twice (json-c would keep the last silently) or that holds \u0000 (json-c
 * would cut it there) is RS_FORMAT naming it; so are the errors of
 * rs__json_text_record.  *n_members: the number of members. */
rs_code rs__jsonl_object(rs__jsonl *p, const char *name, size_t line_no, const char *line, size_t len,
                         size_t *n_members, rs_error *err);
/* Member i (0 <= i < n_members, in file order): its key, and *value. */
const char *rs__jsonl_member(const rs__jsonl *p, size_t i, const rs__json **value);

rs__json_kind rs__json_kind_of(const rs__json *v);
/* A string's bytes (NUL-terminated; may hold NULs from \u0000: see len). */
const char *rs__json_str(const rs__json *v, size_t *len);
int rs__json_bool(const rs__json *v);
/* An integer or a double as a double. */
double rs__json_num(const rs__json *v);
/* A number's text as the file wrote it (json-c keeps the text of a parsed
 * double; an integer is written in decimal), borrowed like the views.  A
 * reader that parses it again with strtod gets the double json-c has. */
const char *rs__json_num_text(const rs__json *v, size_t *len);
/* An integer in decimal, in buf; NULL when it lies at or beyond json-c's
 * bounds (INT64_MIN, UINT64_MAX), where json-c clamps what the file says. */
const char *rs__json_int_text(const rs__json *v, char buf[24]);
/* An array's length and its element i. */
size_t rs__json_len(const rs__json *v);
const rs__json *rs__json_at(const rs__json *v, size_t i);
/* What v is, for "found ..." in messages: "number 2.0", "string \"a\"",
 * "array", "boolean true", ... (strings cut at 40 bytes). */
enum { RS_JSON_DESCRIBE_CAP = 6 * 40 + 24 };
const char *rs__json_describe(char buf[RS_JSON_DESCRIBE_CAP], const rs__json *v);

#endif
