/* prompt.h: the relevance-judging prompts of `ragsweep judge` and the
 * parsers that read a label back out of the model's reply.
 *
 * Three kinds: "binary" (can an answer be derived from the passage?
 * YES/NO -> 1/0), "graded" (UMBRELA's 0-3 scale, with a final line
 * "Final score: N") and a user file (a template with {query} and
 * {document} and its label scale declared in a header; README, "judge").
 * A reply the parser cannot read is a failure, never a label. */
#ifndef RAGSWEEP_LLM_PROMPT_H
#define RAGSWEEP_LLM_PROMPT_H

#include <stddef.h>

#include "internal.h"

typedef enum { RS_PROMPT_BINARY, RS_PROMPT_GRADED, RS_PROMPT_FILE } rs__prompt_kind;

typedef struct rs__prompt {
  rs__prompt_kind kind;
  char *name;         /* "binary", "graded" or the file's path */
  char *system;       /* system message, or NULL */
  char *user;         /* the user-message template ({query}, {document}) */
  int yes_no;         /* labels are YES/NO (1/0) rather than integers */
  int max_label;      /* labels are 0..max_label */
  char *label_prefix; /* integer scales: the text before the label ("Final score") */
  int expect_tokens;  /* completion tokens a reply usually takes (for --dry-run) */
} rs__prompt;

/* spec is "binary", "graded" or the path of a prompt file. */
rs_code rs__prompt_load(const char *spec, rs__prompt *p, rs_error *err);
void rs__prompt_free(rs__prompt *p);

/* The user message for a query and a document cut to max_chars code points
 * (0: no cut); *cut is set when the document was cut.  malloc'd. */
char *rs__prompt_render(const rs__prompt *p, const char *query, const char *doc, size_t max_chars, int *cut);

/* Reads the label from a reply: 1 and *label set, or 0 when the reply
 * does not give one unambiguously. */
int rs__prompt_parse(const rs__prompt *p, const char *reply, int *label);

#endif
