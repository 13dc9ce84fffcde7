/* fuzz_texts: text collections, TSV or JSONL (chosen by the first
 * non-blank byte), through rs__texts_load; every record must be found
 * again by its id. */
#include "fuzz.h"
#include "formats/texts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f;
  rs__texts *t = NULL;
  rs_error err = {0};
  fz_file_open(&f, data, size);
  if (rs__texts_load(f.path, &t, &err) == RS_OK) {
    for (size_t i = 0; i < rs__texts_count(t); i++) {
      size_t len = 0;
      const char *id = rs__texts_id(t, i), *text = rs__texts_get(t, id, &len);
      if (!text || strlen(text) > len) abort();
    }
  } else if (err.msg[0] == '\0') {
    abort();
  }
  rs__texts_free(t);
  fz_file_close(&f);
  return 0;
}
