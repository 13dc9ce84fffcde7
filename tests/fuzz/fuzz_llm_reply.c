/* fuzz_llm_reply: the OpenAI-format reply parsers of the LLM layer: chat
 * completions (rs__chat_reply_parse), error bodies (rs__llm_error_message)
 * and embeddings (rs__embed_reply_parse, expecting 1..3 vectors), and the
 * JSON object that rag's and synth's prompts ask for inside a model's text
 * (rs__reply_obj_*).  Bodies come from a server, so they are not
 * NUL-terminated here either (the model's text is, as the parser gives it). */
#include "fuzz.h"
#include "llm/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* An exact-size heap copy: ASan then catches a read one past the end. */
  char *body = malloc(size ? size : 1);
  if (!body) abort();
  if (size) memcpy(body, data, size);
  rs__chat_reply r;
  rs__reply_status st = rs__chat_reply_parse(body, size, &r);
  if (st != r.status || ((st == RS_REPLY_OK || st == RS_REPLY_TRUNCATED) && !r.content)) abort();
  if (st != RS_REPLY_OK && !r.error) abort();
  rs__chat_reply_free(&r);
  free(rs__llm_error_message(body, size));
  double *vec = NULL;
  size_t dim = 0, n = 1 + size % 3;
  int64_t tokens = 0;
  char *error = NULL;
  st = rs__embed_reply_parse(body, size, n, &vec, &dim, &tokens, &error);
  if (st == RS_REPLY_OK) {
    if (!vec || dim == 0) abort();
    double sum = 0;
    for (size_t i = 0; i < n * dim; i++) sum += vec[i]; /* every element is there */
    (void)sum;
  } else if (vec) {
    abort();
  }
  free(vec);
  free(error);
  size_t bad = 0;
  (void)rs__utf8_valid(body, size, &bad);
  /* The model's text: NUL-terminated, as rs__chat_reply_parse gives it. */
  char *text = malloc(size + 1);
  if (!text) abort();
  memcpy(text, data, size);
  text[size] = '\0';
  rs__reply_obj *o = rs__reply_obj_parse(text);
  if (o) {
    char **list = NULL;
    size_t n_list = 0;
    int *verdict = NULL, flag = 0;
    long score = 0;
    if (rs__reply_obj_strings(o, "statements", &list, &n_list))
      for (size_t i = 0; i < n_list; i++) (void)strlen(list[i]);
    rs__str_array_free(list, n_list);
    if (rs__reply_obj_verdicts(o, "verdicts", "verdict", &verdict, &n_list))
      for (size_t i = 0; i < n_list; i++)
        if (verdict[i] != 0 && verdict[i] != 1) abort();
    free(verdict);
    if (rs__reply_obj_verdict(o, "verdict", &flag) && flag != 0 && flag != 1) abort();
    (void)rs__reply_obj_int(o, "score", &score);
    free(rs__reply_obj_string(o, "reason"));
    rs__reply_obj_free(o);
  }
  free(text);
  free(body);
  return 0;
}
