/* fuzz_csv: the CSV reader (rs__csv_read, libcsv strict mode); every
 * field handed over is read to its end. */
#include "fuzz.h"
#include "formats/csvio.h"

static rs_code row(void *ctx, char **fields, size_t n_fields, size_t line, rs_error *err)
{
  size_t *sum = ctx;
  if (line == 0) abort(); /* lines are 1-based */
  for (size_t i = 0; i < n_fields; i++) *sum += strlen(fields[i]);
  /* Stop on a field "STOP" so the early-exit path is fuzzed too. */
  if (n_fields && strcmp(fields[0], "STOP") == 0) return rs__fail(err, RS_FORMAT, "stop at line %zu", line);
  return RS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_file f;
  rs_error err = {0};
  size_t sum = 0;
  fz_file_open(&f, data, size);
  if (rs__csv_read(f.path, row, &sum, &err) != RS_OK && err.msg[0] == '\0') abort();
  fz_file_close(&f);
  return 0;
}
