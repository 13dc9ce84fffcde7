/* rag_prompts.c: the prompts of `ragsweep rag` (README, "rag: prompts").
 * The metric definitions follow ragas 0.2 (faithfulness, response
 * relevancy, context precision with reference, context recall, factual
 * correctness); the wording is ours. */
#include "llm/rag_prompts.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

const rs__rag_prompt rs__prompt_statements = {
    "statements",
    "You split answers into statements. Given a question and an answer, rewrite the answer as a list of "
    "standalone statements: each one a single fact or claim, understandable without the others, with every "
    "pronoun replaced by what it refers to. Keep the meaning of the answer; add nothing. If the answer makes "
    "no claim at all, return an empty list.\n"
    "Reply with one JSON object and nothing else: {\"statements\": [\"...\", \"...\"]}",
    "Question: {question}\n"
    "Answer: {answer}"};

const rs__rag_prompt rs__prompt_nli = {
    "nli",
    "You check statements against a context. For each statement, in the order given, decide whether it can be "
    "directly inferred from the context alone: verdict 1 if it can, 0 if it cannot (it contradicts the context, "
    "or the context does not say it).\n"
    "Reply with one JSON object and nothing else, one entry per statement: {\"verdicts\": [{\"statement\": "
    "\"...\", \"reason\": \"...\", \"verdict\": 1}]}",
    "Context:\n{context}\n\n"
    "Statements (JSON list):\n{statements}"};

const rs__rag_prompt rs__prompt_questions = {
    "questions",
    "You infer questions from answers. Given an answer, write {n} different questions that this answer "
    "responds to, and say whether the answer is noncommittal: 1 if it is evasive, vague or ambiguous (such as "
    "\"I don't know\" or \"I'm not sure\"), 0 if it commits to an answer.\n"
    "Reply with one JSON object and nothing else: {\"questions\": [\"...\"], \"noncommittal\": 0}",
    "Answer: {answer}"};

const rs__rag_prompt rs__prompt_useful = {
    "useful",
    "You judge retrieved passages. Given a question, its reference answer and one retrieved context, decide "
    "whether the context was useful in arriving at the reference answer: verdict 1 if it was, 0 if it was not.\n"
    "Reply with one JSON object and nothing else: {\"reason\": \"...\", \"verdict\": 1}",
    "Question: {question}\n"
    "Reference answer: {reference}\n"
    "Context: {context}"};

const rs__rag_prompt rs__prompt_recall = {
    "recall",
    "You check a reference answer against retrieved contexts. Split the reference answer into its statements "
    "(one fact or claim each) and, for each, decide whether it can be attributed to the contexts: attributed 1 "
    "if the contexts support it, 0 if they do not.\n"
    "Reply with one JSON object and nothing else: {\"classifications\": [{\"statement\": \"...\", \"reason\": "
    "\"...\", \"attributed\": 1}]}",
    "Question: {question}\n"
    "Contexts:\n{context}\n\n"
    "Reference answer: {reference}"};

const rs__rag_prompt rs__prompt_criterion = {
    "criterion",
    "You are an evaluator. Score the response by the criterion given, on a scale of 1 (worst) to 5 (best).\n"
    "Reply with one JSON object and nothing else: {\"score\": 3, \"reason\": \"...\"}",
    NULL};

char *rs__fill_template(const char *t, const char *const *keys, const char *const *values, size_t n)
{
  rs__sb b = {0};
  for (const char *p = t; *p;) {
    const char *open = strchr(p, '{');
    if (!open) {
      rs__sb_str(&b, p);
      break;
    }
    rs__sb_add(&b, p, (size_t)(open - p));
    size_t k = 0;
    for (; k < n; k++) {
      const size_t len = strlen(keys[k]);
      if (strncmp(open + 1, keys[k], len) == 0 && open[1 + len] == '}') break;
    }
    if (k < n) {
      rs__sb_str(&b, values[k] ? values[k] : "");
      p = open + 2 + strlen(keys[k]);
    } else {
      rs__sb_add(&b, "{", 1);
      p = open + 1;
    }
  }
  return rs__sb_take(&b);
}
