/* rag_prompts.h: the prompts of `ragsweep rag` and their templates
 * (internal).  Each prompt is a system message (what to do and the JSON to
 * return) and a user template whose {placeholders} are filled by
 * rs__fill_template.  The README quotes every one verbatim: change them
 * together.  A changed prompt changes every cache key that uses it, so old
 * answers are never read for a new question. */
#ifndef RAGSWEEP_LLM_RAG_PROMPTS_H
#define RAGSWEEP_LLM_RAG_PROMPTS_H

#include <stddef.h>

typedef struct rs__rag_prompt {
  const char *name;   /* "statements", "nli", ... (calls.jsonl's "step") */
  const char *system; /* the instructions and the JSON shape */
  const char *user;   /* the template */
} rs__rag_prompt;

/* Splits an answer into standalone statements: {"statements": [...]}. */
extern const rs__rag_prompt rs__prompt_statements;
/* Statement-by-statement support by a context:
 * {"verdicts": [{"statement", "reason", "verdict": 0|1}, ...]}. */
extern const rs__rag_prompt rs__prompt_nli;
/* Questions an answer responds to, and whether it is noncommittal:
 * {"questions": [...], "noncommittal": 0|1}.  {n} is the number asked. */
extern const rs__rag_prompt rs__prompt_questions;
/* Whether one retrieved context helped reach the reference answer:
 * {"reason", "verdict": 0|1}. */
extern const rs__rag_prompt rs__prompt_useful;
/* The reference's statements attributed to the contexts or not:
 * {"classifications": [{"statement", "reason", "attributed": 0|1}, ...]}. */
extern const rs__rag_prompt rs__prompt_recall;
/* The system message of a custom criterion (the user message is the
 * criterion's own template): {"score": 1..5, "reason"}. */
extern const rs__rag_prompt rs__prompt_criterion;

/* template with every {key} among keys[0..n) replaced by values[i]; other
 * braces are kept as they are (JSON examples in a prompt stay intact).
 * malloc'd, NULL when out of memory. */
char *rs__fill_template(const char *template_text, const char *const *keys, const char *const *values, size_t n);

#endif
