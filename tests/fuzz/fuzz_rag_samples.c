/* fuzz_rag_samples: ragas's JSONL samples through rs__rag_set_load.  A form
 * feed splits the input into two files (a file per configuration, the
 * "file" column); on success the set must keep what rag_samples.h
 * promises: every sample in a configuration and a file, ordinals counting
 * from 1, no key twice within a configuration, text that is UTF-8. */
#include "fuzz.h"
#include "formats/rag_samples.h"
#include "llm/wire.h" /* rs__utf8_valid */

#include <math.h>

static void check_text(const char *s)
{
  if (s && !rs__utf8_valid(s, strlen(s), NULL)) abort();
}

static void check_set(const rs__rag_set *set)
{
  if (set->n == 0 || set->n_configs == 0 || set->n_configs > set->n) abort();
  for (size_t c = 0; c < set->n_columns; c++) check_text(set->columns[c]);
  for (size_t k = 0; k < set->n_configs * set->n_columns; k++) {
    if (!set->config_values[k]) abort();
    check_text(set->config_values[k]);
  }
  for (size_t i = 0; i < set->n; i++) {
    const rs__rag_sample *s = &set->s[i];
    if (s->config >= set->n_configs || s->file >= set->n_files || s->line == 0 || s->ordinal == 0 ||
        s->ordinal > set->n)
      abort();
    if (s->id && !s->id[0]) abort();
    check_text(s->user_input);
    check_text(s->response);
    check_text(s->reference);
    for (size_t j = 0; j < s->retrieved_context_ids.n; j++) check_text(s->retrieved_context_ids.v[j]);
    if (!isnan(s->latency_ms) && !(s->latency_ms >= 0)) abort();
  }
  /* Keys are unique within a configuration (quadratic: inputs are small). */
  for (size_t i = 0; i < set->n && set->n <= 500; i++)
    for (size_t j = i + 1; j < set->n; j++) {
      char a[24], b[24];
      if (set->s[i].config == set->s[j].config &&
          strcmp(rs__rag_sample_key(&set->s[i], a), rs__rag_sample_key(&set->s[j], b)) == 0)
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f[2];
  const uint8_t *ff = memchr(data, '\f', size);
  const size_t n_files = ff ? 2 : 1, first = ff ? (size_t)(ff - data) : size;
  fz_file_open(&f[0], data, first);
  if (ff) fz_file_open(&f[1], ff + 1, size - first - 1);
  const char *paths[2] = {f[0].path, ff ? f[1].path : NULL};
  rs__rag_set set;
  rs_error err = {0};
  if (rs__rag_set_load(paths, n_files, &set, &err) == RS_OK) {
    check_set(&set);
  } else if (err.msg[0] == '\0' || set.n || set.s) {
    abort();
  }
  rs__rag_set_free(&set);
  fz_file_close(&f[0]);
  if (ff) fz_file_close(&f[1]);
  return 0;
}
