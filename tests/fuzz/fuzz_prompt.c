/* fuzz_prompt: judge prompts.  Byte 0 picks the prompt: binary, graded, or
 * a prompt file made of the input up to the first NUL byte after it
 * (rs__prompt_load); what follows is the model's reply, read back by
 * rs__prompt_parse.  A file prompt is also rendered once. */
#include "fuzz.h"
#include "llm/prompt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size == 0) return 0;
  int kind = data[0] % 3;
  data++, size--;
  const uint8_t *nul = kind == 2 ? memchr(data, 0, size) : NULL;
  size_t n_file = kind == 2 ? (nul ? (size_t)(nul - data) : size) : 0;
  const uint8_t *reply = kind == 2 ? (nul ? nul + 1 : data + size) : data;
  char *text = fz_str(reply, size - (size_t)(reply - data));
  rs__prompt p;
  memset(&p, 0, sizeof p);
  rs_error err = {0};
  fz_file f = {.fd = -1};
  rs_code rc;
  if (kind == 2) {
    fz_file_open(&f, data, n_file);
    rc = rs__prompt_load(f.path, &p, &err);
  } else {
    rc = rs__prompt_load(kind ? "graded" : "binary", &p, &err);
  }
  if (rc == RS_OK) {
    int label = -1;
    if (rs__prompt_parse(&p, text, &label) && (label < 0 || label > (p.yes_no ? 1 : p.max_label))) abort();
    int cut = 0;
    free(rs__prompt_render(&p, "what is {x}?", text, size % 7, &cut));
    rs__prompt_free(&p);
  } else if (err.msg[0] == '\0') {
    abort();
  }
  fz_file_close(&f);
  free(text);
  return 0;
}
