/* fuzz_aggregate: `ragsweep table`'s readers.  The input is aggregate.csv,
 * then (after the first NUL byte, if any) compare.csv: rs__agg_load, the
 * default pivot (rs__pivot_make) and its significance marks
 * (rs__pivot_sig_load). */
#include "fuzz.h"
#include "report/pivot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *nul = memchr(data, 0, size);
  size_t n_agg = nul ? (size_t)(nul - data) : size;
  fz_file fa, fc;
  rs__agg t = {0};
  rs__pivot p = {0};
  rs__pivot_sig s = {.base_run = -1};
  rs__pivot_spec spec = {0};
  rs_error err = {0};
  fz_file_open(&fa, data, n_agg);
  fz_file_open(&fc, nul ? nul + 1 : data, nul ? size - n_agg - 1 : 0);
  if (rs__agg_load(fa.path, &t, &err) == RS_OK && rs__pivot_make(&p, &t, &spec, &err) == RS_OK) {
    for (size_t i = 0; i < p.n_r * p.n_c; i++)
      if (p.cell[i] != SIZE_MAX && p.cell[i] >= t.n_rows) abort();
    if (nul) (void)rs__pivot_sig_load(&p, fc.path, NULL, size & 1, 0.05, &s, &err);
  }
  rs__pivot_sig_free(&s);
  rs__pivot_free(&p);
  rs__agg_free(&t);
  fz_file_close(&fc);
  fz_file_close(&fa);
  return 0;
}
