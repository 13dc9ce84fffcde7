/* wire.h: the OpenAI wire format: request bodies and reply parsing
 * (internal).  wire.c is the LLM layer's only json-c user.
 *
 * Request bodies are written byte for byte by this module (compact, fixed key
 * order, raw UTF-8, invalid UTF-8 replaced by U+FFFD), so the same inputs
 * always give the same bytes: the reply cache keys on a hash of them.
 * Every function is reentrant; nothing is shared between calls. */
#ifndef RAGSWEEP_LLM_WIRE_H
#define RAGSWEEP_LLM_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rs__chat_msg {
  const char *role;
  const char *content;
} rs__chat_msg;

typedef struct rs__chat_params {
  const char *model;
  double temperature; /* always written, so the server default never applies */
  int max_tokens;     /* 0: omitted */
} rs__chat_params;

/* The request body of POST {base}/chat/completions, malloc'd, NUL-terminated:
 * {"model":...,"messages":[{"role":..,"content":..}...],"temperature":T[,"max_tokens":N]}
 * in exactly this key order, compact.  T is the shortest round-trip decimal.
 * NULL strings are written as "".  Returns NULL when out of memory or when the
 * temperature is not finite (JSON has no NaN).  *len (if non-NULL) gets the
 * length without the NUL. */
char *rs__chat_request(const rs__chat_params *p, const rs__chat_msg *msgs, size_t n, size_t *len);

typedef enum {
  RS_REPLY_OK,
  RS_REPLY_NOT_JSON,
  RS_REPLY_NOT_UTF8,
  RS_REPLY_BAD_SHAPE,
  RS_REPLY_ERROR,
  RS_REPLY_TRUNCATED
} rs__reply_status;

typedef struct rs__chat_reply {
  rs__reply_status status;
  char *content;       /* choices[0].message.content (malloc'd; "" when null/absent on OK/TRUNCATED; else NULL) */
  char *finish_reason; /* or NULL */
  int64_t prompt_tokens, completion_tokens; /* usage, -1 when absent or not integers */
  char *error; /* NULL on OK; otherwise a short human message (the server's message for RS_REPLY_ERROR) */
} rs__chat_reply;

/* Parses a chat-completion reply.  Lenient: extra fields are ignored.  The
 * OpenAI/llama.cpp {"error":{"message":..}} (or {"error":"text"}) and vLLM
 * {"object":"error","message":..} shapes give RS_REPLY_ERROR; wrong JSON types
 * (content a number, choices not an array or empty...) BAD_SHAPE; bytes that
 * are not UTF-8 NOT_UTF8; finish_reason "length" TRUNCATED (content kept).
 * Never crashes on any input (body need not be NUL-terminated).  *out is
 * always filled and must be freed with rs__chat_reply_free; returns
 * out->status (an out-of-memory is reported as BAD_SHAPE with that message). */
rs__reply_status rs__chat_reply_parse(const char *body, size_t len, rs__chat_reply *out);
/* Frees the strings of r (r itself is the caller's); accepts NULL. */
void rs__chat_reply_free(rs__chat_reply *r);

/* The server's error message of an error body of any shape above, malloc'd,
 * or NULL when body is not such an error. */
char *rs__llm_error_message(const char *body, size_t len);

/* The request body of POST {base}/embeddings: {"model":M,"input":[..]},
 * compact, malloc'd; NULL when out of memory. */
char *rs__embed_request(const char *model, const char *const *inputs, size_t n, size_t *len);
/* Parses an embeddings reply: data[i].embedding ordered by data[i].index,
 * which must be 0..n_expected-1 once each, all of one dimension >= 1.
 * On OK, *vectors gets n_expected x *dim doubles (malloc'd, row-major) and
 * *prompt_tokens usage.prompt_tokens or -1; otherwise *vectors is NULL and
 * *error (if error is non-NULL) a malloc'd message.  Never crashes. */
rs__reply_status rs__embed_reply_parse(const char *body, size_t len, size_t n_expected, double **vectors,
                                       size_t *dim, int64_t *prompt_tokens, char **error);

/* 1 when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or code
 * points above U+10FFFF); otherwise 0 and *bad (if non-NULL) is the offset
 * of the first bad byte. */
int rs__utf8_valid(const char *s, size_t n, size_t *bad);

/* --- JSON in a model's reply text ----------------------------------------
 *
 * The metric prompts of `rag` and `synth` ask the model for one JSON
 * object.  Models wrap it in ```json fences or a sentence; the object taken
 * is the first '{' ... '}' span of the text that parses as JSON (strict
 * json-c, spans tried from each '{' in order, each to its balancing '}'
 * outside strings; at most 64 starts).  Anything else is no object: the
 * caller's failure. */
typedef struct rs__reply_obj rs__reply_obj;

/* The first JSON object in text, or NULL. */
rs__reply_obj *rs__reply_obj_parse(const char *text);
void rs__reply_obj_free(rs__reply_obj *o);

/* A string member (malloc'd copy), or NULL when absent or not a string. */
char *rs__reply_obj_string(const rs__reply_obj *o, const char *key);
/* An integer member: 1 and *v when it is an integer, a number with an
 * integral value, or a string of decimal digits ("4"); else 0. */
int rs__reply_obj_int(const rs__reply_obj *o, const char *key, long *v);
/* A 0/1 verdict member: integers 0/1, booleans, or the strings "0", "1",
 * "yes", "no" (any case); 1 and *v on success, else 0. */
int rs__reply_obj_verdict(const rs__reply_obj *o, const char *key, int *v);
/* A member that is an array of strings: 1 with *out (malloc'd array of
 * malloc'd strings; free with rs__str_array_free) and *n; 0 when absent,
 * not an array, or an element is not a string. */
int rs__reply_obj_strings(const rs__reply_obj *o, const char *key, char ***out, size_t *n);
/* Reads key: [{..., field: verdict}, ...]: 1 with *out (malloc'd, *n
 * elements) when every element is an object with a verdict in field; 0
 * otherwise. */
int rs__reply_obj_verdicts(const rs__reply_obj *o, const char *key, const char *field, int **out, size_t *n);
void rs__str_array_free(char **v, size_t n);

#endif
