/* fuzz_llm_reply: the OpenAI-format reply parsers of the LLM layer: chat
 * completions (rs__chat_reply_parse), error bodies (rs__llm_error_message)
 * and embeddings (rs__embed_reply_parse, expecting 1..3 vectors).  Bodies
 * come from a server, so they are not NUL-terminated here either. */
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
  free(body);
  return 0;
}
