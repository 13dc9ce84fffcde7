/* fuzz_evalset: the JSON evaluation set (rs__evalset_read); on success the
 * CSR layout it promises is checked (offsets monotonic, strings present). */
#include "fuzz.h"
#include "formats/evalset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f;
  rs__evalset *s = NULL;
  rs_error err = {0};
  fz_file_open(&f, data, size);
  if (rs__evalset_read(f.path, &s, &err) == RS_OK) {
    if (s->off[0] != 0) abort();
    for (size_t i = 0; i < s->n_queries; i++) {
      if (s->off[i + 1] < s->off[i] || !s->query_id[i][0] || !s->query_text[i]) abort();
      for (size_t j = s->off[i]; j < s->off[i + 1]; j++)
        if (!s->doc_id[j][0] || s->grade[j] == INT32_MIN) abort();
    }
  } else if (err.msg[0] == '\0') {
    abort();
  }
  rs__evalset_free(s);
  fz_file_close(&f);
  return 0;
}
