/* fuzz_spec: measure names (rs__spec_build), one per input line, as -m
 * gives them: "nDCG@10", "ndcg_cut.5,10", "P@5", "AnswerPresence@3"...,
 * and the trec_eval spelling of each (rs__spec_trec_spelling). */
#include "fuzz.h"
#include "metrics/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fz_str(data, size);
  const char *names[64];
  size_t n = 0;
  for (char *s = text; n < 64;) {
    names[n++] = s;
    char *nl = strchr(s, '\n');
    if (!nl) break;
    *nl = '\0';
    s = nl + 1;
  }
  rs__spec *spec = NULL;
  rs_error err = {0};
  if (rs__spec_build(names, n, 1000, &spec, &err) == RS_OK) {
    if (spec->n_out > spec->n_req || spec->n_out == 0) abort();
  } else if (err.msg[0] == '\0') {
    abort();
  }
  rs__spec_free(spec);
  /* trec_eval mode's hint on every name: a short buffer must stay terminated. */
  for (size_t i = 0; i < n; i++) {
    char hint[24];
    if (rs__spec_trec_spelling(names[i], hint, sizeof hint) && strlen(hint) >= sizeof hint) abort();
  }
  free(text);
  return 0;
}
